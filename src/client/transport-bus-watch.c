/* SPDX-License-Identifier: MIT */
/* Watch over D-Bus: ListInjections every 500 ms for the counters, added
 * and removed injections, plus the Fault and InjectionRemoved signals
 * (subscribed to), turned into the event objects Varlink's Watch sends. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "json-build.h"
#include "json-util.h"
#include "time-util.h"
#include "transport-bus.h"

#define BUS_WATCH_POLL_USEC (500 * USEC_PER_MSEC)


typedef struct Known {
        char *id;
        uint64_t seen, matched, injected, guarded;
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
        const char *id = id_from_path(sym_sd_bus_message_get_path(m)), *comm;
        json_object *e = NULL, *f;
        uint64_t time_ns;
        uint32_t pid, tgid;
        int64_t value;

        if (!id || !watch_wants(w, id))
                return 0;
        if (sym_sd_bus_message_read(m, "tuusx", &time_ns, &pid, &tgid, &comm, &value) < 0)
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
        if (sym_sd_bus_get_property_string(bus(w->t), BUS_NAME, path, BUS_INJECTION, "Function", NULL, &function) >= 0 &&
            json_add_string(w->functions, id, function) < 0 && w->r == 0)
                w->r = -ENOMEM;
}

static int on_added(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        BusWatch *w = userdata;
        const char *id, *path;

        if (sym_sd_bus_message_read(m, "so", &id, &path) >= 0 && watch_wants(w, id))
                note_function(w, id, path);
        return 0;
}

static int on_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        BusWatch *w = userdata;
        const char *id, *path, *reason;
        json_object *e = NULL;
        Known *k;

        if (sym_sd_bus_message_read(m, "sos", &id, &path, &reason) < 0 || !watch_wants(w, id))
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
        while (w->r == 0 && (r = sym_sd_bus_process(bus(w->t), NULL)) > 0)
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
                uint64_t seen = 0, matched = 0, injected = 0, guarded = 0;
                const char *id;
                Known *k;

                if (json_get_string(doc, "id", &id) < 0 || !watch_wants(w, id))
                        continue;
                (void) json_get_u64(doc, "calls_seen", 0, UINT64_MAX, &seen);
                (void) json_get_u64(doc, "calls_matched", 0, UINT64_MAX, &matched);
                (void) json_get_u64(doc, "faults_injected", 0, UINT64_MAX, &injected);
                (void) json_get_u64(doc, "calls_guarded", 0, UINT64_MAX, &guarded);

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
                else if (k->seen == seen && k->matched == matched && k->injected == injected &&
                         k->guarded == guarded)
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
                k->guarded = guarded;
        }
        return 0;
}

int bus_watch(Transport *t, char *const *ids, TransportEventFn callback, void *userdata) {
        _cleanup_(sym_sd_bus_slot_unrefp) sd_bus_slot *fault_slot = NULL, *removed_slot = NULL, *added_slot = NULL;
        BusWatch w = { .t = t, .ids = ids, .callback = callback, .userdata = userdata };
        uint64_t next;
        int r;

        /* The signals come unicast, and sd-bus compares their sender, the
         * daemon's unique name, with the match's as is: match on that. */
        {
                _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                sd_bus_error e = SD_BUS_ERROR_NULL;
                const char *owner;

                r = sym_sd_bus_call_method(bus(t), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetNameOwner", &e, &reply, "s", BUS_NAME);
                if (r < 0)
                        r = bus_failed(t, &e, r);
                sym_sd_bus_error_free(&e);
                if (r >= 0)
                        r = sym_sd_bus_message_read(reply, "s", &owner);
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
        r = sym_sd_bus_match_signal(bus(t), &fault_slot, w.daemon, NULL, BUS_INJECTION, "Fault", on_fault, &w);
        if (r < 0)
                goto finish;
        r = sym_sd_bus_match_signal(bus(t), &removed_slot, w.daemon, BUS_PATH, BUS_MANAGER, "InjectionRemoved",
                                on_removed, &w);
        if (r < 0)
                goto finish;
        r = sym_sd_bus_match_signal(bus(t), &added_slot, w.daemon, BUS_PATH, BUS_MANAGER, "InjectionAdded", on_added,
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
                r = sym_sd_bus_process(bus(t), NULL);
                if (r < 0) {
                        r = bus_failed(t, &SD_BUS_ERROR_NULL, r);
                        goto finish;
                }
                if (r > 0)
                        continue;
                r = sym_sd_bus_wait(bus(t), next - n);
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
