/* SPDX-License-Identifier: MIT */
/* injectctl inject: arm one injection, then hold it (live counters until
 * Ctrl-C or expiry) or, with --detach, leave it armed. */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "errno-name.h"
#include "injectctl.h"
#include "json-build.h"
#include "json-util.h"
#include "scope-kind.h"
#include "spec.h"

/* Holding is a display refresh, and stays a poll: calls_seen and
 * calls_matched change with every call of the function and neither API
 * sends an event for them (D-Bus annotates the counters
 * EmitsChangedSignal=false, Varlink's Watch has "fault" and "removed"
 * only), so ListInjections is the one way to show them live. The wait
 * between reads is a nanosleep() that a signal cuts short, so Ctrl-C
 * cancels at once. */
#define HOLD_POLL_MSEC 500
#define COMM_MAX 15

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) {
        stop_signal = sig;
}

enum {
        ARG_ERROR = ARG_COMMAND_BASE,
        ARG_RETVAL,
        ARG_FOR,
        ARG_PROBABILITY,
        ARG_AFTER,
        ARG_EVERY,
        ARG_TIMES,
        ARG_CALLER,
        ARG_COMM,
        ARG_PID,
        ARG_CGROUP,
        ARG_GLOBAL,
        ARG_BACKEND,
        ARG_DETACH,
};

typedef struct Counters {
        uint64_t seen, matched, injected, guarded;
} Counters;

static bool counters_equal(const Counters *a, const Counters *b) {
        return a->seen == b->seen && a->matched == b->matched && a->injected == b->injected &&
               a->guarded == b->guarded;
}

/* With --json, holding streams JSON lines: "counters" whenever they
 * change, then "ended" or "cancelled" with the last ones seen. */
static void print_counters(const char *id, const char *type, const Counters *c, uint64_t left) {
        _cleanup_json_ json_object *o = NULL;
        int r;

        r = json_build_object(&o,
                              JSON_PAIR_STRING("type", type),
                              JSON_PAIR_STRING("id", id),
                              JSON_PAIR_U64("calls_seen", c->seen),
                              JSON_PAIR_U64("calls_matched", c->matched),
                              JSON_PAIR_U64("faults_injected", c->injected),
                              JSON_PAIR_U64("calls_guarded", c->guarded),
                              JSON_PAIR_U64("remaining_usec", left),
                              JSON_BUILD_END);
        if (r < 0) {
                (void) report_error(NULL, r, "Cannot print the counters");
                return;
        }
        print_json(o, true);
}

static int hold(Transport *t, const char *id, const char *function) {
        struct sigaction sa = { .sa_handler = on_stop };
        bool tty = isatty(STDOUT_FILENO);
        Counters last = { .seen = UINT64_MAX };
        bool gone = false;
        int r;

        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGHUP, &sa, NULL);

        if (!arg_json && tty)
                printf("Holding it; Ctrl-C cancels.\n");
        fflush(stdout);

        while (!stop_signal) {
                _cleanup_json_ json_object *list = NULL;
                Counters now = {};
                uint64_t left = 0;
                char lbuf[FORMAT_DURATION_MAX];
                struct timespec ts = { .tv_nsec = HOLD_POLL_MSEC * 1000000L };
                json_object *doc;

                r = transport_list_injections(t, false, &list);
                if (r < 0 && stop_signal)
                        break;  /* the signal cut the call short (EINTR): cancel */
                if (r < 0)
                        return report_error(t, r, "Cannot read the injection");
                doc = injection_find(list, id);
                if (!doc) {
                        gone = true;
                        break;
                }
                (void) json_get_u64(doc, "calls_seen", 0, UINT64_MAX, &now.seen);
                (void) json_get_u64(doc, "calls_matched", 0, UINT64_MAX, &now.matched);
                (void) json_get_u64(doc, "faults_injected", 0, UINT64_MAX, &now.injected);
                (void) json_get_u64(doc, "calls_guarded", 0, UINT64_MAX, &now.guarded);
                (void) json_get_u64(doc, "remaining_usec", 0, UINT64_MAX, &left);

                if (arg_json && !counters_equal(&now, &last))
                        print_counters(id, "counters", &now, left);
                if (!arg_json) {
                        if (tty)
                                printf("\r\033[K%s: seen %" PRIu64 ", matched %" PRIu64 ", injected %" PRIu64
                                       ", guarded %" PRIu64 ", %s left",
                                       function, now.seen, now.matched, now.injected, now.guarded,
                                       format_left(lbuf, sizeof(lbuf), left));
                        else if (!counters_equal(&now, &last))
                                printf("%s: seen %" PRIu64 ", matched %" PRIu64 ", injected %" PRIu64
                                       ", guarded %" PRIu64 "\n",
                                       function, now.seen, now.matched, now.injected, now.guarded);
                        fflush(stdout);
                }
                last = now;
                if (left == 0) {
                        gone = true;
                        break;
                }
                (void) nanosleep(&ts, NULL);
        }
        if (!arg_json && tty)
                printf("\n");
        if (last.seen == UINT64_MAX)
                last.seen = 0;

        if (gone) {
                if (arg_json)
                        print_counters(id, "ended", &last, 0);
                else
                        printf("Injection %s ended (expired or exhausted).\n", id);
                return 0;
        }

        r = transport_cancel(t, id);
        if (r == -EREMOTEIO && strcmp(transport_error_name(t), "NoSuchInjection") == 0)
                r = 0;
        if (r < 0)
                return report_error(t, r, "Cannot cancel");
        if (arg_json)
                print_counters(id, "cancelled", &last, 0);
        else
                printf("Cancelled %s: seen %" PRIu64 ", matched %" PRIu64 ", injected %" PRIu64
                       ", guarded %" PRIu64 ".\n",
                       id, last.seen, last.matched, last.injected, last.guarded);
        return 0;
}

int cmd_inject(int argc, char **argv) {
        static const struct option options[] = {
                { "error",       required_argument, NULL, ARG_ERROR },
                { "retval",      required_argument, NULL, ARG_RETVAL },
                { "for",         required_argument, NULL, ARG_FOR },
                { "probability", required_argument, NULL, ARG_PROBABILITY },
                { "after",       required_argument, NULL, ARG_AFTER },
                { "every",       required_argument, NULL, ARG_EVERY },
                { "times",       required_argument, NULL, ARG_TIMES },
                { "caller",      required_argument, NULL, ARG_CALLER },
                { "comm",        required_argument, NULL, ARG_COMM },
                { "pid",         required_argument, NULL, ARG_PID },
                { "cgroup",      required_argument, NULL, ARG_CGROUP },
                { "global",      no_argument,       NULL, ARG_GLOBAL },
                { "backend",     required_argument, NULL, ARG_BACKEND },
                { "detach",      no_argument,       NULL, ARG_DETACH },
                GLOBAL_OPTIONS
        };
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_json_ json_object *req = NULL, *callers = NULL, *injection = NULL;
        _cleanup_free_ char *id = NULL;
        const char *function, *scope = NULL;
        bool have_value = false, detach = false;
        uint64_t expires = 0, v;
        int c, k = 0, n_callers = 0, r;

        req = json_object_new_object();
        callers = json_object_new_array();
        if (!req || !callers)
                return report_error(NULL, -ENOMEM, "Out of memory");

        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                switch (c) {
                case ARG_ERROR: {
                        const char *name;
                        int e;

                        if (have_value)
                                return usage_error("give one of --error and --retval, once");
                        r = parse_error_arg(optarg, &e);
                        if (r != 0)
                                return r;
                        name = errno_to_name(e);
                        k = json_add(req, "error", name ? json_object_new_string(name) : json_object_new_int(e));
                        have_value = true;
                        break;
                }
                case ARG_RETVAL: {
                        char *end;
                        long long rv;

                        if (have_value)
                                return usage_error("give one of --error and --retval, once");
                        errno = 0;
                        rv = strtoll(optarg, &end, 10);
                        if (errno || end == optarg || *end || rv < -4095 || rv > 4095)
                                return usage_error("--retval: '%s' is not a number from -4095 to 4095", optarg);
                        k = json_add_i64(req, "retval", rv);
                        have_value = true;
                        break;
                }
                case ARG_FOR:
                        r = parse_duration_arg("--for", optarg, &v);
                        if (r != 0)
                                return r;
                        k = json_add_u64(req, "duration_usec", v);
                        break;
                case ARG_PROBABILITY: {
                        double p;

                        if (parse_percent(optarg, &p) < 0)
                                return usage_error("--probability: '%s' is not a percentage above 0 and at most 100",
                                                   optarg);
                        k = json_add_double(req, "probability", p);
                        break;
                }
                case ARG_AFTER:
                case ARG_EVERY:
                case ARG_TIMES: {
                        const char *key = c == ARG_AFTER ? "after" : c == ARG_EVERY ? "every" : "times";
                        char opt[16];

                        snprintf(opt, sizeof(opt), "--%s", key);
                        r = parse_count_arg(opt, optarg, c == ARG_AFTER ? 0 : 1, &v);
                        if (r != 0)
                                return r;
                        k = json_add_u64(req, key, v);
                        break;
                }
                case ARG_CALLER:
                        if (!function_name_is_valid(optarg))
                                return usage_error("--caller: '%s' is not a kernel function name", optarg);
                        if (++n_callers > FAIL_SPEC_CALLERS_MAX)
                                return usage_error("--caller: at most %d callers", FAIL_SPEC_CALLERS_MAX);
                        k = json_append_string(callers, optarg);
                        break;
                case ARG_COMM:
                        if (!*optarg || strlen(optarg) > COMM_MAX)
                                return usage_error("--comm: '%s' must be 1 to %d characters", optarg, COMM_MAX);
                        k = json_add_string(req, "comm", optarg);
                        break;
                case ARG_PID: {
                        uint64_t pid;

                        if (scope)
                                return usage_error("give one of --pid, --cgroup and --global");
                        r = parse_count_arg("--pid", optarg, 1, &pid);
                        if (r != 0)
                                return r;
                        if (pid > INT32_MAX)
                                return usage_error("--pid: '%s' is not a process id", optarg);
                        scope = scope_kind_to_string(SCOPE_KIND_PROCESS);
                        k = json_add_i64(req, "pid", (int64_t) pid);
                        break;
                }
                case ARG_CGROUP:
                        if (scope)
                                return usage_error("give one of --pid, --cgroup and --global");
                        if (!*optarg)
                                return usage_error("--cgroup needs a directory");
                        scope = scope_kind_to_string(SCOPE_KIND_CGROUP);
                        k = json_add_string(req, "cgroup", optarg);
                        break;
                case ARG_GLOBAL:
                        if (scope)
                                return usage_error("give one of --pid, --cgroup and --global");
                        scope = scope_kind_to_string(SCOPE_KIND_GLOBAL);
                        break;
                case ARG_BACKEND:
                        if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "kprobe") != 0 &&
                            strcmp(optarg, "fmod_ret") != 0)
                                return usage_error("--backend: unknown backend '%s' (auto, kprobe, fmod_ret)", optarg);
                        k = json_add_string(req, "backend", optarg);
                        break;
                case ARG_DETACH:
                        detach = true;
                        break;
                default:
                        r = handle_global_option(c, optarg, argv);
                        if (r >= 0)
                                return r;
                }
                if (k < 0)
                        return report_error(NULL, k, "Cannot build the request");
        }

        if (optind >= argc)
                return usage_error("inject needs a FUNCTION");
        if (argc - optind > 1)
                return usage_error("inject takes one FUNCTION, saw also '%s'", argv[optind + 1]);
        function = argv[optind];
        if (!function_name_is_valid(function))
                return usage_error("'%s' is not a kernel function name", function);
        if (!have_value)
                return usage_error("inject needs --error NAME|NUM or --retval N");

        k = json_add_pairs(req,
                           JSON_PAIR_STRING("function", function),
                           JSON_PAIR_IF(scope, JSON_PAIR_STRING("scope", scope)),
                           JSON_PAIR_IF(n_callers > 0, JSON_PAIR_REF("callers", callers)),
                           JSON_PAIR_IF(detach, JSON_PAIR_BOOL("detach", true)),
                           JSON_BUILD_END);
        if (k < 0)
                return report_error(NULL, k, "Cannot build the request");

        r = connect_daemon(&t);
        if (r < 0)
                return -r;
        r = transport_inject(t, req, &id, &expires, &injection);
        if (r < 0)
                return report_inject_error(t, r, function);

        if (arg_json) {
                _cleanup_json_ json_object *o = NULL;

                r = json_build_object(&o,
                                      JSON_PAIR_STRING("id", id),
                                      JSON_PAIR_U64("expires_usec", expires),
                                      JSON_PAIR_REF("injection", injection),
                                      JSON_BUILD_END);
                if (r < 0)
                        return report_error(NULL, r, "Cannot print the injection");
                print_json(o, !detach);
        } else if (detach) {
                printf("%s\n", id);
        } else {
                char lbuf[FORMAT_DURATION_MAX];
                uint64_t now = now_usec(CLOCK_REALTIME);

                printf("Injection %s armed: %s fails for %s.\n", id, function,
                       format_left(lbuf, sizeof(lbuf), expires > now ? expires - now : 0));
        }
        fflush(stdout);

        if (detach)
                return 0;
        return hold(t, id, function);
}
