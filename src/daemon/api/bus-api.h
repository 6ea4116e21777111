/* SPDX-License-Identifier: MIT */
#pragma once

/* The D-Bus front end: org.injectd.Injector1 on the system bus. It keeps
 * everything D-Bus about an injection (the requester's bus name, the watch
 * on it, the Fault signal rate limit) and about its peers (subscriptions);
 * the core hears nothing of it but its ManagerListener and OwnerTracker.
 *
 * This header holds the front end's shared types only. Its files, each
 * with its own header, call one another down this list, never up it
 * (tools/check-layers.py): bus-spec (a{sv} to JSON), bus-util (errors,
 * answers, following a name, the current caller, one signal),
 * bus-requester (requesters of calls being decided), bus-call (a call the
 * core answers later; Cancel, ReloadPolicy), bus-subscribers
 * (Manager.Subscribe()), bus-owner (an injection's owner and its signals),
 * bus-observe (Manager.Observe()), bus-injection (the injection objects)
 * and bus-manager (the manager object, the listener, bus_api_new()). */

#include <systemd/sd-bus.h>

#include "manager.h"

/* At most this many Fault signals per second per injection; the rest are
 * counted and reported in one FaultsSuppressed. */
#define BUS_FAULT_SIGNALS_PER_SEC 20

/* InjectError names become org.injectd.Injector1.Error.<Name>. */
#define BUS_ERROR_PREFIX "org.injectd.Injector1.Error."

typedef struct BusApi BusApi;
typedef struct BusOwner BusOwner;
typedef struct BusRequester BusRequester;
typedef struct BusSubscriber BusSubscriber;
typedef struct BusObserve BusObserve;

struct BusApi {
        Manager *manager;
        sd_bus *bus;
        ManagerListener listener;
        OwnerTracker tracker;
        BusOwner *owners;               /* what D-Bus keeps per injection (bus-owner.c) */
        BusRequester *requesters;       /* names with Inject calls being decided (bus-requester.c) */
        BusSubscriber *subscribers;     /* Manager.Subscribe() callers (bus-subscribers.c) */
        size_t n_subscribers;
        BusObserve *observes;           /* Manager.Observe() sessions (bus-observe.c) */
        uint64_t observe_last_id;
        /* The caller of the message being dispatched, known by its sender
         * and cookie: sd-bus asks find_injection once per object and
         * interface of one message, and enumerate once per injection, and
         * a Caller costs /proc reads and a user database lookup
         * (bus_current_caller()). */
        char *seen_sender;
        uint64_t seen_cookie;
        Caller seen_caller;
};
