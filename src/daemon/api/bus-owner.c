/* SPDX-License-Identifier: MIT */
/* What D-Bus keeps per injection: its requester's unique name (its
 * owner), followed with NameOwnerChanged unless it detached, and the Fault
 * signal rate limit (bus-injection.c's); the core's OwnerTracker for D-Bus;
 * and the signals about an injection, which go to its owner and to the
 * subscribers who may see it (its own user's, and root's) only: pids and
 * comms of one user's processes are not for other users. An owner on
 * Varlink follows its injections with Watch instead. */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bus-owner.h"
#include "bus-subscribers.h"
#include "bus-util.h"
#include "manager.h"

static BusOwner *owner_free(BusOwner *r) {
        if (!r)
                return NULL;
        sd_bus_slot_unref(r->name_watch);
        free(r->owner_name);
        free(r);
        return NULL;
}

BusOwner *bus_owner_find(BusApi *b, uint64_t id) {
        for (BusOwner *r = b->owners; r; r = r->next)
                if (r->id == id)
                        return r;
        return NULL;
}

BusOwner *bus_owner_get(BusApi *b, uint64_t id) {
        BusOwner *r = bus_owner_find(b, id);

        if (r)
                return r;
        r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        *r = (BusOwner) { .api = b, .id = id, .next = b->owners };
        b->owners = r;
        return r;
}

static void owner_remove(BusApi *b, BusOwner *r) {
        for (BusOwner **pp = &b->owners; *pp; pp = &(*pp)->next)
                if (*pp == r) {
                        *pp = r->next;
                        break;
                }
        owner_free(r);
}

void bus_owners_free(BusApi *b) {
        while (b->owners)
                owner_remove(b, b->owners);
}

void bus_owner_forget(BusApi *b, const Injection *inj) {
        BusOwner *rec = bus_owner_find(b, inj->id);

        if (rec)
                owner_remove(b, rec);
}

const char *bus_owner_name(BusApi *b, const Injection *inj) {
        BusOwner *r = bus_owner_find(b, inj->id);

        return r ? r->owner_name : NULL;
}

static int on_name_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        BusOwner *rec = userdata;
        Manager *m = rec->api->manager;
        Injection *inj;

        if (!bus_name_vanished(msg))
                return 0;
        inj = manager_find(m, rec->id);
        if (inj)
                manager_owner_gone(m, inj);
        return 0;
}

bool bus_owner_gone(Manager *m, const Caller *c, void *owner, void *userdata) {
        BusApi *b = userdata;

        return c->bus_name && sd_bus_get_name_creds(b->bus, c->bus_name, 0, NULL) < 0;
}

/* The requester's name, for its signals, and unless the injection detached
 * a watch on it: the injection ends when the name goes. After a restart the
 * name is the one recorded, and the requester may still hold it. */
int bus_owner_track(Manager *m, Injection *inj, const Caller *c, void *owner, void *userdata) {
        BusApi *b = userdata;
        BusOwner *rec;
        int r;

        if (!c->bus_name)
                return 0;
        rec = bus_owner_get(b, inj->id);
        if (!rec)
                return -ENOMEM;
        free(rec->owner_name);
        rec->owner_name = strdup(c->bus_name);
        if (!rec->owner_name)
                return -ENOMEM;
        if (inj->detach)
                return 1;
        r = bus_watch_name(b->bus, rec->owner_name, &rec->name_watch, on_name_owner_changed, rec);
        return r < 0 ? r : 1;
}

int bus_owner_emit(BusApi *b, Injection *inj, const char *path, const char *iface, const char *member,
                      const char *types, ...) {
        const char *owner = bus_owner_name(b, inj);
        BusSubscriber *iter = NULL;
        const char *name;
        va_list ap;
        int r = 0;

        va_start(ap, types);
        if (owner)
                r = bus_emit_signal(b->bus, owner, path, iface, member, types, ap);
        while ((name = bus_subscriber_next(b, inj, owner, &iter)))
                (void) bus_emit_signal(b->bus, name, path, iface, member, types, ap);
        va_end(ap);
        return r;
}
