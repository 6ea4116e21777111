/* SPDX-License-Identifier: MIT */
/* injectctl inject: arm one injection, then hold it (live counters until
 * Ctrl-C or expiry) or, with --detach, leave it armed. */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "errno-name.h"
#include "event-watcher.h"
#include "cli.h"
#include "cmd-inject.h"
#include "json-build.h"
#include "json-util.h"
#include "scope-kind.h"
#include "spec-request.h"
#include "spec.h"
#include "time-util.h"

/* Holding learns of its injection's faults and of its end from the
 * daemon's events (a Varlink Watch of this one injection, event-watcher.h,
 * which serves the D-Bus transport too), not by asking again and again. A
 * fault event makes one read of the counters (ListInjections): faults
 * closer together than HOLD_COALESCE_USEC share one. calls_seen,
 * calls_matched and calls_guarded change with every call of the function
 * and no event carries them, so they are shown as of the last fault and,
 * at the end, as the "removed" event has them. Where no event stream can
 * be had (the Varlink socket unreachable), holding falls back on reading
 * the counters every HOLD_POLL_MSEC, and says so. */
#define HOLD_COALESCE_USEC (200 * USEC_PER_MSEC)
#define HOLD_POLL_MSEC 500
/* How long a cancel waits for the "removed" event with the final counters;
 * and, past the deadline, how long before the injection is read once more
 * in case its "removed" event never comes. */
#define HOLD_EVENT_WAIT_USEC (10 * USEC_PER_SEC)
#define COMM_MAX 15
/* The scope options name one scope between them. */
#define SCOPE_OPTIONS_CLASH "give one of --pid, --cgroup, --device and --global"

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
        ARG_DEVICE,
        ARG_GLOBAL,
        ARG_BACKEND,
        ARG_DETACH,
        ARG_FILTER,     /* an argument filter: its option is its SPEC key */
        ARG_KERNEL_LOG,
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

typedef struct Hold {
        Transport *t;
        const char *id, *function;
        uint64_t expires;       /* the deadline, CLOCK_REALTIME */
        bool tty;
        Counters last;          /* the last shown; seen UINT64_MAX before the first */
} Hold;

static void counters_from(json_object *doc, Counters *c) {
        (void) json_get_u64(doc, "calls_seen", 0, UINT64_MAX, &c->seen);
        (void) json_get_u64(doc, "calls_matched", 0, UINT64_MAX, &c->matched);
        (void) json_get_u64(doc, "faults_injected", 0, UINT64_MAX, &c->injected);
        (void) json_get_u64(doc, "calls_guarded", 0, UINT64_MAX, &c->guarded);
}

static uint64_t hold_left(const Hold *h) {
        uint64_t now = now_usec(CLOCK_REALTIME);

        return h->expires > now ? h->expires - now : 0;
}

/* Shows the counters: a JSON line or a text line when they changed, and
 * on a terminal the status line again (the time left moves on). */
static void hold_show(Hold *h, const Counters *now, uint64_t left) {
        char lbuf[FORMAT_DURATION_MAX];
        bool changed = !counters_equal(now, &h->last);

        if (arg_json && changed)
                print_counters(h->id, "counters", now, left);
        if (!arg_json) {
                if (h->tty)
                        printf("\r\033[K%s: seen %" PRIu64 ", matched %" PRIu64 ", injected %" PRIu64
                               ", guarded %" PRIu64 ", %s left",
                               h->function, now->seen, now->matched, now->injected, now->guarded,
                               format_left(lbuf, sizeof(lbuf), left));
                else if (changed)
                        printf("%s: seen %" PRIu64 ", matched %" PRIu64 ", injected %" PRIu64
                               ", guarded %" PRIu64 "\n",
                               h->function, now->seen, now->matched, now->injected, now->guarded);
                fflush(stdout);
        }
        h->last = *now;
}

/* One read of the counters. Sets *gone when the injection is no longer
 * listed, or has no time left. */
static int hold_read(Hold *h, bool *gone) {
        _cleanup_json_ json_object *list = NULL;
        Counters now = h->last;
        uint64_t left = 0;
        json_object *doc;
        int r;

        r = transport_list_injections(h->t, false, &list);
        if (r < 0)
                return report_error(h->t, r, "Cannot read the injection");
        doc = injection_find(list, h->id);
        if (!doc) {
                *gone = true;
                return 0;
        }
        if (now.seen == UINT64_MAX)
                now = (Counters) {};
        counters_from(doc, &now);
        (void) json_get_u64(doc, "remaining_usec", 0, UINT64_MAX, &left);
        hold_show(h, &now, left);
        *gone = left == 0;
        return 0;
}

/* Without events: a read every HOLD_POLL_MSEC, until a signal or the end.
 * The wait is a ppoll() with the stop signals let in, so Ctrl-C cancels at
 * once. */
static int hold_poll(Hold *h, const sigset_t *waitmask, bool *gone) {
        int r;

        while (!stop_signal) {
                struct timespec ts = { .tv_nsec = HOLD_POLL_MSEC * 1000000L };

                r = hold_read(h, gone);
                if (r < 0 || *gone)
                        return r;
                (void) ppoll(NULL, 0, &ts, waitmask);
        }
        return 0;
}

/* With events: sleeps in ppoll() on the watcher's eventfd, with the stop
 * signals let in, until a fault (one read), the "removed" event (the final
 * counters, from it) or a signal. A terminal's status line is redrawn
 * once a second for the time left, from the deadline, without asking the
 * daemon. */
static int hold_events(Hold *h, EventWatcher *w, const sigset_t *waitmask, bool *gone) {
        uint64_t handled = 0, last_read = 0, recheck = h->expires + HOLD_EVENT_WAIT_USEC;
        int r;

        /* What came between the arm and the stream, and since. */
        handled = event_watcher_fault_count(w, h->id);
        r = hold_read(h, gone);
        if (r < 0 || *gone)
                return r;
        last_read = now_usec(CLOCK_MONOTONIC);
        while (!stop_signal) {
                _cleanup_json_ json_object *doc = event_watcher_removed(w, h->id);
                struct pollfd pfd = { .fd = event_watcher_fd(w), .events = POLLIN };
                uint64_t now, faults, timeout = UINT64_MAX;
                eventfd_t drained;
                struct timespec ts;

                if (doc) {
                        *gone = true;   /* hold() shows its final counters */
                        return 0;
                }
                if (event_watcher_ended(w)) {
                        fprintf(stderr, "The daemon's event stream ended; reading the counters every %d ms.\n",
                                HOLD_POLL_MSEC);
                        return hold_poll(h, waitmask, gone);
                }
                now = now_usec(CLOCK_MONOTONIC);
                faults = event_watcher_fault_count(w, h->id);
                if (faults != handled) {
                        if (now >= last_read + HOLD_COALESCE_USEC) {
                                handled = faults;
                                r = hold_read(h, gone);
                                last_read = now_usec(CLOCK_MONOTONIC);
                                if (r < 0 || *gone)
                                        return r;
                                continue;
                        }
                        timeout = last_read + HOLD_COALESCE_USEC - now;
                }
                /* Past its deadline with no "removed" event (a daemon that
                 * lost it): read once, then wait as long again. */
                if (now_usec(CLOCK_REALTIME) >= recheck) {
                        r = hold_read(h, gone);
                        if (r < 0 || *gone)
                                return r;
                        recheck = now_usec(CLOCK_REALTIME) + HOLD_EVENT_WAIT_USEC;
                }
                if (h->tty && timeout > USEC_PER_SEC)
                        timeout = USEC_PER_SEC;
                if (timeout > HOLD_EVENT_WAIT_USEC)
                        timeout = HOLD_EVENT_WAIT_USEC;
                ts = (struct timespec) { .tv_sec = (time_t) (timeout / USEC_PER_SEC),
                                         .tv_nsec = (long) (timeout % USEC_PER_SEC) * 1000L };
                (void) ppoll(&pfd, 1, &ts, waitmask);
                (void) eventfd_read(pfd.fd, &drained);
                if (h->tty)
                        hold_show(h, &h->last, hold_left(h));
        }
        return 0;
}

/* The final counters come with the "removed" event, which may follow the
 * end a read saw (an injection exhausted by the fault whose event made the
 * read) or a cancel: shows them once it comes. */
static void hold_final(Hold *h, EventWatcher *w) {
        _cleanup_json_ json_object *doc = event_watcher_wait_removed(w, h->id, HOLD_EVENT_WAIT_USEC);
        Counters end = h->last;

        if (!doc)
                return;
        if (end.seen == UINT64_MAX)
                end = (Counters) {};
        counters_from(doc, &end);
        hold_show(h, &end, 0);
}

static int hold(Transport *t, const char *id, const char *function, uint64_t expires) {
        _cleanup_(event_watcher_freep) EventWatcher *w = NULL;
        struct sigaction sa = { .sa_handler = on_stop };
        Hold h = { .t = t, .id = id, .function = function, .expires = expires, .tty = isatty(STDOUT_FILENO),
                   .last = { .seen = UINT64_MAX } };
        sigset_t stops, waitmask;
        bool gone = false;
        int r;

        /* The stop signals are blocked but while waiting (ppoll()): one
         * that comes during a read is not lost, and cuts the next wait. */
        sigemptyset(&stops);
        sigaddset(&stops, SIGINT);
        sigaddset(&stops, SIGTERM);
        sigaddset(&stops, SIGHUP);
        (void) sigprocmask(SIG_BLOCK, &stops, &waitmask);
        sigdelset(&waitmask, SIGINT);
        sigdelset(&waitmask, SIGTERM);
        sigdelset(&waitmask, SIGHUP);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGHUP, &sa, NULL);

        if (!arg_json && h.tty)
                printf("Holding it; Ctrl-C cancels.\n");
        fflush(stdout);

        r = event_watcher_start(arg_varlink_path, id, &w);
        if (r < 0) {
                fprintf(stderr, "Cannot follow the injection's events (%s); reading its counters every %d ms.\n",
                        strerror(-r), HOLD_POLL_MSEC);
                r = hold_poll(&h, &waitmask, &gone);
        } else
                r = hold_events(&h, w, &waitmask, &gone);
        if (r < 0)
                return r;

        if (!gone) {
                r = transport_cancel(t, id);
                if (r == -EREMOTEIO && strcmp(transport_error_name(t), "NoSuchInjection") == 0)
                        r = 0;
                if (r < 0)
                        return report_error(t, r, "Cannot cancel");
        }
        hold_final(&h, w);
        if (!arg_json && h.tty)
                printf("\n");
        if (h.last.seen == UINT64_MAX)
                h.last = (Counters) {};

        if (gone) {
                if (arg_json)
                        print_counters(id, "ended", &h.last, 0);
                else
                        printf("Injection %s ended (expired or exhausted).\n", id);
        } else if (arg_json)
                print_counters(id, "cancelled", &h.last, 0);
        else
                printf("Cancelled %s: seen %" PRIu64 ", matched %" PRIu64 ", injected %" PRIu64
                       ", guarded %" PRIu64 ".\n",
                       id, h.last.seen, h.last.matched, h.last.injected, h.last.guarded);
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
                { "device",      required_argument, NULL, ARG_DEVICE },
                { "global",      no_argument,       NULL, ARG_GLOBAL },
                { "backend",     required_argument, NULL, ARG_BACKEND },
                { "detach",      no_argument,       NULL, ARG_DETACH },
                { "ignore-gfp-wait",    no_argument,       NULL, ARG_FILTER },
                { "ignore-gfp-highmem", no_argument,       NULL, ARG_FILTER },
                { "min-order",   required_argument, NULL, ARG_FILTER },
                { "min-size",    required_argument, NULL, ARG_FILTER },
                { "cache",       required_argument, NULL, ARG_FILTER },
                { "kernel-log",  required_argument, NULL, ARG_KERNEL_LOG },
                GLOBAL_OPTIONS
        };
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_json_ json_object *req = NULL, *callers = NULL, *injection = NULL;
        _cleanup_free_ char *id = NULL;
        _cleanup_(arg_filter_args_done) ArgFilterArgs filters = {};
        const char *function, *scope = NULL;
        bool have_value = false, detach = false;
        uint64_t expires = 0, v;
        int c, k = 0, n_callers = 0, idx = -1, r;

        req = json_object_new_object();
        callers = json_object_new_array();
        if (!req || !callers)
                return report_error(NULL, -ENOMEM, "Out of memory");

        while ((c = getopt_long(argc, argv, ":h", options, &idx)) >= 0) {
                switch (c) {
                case ARG_FILTER: {
                        _cleanup_free_ char *msg = NULL;

                        r = arg_filter_args_set(&filters, options[idx].name, optarg, &msg);
                        if (r == -EINVAL)
                                return usage_error("%s", msg);
                        k = r;
                        break;
                }
                case ARG_KERNEL_LOG:
                        r = parse_count_arg("--kernel-log", optarg, 0, &v);
                        if (r != 0)
                                return r;
                        if (v > 2)
                                return usage_error("--kernel-log: '%s' is not 0, 1 or 2", optarg);
                        k = json_add_u64(req, "kernel_log", v);
                        break;
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
                                return usage_error(SCOPE_OPTIONS_CLASH);
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
                                return usage_error(SCOPE_OPTIONS_CLASH);
                        if (!*optarg)
                                return usage_error("--cgroup needs a directory");
                        scope = scope_kind_to_string(SCOPE_KIND_CGROUP);
                        k = json_add_string(req, "cgroup", optarg);
                        break;
                case ARG_DEVICE:
                        /* The daemon resolves and checks the name (a whole
                         * disk: "loop3", "/dev/loop3", "7:3"). */
                        if (scope)
                                return usage_error(SCOPE_OPTIONS_CLASH);
                        if (!*optarg)
                                return usage_error("--device needs a block device (loop3, /dev/loop3, 7:3)");
                        scope = scope_kind_to_string(SCOPE_KIND_DEVICE);
                        k = json_add_string(req, "device", optarg);
                        break;
                case ARG_GLOBAL:
                        if (scope)
                                return usage_error(SCOPE_OPTIONS_CLASH);
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
        if (k >= 0)
                k = arg_filter_args_to_json(&filters, req);
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
        return hold(t, id, function, expires);
}
