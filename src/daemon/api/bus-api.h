/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-bus.h>

#include "inject-error.h"

typedef struct Manager Manager;

/* InjectError names become org.injectd.Injector1.Error.<Name>. */
#define BUS_ERROR_PREFIX "org.injectd.Injector1.Error."

int bus_reply_inject_error(sd_bus_message *m, const InjectError *err);
int bus_set_inject_error(sd_bus_error *error, const InjectError *err);

/* A manager_done_cb whose userdata is the method call (a reference): replies
 * empty or with the error, then drops the reference. */
void bus_reply_done(Manager *mgr, const InjectError *err, void *userdata);

typedef struct Injection Injection;
typedef struct BusSubscriber BusSubscriber;

/* A signal sent to the injection's D-Bus owner only; nothing if it has none. */
int bus_emit_to_owner(Manager *m, Injection *inj, const char *path, const char *iface, const char *member,
                      const char *types, ...);

/* Manager.Subscribe() (bus-subscribers.c). bus_subscribe() is a no-op
 * for a name already subscribed; -EUSERS when too many are. */
int bus_subscribe(Manager *m, const char *name, uid_t uid);
int bus_unsubscribe(Manager *m, const char *name);   /* -ENOENT: was not */
void bus_subscribers_free(Manager *m);
/* Walks the subscribers, other than the owner's own connection, that may
 * see inj: start with *iter NULL; returns their names, then NULL. */
const char *bus_subscriber_next(Manager *m, const Injection *inj, BusSubscriber **iter);

/* The per-injection objects (bus-injection.c). */
int bus_injection_register(Manager *m);
