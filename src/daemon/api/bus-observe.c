/* SPDX-License-Identifier: MIT */
/* D-Bus Observe (observe-session.h). Manager.Observe(a{sv}) starts a
 * session and returns, once polkit has said yes to org.injectd.observe,
 * what Varlink's first reply says, and an
 * object, /org/injectd/Injector1/observe/_<n>; when the session ends (the
 * observed tree's root exits, the time is up, or Stop()) that object sends
 * Ended(s) with what Varlink's last reply says, to the caller only. The
 * session is the caller's connection's: it ends, counted by no one, when
 * that unique name leaves the bus, as a Varlink one ends with its
 * connection. Only the caller and root see the object (the counts tell
 * what the caller's processes do). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-observe.h"
#include "bus-util.h"
#include "cleanup.h"
#include "json-build.h"
#include "json-util.h"
#include "log.h"
#include "observe-session.h"

#define OBSERVE_PREFIX "/org/injectd/Injector1/observe"
#define OBSERVE_IFACE "org.injectd.Injector1.Observe"
#define OBSERVE_PATH_MAX 64
/* Each session holds kprobe links; one connection needs one at a time
 * (explore's discovery), a few leave room for a client's own tools. */
#define BUS_OBSERVES_PER_NAME 4

struct BusObserve {
        BusObserve *next;
        BusApi *api;
        uint64_t id;
        char *owner;                    /* the caller's unique name */
        sd_bus_slot *name_watch;        /* NameOwnerChanged of owner */
        sd_bus_message *call;           /* Observe(), unanswered while polkit decides; then NULL */
        ObserveSession *session;
        char path[OBSERVE_PATH_MAX];
};

static void record_remove(BusApi *b, BusObserve *o) {
        for (BusObserve **pp = &b->observes; *pp; pp = &(*pp)->next)
                if (*pp == o) {
                        *pp = o->next;
                        break;
                }
        sd_bus_slot_unref(o->name_watch);
        sd_bus_message_unref(o->call);
        free(o->owner);
        free(o);
}

/* Its caller left: the session ends and nobody hears of it. */
static void record_drop(BusApi *b, BusObserve *o) {
        observe_session_free(o->session);
        record_remove(b, o);
}

void bus_observes_free(BusApi *b) {
        while (b->observes)
                record_drop(b, b->observes);
}

static void on_done(ObserveSession *s, json_object *result, const InjectError *err, void *userdata) {
        _cleanup_json_ json_object *failed = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        BusObserve *o = userdata;
        BusApi *b = o->api;
        char name[128];
        int r;

        /* A failure to read the counts is an error reply over Varlink;
         * here the one signal carries it, as the error's name and
         * sentence. */
        if (!result) {
                snprintf(name, sizeof(name), BUS_ERROR_PREFIX "%s", err->name ?: INJECT_ERROR_UNAVAILABLE);
                if (json_build_object(&failed, JSON_PAIR_STRING("error", name),
                                      JSON_PAIR_STRING("message", err->message), JSON_BUILD_END) < 0)
                        failed = NULL;
                result = failed;
        }
        r = sd_bus_message_new_signal(b->bus, &msg, o->path, OBSERVE_IFACE, "Ended");
        if (r >= 0)
                r = sd_bus_message_set_destination(msg, o->owner);
        if (r >= 0)
                r = sd_bus_message_append(msg, "s",
                                          result ? json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN) :
                                                   "{\"error\":\"" BUS_ERROR_PREFIX INJECT_ERROR_UNAVAILABLE "\"}");
        if (r >= 0)
                r = sd_bus_send(b->bus, msg, NULL);
        if (r < 0)
                log_warning_errno(r, "Cannot send Ended to %s for %s: %m", o->owner, o->path);
        /* The session frees itself after this. */
        o->session = NULL;
        record_remove(b, o);
}

static int on_name_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        BusObserve *o = userdata;

        if (bus_name_vanished(msg))
                record_drop(o->api, o);
        return 0;
}

static size_t count_owned(BusApi *b, const char *owner) {
        size_t n = 0;

        for (BusObserve *o = b->observes; o; o = o->next)
                if (strcmp(o->owner, owner) == 0)
                        n++;
        return n;
}

/* polkit answered: Observe() gets its reply now. */
static void on_started(ObserveSession *s, json_object *started, const InjectError *err, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        BusObserve *o = userdata;
        int r;

        call = TAKE_PTR(o->call);
        if (err) {
                (void) bus_set_inject_error(&error, err);
                r = sd_bus_reply_method_error(call, &error);
                if (r < 0)
                        log_warning_errno(r, "Cannot answer Observe() of %s: %m", o->owner);
                /* The session frees itself after this. */
                o->session = NULL;
                record_remove(o->api, o);
                return;
        }
        r = sd_bus_reply_method_return(call, "so", json_object_to_json_string_ext(started, JSON_C_TO_STRING_PLAIN),
                                       o->path);
        if (r < 0)
                log_warning_errno(r, "Cannot answer Observe() of %s: %m", o->owner);
}

int bus_observe_method(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(json_object_putp) json_object *params = NULL;
        _cleanup_(caller_done) Caller c = {};
        BusApi *b = userdata;
        const char *sender = sd_bus_message_get_sender(m);
        int fds[REQUEST_FDS_MAX];
        size_t n_fds = 0;
        InjectError err = {};
        BusObserve *o;
        int r;

        /* The fds stay m's: observe_session_start() duplicates the one it keeps. */
        r = bus_read_request(m, &params, fds, &n_fds, error);
        if (r < 0)
                return r;
        if (!sender)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "The call has no sender");
        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        if (count_owned(b, sender) >= BUS_OBSERVES_PER_NAME)
                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_LIMIT,
                                         "At most %d observations at once per connection", BUS_OBSERVES_PER_NAME);

        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        *o = (BusObserve) { .api = b, .id = ++b->observe_last_id, .owner = strdup(sender), .next = b->observes };
        snprintf(o->path, sizeof(o->path), OBSERVE_PREFIX "/_%016" PRIx64, o->id);
        b->observes = o;
        if (!o->owner) {
                record_remove(b, o);
                return -ENOMEM;
        }
        r = observe_session_start(b->manager, &c, params, fds, n_fds,
                                  sd_bus_message_get_allow_interactive_authorization(m) > 0, on_started, on_done, o,
                                  &o->session, &err);
        if (r < 0) {
                record_remove(b, o);
                return err.name ? bus_set_inject_error(error, &err) : r;
        }
        /* The caller leaving while polkit decides drops the request too. */
        o->call = sd_bus_message_ref(m);
        r = bus_watch_name(b->bus, o->owner, &o->name_watch, on_name_owner_changed, o);
        if (r < 0) {
                record_drop(b, o);
                return r;
        }
        return 1;
}

/* A session's object exists for its caller and for root only. */
static int find_observe(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                        sd_bus_error *error) {
        BusApi *b = userdata;
        sd_bus_message *m = sd_bus_get_current_message(bus);
        const char *sender = m ? sd_bus_message_get_sender(m) : NULL;

        for (BusObserve *o = b->observes; o; o = o->next) {
                const Caller *c;

                /* Not before Observe() has answered with it. */
                if (o->call || strcmp(o->path, path) != 0)
                        continue;
                if (!sender)
                        return 0;
                if (strcmp(sender, o->owner) != 0 && (!(c = bus_current_caller(b, bus)) || !c->privileged))
                        return 0;
                *found = o;
                return 1;
        }
        return 0;
}

static int enumerate_observes(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *error) {
        BusApi *b = userdata;
        char **v;
        size_t n = 0, all = 0;
        void *found;

        for (BusObserve *o = b->observes; o; o = o->next)
                all++;
        v = calloc(all + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (BusObserve *o = b->observes; o; o = o->next)
                if (find_observe(bus, o->path, OBSERVE_IFACE, b, &found, error) > 0) {
                        v[n] = strdup(o->path);
                        if (!v[n]) {
                                for (size_t i = 0; i < n; i++)
                                        free(v[i]);
                                free(v);
                                return -ENOMEM;
                        }
                        n++;
                }
        *nodes = v;
        return 0;
}

static int method_stop(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusObserve *o = userdata;

        /* Ended goes out first, then this reply; o is gone after. */
        observe_session_stop(o->session);
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable observe_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_stop, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("Ended", SD_BUS_ARGS("s", result_json), 0),
        SD_BUS_VTABLE_END
};

int bus_observe_register(BusApi *b) {
        int r;

        r = sd_bus_add_fallback_vtable(b->bus, NULL, OBSERVE_PREFIX, OBSERVE_IFACE, observe_vtable, find_observe, b);
        if (r < 0)
                return log_error_errno(r, "Failed to register '%s': %m", OBSERVE_PREFIX);
        r = sd_bus_add_node_enumerator(b->bus, NULL, OBSERVE_PREFIX, enumerate_observes, b);
        if (r < 0)
                return log_error_errno(r, "Failed to register '%s': %m", OBSERVE_PREFIX);
        return 0;
}
