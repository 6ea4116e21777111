/* SPDX-License-Identifier: MIT */
#pragma once

/* What injectctl's commands share (cli.c): the global options, the exit
 * codes, and the helpers that print errors and JSON the same way
 * everywhere. */

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "time-util.h"
#include "transport.h"

#define EXIT_REFUSED 1          /* the daemon refused, or the operation failed */
#define EXIT_USAGE 2            /* bad command line; nothing was sent */
#define EXIT_UNREACHABLE 3      /* injectd cannot be reached */

extern bool arg_json;
extern bool arg_no_pager;
extern bool arg_ask_password;
/* Which transport connect_daemon() uses. AUTO, the default: Varlink when
 * its socket answers, else D-Bus (Varlink costs no dlopen() of libsystemd
 * and no bus connection: a fresh client starts faster). */
typedef enum TransportChoice {
        TRANSPORT_AUTO,
        TRANSPORT_BUS,                  /* --bus */
        TRANSPORT_VARLINK,              /* --varlink, or a build without D-Bus */
} TransportChoice;
extern TransportChoice arg_transport;
extern const char *arg_varlink_path;
extern bool arg_color;

/* The global options, accepted before and after the command; every
 * command's option table ends with them. */
enum {
        ARG_JSON = 0x100,
        ARG_NO_PAGER,
        ARG_NO_ASK_PASSWORD,
        ARG_VARLINK,
        ARG_VERSION,
        ARG_BUS,
        ARG_ALL,                        /* --all, for parse_plain_options() */
        ARG_COMMAND_BASE = 0x200,       /* commands number their own from here */
};

#define GLOBAL_OPTIONS                                                          \
        { "json",            no_argument,       NULL, ARG_JSON },               \
        { "no-pager",        no_argument,       NULL, ARG_NO_PAGER },           \
        { "no-ask-password", no_argument,       NULL, ARG_NO_ASK_PASSWORD },    \
        { "varlink",         optional_argument, NULL, ARG_VARLINK },            \
        { "bus",             no_argument,       NULL, ARG_BUS },                \
        { "help",            no_argument,       NULL, 'h' },                    \
        { "version",         no_argument,       NULL, ARG_VERSION },            \
        {}

/* Handles a global option, or an unknown one ('?', ':'). Returns -1 when
 * c is not one of them; otherwise an exit code to return at once (>= 0:
 * --help, --version, EXIT_USAGE), or -2 to go on. */
int handle_global_option(int c, const char *optarg, char *const *argv);

/* For commands without options of their own, beyond --all if ret_all is
 * non-NULL (which it then sets): parses the global ones and leaves optind
 * at the first argument. Returns -1 to go on, else the exit code. */
int parse_plain_options(int argc, char **argv, bool *ret_all);

/* Prints "injectctl: <what>" and "Try 'injectctl --help'." to stderr;
 * returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints a failed operation: a daemon refusal as "injectctl: Name:
 * message" (EXIT_REFUSED), an unreachable daemon with how to start it
 * (EXIT_UNREACHABLE), anything else as "injectctl: <what>: <strerror>"
 * (EXIT_REFUSED). Returns the exit code. */
int report_error(Transport *t, int r, const char *what);

/* report_error() for a failed Inject of function, which also suggests
 * injectable functions with near names when it is not injectable. */
int report_inject_error(Transport *t, int r, const char *function);

/* Connects through D-Bus or Varlink per the global options (Varlink when
 * this build has no D-Bus); on failure prints why and returns the exit
 * code as a negative number. */
int connect_daemon(Transport **ret);

/* Writes a command's JSON report (sweep, explore) to path, pretty;
 * prints why not and returns a negative errno on failure. */
int write_json_report(const char *path, json_object *report);

/* Prints one JSON document (pretty on a TTY, one line otherwise, always
 * one line with newline_delimited) on stdout and flushes. */
void print_json(json_object *o, bool one_line);

/* Parses an errno name or number for --error, with "did you mean". Returns
 * 0 or EXIT_USAGE after printing. */
int parse_error_arg(const char *s, int *ret);

/* Parses --for. Returns 0 or EXIT_USAGE after printing. */
int parse_duration_arg(const char *opt, const char *s, uint64_t *ret_usec);

/* A count option (--after and friends), min..UINT64_MAX. */
int parse_count_arg(const char *opt, const char *s, uint64_t min, uint64_t *ret);


/* "2min 3s" from µs, rounded to seconds. */
char *format_left(char *buf, size_t n, uint64_t usec);

/* injectctl --help. */
void cli_help(void);
