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

#include "bus-spec.h"
#include "bus-api.h"
#include "cleanup.h"
#include "json-build.h"
#include "json-util.h"
#include "log.h"
#include "manager.h"

#define BUS_NAME "org.injectd.Injector1"
#define BUS_PATH "/org/injectd/Injector1"
#define BUS_MANAGER_IFACE "org.injectd.Injector1.Manager"

int bus_reply_inject_error(sd_bus_message *m, const InjectError *err) {
        char name[128];

        snprintf(name, sizeof(name), BUS_ERROR_PREFIX "%s", err->name ?: INJECT_ERROR_INVALID_ARGUMENT);
        return sd_bus_reply_method_errorf(m, name, "%s", err->message);
}

int bus_set_inject_error(sd_bus_error *error, const InjectError *err) {
        char name[128];

        snprintf(name, sizeof(name), BUS_ERROR_PREFIX "%s", err->name ?: INJECT_ERROR_INVALID_ARGUMENT);
        return sd_bus_error_setf(error, name, "%s", err->message);
}

static int reply_json(sd_bus_message *m, json_object *o) {
        return sd_bus_reply_method_return(m, "s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

/* An Inject, Cancel or ReloadPolicy call being decided: the call, to
 * answer, and its requester's record (a reference), which it lets go of
 * with its answer. */
typedef struct BusInjectCall {
        sd_bus_message *message;
        BusRequester *requester;
} BusInjectCall;

static BusInjectCall *inject_call_free(BusInjectCall *call) {
        if (!call)
                return NULL;
        sd_bus_message_unref(call->message);
        bus_requester_unref(call->requester);
        free(call);
        return NULL;
}

static void on_inject_done(Manager *mgr, Injection *inj, const InjectError *err, void *userdata) {
        BusInjectCall *call = userdata;
        char path[BUS_INJECTION_PATH_MAX];

        if (!inj)
                (void) bus_reply_inject_error(call->message, err);
        else
                (void) sd_bus_reply_method_return(call->message, "sot", inj->id_str, bus_injection_path(inj, path),
                                                  inj->expires_usec);
        inject_call_free(call);
}

/* The requester's record, or NULL when it cannot be followed (the bus
 * refused another match): the request then goes on, and only
 * OwnerTracker.gone, after polkit, notices a requester that left. */
static BusRequester *inject_requester(BusApi *b, sd_bus_message *m) {
        const char *sender = sd_bus_message_get_sender(m);
        BusRequester *rq = NULL;
        int r;

        if (!sender)
                return NULL;
        r = bus_requester_get(b, sender, &rq);
        if (r < 0) {
                log_debug_errno(r, "Cannot follow requester '%s' while polkit decides, ignoring: %m", sender);
                return NULL;
        }
        return rq;
}

int bus_read_request(sd_bus_message *m, json_object **ret, int fds[static REQUEST_FDS_MAX], size_t *ret_n_fds,
                     sd_bus_error *error) {
        int r = bus_read_inject_spec(m, ret, fds, ret_n_fds, error);

        if (r < 0 && !sd_bus_error_is_set(error))
                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_INVALID_ARGUMENT,
                                         "Malformed request: %s", strerror(-r));
        return r;
}

static int method_inject(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(json_object_putp) json_object *spec = NULL;
        _cleanup_(bus_requester_unrefp) BusRequester *rq = NULL;
        BusApi *b = userdata;
        Manager *mgr = b->manager;
        BusInjectCall *call;
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

        call = calloc(1, sizeof(*call));
        if (!call) {
                caller_done(&c);
                return -ENOMEM;
        }
        /* The requester's record is the request's owner: when the name
         * goes, the request no longer waits for polkit. rq is held here
         * too, as the answer (maybe given before manager_inject() returns)
         * drops the call's reference. */
        rq = inject_requester(b, m);
        *call = (BusInjectCall) { .message = sd_bus_message_ref(m), .requester = bus_requester_ref(rq) };
        r = manager_inject(mgr, &c, spec, fds, n_fds, rq, on_inject_done, call, NULL);
        caller_done(&c);
        if (r < 0) {
                inject_call_free(call);
                return r;
        }
        /* It had gone before its name was watched. */
        bus_requester_check_gone(rq);
        return 1;
}

void bus_reply_done(Manager *mgr, const InjectError *err, void *userdata) {
        sd_bus_message *m = userdata;

        if (err)
                (void) bus_reply_inject_error(m, err);
        else
                (void) sd_bus_reply_method_return(m, NULL);
        sd_bus_message_unref(m);
}

static void on_manage_done(Manager *mgr, const InjectError *err, void *userdata) {
        BusInjectCall *call = userdata;

        bus_reply_done(mgr, err, sd_bus_message_ref(call->message));
        inject_call_free(call);
}

int bus_call_manage(BusApi *b, sd_bus_message *m, Manager *mgr, const char *id, sd_bus_error *error) {
        _cleanup_(bus_requester_unrefp) BusRequester *rq = NULL;
        bool interactive = sd_bus_message_get_allow_interactive_authorization(m) > 0;
        BusInjectCall *call;
        Caller c;
        int r;

        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        call = calloc(1, sizeof(*call));
        if (!call) {
                caller_done(&c);
                return -ENOMEM;
        }
        /* As Inject's: a call waiting for polkit ends with its requester. */
        rq = b ? inject_requester(b, m) : NULL;
        *call = (BusInjectCall) { .message = sd_bus_message_ref(m), .requester = bus_requester_ref(rq) };
        if (id)
                r = manager_cancel(mgr, &c, id, interactive, rq, on_manage_done, call);
        else
                r = manager_reload_policy_as(mgr, &c, interactive, rq, on_manage_done, call);
        caller_done(&c);
        if (r < 0) {
                inject_call_free(call);
                return r;
        }
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

/* Signals about an injection go to its owner and to the subscribers who
 * may see it (its own user's, and root's) only: pids and comms of one
 * user's processes are not for other users. An owner on Varlink follows
 * its injections with Watch instead. */
static int emit_one(BusApi *b, const char *destination, const char *path, const char *iface, const char *member,
                    const char *types, va_list ap) {
        sd_bus_message *msg = NULL;
        va_list aq;
        int r;

        r = sd_bus_message_new_signal(b->bus, &msg, path, iface, member);
        if (r >= 0)
                r = sd_bus_message_set_destination(msg, destination);
        if (r >= 0) {
                va_copy(aq, ap);
                r = sd_bus_message_appendv(msg, types, aq);
                va_end(aq);
        }
        if (r >= 0)
                r = sd_bus_send(b->bus, msg, NULL);
        sd_bus_message_unref(msg);
        return r;
}

int bus_emit_to_owner(BusApi *b, Injection *inj, const char *path, const char *iface, const char *member,
                      const char *types, ...) {
        const char *owner = bus_injection_owner(b, inj);
        BusSubscriber *iter = NULL;
        const char *name;
        va_list ap;
        int r = 0;

        va_start(ap, types);
        if (owner)
                r = emit_one(b, owner, path, iface, member, types, ap);
        while ((name = bus_subscriber_next(b, inj, &iter)))
                (void) emit_one(b, name, path, iface, member, types, ap);
        va_end(ap);
        return r;
}

static void on_added(Manager *m, Injection *inj, void *userdata) {
        char path[BUS_INJECTION_PATH_MAX];

        (void) bus_emit_to_owner(userdata, inj, BUS_PATH, BUS_MANAGER_IFACE, "InjectionAdded", "so", inj->id_str,
                                 bus_injection_path(inj, path));
}

static void on_removed(Manager *m, Injection *inj, RemoveReason reason, void *userdata) {
        char path[BUS_INJECTION_PATH_MAX];

        bus_injection_removed(userdata, inj);
        (void) bus_emit_to_owner(userdata, inj, BUS_PATH, BUS_MANAGER_IFACE, "InjectionRemoved", "sos", inj->id_str,
                                 bus_injection_path(inj, path), remove_reason_to_string(reason));
        bus_injection_forget(userdata, inj);
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
        bus_injections_free(b);
        bus_requesters_free(b);
        sd_bus_flush_close_unref(b->bus);
        bus_api_forget_caller(b);
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
