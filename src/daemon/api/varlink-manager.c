/* SPDX-License-Identifier: MIT */
/* The Varlink front end: org.injectd.Injector on
 * /run/injectd/org.injectd.Injector (or the socket systemd passes). Like the
 * D-Bus one, it only translates: parameters go to the manager as they came,
 * and answers and errors come back with the same names. An injection's
 * requester is its connection: the injection ends when it closes, unless
 * it detached. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <systemd/sd-daemon.h>

#include "cleanup.h"
#include "config.h"
#include "json-build.h"
#include "json-util.h"
#include "log.h"
#include "time-util.h"
#include "varlink-api.h"
#include "varlink-manager.h"
#include "varlink-observe.h"
#include "varlink-util.h"
#include "varlink-watch.h"

#define VARLINK_SOCKET "/run/injectd/org.injectd.Injector"
#define IFACE VARLINK_API_INTERFACE

const char varlink_injector_description[] =
        "# Policy-controlled, time-bounded BPF error injection.\n"
        "# Objects are the JSON documents docs/varlink-api.md describes;\n"
        "# D-Bus returns the same documents.\n"
        "interface org.injectd.Injector\n"
        "\n"
        "# What this kernel and daemon offer: backends, features, limits.\n"
        "method GetCapabilities() -> (capabilities: object)\n"
        "\n"
        "# Injectable functions, their type, backends and guards (when they\n"
        "# are never failed), and whether policy lets this caller fail each one.\n"
        "method ListFunctions(pattern: ?string) -> (functions: []object)\n"
        "\n"
        "# Make a function fail, for the caller's own cgroup by default.\n"
        "method Inject(\n"
        "  function: string,\n"
        "  error: ?string,\n"
        "  retval: ?int,\n"
        "  duration_usec: ?int,\n"
        "  scope: ?string,\n"
        "  cgroup: ?string,\n"
        "  # The index of a file descriptor sent with the call (SCM_RIGHTS).\n"
        "  cgroup_fd: ?int,\n"
        "  pid: ?int,\n"
        "  # The index of a pidfd sent with the call: the process in any pid\n"
        "  # namespace.\n"
        "  pidfd: ?int,\n"
        "  # Scope \"device\": a whole disk's kernel name (loop3), and the index\n"
        "  # of an fd of a loop device's backing file, opened read-write, which\n"
        "  # shows it is yours.\n"
        "  device: ?string,\n"
        "  backing_fd: ?int,\n"
        "  comm: ?string,\n"
        "  callers: ?[]string,\n"
        "  after: ?int,\n"
        "  every: ?int,\n"
        "  times: ?int,\n"
        "  probability: ?float,\n"
        "  # Argument filters, on the functions that take them (ListFunctions).\n"
        "  ignore_gfp_wait: ?bool,\n"
        "  ignore_gfp_highmem: ?bool,\n"
        "  min_order: ?int,\n"
        "  min_size: ?int,\n"
        "  cache: ?string,\n"
        "  # Kernel log records of the faults: 1, or 2 with the stack.\n"
        "  kernel_log: ?int,\n"
        "  backend: ?string,\n"
        "  detach: ?bool,\n"
        "  interactive: ?bool\n"
        ") -> (id: string, expires_usec: int, injection: object)\n"
        "\n"
        "# The caller's injections, or everyone's (root).\n"
        "method ListInjections(all: ?bool) -> (injections: []object)\n"
        "\n"
        "method Cancel(id: string, interactive: ?bool) -> ()\n"
        "\n"
        "# With more: one reply per injected fault and per added or removed\n"
        "# injection the caller may see.\n"
        "method Watch(ids: ?[]string) -> (event: object)\n"
        "\n"
        "method ReloadPolicy(interactive: ?bool) -> ()\n"
        "\n"
        "# With more: count, failing nothing, the calls a process tree of the\n"
        "# caller's (default: the caller) makes to functions the policy lets\n"
        "# it fail, and from how many kernel stacks. The first reply has\n"
        "# observing; the last, once the tree's root exits or duration_usec\n"
        "# passes, has functions and ended.\n"
        "method Observe(\n"
        "  functions: []string,\n"
        "  pid: ?int,\n"
        "  pidfd: ?int,\n"
        "  duration_usec: ?int\n"
        ") -> (observing: ?object, functions: ?[]object, ended: ?string)\n"
        "\n"
        "error NotInjectable (message: string)\n"
        "error BadValue (message: string)\n"
        "error BackendUnavailable (message: string)\n"
        "error BadScope (message: string)\n"
        "error ScopeTaken (message: string)\n"
        "error ScopeNotOwned (message: string)\n"
        "error BadFilter (message: string)\n"
        "error BadDuration (message: string)\n"
        "error TooManyInjections (message: string)\n"
        "error NoSuchInjection (message: string)\n"
        "error KernelRefused (message: string)\n"
        "error InjectionUnavailable (message: string)\n"
        "error InvalidArgument (message: string)\n"
        "error NotAllowed (message: string)\n"
        "error NotAuthorized (message: string)\n"
        "error LimitExceeded (message: string)\n"
        "error AuthorizationUnavailable (message: string)\n"
        "error UserNotInPolicy (message: string)\n"
        "error FunctionNotAllowed (message: string)\n"
        "error ErrorNotAllowed (message: string)\n"
        "error ScopeNotAllowed (message: string)\n"
        "error DurationTooLong (message: string)\n"
        "error KernelLogNotAllowed (message: string)\n";

static int reply_simple_error(VarlinkConn *c, const char *name, const char *message) {
        InjectError err = { .name = name };

        snprintf(err.message, sizeof(err.message), "%s", message);
        return varlink_api_reply_error(c, &err);
}

/* The connection's caller, taken from SO_PEERCRED once and kept. */
static const Caller *conn_caller(VarlinkConn *c) {
        Caller *caller = varlink_conn_get_userdata(c);
        struct ucred uc;

        if (caller)
                return caller;
        if (varlink_conn_get_peer_ucred(c, &uc) < 0)
                return NULL;
        caller = calloc(1, sizeof(*caller));
        if (!caller)
                return NULL;
        if (caller_from_ucred(uc.uid, uc.gid, uc.pid, caller) < 0) {
                free(caller);
                return NULL;
        }
        (void) varlink_conn_set_userdata(c, caller);
        return caller;
}

static bool interactive_of(json_object *p) {
        bool b = false;

        (void) json_get_bool(p, "interactive", &b);
        return b;
}

static void on_inject_done(Manager *m, Injection *inj, const InjectError *err, void *userdata) {
        VarlinkConn *c = userdata;

        if (!inj)
                (void) varlink_api_reply_error(c, err);
        else {
                _cleanup_json_ json_object *p = NULL;
                int r;

                r = json_build_object(&p,
                                      JSON_PAIR_STRING("id", inj->id_str),
                                      JSON_PAIR_U64("expires_usec", inj->expires_usec),
                                      JSON_PAIR_OBJECT("injection", injection_to_json(inj)),
                                      JSON_BUILD_END);
                if (r < 0) {
                        /* The injection is armed, but the reply that says so
                         * cannot be built: say that, rather than half of it. */
                        log_error_errno(r, "Failed to build the reply for injection %s: %m", inj->id_str);
                        (void) reply_simple_error(c, INJECT_ERROR_UNAVAILABLE,
                                                  "Out of memory building the reply; see ListInjections");
                } else
                        (void) varlink_reply(c, p);
        }
        varlink_conn_unref(c);
}

static int method_inject(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        const Caller *caller = conn_caller(c);
        int fds[REQUEST_FDS_MAX];
        size_t n_fds = varlink_conn_n_fds(c);

        if (!caller)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "Cannot identify the caller");
        /* Borrowed from the call: manager_inject() duplicates what it keeps
         * before it returns, and the call closes the rest. */
        for (size_t i = 0; i < n_fds; i++)
                fds[i] = varlink_conn_peek_fd(c, i);
        /* The connection is the requester's handle: the tracker below, and
         * manager_requester_gone() when it closes. */
        return manager_inject(((VarlinkApi *) userdata)->manager, caller, params, fds, n_fds, c, on_inject_done,
                              varlink_conn_ref(c), NULL);
}

static void on_done(Manager *m, const InjectError *err, void *userdata) {
        VarlinkConn *c = userdata;

        if (err)
                (void) varlink_api_reply_error(c, err);
        else
                (void) varlink_reply(c, NULL);
        varlink_conn_unref(c);
}

static int check_keys(VarlinkConn *c, json_object *params, const char *const *keys) {
        const char *unknown = NULL;
        char msg[128];

        if (!params || json_check_keys(params, keys, &unknown) >= 0)
                return 0;
        snprintf(msg, sizeof(msg), "Unknown key '%.64s'", unknown ?: "?");
        (void) reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, msg);
        return -EINVAL;
}

static int method_observe(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        const Caller *caller = conn_caller(c);
        int fds[REQUEST_FDS_MAX];
        size_t n_fds = varlink_conn_n_fds(c);
        InjectError err = {};
        int r;

        if (!(flags & VARLINK_METHOD_MORE))
                return varlink_error(c, VARLINK_ERROR_EXPECTED_MORE, NULL);
        if (!caller)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "Cannot identify the caller");
        for (size_t i = 0; i < n_fds && i < REQUEST_FDS_MAX; i++)
                fds[i] = varlink_conn_peek_fd(c, i);
        r = varlink_observe_start(userdata, c, caller, params, fds, n_fds < REQUEST_FDS_MAX ? n_fds : REQUEST_FDS_MAX, &err);
        if (r < 0 && !err.name)
                inject_error_set(&err, r, INJECT_ERROR_UNAVAILABLE, "%s", strerror(-r));
        return r < 0 ? varlink_api_reply_error(c, &err) : 0;
}

static int method_cancel(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        static const char *const keys[] = { "id", "interactive", NULL };
        const Caller *caller = conn_caller(c);
        const char *id = NULL;

        if (check_keys(c, params, keys) < 0)
                return 0;
        if (json_get_string(params, "id", &id) < 0)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "'id' (a string) is required");
        if (!caller)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "Cannot identify the caller");
        return manager_cancel(((VarlinkApi *) userdata)->manager, caller, id, interactive_of(params), c, on_done,
                              varlink_conn_ref(c));
}

static int method_reload_policy(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        static const char *const keys[] = { "interactive", NULL };
        const Caller *caller = conn_caller(c);

        if (check_keys(c, params, keys) < 0)
                return 0;
        if (!caller)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "Cannot identify the caller");
        return manager_reload_policy_as(((VarlinkApi *) userdata)->manager, caller, interactive_of(params), c, on_done,
                                        varlink_conn_ref(c));
}

static int method_get_capabilities(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        static const char *const keys[] = { NULL };
        _cleanup_(json_object_putp) json_object *p = NULL;
        const Caller *caller = conn_caller(c);
        json_object *o = NULL;
        int r;

        if (check_keys(c, params, keys) < 0)
                return 0;
        if (!caller)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "Cannot identify the caller");
        r = manager_capabilities_json(((VarlinkApi *) userdata)->manager, caller, &o);
        if (r < 0)
                return r;
        r = json_build_object(&p, JSON_PAIR_OBJECT("capabilities", o), JSON_BUILD_END);
        if (r < 0)
                return r;
        return varlink_reply(c, p);
}

static int method_list_functions(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        static const char *const keys[] = { "pattern", NULL };
        _cleanup_(json_object_putp) json_object *p = NULL;
        const Caller *caller = conn_caller(c);
        const char *pattern = NULL;
        json_object *o = NULL;
        int r;

        if (check_keys(c, params, keys) < 0)
                return 0;
        r = json_get_string(params, "pattern", &pattern);
        if (r < 0 && r != -ENOENT)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "'pattern' must be a string");
        if (pattern && strlen(pattern) > REQUEST_MAX_STRING)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT,
                                          "The pattern must be at most 256 characters");
        if (!caller)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "Cannot identify the caller");
        r = manager_functions_json(((VarlinkApi *) userdata)->manager, caller, pattern, &o);
        if (r < 0) {
                InjectError err = {};

                inject_error_set(&err, r, INJECT_ERROR_UNAVAILABLE, "Cannot list injectable functions: %s",
                                 strerror(-r));
                return varlink_api_reply_error(c, &err);
        }
        r = json_build_object(&p, JSON_PAIR_OBJECT("functions", o), JSON_BUILD_END);
        if (r < 0)
                return r;
        return varlink_reply(c, p);
}

static int method_list_injections(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        static const char *const keys[] = { "all", NULL };
        _cleanup_(json_object_putp) json_object *p = NULL;
        const Caller *caller = conn_caller(c);
        InjectError err = {};
        json_object *o = NULL;
        bool all = false;
        int r;

        if (check_keys(c, params, keys) < 0)
                return 0;
        r = json_get_bool(params, "all", &all);
        if (r < 0 && r != -ENOENT)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "'all' must be a boolean");
        if (!caller)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "Cannot identify the caller");
        r = manager_list_json(((VarlinkApi *) userdata)->manager, caller, all, &o, &err);
        if (r < 0)
                return err.name ? varlink_api_reply_error(c, &err) : r;
        r = json_build_object(&p, JSON_PAIR_OBJECT("injections", o), JSON_BUILD_END);
        if (r < 0)
                return r;
        return varlink_reply(c, p);
}

static int method_watch(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        static const char *const keys[] = { "ids", NULL };
        const Caller *caller = conn_caller(c);
        json_object *ids = NULL;
        int r;

        if (check_keys(c, params, keys) < 0)
                return 0;
        if (!(flags & VARLINK_METHOD_MORE))
                return varlink_error(c, VARLINK_ERROR_EXPECTED_MORE, NULL);
        r = json_get_array(params, "ids", &ids);
        if (r < 0 && r != -ENOENT)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "'ids' must be an array of ids");
        if (!caller)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT, "Cannot identify the caller");
        r = varlink_watch_add(userdata, c, caller, ids);
        if (r == -EINVAL)
                return reply_simple_error(c, INJECT_ERROR_INVALID_ARGUMENT,
                                          "'ids' must hold 1 to 64 injection ids (16 hex digits each)");
        if (r < 0)
                return r;
        /* The stream starts with an event of its own, so a client knows it is on. */
        {
                _cleanup_(json_object_putp) json_object *p = NULL, *e = NULL;

                r = json_build_object(&e, JSON_PAIR_STRING("type", "watching"), JSON_BUILD_END);
                if (r < 0)
                        return r;
                r = json_build_object(&p, JSON_PAIR_OBJECT("event", TAKE_PTR(e)), JSON_BUILD_END);
                if (r < 0)
                        return r;
                return varlink_notify(c, p);
        }
}

struct VarlinkOwned {
        VarlinkOwned *next;
        uint64_t id;
        VarlinkConn *conn;      /* not a reference: the entry goes when it closes */
};

static VarlinkOwned *owned_find(VarlinkApi *v, uint64_t id, VarlinkConn *c) {
        for (VarlinkOwned *o = v->owned; o; o = o->next)
                if (c ? o->conn == c : o->id == id)
                        return o;
        return NULL;
}

static void owned_forget(VarlinkApi *v, VarlinkOwned *o) {
        VarlinkConn *c = o->conn;

        for (VarlinkOwned **pp = &v->owned; *pp; pp = &(*pp)->next)
                if (*pp == o) {
                        *pp = o->next;
                        free(o);
                        break;
                }
        /* Idle again once it holds no injection. */
        if (!owned_find(v, 0, c))
                varlink_conn_set_keep_idle(c, false);
}

/* owner is the requester's connection; after a restart there is none, and
 * the core watches the requester's process instead. */
static int track_owner(Manager *m, Injection *inj, const Caller *c, void *owner, void *userdata) {
        VarlinkApi *v = userdata;
        VarlinkOwned *o;

        if (!owner)
                return 0;
        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        *o = (VarlinkOwned) { .next = v->owned, .id = inj->id, .conn = owner };
        v->owned = o;
        /* Its injection ends with it: an idle connection is not idle. */
        varlink_conn_set_keep_idle(owner, true);
        return 1;
}

static void on_disconnect(VarlinkServer *s, VarlinkConn *c, void *userdata) {
        Caller *caller = varlink_conn_set_userdata(c, NULL);
        VarlinkApi *v = userdata;
        VarlinkOwned *o;

        varlink_watch_remove(v, c);
        varlink_observe_remove(v, c);
        if (!v->stopping) {
                manager_requester_gone(v->manager, c);
                /* Removing one may remove entries of the list: start over each time. */
                while ((o = owned_find(v, 0, c))) {
                        Injection *inj = manager_find(v->manager, o->id);

                        owned_forget(v, o);
                        if (inj)
                                manager_owner_gone(v->manager, inj);
                }
        }
        if (caller) {
                caller_done(caller);
                free(caller);
        }
}

static void on_added(Manager *m, Injection *inj, void *userdata) {
        _cleanup_(json_object_putp) json_object *ev = NULL;
        VarlinkApi *v = userdata;
        int r;

        if (!v->watchers)
                return;
        r = json_build_object(&ev,
                              JSON_PAIR_STRING("type", "added"),
                              JSON_PAIR_STRING("id", inj->id_str),
                              JSON_PAIR_OBJECT("injection", injection_to_json(inj)),
                              JSON_BUILD_END);
        if (r < 0) {
                log_error_errno(r, "Failed to build the 'added' event of injection %s, watchers miss it: %m",
                                inj->id_str);
                return;
        }
        varlink_watch_send(v, inj, ev);
}

static void on_removed(Manager *m, Injection *inj, RemoveReason reason, void *userdata) {
        _cleanup_(json_object_putp) json_object *ev = NULL;
        VarlinkApi *v = userdata;
        VarlinkOwned *o = owned_find(v, inj->id, NULL);
        int r;

        if (o)
                owned_forget(v, o);
        if (!v->watchers)
                return;
        r = json_build_object(&ev,
                              JSON_PAIR_STRING("type", "removed"),
                              JSON_PAIR_STRING("id", inj->id_str),
                              JSON_PAIR_STRING("reason", remove_reason_to_string(reason)),
                              JSON_PAIR_OBJECT("injection", injection_to_json(inj)),
                              JSON_BUILD_END);
        if (r < 0) {
                log_error_errno(r, "Failed to build the 'removed' event of injection %s, watchers miss it: %m",
                                inj->id_str);
                return;
        }
        varlink_watch_send(v, inj, ev);
}

static void on_fault(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm, void *userdata) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        VarlinkApi *v = userdata;

        if (!v->watchers)
                return;
        o = injection_fault_to_json(inj, ev, comm);
        if (!o) {
                log_error_errno(-ENOMEM, "Failed to build a fault event of injection %s, watchers miss it: %m",
                                inj->id_str);
                return;
        }
        varlink_watch_send(v, inj, o);
}

/* Asked only for a peer over an unprivileged limit. */
static bool peer_privileged(VarlinkServer *s, const struct ucred *uc, void *userdata) {
        Caller c = {};
        bool b;

        if (caller_from_ucred(uc->uid, uc->gid, uc->pid, &c) < 0)
                return false;
        b = c.privileged;
        caller_done(&c);
        return b;
}

/* Says in the log that peers are being turned away, and why: at most one
 * line per REFUSED_LOG_INTERVAL_USEC, which counts those it did not log, so
 * that a flood of connections cannot flood the journal too. */
#define REFUSED_LOG_INTERVAL_USEC (UINT64_C(10) * 1000000)

static void on_refused(VarlinkServer *s, int error, const char *why, void *userdata) {
        VarlinkApi *v = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        char more[64] = "";

        if (v->refused_logged_usec && now - v->refused_logged_usec < REFUSED_LOG_INTERVAL_USEC) {
                v->n_refused_unlogged++;
                return;
        }
        if (v->n_refused_unlogged > 0)
                snprintf(more, sizeof(more), " (and %u more since the last such message)", v->n_refused_unlogged);
        v->refused_logged_usec = now;
        v->n_refused_unlogged = 0;
        if (error == -EBUSY)
                log_warning("Refused a Varlink connection: %s%s.", why ?: "over a limit", more);
        else
                log_warning_errno(error, "Cannot accept Varlink connections for now: %m; they wait, and "
                                  "accepting resumes in 100 ms%s.", more);
}

static int varlink_api_set_limits(VarlinkApi *v, const ManagerOptions *o) {
        VarlinkServerLimits l = {
                .connections_max = o->connections_max ?: VARLINK_CONNECTIONS_MAX_DEFAULT,
                .connections_per_uid_max = o->connections_per_user ?: VARLINK_CONNECTIONS_PER_UID_MAX_DEFAULT,
                .connections_reserved = o->connections_reserved,
                .idle_usec = o->idle_usec,
        };
        int r;

        r = varlink_server_set_limits(v->server, &l);
        if (r < 0)
                return log_error_errno(r, "Invalid Varlink connection limits (%u in all, %u per user, %u reserved): %m",
                                       l.connections_max, l.connections_per_uid_max, l.connections_reserved);
        r = varlink_server_set_privileged_callback(v->server, peer_privileged, v);
        if (r >= 0)
                r = varlink_server_set_refusal_error(v->server, VARLINK_ERROR_PREFIX INJECT_ERROR_LIMIT);
        if (r >= 0)
                r = varlink_server_set_refused_callback(v->server, on_refused, v);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the Varlink connection limits: %m");
        return 0;
}

VarlinkApi *varlink_api_free(VarlinkApi *v) {
        if (!v)
                return NULL;
        manager_remove_listener(v->manager, &v->listener);
        manager_set_owner_tracker(v->manager, TRANSPORT_VARLINK, NULL);
        /* Closing the connections now is the daemon stopping, not the
         * requesters leaving: their injections stay (--keep-on-exit). */
        v->stopping = true;
        varlink_server_free(v->server);
        varlink_watch_remove(v, NULL);
        varlink_observe_remove(v, NULL);
        /* Their connections are gone: no owned_forget(), which touches them. */
        while (v->owned) {
                VarlinkOwned *o = v->owned;

                v->owned = o->next;
                free(o);
        }
        free(v);
        return NULL;
}

int varlink_api_new(Manager *m, VarlinkApi **ret) {
        static const VarlinkServerInfo info = {
                .vendor = "injectd",
                .product = "injectd",
                .version = PROJECT_VERSION,
                .url = "https://github.com/injectd/injectd",
        };
        _cleanup_(varlink_api_freep) VarlinkApi *v = NULL;
        int r, n;

        v = calloc(1, sizeof(*v));
        if (!v)
                return log_oom();
        v->manager = m;
        v->listener = (ManagerListener) { .added = on_added, .removed = on_removed, .fault = on_fault, .userdata = v };
        v->tracker = (OwnerTracker) { .track = track_owner, .userdata = v };
        r = manager_add_listener(m, &v->listener);
        if (r < 0)
                return log_oom();
        manager_set_owner_tracker(m, TRANSPORT_VARLINK, &v->tracker);

        r = varlink_server_new(m->event, &info, &v->server);
        if (r < 0)
                return log_error_errno(r, "Failed to create the Varlink server: %m");
        r = varlink_server_add_interface(v->server, IFACE, varlink_injector_description);
        if (r < 0)
                return log_error_errno(r, "Failed to add the Varlink interface: %m");
        if ((r = varlink_server_bind_method(v->server, IFACE ".GetCapabilities", method_get_capabilities, v)) < 0 ||
            (r = varlink_server_bind_method(v->server, IFACE ".ListFunctions", method_list_functions, v)) < 0 ||
            (r = varlink_server_bind_method_fds(v->server, IFACE ".Inject", REQUEST_FDS_MAX, method_inject, v)) < 0 ||
            (r = varlink_server_bind_method(v->server, IFACE ".ListInjections", method_list_injections, v)) < 0 ||
            (r = varlink_server_bind_method(v->server, IFACE ".Cancel", method_cancel, v)) < 0 ||
            (r = varlink_server_bind_method(v->server, IFACE ".Watch", method_watch, v)) < 0 ||
            (r = varlink_server_bind_method(v->server, IFACE ".ReloadPolicy", method_reload_policy, v)) < 0 ||
            (r = varlink_server_bind_method_fds(v->server, IFACE ".Observe", REQUEST_FDS_MAX, method_observe, v)) < 0)
                return log_error_errno(r, "Failed to bind Varlink methods: %m");
        r = varlink_server_set_disconnect_callback(v->server, on_disconnect, v);
        if (r < 0)
                return r;
        r = varlink_api_set_limits(v, &m->options);
        if (r < 0)
                return r;

        /* Socket activation (injectd.socket), else our own socket. */
        n = sd_listen_fds(true);
        if (n > 0) {
                for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
                        r = varlink_server_listen_fd(v->server, fd);
                        if (r < 0)
                                return log_error_errno(r, "Failed to listen on the passed socket: %m");
                }
        } else {
                (void) mkdir("/run/injectd", 0755);
                /* Everyone may connect: every call is authorized on its own. */
                r = varlink_server_listen_address(v->server, VARLINK_SOCKET, 0666);
                if (r < 0)
                        return log_error_errno(r, "Failed to listen on '%s': %m", VARLINK_SOCKET);
        }
        *ret = TAKE_PTR(v);
        return 0;
}
