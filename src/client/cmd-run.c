/* SPDX-License-Identifier: MIT */
/* injectctl run: run a command with faults armed for its process tree
 * only, from its first instruction to its exit. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "duration.h"
#include "errno-name.h"
#include "cli.h"
#include "cmd-run.h"
#include "json-build.h"
#include "json-util.h"
#include "event-watcher.h"
#include "held-child.h"
#include "spec-request.h"
#include "time-util.h"

#define RUN_SPECS_MAX 64
#define RUN_EVENT_WAIT_USEC (1 * USEC_PER_SEC)          /* for a removal event to trail ListInjections */
/* For the removal event of an injection this client just cancelled: the
 * daemon sent it before the answer to Cancel, so it is surely coming, and
 * the wait ends as soon as it is here (or the stream ends). The bound is
 * for a machine so loaded that the watcher thread is not run for long. */
#define RUN_CANCELLED_WAIT_USEC (60 * USEC_PER_SEC)
#define RUN_FALLBACK_POLL_USEC (100 * 1000)             /* only without the event stream */

typedef struct Armed {
        FailSpec *spec;
        char *id;
        json_object *last;      /* the freshest document seen */
        bool cancelled;
} Armed;

static volatile sig_atomic_t got_signal;
static pid_t child_pid;

static void on_signal(int sig) {
        got_signal = sig;
        /* SIGINT/SIGQUIT from a terminal reach CMD too; a SIGTERM sent to
         * injectctl alone is passed on. */
        if (sig == SIGTERM && child_pid > 0)
                (void) kill(child_pid, SIGTERM);
}

/* Refreshes each armed injection's last document from ListInjections. */
static void refresh(Transport *t, Armed *armed, size_t n) {
        _cleanup_json_ json_object *list = NULL;

        if (transport_list_injections(t, false, &list) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                json_object *doc;

                if (!armed[i].id)
                        continue;
                doc = injection_find(list, armed[i].id);
                if (doc) {
                        json_object_put(armed[i].last);
                        armed[i].last = json_object_get(doc);
                }
        }
}

static uint64_t doc_u64(json_object *doc, const char *key) {
        uint64_t v = 0;

        (void) json_get_u64(doc, key, 0, UINT64_MAX, &v);
        return v;
}

enum {
        ARG_FAIL = ARG_COMMAND_BASE,
        ARG_FOR,
};

int cmd_run(int argc, char **argv) {
        static const struct option options[] = {
                { "fail", required_argument, NULL, ARG_FAIL },
                { "for",  required_argument, NULL, ARG_FOR },
                GLOBAL_OPTIONS
        };
        _cleanup_(transport_freep) Transport *t = NULL;
        Armed armed[RUN_SPECS_MAX] = {};
        size_t n_specs = 0;
        uint64_t duration = 0;
        _cleanup_(event_watcher_freep) EventWatcher *w = NULL;
        HeldChild child = HELD_CHILD_NULL;
        int c, r, status = 0, exec_errno = 0, ret;
        struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term, old_quit;
        pid_t pid;

        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0)
                switch (c) {
                case ARG_FAIL: {
                        _cleanup_free_ char *msg = NULL;

                        if (n_specs >= RUN_SPECS_MAX) {
                                ret = usage_error("at most %d --fail", RUN_SPECS_MAX);
                                goto out;
                        }
                        r = fail_spec_parse(optarg, &armed[n_specs].spec, &msg);
                        if (r == -EINVAL) {
                                ret = usage_error("%s", msg);
                                goto out;
                        }
                        if (r < 0) {
                                ret = report_error(NULL, r, "Cannot parse --fail");
                                goto out;
                        }
                        n_specs++;
                        break;
                }
                case ARG_FOR:
                        ret = parse_duration_arg("--for", optarg, &duration);
                        if (ret != 0)
                                goto out;
                        break;
                default:
                        ret = handle_global_option(c, optarg, argv);
                        if (ret >= 0)
                                goto out;
                }
        if (n_specs == 0) {
                ret = usage_error("run needs at least one --fail SPEC");
                goto out;
        }
        if (optind < 1 || strcmp(argv[optind - 1], "--") != 0) {
                ret = usage_error("run needs '--' before the command");
                goto out;
        }
        if (optind >= argc) {
                ret = usage_error("run needs a command after '--'");
                goto out;
        }

        r = connect_daemon(&t);
        if (r < 0) {
                ret = -r;
                goto out;
        }

        /* The child waits before it execs until every fault is armed. */
        r = held_child_spawn(argv + optind, false, -1, &child);
        if (r < 0) {
                ret = report_error(NULL, r, "Cannot start the command");
                goto out;
        }
        pid = child.pid;
        child_pid = pid;
        (void) sigaction(SIGINT, &sa, &old_int);
        (void) sigaction(SIGTERM, &sa, &old_term);
        (void) sigaction(SIGQUIT, &sa, &old_quit);


        for (size_t i = 0; i < n_specs; i++) {
                _cleanup_json_ json_object *req = fail_spec_request(t, armed[i].spec, pid, duration);

                if (!req) {
                        ret = report_error(NULL, -ENOMEM, "Out of memory");
                        goto abort_child;
                }
                /* No document asked for: the summary's counters come from
                 * the one read at the end, and over D-Bus a document costs
                 * a ListInjections per --fail. */
                r = transport_inject(t, req, &armed[i].id, NULL, NULL);
                if (r < 0) {
                        fprintf(stderr, "injectctl: --fail '%s': ", armed[i].spec->function);
                        ret = report_inject_error(t, r, armed[i].spec->function);
                        goto abort_child;
                }
        }

        /* Go. */
        /* Without it, the summary lacks the final counters of injections
         * that ended during the run; not worth failing for. Started only
         * now: connecting first would start injectd by its socket, not by
         * the D-Bus call the user asked for; and no fault can come before
         * the command runs. */
        {
                const char *ids[RUN_SPECS_MAX];

                for (size_t i = 0; i < n_specs; i++)
                        ids[i] = armed[i].id;
                /* Only its own: a client that watched all of its user's
                 * injections would get, as would each of n concurrent
                 * runs of the same user, the events of all n. */
                (void) event_watcher_start_ids(arg_varlink_path, ids, n_specs, &w);
        }
        r = held_child_release(&child, &exec_errno);
        if (r < 0) {
                ret = report_error(NULL, r, "Cannot start the command");
                goto abort_child;
        }

        /* Wait for CMD's exit, the one event that ends a run; signals
         * interrupt waitpid() (no SA_RESTART) and are passed on by
         * on_signal(). With the event stream, nothing else is needed
         * meanwhile: an injection that ends during the run (expired,
         * exhausted) leaves its final counters in the "removed" event,
         * and those still armed are read once below. Without the stream
         * (no Varlink socket beside a D-Bus daemon), the counters of an
         * injection that ends mid-run would be lost: only then, poll
         * ListInjections slowly, as the one way left to see them. */
        for (;;) {
                pid_t p = waitpid(pid, &status, w ? 0 : WNOHANG);

                if (p == pid)
                        break;
                if (p < 0 && errno != EINTR) {
                        ret = report_error(NULL, -errno, "Cannot wait for the command");
                        goto cancel;
                }
                if (w)
                        continue;
                refresh(t, armed, n_specs);
                (void) usleep(RUN_FALLBACK_POLL_USEC);
        }
        child_pid = 0;
        held_child_done(&child);

        /* Final counters. With the event stream, every injection's come
         * with its removal event: cancel those still armed, and take the
         * document of each removal (those that ended during the run have
         * theirs already). A ListInjections would bring the documents of
         * all of the user's injections, n of them to each of n concurrent
         * runs. */
        if (w && !event_watcher_ended(w)) {
                for (size_t i = 0; i < n_specs; i++) {
                        r = transport_cancel(t, armed[i].id);
                        if (r >= 0 ||
                            (r == -EREMOTEIO && strcmp(transport_error_name(t), "NoSuchInjection") == 0))
                                armed[i].cancelled = true;
                }
                for (size_t i = 0; i < n_specs; i++) {
                        json_object *doc;

                        if (!armed[i].cancelled)
                                continue;
                        doc = event_watcher_wait_removed(w, armed[i].id, RUN_CANCELLED_WAIT_USEC);
                        if (!doc)
                                continue;
                        json_object_put(armed[i].last);
                        armed[i].last = doc;
                }
        }
        /* Without it, or for what could not be cancelled: fresh for the
         * injections still armed, from the removal event for those that
         * ended during the run. The event and ListInjections come over
         * different connections, so the event may trail the list by a
         * moment: wait for it, bounded by RUN_EVENT_WAIT_USEC, and woken
         * at once when it comes or the stream ends. */
        bool need_list = false;
        for (size_t i = 0; i < n_specs; i++)
                if (!armed[i].cancelled)
                        need_list = true;
        if (need_list) {
                _cleanup_json_ json_object *list = NULL;

                /* A failed list (the daemon gone) leaves the events. */
                if (transport_list_injections(t, false, &list) < 0)
                        list = NULL;
                for (size_t i = 0; i < n_specs; i++) {
                        json_object *doc = list ? injection_find(list, armed[i].id) : NULL;

                        if (armed[i].cancelled)
                                continue;
                        if (doc)
                                json_object_get(doc);
                        else
                                doc = event_watcher_wait_removed(w, armed[i].id, RUN_EVENT_WAIT_USEC);
                        if (!doc)
                                continue;
                        json_object_put(armed[i].last);
                        armed[i].last = doc;
                }
        }

        if (exec_errno) {
                fprintf(stderr, "injectctl: Cannot execute '%s': %s\n", argv[optind], strerror(exec_errno));
                ret = 127;
        } else
                ret = exit_code_from_status(status);

        /* The summary. */
        {
                _cleanup_json_ json_object *sum = json_object_new_array();
                int k = sum ? 0 : -ENOMEM;

                if (!arg_json)
                        fprintf(stderr, "%-32s %10s %10s %10s\n", "FUNCTION", "MATCHED", "INJECTED", "GUARDED");
                for (size_t i = 0; i < n_specs; i++) {
                        json_object *doc = armed[i].last, *o = NULL;
                        uint64_t matched = doc_u64(doc, "calls_matched"), injected = doc_u64(doc, "faults_injected"),
                                guarded = doc_u64(doc, "calls_guarded");

                        if (!arg_json) {
                                fprintf(stderr, "%-32s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
                                        armed[i].spec->function, matched, injected, guarded);
                                continue;
                        }
                        if (k >= 0)
                                k = json_build_object(&o,
                                                      JSON_PAIR_STRING("spec", armed[i].spec->function),
                                                      JSON_PAIR_STRING("id", armed[i].id),
                                                      JSON_PAIR_STRING("function", armed[i].spec->function),
                                                      JSON_PAIR_U64("calls_seen", doc_u64(doc, "calls_seen")),
                                                      JSON_PAIR_U64("calls_matched", matched),
                                                      JSON_PAIR_U64("faults_injected", injected),
                                                      JSON_PAIR_U64("calls_guarded", guarded),
                                                      JSON_BUILD_END);
                        if (k >= 0)
                                k = json_append(sum, o);
                }
                if (arg_json) {
                        _cleanup_json_ json_object *o = NULL;

                        if (k >= 0)
                                k = json_build_object(&o,
                                                      JSON_PAIR_I64("exit_status", ret),
                                                      JSON_PAIR_REF("injections", sum),
                                                      JSON_BUILD_END);
                        /* stderr, like the text summary: stdout is CMD's. */
                        if (k >= 0)
                                fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
                        else
                                (void) report_error(NULL, k, "Cannot print the summary");
                }
        }
        goto cancel;

abort_child:
        held_child_kill(&child, false);
        child_pid = 0;

cancel:
        for (size_t i = 0; i < n_specs; i++) {
                if (!armed[i].id || armed[i].cancelled)
                        continue;
                r = transport_cancel(t, armed[i].id);
                if (r == -EREMOTEIO && strcmp(transport_error_name(t), "NoSuchInjection") == 0)
                        continue;
                if (r < 0)
                        (void) report_error(t, r, "Cannot cancel");
        }
        (void) sigaction(SIGINT, &old_int, NULL);
        (void) sigaction(SIGTERM, &old_term, NULL);
        (void) sigaction(SIGQUIT, &old_quit, NULL);

out:
        held_child_done(&child);
        for (size_t i = 0; i < RUN_SPECS_MAX; i++) {
                fail_spec_free(armed[i].spec);
                free(armed[i].id);
                json_object_put(armed[i].last);
        }
        return ret;
}
