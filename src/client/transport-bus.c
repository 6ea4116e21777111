/* SPDX-License-Identifier: MIT */
/* The D-Bus transport: org.injectd.Injector1 on the system bus (or the bus
 * at $DBUS_SYSTEM_BUS_ADDRESS), through sd-bus. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-bus.h>

#include "time-util.h"
#include "duration.h"
#include "json-build.h"
#include "json-util.h"
#include "string-util.h"
#include "transport.h"

#define BUS_NAME "org.injectd.Injector1"
#define BUS_PATH "/org/injectd/Injector1"
#define BUS_MANAGER "org.injectd.Injector1.Manager"
#define BUS_INJECTION "org.injectd.Injector1.Injection"
#define BUS_INJECTION_PREFIX "/org/injectd/Injector1/injection/_"

#define BUS_CALL_TIMEOUT_USEC (60 * USEC_PER_SEC)
#define BUS_CALL_TIMEOUT_INTERACTIVE_USEC (6 * USEC_PER_MINUTE)
#define BUS_WATCH_POLL_USEC (500 * USEC_PER_MSEC)


static sd_bus *bus(Transport *t) {
        return t->data;
}

static int bus_failed(Transport *t, const sd_bus_error *e, int r) {
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                return transport_set_unreachable(
                                t, "injectd is not running on the system bus (%s). Start it with "
                                "'systemctl start injectd', or use --varlink if only its socket is there.",
                                e->message ?: e->name);
        if (sd_bus_error_is_set(e))
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

        r = sd_bus_call(bus(t), m, t->interactive ? BUS_CALL_TIMEOUT_INTERACTIVE_USEC : BUS_CALL_TIMEOUT_USEC,
                        &e, ret);
        if (r < 0)
                r = bus_failed(t, &e, r);
        sd_bus_error_free(&e);
        return r;
}

/* A new call of method on the manager object. */
static int bus_new_call(Transport *t, const char *method, sd_bus_message **ret) {
        return sd_bus_message_new_method_call(bus(t), ret, BUS_NAME, BUS_PATH, BUS_MANAGER, method);
}

/* Calls method on the manager with the arguments ap, of the types given
 * as to sd_bus_message_append() (NULL: none). ret_reply is optional. */
static int bus_call_methodv(Transport *t, const char *method, sd_bus_message **ret_reply, const char *types,
                            va_list ap) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = bus_new_call(t, method, &m);
        if (r >= 0 && types)
                r = sd_bus_message_appendv(m, types, ap);
        if (r < 0)
                return r;
        return bus_call(t, m, ret_reply);
}

static int bus_call_method(Transport *t, const char *method, sd_bus_message **ret_reply, const char *types, ...) {
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
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *v = NULL;
        const char *s;
        va_list ap;
        int r;

        va_start(ap, types);
        r = bus_call_methodv(t, method, &reply, types, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "s", &s);
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

static int bus_list_injections(Transport *t, bool all, json_object **ret) {
        return bus_call_json(t, json_type_array, ret, "ListInjections", "b", (int) all);
}

/* One request key as a{sv} entry: see docs/dbus-api.md, "The request". */
static int append_request_key(Transport *t, sd_bus_message *m, const char *key, json_object *v) {
        int r;

        if (strcmp(key, "cgroup") == 0 && json_object_is_type(v, json_type_string)) {
                const char *path = json_object_get_string(v);
                _cleanup_close_ int fd = -1;
                _cleanup_free_ char *msg = NULL;

                fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0) {
                        if (asprintf(&msg, "Cannot open the cgroup directory '%s': %s", path, strerror(errno)) < 0)
                                return -ENOMEM;
                        return transport_set_error(t, "BadScope", msg);
                }
                /* sd-bus duplicates the fd. */
                return sd_bus_message_append(m, "{sv}", "cgroup_fd", "h", fd);
        }

        switch (json_object_get_type(v)) {
        case json_type_string:
                return sd_bus_message_append(m, "{sv}", key, "s", json_object_get_string(v));
        case json_type_boolean:
                return sd_bus_message_append(m, "{sv}", key, "b", (int) json_object_get_boolean(v));
        case json_type_int:
                if (strcmp(key, "duration_usec") == 0)
                        return sd_bus_message_append(m, "{sv}", key, "t", json_object_get_uint64(v));
                return sd_bus_message_append(m, "{sv}", key, "x", json_object_get_int64(v));
        case json_type_double:
                return sd_bus_message_append(m, "{sv}", key, "d", json_object_get_double(v));
        case json_type_array: {
                size_t n = json_object_array_length(v);

                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r < 0)
                        return r;
                r = sd_bus_message_append(m, "s", key);
                if (r < 0)
                        return r;
                r = sd_bus_message_open_container(m, 'v', "as");
                if (r < 0)
                        return r;
                r = sd_bus_message_open_container(m, 'a', "s");
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);

                        if (!json_object_is_type(e, json_type_string))
                                return -EINVAL;
                        r = sd_bus_message_append(m, "s", json_object_get_string(e));
                        if (r < 0)
                                return r;
                }
                r = sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
                r = sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
                return sd_bus_message_close_container(m);
        }
        default:
                return -EINVAL;
        }
}

static int bus_inject(Transport *t, json_object *request, char **ret_id, uint64_t *ret_expires_usec,
                      json_object **ret_injection) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_json_ json_object *list = NULL;
        _cleanup_free_ char *id_copy = NULL;
        const char *id, *path;
        uint64_t expires;
        int r;

        r = bus_new_call(t, "Inject", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        json_object_object_foreach(request, k, v) {
                r = append_request_key(t, m, k, v);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;

        r = bus_call(t, m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "sot", &id, &path, &expires);
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

/* ---- watch: ListInjections every 500 ms, plus the signals this
 * connection receives (those of the injections it armed itself). */

typedef struct Known {
        char *id;
        uint64_t seen, matched, injected;
        bool present;
} Known;

typedef struct BusWatch {
        Transport *t;
        char *const *ids;
        TransportEventFn callback;
        void *userdata;
        Known *known;
        size_t n_known;
        char *daemon;   /* injectd's unique bus name */
        json_object *functions; /* id → function */
        int r;          /* non-zero: stop with this */
} BusWatch;

static bool watch_wants(BusWatch *w, const char *id) {
        if (!w->ids || !w->ids[0])
                return true;
        for (char *const *i = w->ids; *i; i++)
                if (strcmp(*i, id) == 0)
                        return true;
        return false;
}

/* Hands the event (NULL: one that could not be built, out of memory) to
 * the callback, and releases it. A lost event would leave the watcher
 * believing something false, so running out of memory ends the watch. */
static void watch_emit(BusWatch *w, json_object *event) {
        if (w->r == 0)
                w->r = event ? w->callback(event, w->userdata) : -ENOMEM;
        json_object_put(event);
}

/* A new event of this type about id (NULL: none); NULL when out of memory. */
static json_object *new_event(const char *type, const char *id) {
        json_object *e = NULL;

        if (json_build_object(&e,
                              JSON_PAIR_STRING("type", type),
                              JSON_PAIR_IF(id, JSON_PAIR_STRING("id", id)),
                              JSON_BUILD_END) < 0)
                return NULL;
        return e;
}

static Known *watch_find(BusWatch *w, const char *id) {
        for (size_t i = 0; i < w->n_known; i++)
                if (w->known[i].id && strcmp(w->known[i].id, id) == 0)
                        return &w->known[i];
        return NULL;
}

static const char *id_from_path(const char *path) {
        if (!path || strncmp(path, BUS_INJECTION_PREFIX, strlen(BUS_INJECTION_PREFIX)) != 0)
                return NULL;
        return path + strlen(BUS_INJECTION_PREFIX);
}

static int on_fault(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        BusWatch *w = userdata;
        const char *id = id_from_path(sd_bus_message_get_path(m)), *comm;
        json_object *e = NULL, *f;
        uint64_t time_ns;
        uint32_t pid, tgid;
        int64_t value;

        if (!id || !watch_wants(w, id))
                return 0;
        if (sd_bus_message_read(m, "tuusx", &time_ns, &pid, &tgid, &comm, &value) < 0)
                return 0;
        /* The signal does not name the function; the injection may be
         * gone by now (times=1), so it was noted when it came. */
        f = json_object_object_get(w->functions, id);
        (void) json_build_object(&e,
                                 JSON_PAIR_STRING("type", "fault"),
                                 JSON_PAIR_STRING("id", id),
                                 JSON_PAIR_U64("time_ns", time_ns),
                                 JSON_PAIR_I64("pid", pid),
                                 JSON_PAIR_I64("tgid", tgid),
                                 JSON_PAIR_STRING("comm", comm),
                                 JSON_PAIR_I64("value", value),
                                 JSON_PAIR_IF(f, JSON_PAIR_REF("function", f)),
                                 JSON_BUILD_END);
        watch_emit(w, e);
        return 0;
}

/* Notes the function of each injection as it comes, for on_fault(). */
static void note_function(BusWatch *w, const char *id, const char *path) {
        _cleanup_free_ char *function = NULL;

        if (json_object_object_get(w->functions, id))
                return;
        /* Without the property, the fault event goes without its function. */
        if (sd_bus_get_property_string(bus(w->t), BUS_NAME, path, BUS_INJECTION, "Function", NULL, &function) >= 0 &&
            json_add_string(w->functions, id, function) < 0 && w->r == 0)
                w->r = -ENOMEM;
}

static int on_added(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        BusWatch *w = userdata;
        const char *id, *path;

        if (sd_bus_message_read(m, "so", &id, &path) >= 0 && watch_wants(w, id))
                note_function(w, id, path);
        return 0;
}

static int on_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        BusWatch *w = userdata;
        const char *id, *path, *reason;
        json_object *e = NULL;
        Known *k;

        if (sd_bus_message_read(m, "sos", &id, &path, &reason) < 0 || !watch_wants(w, id))
                return 0;
        k = watch_find(w, id);
        if (k) {
                if (!k->present)
                        return 0;
                k->present = false;
        }
        (void) json_build_object(&e,
                                 JSON_PAIR_STRING("type", "removed"),
                                 JSON_PAIR_STRING("id", id),
                                 JSON_PAIR_STRING("reason", reason),
                                 JSON_BUILD_END);
        watch_emit(w, e);
        return 0;
}

static int watch_poll(BusWatch *w, bool first) {
        _cleanup_json_ json_object *list = NULL;
        size_t n;
        int r;

        r = bus_list_injections(w->t, false, &list);
        if (r < 0)
                return r;
        n = json_object_array_length(list);

        /* Signals that came in while we waited for the list are older than
         * it: dispatch them first, or a removal seen in the list would end
         * the watch before the fault and the reason they carry. */
        while (w->r == 0 && (r = sd_bus_process(bus(w->t), NULL)) > 0)
                ;
        if (r < 0)
                return r;
        if (w->r != 0)
                return 0;

        for (size_t i = 0; i < w->n_known; i++)
                if (w->known[i].present && !injection_find(list, w->known[i].id)) {
                        w->known[i].present = false;
                        watch_emit(w, new_event("removed", w->known[i].id));
                }

        for (size_t i = 0; i < n; i++) {
                json_object *doc = json_object_array_get_idx(list, i), *e = NULL;
                uint64_t seen = 0, matched = 0, injected = 0;
                const char *id;
                Known *k;

                if (json_get_string(doc, "id", &id) < 0 || !watch_wants(w, id))
                        continue;
                (void) json_get_u64(doc, "calls_seen", 0, UINT64_MAX, &seen);
                (void) json_get_u64(doc, "calls_matched", 0, UINT64_MAX, &matched);
                (void) json_get_u64(doc, "faults_injected", 0, UINT64_MAX, &injected);

                k = watch_find(w, id);
                if (!k) {
                        Known *nk = realloc(w->known, (w->n_known + 1) * sizeof(Known));

                        if (!nk)
                                return -ENOMEM;
                        w->known = nk;
                        k = &w->known[w->n_known++];
                        *k = (Known) { .id = strdup(id), .present = true };
                        if (!k->id)
                                return -ENOMEM;
                        if (!json_object_object_get(w->functions, id)) {
                                r = json_add_ref(w->functions, id, json_object_object_get(doc, "function"));
                                if (r < 0)
                                        return r;
                        }
                        if (!first) {
                                (void) json_build_object(&e,
                                                         JSON_PAIR_STRING("type", "added"),
                                                         JSON_PAIR_STRING("id", id),
                                                         JSON_PAIR_REF("injection", doc),
                                                         JSON_BUILD_END);
                                watch_emit(w, e);
                        }
                } else if (!k->present)
                        continue;
                else if (k->seen == seen && k->matched == matched && k->injected == injected)
                        continue;
                else {
                        (void) json_build_object(&e,
                                                 JSON_PAIR_STRING("type", "counters"),
                                                 JSON_PAIR_STRING("id", id),
                                                 JSON_PAIR_REF("injection", doc),
                                                 JSON_BUILD_END);
                        watch_emit(w, e);
                }
                k->seen = seen;
                k->matched = matched;
                k->injected = injected;
        }
        return 0;
}

static int bus_watch(Transport *t, char *const *ids, TransportEventFn callback, void *userdata) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *fault_slot = NULL, *removed_slot = NULL, *added_slot = NULL;
        BusWatch w = { .t = t, .ids = ids, .callback = callback, .userdata = userdata };
        uint64_t next;
        int r;

        /* The signals come unicast, and sd-bus compares their sender, the
         * daemon's unique name, with the match's as is: match on that. */
        {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                sd_bus_error e = SD_BUS_ERROR_NULL;
                const char *owner;

                r = sd_bus_call_method(bus(t), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetNameOwner", &e, &reply, "s", BUS_NAME);
                if (r < 0)
                        r = bus_failed(t, &e, r);
                sd_bus_error_free(&e);
                if (r >= 0)
                        r = sd_bus_message_read(reply, "s", &owner);
                if (r >= 0 && !(w.daemon = strdup(owner)))
                        r = -ENOMEM;
                if (r < 0)
                        goto finish;
        }
        /* Before the matches: their callbacks note functions in it. */
        w.functions = json_object_new_object();
        if (!w.functions) {
                r = -ENOMEM;
                goto finish;
        }
        r = sd_bus_match_signal(bus(t), &fault_slot, w.daemon, NULL, BUS_INJECTION, "Fault", on_fault, &w);
        if (r < 0)
                goto finish;
        r = sd_bus_match_signal(bus(t), &removed_slot, w.daemon, BUS_PATH, BUS_MANAGER, "InjectionRemoved",
                                on_removed, &w);
        if (r < 0)
                goto finish;
        r = sd_bus_match_signal(bus(t), &added_slot, w.daemon, BUS_PATH, BUS_MANAGER, "InjectionAdded", on_added,
                                &w);
        if (r < 0)
                goto finish;
        /* Signals go to an injection's owning connection; subscribing gets
         * them for every injection we may see, detached ones included. */
        r = bus_call_method(t, "Subscribe", NULL, NULL);
        if (r < 0)
                goto finish;

        r = watch_poll(&w, true);
        if (r < 0)
                goto finish;
        watch_emit(&w, new_event("watching", NULL));
        next = now_usec(CLOCK_MONOTONIC) + BUS_WATCH_POLL_USEC;

        while (w.r == 0) {
                uint64_t n = now_usec(CLOCK_MONOTONIC);

                if (n >= next) {
                        r = watch_poll(&w, false);
                        if (r < 0)
                                goto finish;
                        next = n + BUS_WATCH_POLL_USEC;
                        continue;
                }
                r = sd_bus_process(bus(t), NULL);
                if (r < 0) {
                        r = bus_failed(t, &SD_BUS_ERROR_NULL, r);
                        goto finish;
                }
                if (r > 0)
                        continue;
                r = sd_bus_wait(bus(t), next - n);
                if (r < 0 && r != -EINTR) {
                        r = bus_failed(t, &SD_BUS_ERROR_NULL, r);
                        goto finish;
                }
        }
        r = w.r;

finish:
        for (size_t i = 0; i < w.n_known; i++)
                free(w.known[i].id);
        free(w.known);
        free(w.daemon);
        json_object_put(w.functions);
        return r;
}

static void bus_done(Transport *t) {
        t->data = sd_bus_flush_close_unref(t->data);
}

static const TransportOps bus_ops = TRANSPORT_OPS_INIT(bus);

int transport_open_bus(bool interactive, Transport **ret, char **reterr_message) {
        sd_bus *b = NULL;
        int r;

        r = sd_bus_open_system(&b);
        if (errno_is_disconnect(r) || r == -ENOENT)
                return strprintf(reterr_message, "Cannot connect to the system bus: %s. Is dbus running? injectd also "
                                 "answers on its Varlink socket (--varlink).", strerror(-r)) < 0 ? -ENOMEM : -EHOSTDOWN;
        if (r < 0)
                return r;
        (void) sd_bus_set_allow_interactive_authorization(b, interactive);

        return transport_new(&bus_ops, b, interactive, ret);
}
