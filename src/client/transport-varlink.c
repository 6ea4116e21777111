/* SPDX-License-Identifier: MIT */
/* The Varlink transport: org.injectd.Injector on injectd's socket, through
 * our own client (src/shared/varlink.c). One call at a time. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "json-build.h"
#include "json-util.h"
#include "string-util.h"
#include "transport.h"
#include "varlink.h"

#define IFACE "org.injectd.Injector."

/* polkit may take up to 25 s, or 5 minutes when it asks for a password. */
#define VARLINK_CALL_TIMEOUT_USEC (60 * USEC_PER_SEC)
#define VARLINK_CALL_TIMEOUT_INTERACTIVE_USEC (6 * USEC_PER_MINUTE)

static uint64_t vl_timeout(bool interactive) {
        return interactive ? VARLINK_CALL_TIMEOUT_INTERACTIVE_USEC : VARLINK_CALL_TIMEOUT_USEC;
}

static VarlinkClient *client(Transport *t) {
        return t->data;
}

static int vl_failed(Transport *t, int r) {
        if (errno_is_disconnect(r))
                return transport_set_unreachable(t, "injectd closed the Varlink connection (%s); is it still running?",
                                                 strerror(-r));
        return r;
}

/* Calls method; a daemon error becomes -EREMOTEIO with its name and message
 * recorded. ret (optional) gets the reply's parameters. */
static int vl_call(Transport *t, const char *method, json_object *params, json_object **ret) {
        _cleanup_json_ json_object *reply = NULL;
        const char *error = NULL;
        int r;

        r = varlink_client_call(client(t), method, params, &reply, &error);
        if (r < 0)
                return vl_failed(t, r);
        if (error) {
                const char *message = NULL, *parameter = NULL;
                _cleanup_free_ char *buf = NULL;

                if (json_get_string(reply, "message", &message) < 0 &&
                    json_get_string(reply, "parameter", &parameter) >= 0) {
                        if (asprintf(&buf, "Invalid parameter '%s'", parameter) < 0)
                                return -ENOMEM;
                        message = buf;
                }
                return transport_set_error(t, error, message);
        }
        if (ret)
                *ret = TAKE_PTR(reply);
        return 0;
}

/* Calls method and takes one key of the reply, of the given type. */
static int vl_call_get(Transport *t, const char *method, json_object *params, const char *key, json_type type,
                       json_object **ret) {
        _cleanup_json_ json_object *reply = NULL;
        json_object *v;
        int r;

        r = vl_call(t, method, params, &reply);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(reply, key, &v) || !json_object_is_type(v, type))
                return -EBADMSG;
        *ret = json_object_get(v);
        return 0;
}

static int vl_get_capabilities(Transport *t, json_object **ret) {
        return vl_call_get(t, IFACE "GetCapabilities", NULL, "capabilities", json_type_object, ret);
}

static int vl_list_functions(Transport *t, const char *pattern, json_object **ret) {
        _cleanup_json_ json_object *p = NULL;
        int r;

        r = json_build_object(&p, JSON_PAIR_IF(pattern && *pattern, JSON_PAIR_STRING("pattern", pattern)), JSON_BUILD_END);
        if (r < 0)
                return r;
        return vl_call_get(t, IFACE "ListFunctions", p, "functions", json_type_array, ret);
}

/* Whether the daemon just refused the call's fds, as one whose Inject takes
 * none does. */
static bool daemon_takes_no_fds(Transport *t) {
        const char *name = transport_error_name(t), *message = transport_error_message(t);

        return name && message && strcmp(name, VARLINK_ERROR_INVALID_PARAMETER) == 0 &&
               strcmp(message, "Invalid parameter 'fds'") == 0;
}

/* The request's fds, each at its index among the call's, as the request
 * says. */
static int vl_push_fds(Transport *t, const int *fds, size_t n_fds) {
        for (size_t i = 0; i < n_fds; i++) {
                int k = varlink_client_push_fd(client(t), fds[i]);

                if (k < 0)
                        return k;
                if ((size_t) k != i)
                        return -EINVAL;
        }
        return 0;
}

static int vl_inject(Transport *t, json_object *request, char **ret_id, uint64_t *ret_expires_usec,
                     json_object **ret_injection) {
        _cleanup_json_ json_object *p = NULL, *reply = NULL;
        int fds[TRANSPORT_FDS_MAX];
        size_t n_fds = 0;
        const char *id;
        json_object *injection;
        uint64_t expires;
        int r;

        /* A copy with the fds, to which "interactive" can be added. */
        r = transport_request_fds(t, request, &p, fds, &n_fds);
        if (r < 0)
                return r;
        if (t->interactive && !json_object_object_get_ex(p, "interactive", NULL))
                r = json_add_bool(p, "interactive", true);
        if (r >= 0)
                r = vl_push_fds(t, fds, n_fds);
        if (r >= 0)
                r = vl_call(t, IFACE "Inject", p, &reply);
        for (size_t i = 0; i < n_fds; i++)
                close(fds[i]);
        if (r == -EREMOTEIO && n_fds > 0 && daemon_takes_no_fds(t)) {
                /* A daemon from before fds (a client copied into an image
                 * may be newer than the host's daemon): the number and the
                 * path as they are, which such a daemon reads in the
                 * caller's pid namespace and in its own mounts. */
                json_object_put(p);
                p = json_object_new_object();
                r = p ? json_add_all(p, request) : -ENOMEM;
                if (r >= 0 && t->interactive && !json_object_object_get_ex(p, "interactive", NULL))
                        r = json_add_bool(p, "interactive", true);
                if (r >= 0)
                        r = vl_call(t, IFACE "Inject", p, &reply);
        }
        if (r < 0)
                return r;
        if (json_get_string(reply, "id", &id) < 0 ||
            json_get_u64(reply, "expires_usec", 0, UINT64_MAX, &expires) < 0 ||
            json_get_object(reply, "injection", &injection) < 0)
                return -EBADMSG;

        if (ret_id) {
                *ret_id = strdup(id);
                if (!*ret_id)
                        return -ENOMEM;
        }
        if (ret_expires_usec)
                *ret_expires_usec = expires;
        if (ret_injection)
                *ret_injection = json_object_get(injection);
        return 0;
}

static int vl_list_injections(Transport *t, bool all, json_object **ret) {
        _cleanup_json_ json_object *p = NULL;
        int r;

        r = json_build_object(&p, JSON_PAIR_IF(all, JSON_PAIR_BOOL("all", true)), JSON_BUILD_END);
        if (r < 0)
                return r;
        return vl_call_get(t, IFACE "ListInjections", p, "injections", json_type_array, ret);
}

static int vl_cancel(Transport *t, const char *id) {
        _cleanup_json_ json_object *p = NULL;
        int r;

        r = json_build_object(&p,
                              JSON_PAIR_STRING("id", id),
                              JSON_PAIR_IF(t->interactive, JSON_PAIR_BOOL("interactive", true)),
                              JSON_BUILD_END);
        if (r < 0)
                return r;
        return vl_call(t, IFACE "Cancel", p, NULL);
}

static int vl_reload_policy(Transport *t) {
        _cleanup_json_ json_object *p = NULL;
        int r;

        r = json_build_object(&p, JSON_PAIR_IF(t->interactive, JSON_PAIR_BOOL("interactive", true)), JSON_BUILD_END);
        if (r < 0)
                return r;
        return vl_call(t, IFACE "ReloadPolicy", p, NULL);
}

typedef struct WatchContext {
        Transport *t;
        TransportEventFn callback;
        void *userdata;
        int r;
} WatchContext;

static int on_watch_reply(VarlinkClient *c, json_object *params, const char *error, bool continues, void *userdata) {
        WatchContext *w = userdata;
        json_object *event;

        if (error) {
                const char *message = NULL;

                (void) json_get_string(params, "message", &message);
                w->r = transport_set_error(w->t, error, message);
                return 1;
        }
        if (json_get_object(params, "event", &event) < 0) {
                w->r = -EBADMSG;
                return 1;
        }
        w->r = w->callback(event, w->userdata);
        return w->r != 0;
}

static int vl_watch(Transport *t, char *const *ids, TransportEventFn callback, void *userdata) {
        _cleanup_json_ json_object *p = NULL;
        WatchContext w = { .t = t, .callback = callback, .userdata = userdata };
        bool some = ids && ids[0];
        int r;

        r = json_build_object(&p,
                              JSON_PAIR_IF(some, JSON_PAIR_OBJECT("ids", some ? json_new_strv((const char *const *) ids,
                                                                                              SIZE_MAX) : NULL)),
                              JSON_BUILD_END);
        if (r < 0)
                return r;

        varlink_client_set_timeout(client(t), VARLINK_TIMEOUT_INFINITY);
        r = varlink_client_call_more(client(t), IFACE "Watch", p, on_watch_reply, &w);
        if (r > 0 || w.r != 0)
                return w.r;
        if (r < 0)
                return vl_failed(t, r);
        return 0; /* the stream ended: it never does unless the daemon goes */
}

typedef struct ObserveContext {
        Transport *t;
        TransportObservingFn on_observing;
        void *userdata;
        bool observing;
        json_object *result;
        int r;
} ObserveContext;

static int on_observe_reply(VarlinkClient *c, json_object *params, const char *error, bool continues,
                            void *userdata) {
        ObserveContext *o = userdata;
        json_object *doc;

        if (error) {
                const char *message = NULL;

                (void) json_get_string(params, "message", &message);
                o->r = transport_set_error(o->t, error, message);
                return 1;
        }
        if (!o->observing && json_get_object(params, "observing", &doc) >= 0) {
                o->observing = true;
                o->r = o->on_observing(doc, o->userdata);
                return o->r < 0;
        }
        if (!continues)
                o->result = json_object_get(params);
        return 0;
}

static int vl_observe(Transport *t, json_object *request, TransportObservingFn on_observing, void *userdata,
                      json_object **ret_result) {
        _cleanup_json_ json_object *p = NULL;
        ObserveContext o = { .t = t, .on_observing = on_observing, .userdata = userdata };
        int fds[TRANSPORT_FDS_MAX];
        size_t n_fds = 0;
        int r;

        r = transport_request_fds(t, request, &p, fds, &n_fds);
        if (r < 0)
                return r;
        r = vl_push_fds(t, fds, n_fds);
        /* The last reply comes when the tree's root exits, or at the
         * daemon's timeout. */
        varlink_client_set_timeout(client(t), VARLINK_TIMEOUT_INFINITY);
        if (r >= 0)
                r = varlink_client_call_more(client(t), IFACE "Observe", p, on_observe_reply, &o);
        for (size_t i = 0; i < n_fds; i++)
                close(fds[i]);
        varlink_client_set_timeout(client(t), vl_timeout(t->interactive));
        if (o.r < 0 || (r >= 0 && o.r == 0 && !o.result)) {
                json_object_put(o.result);
                return o.r < 0 ? o.r : -EBADMSG;
        }
        if (r < 0) {
                json_object_put(o.result);
                return vl_failed(t, r);
        }
        *ret_result = o.result;
        return 0;
}

static void vl_done(Transport *t) {
        t->data = varlink_client_free(t->data);
}

static const TransportOps varlink_ops = TRANSPORT_OPS_INIT(vl);

int transport_open_varlink(const char *path, bool interactive, Transport **ret, char **reterr_message) {
        VarlinkClient *c = NULL;
        int r;

        if (!path)
                path = INJECTD_VARLINK_ADDRESS;

        r = varlink_client_connect(path, &c);
        if (errno_is_disconnect(r) || r == -ENOENT)
                return strprintf(reterr_message, "Cannot connect to '%s': %s. Is injectd running? Start it with "
                                 "'systemctl start injectd.socket' (or 'systemctl start injectd').",
                                 path, strerror(-r)) < 0 ? -ENOMEM : -EHOSTDOWN;
        if (r < 0)
                return r;
        varlink_client_set_timeout(c, vl_timeout(interactive));

        return transport_new(&varlink_ops, c, interactive, ret);
}
