/* SPDX-License-Identifier: MIT */
#pragma once

/* Manager.Subscribe() (bus-subscribers.c). */

#include "bus-api.h"
#include "manager.h"

/* bus_subscribe() is a no-op for a name already subscribed; -EUSERS when
 * too many are, -EDQUOT when the caller's user holds its share
 * (options.subscriptions_per_user) or only the room kept for privileged
 * callers is left. */
int bus_subscribe(BusApi *b, const char *name, const Caller *c);
int bus_unsubscribe(BusApi *b, const char *name);   /* -ENOENT: was not */
void bus_subscribers_free(BusApi *b);
/* Walks the subscribers, other than the connection called owner (inj's
 * D-Bus owner, or NULL), that may see inj: start with *iter NULL; returns
 * their names, then NULL. */
const char *bus_subscriber_next(BusApi *b, const Injection *inj, const char *owner, BusSubscriber **iter);
