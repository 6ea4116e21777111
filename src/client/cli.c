/* SPDX-License-Identifier: MIT */
/* What injectctl's commands share: the global options and --help, the
 * connection to injectd, errors, JSON output and option parsing (cli.h). */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "duration.h"
#include "edit-distance.h"
#include "errno-name.h"
#include "cli.h"
#include "io-util.h"
#include "json-util.h"
#include "log.h"
#include "spec.h"

bool arg_json = false;
bool arg_no_pager = false;
bool arg_ask_password = true;
TransportChoice arg_transport = TRANSPORT_AUTO;
const char *arg_varlink_path = NULL;
bool arg_color = false;

void cli_help(void) {
        printf("injectctl [OPTIONS...] COMMAND ...\n"
               "\n"
               "Ask injectd to make a kernel function fail, for your own processes, for a\n"
               "bounded time.\n"
               "\n"
               "Commands:\n"
               "  caps                        Show what this kernel and daemon offer\n"
               "  functions [GLOB] [--type T] [--allowed]\n"
               "                              List the functions that can be made to fail\n"
               "  inject FUNCTION (--error NAME|NUM | --retval N) [OPTIONS]\n"
               "                              Make FUNCTION fail; hold it until Ctrl-C or\n"
               "                              expiry, or with --detach leave it armed\n"
               "  list [--all]                List your injections (--all: everyone's, root)\n"
               "  show ID                     Show one injection\n"
               "  cancel ID...|--all          Disarm injections\n"
               "  watch [ID...]               Follow events (faults, additions, removals)\n"
               "  reload-policy               Make injectd read its JSON policy again\n"
               "  run --fail SPEC [--fail SPEC...] [--for DUR] -- CMD [ARG...]\n"
               "                              Run CMD with faults armed for it and its\n"
               "                              children only; exit with CMD's status\n"
               "  failcmd [-p P] [-i N] [-t N] [--ignore-gfp-wait Y|N] ... [--] CMD [ARG...]\n"
               "                              The kernel's failcmd.sh, mapped onto run\n"
               "                              (man injectctl: the options it takes)\n"
               "  sweep --fail SPEC [--max N] [--timeout DUR] [--report FILE] -- CMD [ARG...]\n"
               "                              Run CMD once per matching call N = 0, 1, 2...,\n"
               "                              failing only call N+1, until a run no longer\n"
               "                              reaches it; report what each run did\n"
               "  explore [--functions GLOB]... [--lsm] [--max-runs N] [--per stack|call]\n"
               "          [--depth K] [--through GLOB]... [--no-syscalls]\n"
               "          [--timeout DUR] [--report FILE] [--html FILE] [--resume FILE]\n"
               "          [--setup SHELLCMD] [--cleanup SHELLCMD] [--jobs N] -- CMD [ARG...]\n"
               "                              Find the injectable calls CMD makes, fail each\n"
               "                              in a run of its own, and report what the\n"
               "                              kernel's detectors (KASAN, kmemleak, WARN,\n"
               "                              lockdep...) said, with reproducers\n"
               "\n"
               "inject options:\n"
               "  --error NAME|NUM            Fail with -errno (ENOMEM, 12)\n"
               "  --retval N                  Return N instead (-4095..4095)\n"
               "  --for DUR                   How long (30s, 5min, 1h30m; default: the most\n"
               "                              the policy allows)\n"
               "  --probability P%%            Fail only this share of the matching calls\n"
               "  --after N                   Skip the first N matching calls\n"
               "  --every N                   Fail every Nth matching call\n"
               "  --times N                   Fail at most N times, then end\n"
               "  --caller FUNC               Only when FUNC is on the kernel stack (up to 4)\n"
               "  --comm NAME                 Only threads with this name\n"
               "  --pid PID | --cgroup PATH | --device DEV | --global\n"
               "                              The scope: a process tree, a cgroup directory,\n"
               "                              a block device's I/O in any context (loop3,\n"
               "                              /dev/loop3, 7:3), or everything (default: your\n"
               "                              own cgroup)\n"
               "  --backend auto|kprobe|fmod_ret\n"
               "  --detach                    Leave the injection armed and return\n"
               "  --kernel-log 1|2            A kernel log record per fault (2: with the stack)\n"
               "  --ignore-gfp-wait --ignore-gfp-highmem --min-order N --min-size N --cache NAME\n"
               "                              Argument filters, of the functions whose\n"
               "                              'functions FUNC' lists them\n"
               "\n"
               "run: SPEC is FUNCTION[:ERROR][,after=N][,every=N][,times=N]\n"
               "     [,probability=P%%][,caller=FUNC]...[,ignore-gfp-wait][,ignore-gfp-highmem]\n"
               "     [,min-order=N][,min-size=N][,cache=NAME][,kernel-log=N][,device=DEV] ;\n"
               "     without ERROR, a value that fits the function's type (ENOMEM, or 1 for\n"
               "     TRUE and 0 for NULL functions). Every SPEC is scoped to CMD's process\n"
               "     tree (device=DEV: to that block device's I/O, as --device) and armed\n"
               "     before CMD starts; the faults end when CMD does (or injectctl dies).\n"
               "     A summary (function, matched, injected, guarded) goes to stderr;\n"
               "     with --json as one JSON document, also on stderr.\n"
               "\n"
               "sweep options (SPEC: FUNCTION[:ERROR][,caller=FUNC]...):\n"
               "  --max N                     At most N runs (default: 1000)\n"
               "  --timeout DUR               A run lasting longer hung: kill it (default: 30s)\n"
               "  --report FILE               Also write the JSON report to FILE\n"
               "     For each run: CMD's exit status or signal, whether the fault fired,\n"
               "     the failed call's kernel stack, and kernel warnings, BUGs, oopses or\n"
               "     hung tasks logged meanwhile (/dev/kmsg: root, or dmesg_restrict=0).\n"
               "     CMD's output goes to the report, not the terminal.\n"
               "\n"
               "Options:\n"
               "  --json                      Print JSON (one document; JSON lines for watch\n"
               "                              and for inject while it holds)\n"
               "  --no-pager                  Do not pipe output into a pager (never does)\n"
               "  --no-ask-password           Do not let polkit ask for a password\n"
               "  --bus                       Talk D-Bus on the system bus only (not in\n"
               "                              injectctl-static, which speaks only Varlink)\n"
               "  --varlink[=PATH]            Talk Varlink to PATH only (default\n"
               "                              " INJECTD_VARLINK_ADDRESS ")\n"
               "                              Without either: Varlink when its socket\n"
               "                              answers, else D-Bus\n"
               "  -h --help                   Show this help\n"
               "     --version                Show the version\n"
               "\n"
               "Exit status:\n"
               "  0    success\n"
               "  1    injectd refused (\"injectctl: <Error>: <message>\") or an operation\n"
               "       failed\n"
               "  2    bad command line; nothing was sent to injectd\n"
               "  3    injectd cannot be reached\n"
               "  sweep: 1 also when a run logged kernel trouble, hung, or died by a\n"
               "       signal; 130 when interrupted\n"
               "  run: CMD's exit status, 128+N if a signal N killed it, 127 if it cannot\n"
               "       be executed, or 1-3 as above when the faults could not be armed\n");
}

int usage_error(const char *fmt, ...) {
        va_list ap;

        fputs("injectctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs("\nTry 'injectctl --help'.\n", stderr);
        return EXIT_USAGE;
}

int handle_global_option(int c, const char *optarg, char *const *argv) {
        switch (c) {
        case ARG_JSON:
                arg_json = true;
                return -2;
        case ARG_NO_PAGER:
                arg_no_pager = true;
                return -2;
        case ARG_NO_ASK_PASSWORD:
                arg_ask_password = false;
                return -2;
        case ARG_BUS:
                if (!transport_bus_supported())
                        return usage_error("--bus: this injectctl (injectctl-static) speaks only Varlink; "
                                           "drop --bus, or use the dynamically linked injectctl for D-Bus");
                arg_transport = TRANSPORT_BUS;
                return -2;
        case ARG_VARLINK:
                arg_transport = TRANSPORT_VARLINK;
                if (optarg) {
                        if (!*optarg)
                                return usage_error("--varlink= needs a socket path");
                        arg_varlink_path = optarg;
                }
                return -2;
        case 'h':
                cli_help();
                return 0;
        case ARG_VERSION:
                printf("injectctl %s%s\n", PROJECT_VERSION,
                       transport_bus_supported() ? "" : " (static, Varlink only)");
                return 0;
        case '?':
                /* getopt printed nothing (opterr = 0): say it our way. */
                if (optopt >= ARG_JSON)
                        return usage_error("option '%s' takes no argument", argv[optind - 1]);
                if (optopt)
                        return usage_error("invalid option '-%c'", optopt);
                return usage_error("unknown option '%s'", argv[optind - 1]);
        case ':':
                return usage_error("option '%s' needs an argument", argv[optind - 1]);
        default:
                return -1;
        }
}

int parse_plain_options(int argc, char **argv, bool *ret_all) {
        static const struct option plain[] = { GLOBAL_OPTIONS };
        static const struct option with_all[] = {
                { "all", no_argument, NULL, ARG_ALL },
                GLOBAL_OPTIONS
        };
        bool all = false;
        int c, r;

        while ((c = getopt_long(argc, argv, ":h", ret_all ? with_all : plain, NULL)) >= 0) {
                if (c == ARG_ALL) {
                        all = true;
                        continue;
                }
                r = handle_global_option(c, optarg, argv);
                if (r >= 0)
                        return r;
        }
        if (ret_all)
                *ret_all = all;
        return -1;
}

int report_error(Transport *t, int r, const char *what) {
        if (r == -EREMOTEIO && t && transport_error_name(t)) {
                fprintf(stderr, "injectctl: %s: %s\n", transport_error_name(t), transport_error_message(t));
                return EXIT_REFUSED;
        }
        if (r == -EHOSTDOWN && t && transport_error_message(t)) {
                fprintf(stderr, "injectctl: %s\n", transport_error_message(t));
                return EXIT_UNREACHABLE;
        }
        fprintf(stderr, "injectctl: %s: %s\n", what, strerror(-r));
        return EXIT_REFUSED;
}

/* The injectable functions nearest to name, best first: near misses by
 * edit distance, and names that contain it ("openat" finds
 * __x64_sys_openat). */
#define SUGGEST_FUNCTIONS_MAX 5

static void suggest_functions(Transport *t, const char *name) {
        _cleanup_json_ json_object *list = NULL;
        struct { const char *name; size_t score; } best[SUGGEST_FUNCTIONS_MAX];
        size_t n_best = 0, len = strlen(name), limit = len / 4 > 2 ? len / 4 : 2;

        if (transport_list_functions(t, NULL, &list) < 0)
                return;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                const char *fn = NULL;
                size_t score, k;

                if (json_get_string(json_object_array_get_idx(list, i), "name", &fn) < 0)
                        continue;
                score = edit_distance(name, fn);
                if (len >= 4 && strstr(fn, name))
                        score = score < 1 ? score : 1;
                if (score > limit)
                        continue;
                /* Insert, keeping the best SUGGEST_FUNCTIONS_MAX in order. */
                for (k = n_best; k > 0 && best[k - 1].score > score; k--)
                        if (k < SUGGEST_FUNCTIONS_MAX)
                                best[k] = best[k - 1];
                if (k >= SUGGEST_FUNCTIONS_MAX)
                        continue;
                best[k].name = fn;
                best[k].score = score;
                if (n_best < SUGGEST_FUNCTIONS_MAX)
                        n_best++;
        }
        if (n_best == 0)
                return;
        fputs("injectctl: Did you mean: ", stderr);
        for (size_t i = 0; i < n_best; i++)
                fprintf(stderr, "%s%s", i > 0 ? ", " : "", best[i].name);
        fputs("? ('injectctl functions' lists them all.)\n", stderr);
}

int report_inject_error(Transport *t, int r, const char *function) {
        int ret = report_error(t, r, "Cannot inject");

        if (r == -EREMOTEIO && t && transport_error_name(t) &&
            strcmp(transport_error_name(t), "NotInjectable") == 0)
                suggest_functions(t, function);
        return ret;
}

int connect_daemon(Transport **ret) {
        _cleanup_free_ char *msg = NULL;
        int r;

        switch (arg_transport) {
        case TRANSPORT_VARLINK:
                r = transport_open_varlink(arg_varlink_path, arg_ask_password, ret, &msg);
                break;
        case TRANSPORT_BUS:
                r = transport_open_bus(arg_ask_password, ret, &msg);
                break;
        default:
                /* Varlink first: it needs neither libsystemd's dlopen()
                 * nor a bus connection. Any failure to connect to its
                 * socket (absent, refused, not ours to open) falls back
                 * to D-Bus, which can also activate injectd where the
                 * socket unit is not installed. */
                r = transport_open_varlink(arg_varlink_path, arg_ask_password, ret, &msg);
                if (r >= 0 || r == -ENOMEM)
                        break;
                log_debug("Varlink: %s; trying D-Bus", msg ?: strerror(-r));
                free(msg);
                msg = NULL;
                r = transport_open_bus(arg_ask_password, ret, &msg);
                break;
        }
        if (r == -EHOSTDOWN) {
                fprintf(stderr, "injectctl: %s\n", msg);
                return -EXIT_UNREACHABLE;
        }
        if (r < 0) {
                fprintf(stderr, "injectctl: Cannot connect to injectd: %s\n", strerror(-r));
                return -EXIT_REFUSED;
        }
        return 0;
}

static int fill_json(FILE *f, void *userdata) {
        const char *s = json_object_to_json_string_ext(userdata, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);

        if (!s)
                return -ENOMEM;
        return fputs(s, f) < 0 || fputc('\n', f) < 0 ? -EIO : 0;
}

int write_json_report(const char *path, json_object *report) {
        /* A new file renamed over the old: a reader (explore --resume after
         * a kill) finds the last whole report, never half of one. */
        int r = file_replace(path, fill_json, report);

        if (r < 0) {
                fprintf(stderr, "injectctl: Cannot write the report to '%s': %s\n", path, strerror(-r));
                return r;
        }
        return 0;
}

void print_json(json_object *o, bool one_line) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE;

        if (!one_line && isatty(STDOUT_FILENO))
                flags |= JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED;
        else
                flags |= JSON_C_TO_STRING_PLAIN;
        puts(json_object_to_json_string_ext(o, flags));
        fflush(stdout);
}

int parse_error_arg(const char *s, int *ret) {
        const char *near = NULL;

        if (errno_from_name(s, ret) >= 0)
                return 0;
        if (errno_suggest(s, &near) >= 0 && near)
                return usage_error("unknown errno '%s' (did you mean %s?)", s, near);
        return usage_error("unknown errno '%s' (a name like ENOMEM, or a number from 1 to %d)", s, ERRNO_MAX);
}

int parse_duration_arg(const char *opt, const char *s, uint64_t *ret_usec) {
        uint64_t usec;

        if (parse_duration(s, &usec) < 0 || usec == 0)
                return usage_error("%s: invalid duration '%s' (e.g. 30s, 5min, 1h30m)", opt, s);
        *ret_usec = usec;
        return 0;
}

int parse_count_arg(const char *opt, const char *s, uint64_t min, uint64_t *ret) {
        uint64_t v = 0;

        if (!*s)
                goto bad;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9' || v > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
                        goto bad;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        if (v < min)
                goto bad;
        *ret = v;
        return 0;
bad:
        return usage_error("%s: '%s' is not a count of %" PRIu64 " or more", opt, s, min);
}

char *format_left(char *buf, size_t n, uint64_t usec) {
        return format_duration(buf, n, usec / USEC_PER_SEC * USEC_PER_SEC);
}
