/* SPDX-License-Identifier: MIT */
/* The D-Bus front end's manager object, /org/injectd/Injector1. It only
 * translates: a{sv} requests become the JSON object the Varlink front end
 * receives, and the manager answers both the same way. Lists and
 * capabilities are returned as JSON strings (as systemd's Describe()
 * methods do), so both APIs return the very same documents. */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-call.h"
#include "bus-injection.h"
#include "bus-manager.h"
#include "bus-observe.h"
#include "bus-owner.h"
#include "bus-requester.h"
#include "bus-subscribers.h"
#include "bus-util.h"
#include "cleanup.h"
#include "json-build.h"
#include "json-util.h"
#include "log.h"
#include "manager.h"

#define BUS_NAME "org.injectd.Injector1"
#define BUS_PATH "/org/injectd/Injector1"
#define BUS_MANAGER_IFACE "org.injectd.Injector1.Manager"

static int reply_json(sd_bus_message *m, json_object *o) {
        return sd_bus_reply_method_return(m, "s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static void on_inject_done(Manager *mgr, Injection *inj, const InjectError *err, void *userdata) {
        BusCall *call = userdata;
        char path[BUS_INJECTION_PATH_MAX];

        if (!inj)
                (void) bus_reply_inject_error(call->message, err);
        else
                (void) sd_bus_reply_method_return(call->message, "sot", inj->id_str, bus_injection_path(inj, path),
                                                  inj->expires_usec);
        bus_call_free(call);
}

static int method_inject(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(json_object_putp) json_object *spec = NULL;
        _cleanup_(bus_requester_unrefp) BusRequester *rq = NULL;
        BusApi *b = userdata;
        Manager *mgr = b->manager;
        BusCall *call;
        int fds[REQUEST_FDS_MAX];
        size_t n_fds = 0;
        Caller c;
        int r;

        /* The fds stay m's: manager_inject() duplicates what it keeps. */
        r = bus_read_request(m, &spec, fds, &n_fds, error);
        if (r < 0)
                return r;
        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        /* The standard header flag asks for interactive authorization too. */
        if (sd_bus_message_get_allow_interactive_authorization(m) > 0 &&
            !json_object_object_get_ex(spec, "interactive", NULL)) {
                r = json_add_bool(spec, "interactive", true);
                if (r < 0) {
                        caller_done(&c);
                        return r;
                }
        }

        /* The requester's record is the request's owner: when the name
         * goes, the request no longer waits for polkit. rq is held here
         * too, as the answer (maybe given before manager_inject() returns)
         * drops the call's reference. */
        r = bus_call_new(b, m, &call);
        if (r < 0) {
                caller_done(&c);
                return r;
        }
        rq = bus_requester_ref(call->requester);
        r = manager_inject(mgr, &c, spec, fds, n_fds, rq, on_inject_done, call, NULL);
        caller_done(&c);
        if (r < 0) {
                bus_call_free(call);
                return r;
        }
        /* It had gone before its name was watched. */
        bus_requester_check_gone(rq);
        return 1;
}

static int method_cancel(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *id;
        int r;

        r = sd_bus_message_read(m, "s", &id);
        if (r < 0)
                return r;
        return bus_call_manage(userdata, m, ((BusApi *) userdata)->manager, id, error);
}

static int method_reload_policy(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return bus_call_manage(userdata, m, ((BusApi *) userdata)->manager, NULL, error);
}

static int method_get_capabilities(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        Caller c;
        int r;

        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        r = manager_capabilities_json(((BusApi *) userdata)->manager, &c, &o);
        caller_done(&c);
        if (r < 0)
                return r;
        return reply_json(m, o);
}

static int method_list_functions(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *glob;
        Caller c;
        int r;

        r = sd_bus_message_read(m, "s", &glob);
        if (r < 0)
                return r;
        if (strlen(glob) > REQUEST_MAX_STRING)
                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_INVALID_ARGUMENT,
                                         "The pattern must be at most 256 characters");
        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        r = manager_functions_json(((BusApi *) userdata)->manager, &c, glob, &o);
        caller_done(&c);
        if (r < 0) {
                InjectError err = {};

                inject_error_set(&err, r, INJECT_ERROR_UNAVAILABLE, "Cannot list injectable functions: %s",
                                 strerror(-r));
                return bus_set_inject_error(error, &err);
        }
        return reply_json(m, o);
}

static int method_list_injections(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        InjectError err = {};
        Caller c;
        int all, r;

        r = sd_bus_message_read(m, "b", &all);
        if (r < 0)
                return r;
        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        r = manager_list_json(((BusApi *) userdata)->manager, &c, all, &o, &err);
        caller_done(&c);
        if (r < 0)
                return err.name ? bus_set_inject_error(error, &err) : r;
        return reply_json(m, o);
}

static int method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Caller c;
        int r;

        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        BusApi *b = userdata;

        r = bus_subscribe(b, sd_bus_message_get_sender(m), &c);
        caller_done(&c);
        if (r == -EUSERS)
                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_LIMIT,
                                         "Too many subscribers; try again later");
        if (r == -EDQUOT)
                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_LIMIT,
                                         "Too many subscriptions: at most %u per user (the rest are kept "
                                         "for privileged callers)",
                                         b->manager->options.subscriptions_per_user ?: MANAGER_SUBSCRIPTIONS_PER_USER_DEFAULT);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, NULL);
}

static int method_unsubscribe(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        int r = bus_unsubscribe(userdata, sd_bus_message_get_sender(m));

        if (r == -ENOENT)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Not subscribed");
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("GetCapabilities", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", capabilities_json),
                                method_get_capabilities, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListFunctions", SD_BUS_ARGS("s", pattern), SD_BUS_RESULT("s", functions_json),
                                method_list_functions, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inject", SD_BUS_ARGS("a{sv}", spec),
                                SD_BUS_RESULT("s", id, "o", injection, "t", expires_usec), method_inject,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Observe", SD_BUS_ARGS("a{sv}", request),
                                SD_BUS_RESULT("s", observing_json, "o", session), bus_observe_method,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListInjections", SD_BUS_ARGS("b", all), SD_BUS_RESULT("s", injections_json),
                                method_list_injections, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_ARGS("s", id), SD_BUS_NO_RESULT, method_cancel,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReloadPolicy", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_reload_policy,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Subscribe", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_subscribe,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Unsubscribe", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_unsubscribe,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("InjectionAdded", SD_BUS_ARGS("s", id, "o", injection), 0),
        SD_BUS_SIGNAL_WITH_ARGS("InjectionRemoved", SD_BUS_ARGS("s", id, "o", injection, "s", reason), 0),
        SD_BUS_VTABLE_END
};

static void on_added(Manager *m, Injection *inj, void *userdata) {
        char path[BUS_INJECTION_PATH_MAX];

        (void) bus_owner_emit(userdata, inj, BUS_PATH, BUS_MANAGER_IFACE, "InjectionAdded", "so", inj->id_str,
                                 bus_injection_path(inj, path));
}

static void on_removed(Manager *m, Injection *inj, RemoveReason reason, void *userdata) {
        char path[BUS_INJECTION_PATH_MAX];

        bus_injection_removed(userdata, inj);
        (void) bus_owner_emit(userdata, inj, BUS_PATH, BUS_MANAGER_IFACE, "InjectionRemoved", "sos", inj->id_str,
                                 bus_injection_path(inj, path), remove_reason_to_string(reason));
        /* After the InjectionRemoved signal, which still goes to the owner. */
        bus_owner_forget(userdata, inj);
}

static void on_fault(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm, void *userdata) {
        bus_injection_fault(userdata, inj, ev, comm);
}

BusApi *bus_api_free(BusApi *b) {
        if (!b)
                return NULL;
        manager_remove_listener(b->manager, &b->listener);
        manager_set_owner_tracker(b->manager, TRANSPORT_BUS, NULL);
        bus_subscribers_free(b);
        bus_observes_free(b);
        bus_owners_free(b);
        bus_requesters_free(b);
        sd_bus_flush_close_unref(b->bus);
        bus_forget_caller(b);
        free(b);
        return NULL;
}

int bus_api_new(Manager *m, BusApi **ret) {
        _cleanup_(bus_api_freep) BusApi *b = NULL;
        int r;

        b = calloc(1, sizeof(*b));
        if (!b)
                return log_oom();
        b->manager = m;
        b->listener = (ManagerListener) { .added = on_added, .removed = on_removed, .fault = on_fault, .userdata = b };
        b->tracker = (OwnerTracker) { .gone = bus_owner_gone, .track = bus_owner_track, .userdata = b };
        r = manager_add_listener(m, &b->listener);
        if (r < 0)
                return log_oom();
        manager_set_owner_tracker(m, TRANSPORT_BUS, &b->tracker);

        /* DBUS_SYSTEM_BUS_ADDRESS picks a private bus, for tests. */
        r = sd_bus_open_system(&b->bus);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the system bus: %m");
        r = sd_bus_attach_event(b->bus, m->event, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        r = sd_bus_add_object_vtable(b->bus, NULL, BUS_PATH, BUS_MANAGER_IFACE, manager_vtable, b);
        if (r < 0)
                return log_error_errno(r, "Failed to register '%s': %m", BUS_PATH);
        r = bus_injection_register(b);
        if (r < 0)
                return r;
        r = bus_observe_register(b);
        if (r < 0)
                return r;
        r = sd_bus_request_name(b->bus, BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire '%s' on the bus: %m", BUS_NAME);
        *ret = TAKE_PTR(b);
        return 0;
}
