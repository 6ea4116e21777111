/* SPDX-License-Identifier: MIT */
#pragma once

/* The D-Bus front end: org.injectd.Injector1 on the system bus. It keeps
 * everything D-Bus about an injection (the requester's bus name, the watch
 * on it, the Fault signal rate limit) and about its peers (subscriptions);
 * the core hears nothing of it but its ManagerListener and OwnerTracker. */

#include <systemd/sd-bus.h>

#include "inject-error.h"
#include "manager.h"

/* At most this many Fault signals per second per injection; the rest are
 * counted and reported in one FaultsSuppressed. */
#define BUS_FAULT_SIGNALS_PER_SEC 20

typedef struct BusApi BusApi;
typedef struct BusInjection BusInjection;
typedef struct BusRequester BusRequester;
typedef struct BusSubscriber BusSubscriber;
typedef struct BusObserve BusObserve;

struct BusApi {
        Manager *manager;
        sd_bus *bus;
        ManagerListener listener;
        OwnerTracker tracker;
        BusInjection *injections;       /* what D-Bus keeps per injection */
        BusRequester *requesters;       /* names with Inject calls being decided */
        BusSubscriber *subscribers;     /* Manager.Subscribe() callers */
        size_t n_subscribers;
        BusObserve *observes;           /* Manager.Observe() sessions (bus-observe.c) */
        uint64_t observe_last_id;
        /* The caller of the message being dispatched, known by its sender
         * and cookie: sd-bus asks find_injection once per object and
         * interface of one message, and enumerate once per injection, and
         * a Caller costs /proc reads and a user database lookup. */
        char *seen_sender;
        uint64_t seen_cookie;
        Caller seen_caller;
};

/* Connects to the system bus, serves the objects and takes the name. */
int bus_api_new(Manager *m, BusApi **ret);
BusApi *bus_api_free(BusApi *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(BusApi *, bus_api_free);

/* InjectError names become org.injectd.Injector1.Error.<Name>. */
#define BUS_ERROR_PREFIX "org.injectd.Injector1.Error."

int bus_reply_inject_error(sd_bus_message *m, const InjectError *err);
int bus_set_inject_error(sd_bus_error *error, const InjectError *err);

/* A manager_done_cb whose userdata is the method call (a reference): replies
 * empty or with the error, then drops the reference. */
void bus_reply_done(Manager *mgr, const InjectError *err, void *userdata);
/* Cancel(id) (of the manager and of an injection object), or with id NULL
 * ReloadPolicy(): the core answers when it has decided, maybe after polkit. */
int bus_call_manage(BusApi *b, sd_bus_message *m, Manager *mgr, const char *id, sd_bus_error *error);

/* Reads a request's a{sv} (bus-spec.c) as the JSON object Varlink gets;
 * the fds stay m's. Sets error for what is malformed. */
int bus_read_request(sd_bus_message *m, json_object **ret, int fds[static REQUEST_FDS_MAX], size_t *ret_n_fds,
                     sd_bus_error *error);

/* A signal sent to the injection's D-Bus owner and the subscribers who may
 * see it only; nothing to anyone else. */
int bus_emit_to_owner(BusApi *b, Injection *inj, const char *path, const char *iface, const char *member,
                      const char *types, ...);

/* The per-injection objects and records (bus-injection.c). */
#define BUS_INJECTION_PATH_MAX 96
/* The object path of inj, /org/injectd/Injector1/injection/_<id>. */
const char *bus_injection_path(const Injection *inj, char buf[static BUS_INJECTION_PATH_MAX]);
/* The unique bus name of inj's requester, NULL if it came by Varlink. */
const char *bus_injection_owner(BusApi *b, const Injection *inj);
int bus_injection_register(BusApi *b);
/* The caller of the message being dispatched (kept for the rest of its
 * dispatch), NULL if it cannot be identified. */
const Caller *bus_current_caller(BusApi *b, sd_bus *bus);
/* Drops the caller kept for the message being dispatched. */
void bus_api_forget_caller(BusApi *b);
void bus_injection_fault(BusApi *b, Injection *inj, const struct inject_event *ev, const char *comm);
/* Sends what the rate limit held back. */
void bus_injection_removed(BusApi *b, Injection *inj);
/* Forgets what D-Bus kept about inj, after its last signal. */
void bus_injection_forget(BusApi *b, Injection *inj);
void bus_injections_free(BusApi *b);
/* The OwnerTracker of D-Bus requesters; userdata is the BusApi. */
int bus_owner_track(Manager *m, Injection *inj, const Caller *c, void *owner, void *userdata);
bool bus_owner_gone(Manager *m, const Caller *c, void *owner, void *userdata);

/* Following a unique name (bus-requester.c): a match on its
 * NameOwnerChanged, in *slot (replacing what it held), that calls cb.
 * -ESRCH if the name had gone before the match was in place. */
int bus_watch_name(sd_bus *bus, const char *name, sd_bus_slot **slot, sd_bus_message_handler_t cb,
                   void *userdata);
/* A NameOwnerChanged that says the name has no owner any more. */
bool bus_name_vanished(sd_bus_message *msg);

/* The requester behind a unique name, the owner handle of its Inject
 * calls: when the name goes, its requests still waiting for polkit are
 * dropped (manager_requester_gone()). bus_requester_get() returns a new
 * reference; each request holds one until its answer. A name that had
 * already gone comes back marked so: call bus_requester_check_gone() once
 * its request is made, which drops it unless it detached. */
int bus_requester_get(BusApi *b, const char *name, BusRequester **ret);
BusRequester *bus_requester_ref(BusRequester *rq);
BusRequester *bus_requester_unref(BusRequester *rq);
DEFINE_TRIVIAL_CLEANUP_FUNC(BusRequester *, bus_requester_unref);
void bus_requester_check_gone(BusRequester *rq);
void bus_requesters_free(BusApi *b);

/* Manager.Observe() (bus-observe.c): the method, the session objects
 * (/org/injectd/Injector1/observe/_<n>, their Stop() and Ended signal),
 * and freeing every session when the front end goes. */
int bus_observe_method(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_observe_register(BusApi *b);
void bus_observes_free(BusApi *b);

/* Manager.Subscribe() (bus-subscribers.c). bus_subscribe() is a no-op
 * for a name already subscribed; -EUSERS when too many are, -EDQUOT when
 * the caller's user holds its share (options.subscriptions_per_user) or
 * only the room kept for privileged callers is left. */
int bus_subscribe(BusApi *b, const char *name, const Caller *c);
int bus_unsubscribe(BusApi *b, const char *name);   /* -ENOENT: was not */
void bus_subscribers_free(BusApi *b);
/* Walks the subscribers, other than the owner's own connection, that may
 * see inj: start with *iter NULL; returns their names, then NULL. */
const char *bus_subscriber_next(BusApi *b, const Injection *inj, BusSubscriber **iter);
