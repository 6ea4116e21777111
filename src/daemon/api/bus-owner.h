/* SPDX-License-Identifier: MIT */
#pragma once

/* What D-Bus keeps per injection, and the signals about it (bus-owner.c). */

#include "bus-api.h"
#include "manager.h"

struct BusOwner {
        BusOwner *next;
        BusApi *api;
        uint64_t id;
        char *owner_name;               /* the requester's unique name, NULL: not a D-Bus one */
        sd_bus_slot *name_watch;        /* NameOwnerChanged of owner_name */

        uint64_t rl_window;             /* Fault signal rate limit: second, count, dropped */
        unsigned rl_count;
        unsigned rl_dropped;
};

/* inj's record, or NULL (bus_owner_get(): made if missing; NULL: -ENOMEM). */
BusOwner *bus_owner_find(BusApi *b, uint64_t id);
BusOwner *bus_owner_get(BusApi *b, uint64_t id);
/* Forgets what D-Bus kept about inj, after its last signal. */
void bus_owner_forget(BusApi *b, const Injection *inj);
void bus_owners_free(BusApi *b);

/* The unique bus name of inj's requester, NULL if it came by Varlink. */
const char *bus_owner_name(BusApi *b, const Injection *inj);

/* The OwnerTracker of D-Bus requesters; userdata is the BusApi. */
int bus_owner_track(Manager *m, Injection *inj, const Caller *c, void *owner, void *userdata);
bool bus_owner_gone(Manager *m, const Caller *c, void *owner, void *userdata);

/* A signal sent to the injection's D-Bus owner and the subscribers who may
 * see it only; nothing to anyone else. */
int bus_owner_emit(BusApi *b, Injection *inj, const char *path, const char *iface, const char *member,
                   const char *types, ...);
