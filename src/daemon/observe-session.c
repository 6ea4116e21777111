/* SPDX-License-Identifier: MIT */
/* Observe sessions (observe-session.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "authorize.h"
#include "cleanup.h"
#include "engine-observe.h"
#include "json-build.h"
#include "json-util.h"
#include "log.h"
#include "observe-session.h"
#include "pidfd-util.h"
#include "policy-check.h"
#include "request.h"
#include "scope-resolve.h"

struct ObserveSession {
        ObserveSession *next;           /* in manager->observe_sessions */
        Manager *manager;
        uid_t uid;                      /* the observer's, for the shares */
        bool privileged;
        /* While polkit decides (observe is NULL until it says yes): what
         * the start needs then. A session waiting counts toward the shares. */
        PolkitCheck *check;
        Caller caller;
        json_object *params;            /* a reference: functions[] borrow from it */
        const char **functions;
        size_t n_functions;
        pid_t pid;
        uint64_t start_ticks;
        char *scope_desc;
        uint64_t duration;
        observe_started_cb started;
        EngineObserve *observe;
        int pidfd;                      /* the root's, readable once it exits */
        sd_event_source *exit_watch;
        sd_event_source *timer;
        observe_done_cb done;
        void *userdata;
};

ObserveSession *observe_session_free(ObserveSession *s) {
        if (!s)
                return NULL;
        for (ObserveSession **pp = &s->manager->observe_sessions; *pp; pp = &(*pp)->next)
                if (*pp == s) {
                        *pp = s->next;
                        break;
                }
        /* A check still waiting is cancelled: its answer goes nowhere. */
        polkit_check_free(s->check);
        caller_done(&s->caller);
        json_object_put(s->params);
        free(s->functions);
        free(s->scope_desc);
        sd_event_source_disable_unref(s->exit_watch);
        sd_event_source_disable_unref(s->timer);
        engine_observe_free(s->observe);
        safe_close(s->pidfd);
        free(s);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(ObserveSession *, observe_session_free);

static json_object *function_json(const ObserveFunction *f) {
        json_object *o = NULL, *stacks = json_object_new_array();

        for (size_t i = 0; stacks && i < f->n_stacks; i++) {
                const ObserveStack *x = &f->stacks[i];
                json_object *st = NULL, *samples = json_object_new_array();

                for (size_t j = 0; samples && j < x->n_samples; j++)
                        if (json_append(samples, json_object_new_uint64(x->samples[j])) < 0) {
                                json_object_put(samples);
                                samples = NULL;
                        }
                if (!samples ||
                    json_build_object(&st, JSON_PAIR_U64("first_call", x->first_call),
                                      JSON_PAIR_U64("last_call", x->last_call),
                                      JSON_PAIR_U64("calls", x->calls),
                                      JSON_PAIR_U64("sample_stride", x->sample_stride),
                                      JSON_PAIR_OBJECT("samples", samples),
                                      JSON_PAIR_OBJECT("frames", json_new_strv((const char *const *) x->frames, SIZE_MAX)),
                                      JSON_BUILD_END) < 0 ||
                    json_append(stacks, st) < 0) {
                        json_object_put(stacks);
                        return NULL;
                }
        }
        if (json_build_object(&o,
                              JSON_PAIR_STRING("function", f->name),
                              JSON_PAIR_U64("calls", f->calls),
                              JSON_PAIR_OBJECT("stacks", stacks),
                              JSON_PAIR_U64("stack_errors", f->stack_errors),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

static void finish(ObserveSession *s, const char *ended) {
        _cleanup_json_ json_object *result = NULL, *a = json_object_new_array();
        ObserveFunction *v = NULL;
        InjectError err = {};
        size_t n = 0;
        int r;

        r = engine_observe_read(s->observe, &v, &n);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = json_append(a, function_json(&v[i]));
        observe_functions_free(v, n);
        if (r >= 0)
                r = json_build_object(&result, JSON_PAIR_REF("functions", a), JSON_PAIR_STRING("ended", ended),
                                      JSON_BUILD_END);
        if (r < 0)
                inject_error_set(&err, r, INJECT_ERROR_UNAVAILABLE, "Cannot read the observation's counts: %s",
                                 strerror(-r));
        s->done(s, r < 0 ? NULL : result, r < 0 ? &err : NULL, s->userdata);
        observe_session_free(s);
}

static int on_root_exit(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        finish(userdata, "exited");
        return 0;
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        finish(userdata, "timeout");
        return 0;
}

void observe_session_stop(ObserveSession *s) {
        /* Not started yet (polkit deciding): the front ends show no
         * session until it is. */
        if (!s->observe)
                return;
        finish(s, "stopped");
}

unsigned observe_session_count(Manager *m, uid_t uid, bool any_uid) {
        unsigned n = 0;

        for (ObserveSession *s = m->observe_sessions; s; s = s->next)
                /* A privileged caller's sessions are not the share of an
                 * unprivileged caller with its uid (root in a container). */
                if (any_uid || (s->uid == uid && !s->privileged))
                        n++;
        return n;
}

static int take_pidfd(json_object *params, const int *fds, size_t n_fds, InjectRequest *req, InjectError *err) {
        uint64_t u;
        int r;

        r = json_get_u64(params, "pidfd", 0, REQUEST_FDS_MAX - 1, &u);
        if (r == -ENOENT)
                return 0;
        if (r < 0 || u >= n_fds || fds[u] < 0)
                return inject_error_set(err, -EBADF, INJECT_ERROR_INVALID_ARGUMENT,
                                        "'pidfd' must name one of the %zu file descriptors the call brought", n_fds);
        req->pidfd = fcntl(fds[u], F_DUPFD_CLOEXEC, 3);
        return req->pidfd < 0 ? negative_errno() : 0;
}

/* The functions named, each a string the policy lets the caller fail. */
static int parse_functions(Manager *m, const Caller *c, json_object *params, const char ***ret, size_t *ret_n,
                           InjectError *err) {
        _cleanup_free_ const char **v = NULL;
        json_object *a;
        size_t n;

        if (json_get_array(params, "functions", &a) < 0 || (n = json_object_array_length(a)) == 0 ||
            n > OBSERVE_FUNCTIONS_MAX)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                        "'functions' (an array of 1 to %d function names) is required",
                                        OBSERVE_FUNCTIONS_MAX);
        v = calloc(n, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *f = json_object_array_get_idx(a, i);

                if (!json_object_is_type(f, json_type_string) || json_object_get_string_len(f) == 0 ||
                    json_object_get_string_len(f) > REQUEST_MAX_STRING ||
                    strlen(json_object_get_string(f)) != (size_t) json_object_get_string_len(f))
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                "'functions' element %zu is not a function name", i);
                v[i] = json_object_get_string(f);
                /* Observing tells what a function is called with and how
                 * often: only for what the caller may fail anyway. */
                if (!c->privileged && !policy_glue_function_allowed(m->policy, c, v[i]))
                        return inject_error_set(err, -EPERM, POLICY_ERROR_FUNCTION_NOT_ALLOWED,
                                                "The policy does not let you fail '%s', so you may not observe it",
                                                v[i]);
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

static void refused(ObserveSession *s, const char *polkit, const InjectError *err) {
        audit_log(LOG_NOTICE, &(AuditRecord) { .event = "observe", .caller = &s->caller, .scope = s->scope_desc,
                                               .result = "refused", .polkit = polkit, .reason = err->name },
                  "Observe refused for uid %u: %s", (unsigned) s->uid, err->message);
}

/* polkit said yes: load, attach, watch; the first reply's document. */
static int begin(ObserveSession *s, const char *polkit_how, json_object **ret, InjectError *err) {
        _cleanup_json_ json_object *skipped = NULL, *started = NULL;
        Manager *m = s->manager;
        const ObserveSkipped *sk;
        size_t n_skipped;
        int r;

        /* The same credential check as the caller's injection would make:
         * none for a privileged caller, whose injections have none. */
        r = engine_observe_start(m->engine, s->pid, s->start_ticks, s->privileged ? INJECT_UID_ANY : s->uid,
                                 s->functions, s->n_functions, &s->observe, err);
        if (r < 0)
                return r;
        s->pidfd = pidfd_open_pid(s->pid);
        if (s->pidfd < 0)
                return inject_error_set(err, s->pidfd, INJECT_ERROR_BAD_SCOPE, "Cannot follow process %d: %s",
                                        (int) s->pid, strerror(-s->pidfd));
        r = sd_event_add_io(m->event, &s->exit_watch, s->pidfd, EPOLLIN, on_root_exit, s);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &s->timer, CLOCK_BOOTTIME, s->duration, 0, on_timer, s);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_UNAVAILABLE, "Cannot watch the observation: %s",
                                        strerror(-r));

        skipped = json_object_new_array();
        sk = engine_observe_skipped(s->observe, &n_skipped);
        for (size_t i = 0; skipped && i < n_skipped; i++) {
                json_object *o = NULL;

                r = json_build_object(&o, JSON_PAIR_STRING("function", sk[i].name),
                                      JSON_PAIR_STRING("reason", sk[i].reason), JSON_BUILD_END);
                if (r >= 0)
                        r = json_append(skipped, o);
                if (r < 0)
                        return r;
        }
        r = json_build_object(&started,
                              JSON_PAIR_U64("pid", (uint64_t) s->pid),
                              JSON_PAIR_U64("attached", engine_observe_n_attached(s->observe)),
                              JSON_PAIR_REF("skipped", skipped),
                              JSON_BUILD_END);
        if (r < 0)
                return r;
        audit_log(LOG_INFO, &(AuditRecord) { .event = "observe", .caller = &s->caller, .scope = s->scope_desc,
                                             .result = "allowed", .polkit = polkit_how },
                  "Observing %zu functions for %s (uid %u, polkit %s)", engine_observe_n_attached(s->observe),
                  s->scope_desc, (unsigned) s->uid, polkit_how ?: "-");
        *ret = TAKE_PTR(started);
        return 0;
}

static void on_polkit_result(const PolkitResult *res, void *userdata) {
        _cleanup_json_ json_object *started = NULL;
        ObserveSession *s = userdata;
        InjectError err = {};
        int r;

        s->check = polkit_check_free(s->check);
        if (!res->allowed) {
                if (res->error < 0)
                        r = inject_error_set(&err, res->error, INJECT_ERROR_AUTH_UNAVAILABLE,
                                             "polkit could not be asked, and --polkit=required: %s",
                                             res->error_message ?: strerror(-res->error));
                else
                        r = inject_error_set(&err, -EACCES, INJECT_ERROR_NOT_AUTHORIZED,
                                             "polkit did not authorize %s%s", POLKIT_ACTION_OBSERVE,
                                             res->challenge ? " (interactive authentication could; ask with "
                                             "interactive authorization allowed)" : "");
        } else {
                r = begin(s, res->how, &started, &err);
                if (r < 0 && !err.name)
                        inject_error_set(&err, r, INJECT_ERROR_UNAVAILABLE, "Cannot start the observation: %s",
                                         strerror(-r));
        }
        if (r < 0) {
                refused(s, res->how, &err);
                s->started(s, NULL, &err, s->userdata);
                observe_session_free(s);
                return;
        }
        /* The front end keeps the session from here; done comes later. */
        s->started(s, started, NULL, s->userdata);
}

int observe_session_start(Manager *m, const Caller *c, json_object *params, const int *fds, size_t n_fds,
                          bool interactive, observe_started_cb started, observe_done_cb done, void *userdata,
                          ObserveSession **ret, InjectError *err) {
        static const char *const keys[] = { "functions", "pid", "pidfd", "duration_usec", NULL };
        _cleanup_(observe_session_freep) ObserveSession *s = NULL;
        _cleanup_(request_done) InjectRequest req = INJECT_REQUEST_NULL;
        _cleanup_free_ const char **functions = NULL;
        const char *unknown = NULL;
        ScopeResolution scope = {};
        uint64_t duration = OBSERVE_DURATION_DEFAULT_USEC, pid = 0;
        PolkitSubject subject;
        size_t n_functions;
        int r;

        if (!params || json_check_keys(params, keys, &unknown) < 0)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT, "Unknown key '%.64s'",
                                        unknown ?: "?");
        r = json_get_u64(params, "duration_usec", 1, OBSERVE_DURATION_MAX_USEC, &duration);
        if (r < 0 && r != -ENOENT)
                return inject_error_set(err, r, INJECT_ERROR_BAD_DURATION,
                                        "'duration_usec' must be an integer in [1, %llu]",
                                        (unsigned long long) OBSERVE_DURATION_MAX_USEC);
        r = json_get_u64(params, "pid", 1, INT32_MAX, &pid);
        if (r < 0 && r != -ENOENT)
                return inject_error_set(err, r, INJECT_ERROR_INVALID_ARGUMENT, "'pid' must be a positive integer");
        r = parse_functions(m, c, params, &functions, &n_functions, err);
        if (r < 0)
                return r;

        req.scope = REQUEST_SCOPE_PROCESS;
        req.pid = (pid_t) pid;
        r = take_pidfd(params, fds, n_fds, &req, err);
        if (r < 0)
                return r;
        r = resolve_scope(m->engine, c, &req, &scope, err);
        if (r < 0)
                return r;
        /* Only one's own process tree: no policy rule widens observation
         * to other users' processes. */
        if (scope.foreign && !c->privileged)
                return inject_error_set(err, -EPERM, INJECT_ERROR_SCOPE_NOT_OWNED,
                                        "You may observe only your own processes: %s%s%s", scope.desc,
                                        scope.why[0] ? ", " : "", scope.why);

        /* Before anything is loaded or polkit asked: the shares are what
         * keeps the sessions' maps within the daemon's memory. */
        r = authorize_observe(m, c, observe_session_count(m, c->uid, false), observe_session_count(m, 0, true), err);
        if (r < 0) {
                audit_log(LOG_NOTICE, &(AuditRecord) { .event = "observe", .caller = c, .scope = scope.desc,
                                                       .result = "refused", .reason = err->name },
                          "Observe refused for uid %u: %s", (unsigned) c->uid, err->message);
                return r;
        }

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (ObserveSession) { .manager = m, .uid = c->uid, .privileged = c->privileged, .pidfd = -1,
                                .params = json_object_get(params), .functions = TAKE_PTR(functions),
                                .n_functions = n_functions, .pid = scope.pid, .start_ticks = scope.start_ticks,
                                .scope_desc = strdup(scope.desc), .duration = duration, .started = started,
                                .done = done, .userdata = userdata, .next = m->observe_sessions };
        m->observe_sessions = s;
        if (!s->scope_desc)
                return -ENOMEM;
        r = caller_copy(c, &s->caller);
        if (r < 0)
                return r;

        /* polkit decides Observe like any request, with an action of its
         * own: a rule that cuts a user off cuts her kprobes off too. */
        subject = authorize_polkit_subject(c);
        r = polkit_check_async(m->polkit, &subject, POLKIT_ACTION_OBSERVE, NULL, interactive, on_polkit_result, s,
                               &s->check);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_AUTH_UNAVAILABLE, "Cannot ask polkit: %s",
                                        strerror(-r));
        *ret = TAKE_PTR(s);
        return 0;
}
