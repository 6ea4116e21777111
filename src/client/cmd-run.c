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
#include "injectctl.h"
#include "json-util.h"
#include "spec.h"
#include "varlink.h"

#define RUN_SPECS_MAX 64

typedef struct Armed {
        FailSpec *spec;
        char *id;
        json_object *last;      /* the freshest document seen */
} Armed;

/* Injections that end during the run (times=N: "exhausted") are gone
 * from ListInjections by the time CMD exits; their final counters come
 * with Varlink's "removed" event. A second connection watches for them;
 * events come for injections of either API. */
typedef struct Watcher {
        VarlinkClient *client;
        pthread_t thread;
        pthread_mutex_t lock;
        json_object *removed;   /* id → last document */
        bool started;
        int ready[2];           /* the thread writes a byte once "watching" */
} Watcher;

static volatile sig_atomic_t got_signal;
static pid_t child_pid;

static void on_signal(int sig) {
        got_signal = sig;
        /* SIGINT/SIGQUIT from a terminal reach CMD too; a SIGTERM sent to
         * injectctl alone is passed on. */
        if (sig == SIGTERM && child_pid > 0)
                (void) kill(child_pid, SIGTERM);
}

static int on_watch_reply(VarlinkClient *c, json_object *params, const char *error, bool continues, void *userdata) {
        Watcher *w = userdata;
        json_object *event, *doc;
        const char *type, *id;

        if (error || json_get_object(params, "event", &event) < 0 || json_get_string(event, "type", &type) < 0)
                return 1;
        if (strcmp(type, "watching") == 0) {
                (void) write(w->ready[1], "x", 1);
                return 0;
        }
        if (strcmp(type, "removed") == 0 && json_get_string(event, "id", &id) >= 0 &&
            json_get_object(event, "injection", &doc) >= 0) {
                pthread_mutex_lock(&w->lock);
                json_object_object_add(w->removed, id, json_object_get(doc));
                pthread_mutex_unlock(&w->lock);
        }
        return 0;
}

static void *watch_thread(void *userdata) {
        Watcher *w = userdata;

        (void) varlink_client_call_more(w->client, "org.injectd.Injector.Watch", NULL, on_watch_reply, w);
        (void) write(w->ready[1], "", 1);
        return NULL;
}

static void watcher_start(Watcher *w) {
        char c;

        *w = (Watcher) { .ready = { -1, -1 } };
        pthread_mutex_init(&w->lock, NULL);
        w->removed = json_object_new_object();
        if (!w->removed || pipe2(w->ready, O_CLOEXEC) < 0)
                return;
        if (varlink_client_connect(arg_varlink_path ?: INJECTD_VARLINK_ADDRESS, &w->client) < 0)
                return;
        varlink_client_set_timeout(w->client, VARLINK_TIMEOUT_INFINITY);
        if (pthread_create(&w->thread, NULL, watch_thread, w) != 0)
                return;
        w->started = true;
        /* Armed only once the stream is on, so no removal is missed. */
        (void) read(w->ready[0], &c, 1);
}

static json_object *watcher_removed(Watcher *w, const char *id) {
        json_object *doc = NULL;

        if (!w->started)
                return NULL;
        pthread_mutex_lock(&w->lock);
        doc = json_object_get(json_object_object_get(w->removed, id));
        pthread_mutex_unlock(&w->lock);
        return doc;
}

static void watcher_stop(Watcher *w) {
        if (w->started) {
                (void) shutdown(varlink_client_get_fd(w->client), SHUT_RDWR);
                (void) pthread_join(w->thread, NULL);
        }
        w->client = varlink_client_free(w->client);
        json_object_put(w->removed);
        (void) safe_close(w->ready[0]);
        (void) safe_close(w->ready[1]);
        pthread_mutex_destroy(&w->lock);
}

/* Without :ERROR, a value that fits the function's type. */
static int default_value(Transport *t, const FailSpec *spec, json_object *req) {
        _cleanup_json_ json_object *list = NULL;
        const char *type = "";

        if (transport_list_functions(t, spec->function, &list) >= 0 && json_object_array_length(list) == 1)
                (void) json_get_string(json_object_array_get_idx(list, 0), "type", &type);
        if (strcmp(type, "TRUE") == 0)
                json_object_object_add(req, "retval", json_object_new_int(1));
        else if (strcmp(type, "NULL") == 0)
                json_object_object_add(req, "retval", json_object_new_int(0));
        else
                json_object_object_add(req, "error", json_object_new_string("ENOMEM"));
        return 0;
}

static json_object *spec_request(Transport *t, const FailSpec *spec, pid_t pid, uint64_t duration) {
        json_object *req = json_object_new_object();

        if (!req)
                return NULL;
        json_object_object_add(req, "function", json_object_new_string(spec->function));
        if (spec->error) {
                const char *name = errno_to_name(spec->error);

                json_object_object_add(req, "error",
                                       name ? json_object_new_string(name) : json_object_new_int(spec->error));
        } else
                (void) default_value(t, spec, req);
        json_object_object_add(req, "scope", json_object_new_string("process"));
        json_object_object_add(req, "pid", json_object_new_int64(pid));
        if (duration > 0)
                json_object_object_add(req, "duration_usec", json_object_new_uint64(duration));
        if (spec->has_after)
                json_object_object_add(req, "after", json_object_new_uint64(spec->after));
        if (spec->every)
                json_object_object_add(req, "every", json_object_new_uint64(spec->every));
        if (spec->times)
                json_object_object_add(req, "times", json_object_new_uint64(spec->times));
        if (spec->probability > 0)
                json_object_object_add(req, "probability", json_object_new_double(spec->probability));
        if (spec->n_callers > 0) {
                json_object *a = json_object_new_array();

                for (size_t i = 0; i < spec->n_callers; i++)
                        json_object_array_add(a, json_object_new_string(spec->callers[i]));
                json_object_object_add(req, "callers", a);
        }
        return req;
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
        int go[2] = { -1, -1 }, err[2] = { -1, -1 };
        int c, r, status = 0, exec_errno = 0, ret;
        Watcher w = {};
        bool watcher = false;
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

        /* The child waits for a byte on go before it execs; err carries
         * execvp()'s errno back (closed on a successful exec). */
        if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
                ret = report_error(NULL, -errno, "Cannot make a pipe");
                goto out;
        }
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                ret = report_error(NULL, -errno, "Cannot fork");
                goto out;
        }
        if (pid == 0) {
                char byte;
                int e;

                (void) close(go[1]);
                (void) close(err[0]);
                if (read(go[0], &byte, 1) != 1)
                        _exit(127); /* injectctl gave up */
                (void) execvp(argv[optind], argv + optind);
                e = errno;
                (void) write(err[1], &e, sizeof(e));
                _exit(127);
        }
        child_pid = pid;
        go[0] = safe_close(go[0]);
        err[1] = safe_close(err[1]);
        (void) sigaction(SIGINT, &sa, &old_int);
        (void) sigaction(SIGTERM, &sa, &old_term);
        (void) sigaction(SIGQUIT, &sa, &old_quit);

        watcher_start(&w);
        watcher = true;

        for (size_t i = 0; i < n_specs; i++) {
                _cleanup_json_ json_object *req = spec_request(t, armed[i].spec, pid, duration);

                if (!req) {
                        ret = report_error(NULL, -ENOMEM, "Out of memory");
                        goto abort_child;
                }
                r = transport_inject(t, req, &armed[i].id, NULL, &armed[i].last);
                if (r < 0) {
                        fprintf(stderr, "injectctl: --fail '%s': ", armed[i].spec->function);
                        ret = report_error(t, r, "Cannot inject");
                        goto abort_child;
                }
        }

        /* Go. */
        if (write(go[1], "g", 1) != 1) {
                ret = report_error(NULL, -errno, "Cannot start the command");
                goto abort_child;
        }
        go[1] = safe_close(go[1]);
        if (read(err[0], &exec_errno, sizeof(exec_errno)) != sizeof(exec_errno))
                exec_errno = 0;

        for (;;) {
                pid_t p = waitpid(pid, &status, WNOHANG);

                if (p == pid)
                        break;
                if (p < 0 && errno != EINTR) {
                        ret = report_error(NULL, -errno, "Cannot wait for the command");
                        goto cancel;
                }
                refresh(t, armed, n_specs);
                (void) usleep(100 * 1000);
        }
        child_pid = 0;

        /* Final counters: fresh for the injections still armed, from the
         * removal event for those that ended during the run. */
        refresh(t, armed, n_specs);
        for (size_t i = 0; i < n_specs; i++) {
                _cleanup_json_ json_object *list = NULL;

                if (transport_list_injections(t, false, &list) >= 0 && injection_find(list, armed[i].id))
                        continue;
                for (int k = 0; k < 20; k++) {
                        json_object *doc = watcher_removed(&w, armed[i].id);

                        if (doc) {
                                json_object_put(armed[i].last);
                                armed[i].last = doc;
                                break;
                        }
                        if (!w.started)
                                break;
                        (void) usleep(50 * 1000);
                }
        }

        if (exec_errno) {
                fprintf(stderr, "injectctl: Cannot execute '%s': %s\n", argv[optind], strerror(exec_errno));
                ret = 127;
        } else if (WIFEXITED(status))
                ret = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
                ret = 128 + WTERMSIG(status);
        else
                ret = EXIT_REFUSED;

        /* The summary. */
        {
                _cleanup_json_ json_object *sum = json_object_new_array();

                if (!arg_json)
                        fprintf(stderr, "%-32s %10s %10s\n", "FUNCTION", "MATCHED", "INJECTED");
                for (size_t i = 0; i < n_specs; i++) {
                        json_object *doc = armed[i].last, *o;
                        uint64_t matched = doc_u64(doc, "calls_matched"), injected = doc_u64(doc, "faults_injected");

                        if (!arg_json) {
                                fprintf(stderr, "%-32s %10" PRIu64 " %10" PRIu64 "\n", armed[i].spec->function,
                                        matched, injected);
                                continue;
                        }
                        o = json_object_new_object();
                        json_object_object_add(o, "spec", json_object_new_string(armed[i].spec->function));
                        json_object_object_add(o, "id", json_object_new_string(armed[i].id));
                        json_object_object_add(o, "function", json_object_new_string(armed[i].spec->function));
                        json_object_object_add(o, "calls_seen", json_object_new_uint64(doc_u64(doc, "calls_seen")));
                        json_object_object_add(o, "calls_matched", json_object_new_uint64(matched));
                        json_object_object_add(o, "faults_injected", json_object_new_uint64(injected));
                        json_object_array_add(sum, o);
                }
                if (arg_json) {
                        _cleanup_json_ json_object *o = json_object_new_object();

                        json_object_object_add(o, "exit_status", json_object_new_int(ret));
                        json_object_object_add(o, "injections", json_object_get(sum));
                        /* stderr, like the text summary: stdout is CMD's. */
                        fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
                }
        }
        goto cancel;

abort_child:
        (void) kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        child_pid = 0;

cancel:
        for (size_t i = 0; i < n_specs; i++) {
                if (!armed[i].id)
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
        if (watcher)
                watcher_stop(&w);
        (void) safe_close(go[0]);
        (void) safe_close(go[1]);
        (void) safe_close(err[0]);
        (void) safe_close(err[1]);
        for (size_t i = 0; i < RUN_SPECS_MAX; i++) {
                fail_spec_free(armed[i].spec);
                free(armed[i].id);
                json_object_put(armed[i].last);
        }
        return ret;
}
