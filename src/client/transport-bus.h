/* SPDX-License-Identifier: MIT */
#pragma once

/* Within the D-Bus transport: what transport-bus.c (the calls) gives
 * transport-bus-watch.c (the watch). */

#include "dlopen-libsystemd.h"
#include "transport.h"

#define BUS_NAME "org.injectd.Injector1"
#define BUS_PATH "/org/injectd/Injector1"
#define BUS_MANAGER "org.injectd.Injector1.Manager"
#define BUS_INJECTION "org.injectd.Injector1.Injection"
#define BUS_OBSERVE "org.injectd.Injector1.Observe"
#define BUS_INJECTION_PREFIX "/org/injectd/Injector1/injection/_"

static inline sd_bus *bus(Transport *t) {
        return t->data;
}

/* Turns a failed call into the transport's error: -EHOSTDOWN when injectd
 * or the bus cannot be reached, -EREMOTEIO for an error reply, else r. */
int bus_failed(Transport *t, const sd_bus_error *e, int r);

/* Calls method on the manager with arguments of the types given as to
 * sd_bus_message_append() (NULL: none); ret_reply is optional. */
int bus_call_method(Transport *t, const char *method, sd_bus_message **ret_reply, const char *types, ...);

int bus_list_injections(Transport *t, bool all, json_object **ret);
int bus_watch(Transport *t, char *const *ids, TransportEventFn callback, void *userdata);
