/* SPDX-License-Identifier: MIT */
/* The D-Bus transport: org.injectd.Injector1 on the system bus (or the bus
 * at $DBUS_SYSTEM_BUS_ADDRESS), through sd-bus. */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "json-build.h"
#include "json-reader.h"
#include "json-util.h"
#include "string-util.h"
#include "transport-bus.h"
#include "transport.h"

#define BUS_CALL_TIMEOUT_USEC (60 * USEC_PER_SEC)
#define BUS_CALL_TIMEOUT_INTERACTIVE_USEC (6 * USEC_PER_MINUTE)

int bus_failed(Transport *t, const sd_bus_error *e, int r) {
        if (sym_sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                return transport_set_unreachable(
                                t, "injectd is not running on the system bus (%s). Start it with "
                                "'systemctl start injectd', or use --varlink if only its socket is there.",
                                e->message ?: e->name);
        if (sym_sd_bus_error_is_set(e))
                return transport_set_error(t, e->name, e->message);
        if (errno_is_disconnect(r) || r == -ENOENT)
                return transport_set_unreachable(
                                t, "Cannot talk to the system bus: %s. Is dbus running? injectd also "
                                "answers on its Varlink socket (--varlink).", strerror(-r));
        return r;
}

static int bus_call(Transport *t, sd_bus_message *m, sd_bus_message **ret) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = sym_sd_bus_call(bus(t), m, t->interactive ? BUS_CALL_TIMEOUT_INTERACTIVE_USEC : BUS_CALL_TIMEOUT_USEC,
                        &e, ret);
        if (r < 0)
                r = bus_failed(t, &e, r);
        sym_sd_bus_error_free(&e);
        return r;
}

/* A new call of method on the manager object. */
static int bus_new_call(Transport *t, const char *method, sd_bus_message **ret) {
        return sym_sd_bus_message_new_method_call(bus(t), ret, BUS_NAME, BUS_PATH, BUS_MANAGER, method);
}

static int bus_call_methodv(Transport *t, const char *method, sd_bus_message **ret_reply, const char *types,
                            va_list ap) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = bus_new_call(t, method, &m);
        if (r >= 0 && types)
                r = sym_sd_bus_message_appendv(m, types, ap);
        if (r < 0)
                return r;
        return bus_call(t, m, ret_reply);
}

int bus_call_method(Transport *t, const char *method, sd_bus_message **ret_reply, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = bus_call_methodv(t, method, ret_reply, types, ap);
        va_end(ap);
        return r;
}

/* For the methods that return one JSON document, of this type, as a
 * string. */
static int bus_call_json(Transport *t, json_type type, json_object **ret, const char *method, const char *types, ...) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *v = NULL;
        const char *s;
        va_list ap;
        int r;

        va_start(ap, types);
        r = bus_call_methodv(t, method, &reply, types, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = sym_sd_bus_message_read(reply, "s", &s);
        if (r < 0)
                return r;
        r = json_parse_strict(s, strlen(s), 0, &v);
        if (r < 0)
                return r;
        if (!json_object_is_type(v, type))
                return -EBADMSG;
        *ret = TAKE_PTR(v);
        return 0;
}

static int bus_get_capabilities(Transport *t, json_object **ret) {
        return bus_call_json(t, json_type_object, ret, "GetCapabilities", NULL);
}

static int bus_list_functions(Transport *t, const char *pattern, json_object **ret) {
        return bus_call_json(t, json_type_array, ret, "ListFunctions", "s", pattern ?: "");
}

int bus_list_injections(Transport *t, bool all, json_object **ret) {
        return bus_call_json(t, json_type_array, ret, "ListInjections", "b", (int) all);
}

/* One request key as a{sv} entry: see docs/dbus-api.md, "The request".
 * "pidfd", "cgroup_fd" and "backing_fd" are indexes in fds
 * (transport_request_fds()), sent as 'h'. */
static int append_request_key(sd_bus_message *m, const char *key, json_object *v, const int *fds, size_t n_fds) {
        int r;

        if (strcmp(key, "pidfd") == 0 || strcmp(key, "cgroup_fd") == 0 || strcmp(key, "backing_fd") == 0) {
                int64_t i = json_object_get_int64(v);

                if (!json_object_is_type(v, json_type_int) || i < 0 || (size_t) i >= n_fds)
                        return -EINVAL;
                /* sd-bus duplicates the fd. */
                return sym_sd_bus_message_append(m, "{sv}", key, "h", fds[i]);
        }

        switch (json_object_get_type(v)) {
        case json_type_string:
                return sym_sd_bus_message_append(m, "{sv}", key, "s", json_object_get_string(v));
        case json_type_boolean:
                return sym_sd_bus_message_append(m, "{sv}", key, "b", (int) json_object_get_boolean(v));
        case json_type_int:
                if (strcmp(key, "duration_usec") == 0)
                        return sym_sd_bus_message_append(m, "{sv}", key, "t", json_object_get_uint64(v));
                return sym_sd_bus_message_append(m, "{sv}", key, "x", json_object_get_int64(v));
        case json_type_double:
                return sym_sd_bus_message_append(m, "{sv}", key, "d", json_object_get_double(v));
        case json_type_array: {
                size_t n = json_object_array_length(v);

                r = sym_sd_bus_message_open_container(m, 'e', "sv");
                if (r < 0)
                        return r;
                r = sym_sd_bus_message_append(m, "s", key);
                if (r < 0)
                        return r;
                r = sym_sd_bus_message_open_container(m, 'v', "as");
                if (r < 0)
                        return r;
                r = sym_sd_bus_message_open_container(m, 'a', "s");
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);

                        if (!json_object_is_type(e, json_type_string))
                                return -EINVAL;
                        r = sym_sd_bus_message_append(m, "s", json_object_get_string(e));
                        if (r < 0)
                                return r;
                }
                r = sym_sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
                r = sym_sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
                return sym_sd_bus_message_close_container(m);
        }
        default:
                return -EINVAL;
        }
}

/* A call of method on the manager with request as its a{sv}, the "pid",
 * "cgroup" and "device" keys as fds (transport_request_fds()). */
static int bus_new_request_call(Transport *t, const char *method, json_object *request, sd_bus_message **ret) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_json_ json_object *wire = NULL;
        int fds[TRANSPORT_FDS_MAX];
        size_t n_fds = 0;
        int r;

        r = transport_request_fds(t, request, &wire, fds, &n_fds);
        if (r < 0)
                return r;
        r = bus_new_call(t, method, &m);
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0) {
                json_object_object_foreach(wire, k, v) {
                        r = append_request_key(m, k, v, fds, n_fds);
                        if (r < 0)
                                break;
                }
        }
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        for (size_t i = 0; i < n_fds; i++)
                close(fds[i]);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int bus_inject(Transport *t, json_object *request, char **ret_id, uint64_t *ret_expires_usec,
                      json_object **ret_injection) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_json_ json_object *list = NULL;
        _cleanup_free_ char *id_copy = NULL;
        const char *id, *path;
        uint64_t expires;
        int r;

        r = bus_new_request_call(t, "Inject", request, &m);
        if (r < 0)
                return r;
        r = bus_call(t, m, &reply);
        if (r < 0)
                return r;
        r = sym_sd_bus_message_read(reply, "sot", &id, &path, &expires);
        if (r < 0)
                return r;
        id_copy = strdup(id);
        if (!id_copy)
                return -ENOMEM;

        /* D-Bus returns no document: fetch it, so both transports answer alike. */
        if (ret_injection) {
                json_object *e;

                r = bus_list_injections(t, false, &list);
                if (r < 0)
                        return r;
                e = injection_find(list, id_copy);
                if (e)
                        *ret_injection = json_object_get(e);
                else {
                        /* It was armed, and ended before we looked (a
                         * times=1 fault that fired at once): not an error.
                         * What is known of it, marked as ended. */
                        r = json_build_object(ret_injection,
                                              JSON_PAIR_STRING("id", id_copy),
                                              JSON_PAIR_REF("function", json_object_object_get(request, "function")),
                                              JSON_PAIR_STRING("state", "ended"),
                                              JSON_PAIR_U64("expires_usec", expires),
                                              JSON_BUILD_END);
                        if (r < 0)
                                return r;
                }
        }
        if (ret_id)
                *ret_id = TAKE_PTR(id_copy);
        if (ret_expires_usec)
                *ret_expires_usec = expires;
        return 0;
}

static int bus_cancel(Transport *t, const char *id) {
        return bus_call_method(t, "Cancel", NULL, "s", id);
}

static int bus_reload_policy(Transport *t) {
        return bus_call_method(t, "ReloadPolicy", NULL, NULL);
}

typedef struct BusObserve {
        Transport *t;
        json_object *result;
        int r;
} BusObserve;

static int on_ended(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusObserve *o = userdata;
        _cleanup_json_ json_object *v = NULL;
        const char *s, *name, *message = NULL;
        int r;

        r = sym_sd_bus_message_read(m, "s", &s);
        if (r >= 0)
                r = json_parse_strict(s, strlen(s), 0, &v);
        if (r >= 0 && !json_object_is_type(v, json_type_object))
                r = -EBADMSG;
        if (r < 0)
                o->r = r;
        else if (json_get_string(v, "error", &name) >= 0) {
                /* The counts could not be read: Varlink's error reply. */
                (void) json_get_string(v, "message", &message);
                o->r = transport_set_error(o->t, name, message ?: "");
        } else {
                o->result = TAKE_PTR(v);
                o->r = 1;
        }
        return 0;
}

static int bus_observe(Transport *t, json_object *request, TransportObservingFn on_observing, void *userdata,
                       json_object **ret_result) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sym_sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_json_ json_object *observing = NULL;
        BusObserve o = { .t = t };
        const char *doc, *path;
        int r;

        r = bus_new_request_call(t, "Observe", request, &m);
        if (r < 0)
                return r;
        r = bus_call(t, m, &reply);
        if (r < 0)
                return r;
        r = sym_sd_bus_message_read(reply, "so", &doc, &path);
        if (r < 0)
                return r;
        r = json_parse_strict(doc, strlen(doc), 0, &observing);
        if (r < 0)
                return r;
        if (!json_object_is_type(observing, json_type_object))
                return -EBADMSG;
        /* Ended comes unicast from the daemon's unique name, the reply's
         * sender: sd-bus compares a match's sender as it is. A signal that
         * came during the call is queued, and dispatched once this match
         * is in place. */
        r = sym_sd_bus_match_signal(bus(t), &slot, sym_sd_bus_message_get_sender(reply), path, BUS_OBSERVE,
                                    "Ended", on_ended, &o);
        if (r < 0)
                return r;
        r = on_observing(observing, userdata);
        if (r < 0)
                return r;       /* the session ends with our connection */
        while (o.r == 0) {
                r = sym_sd_bus_process(bus(t), NULL);
                if (r < 0)
                        return bus_failed(t, &SD_BUS_ERROR_NULL, r);
                if (r > 0)
                        continue;
                r = sym_sd_bus_wait(bus(t), UINT64_MAX);
                if (r < 0 && r != -EINTR)
                        return bus_failed(t, &SD_BUS_ERROR_NULL, r);
        }
        if (o.r < 0)
                return o.r;
        *ret_result = o.result;
        return 0;
}

static void bus_done(Transport *t) {
        t->data = sym_sd_bus_flush_close_unref(t->data);
}

static const TransportOps bus_ops = TRANSPORT_OPS_INIT(bus);

bool transport_bus_supported(void) {
        return true;
}

int transport_open_bus(bool interactive, Transport **ret, char **reterr_message) {
        sd_bus *b = NULL;
        const char *why = NULL;
        int r;

        /* Loaded only now, when D-Bus is the transport chosen. */
        r = dlopen_libsystemd(&why);
        if (r < 0)
                return strprintf(reterr_message, "Cannot load libsystemd, which the D-Bus transport needs: %s. "
                                 "injectd also answers on its Varlink socket (--varlink).", why ?: strerror(-r)) < 0
                               ? -ENOMEM : -EHOSTDOWN;

        r = sym_sd_bus_open_system(&b);
        if (errno_is_disconnect(r) || r == -ENOENT)
                return strprintf(reterr_message, "Cannot connect to the system bus: %s. Is dbus running? injectd also "
                                 "answers on its Varlink socket (--varlink).", strerror(-r)) < 0 ? -ENOMEM : -EHOSTDOWN;
        if (r < 0)
                return r;
        (void) sym_sd_bus_set_allow_interactive_authorization(b, interactive);

        return transport_new(&bus_ops, b, interactive, ret);
}
