/* SPDX-License-Identifier: MIT */
/* D-Bus peers that called Manager.Subscribe(): they get the signals of
 * every injection they may see (their own user's; root: all), not only of
 * those their own connection armed. Like systemd's Manager.Subscribe(),
 * each subscription lasts until the peer calls Unsubscribe() or leaves
 * the bus. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-api.h"
#include "manager.h"

/* Bounds the daemon's work per signal whatever clients do. */
#define BUS_SUBSCRIBERS_MAX 256

struct BusSubscriber {
        struct BusSubscriber *next;
        Manager *manager;
        char *name;             /* unique bus name */
        uid_t uid;
        sd_bus_track *track;
};

static BusSubscriber *subscriber_free(BusSubscriber *s) {
        if (!s)
                return NULL;
        sd_bus_track_unref(s->track);
        free(s->name);
        free(s);
        return NULL;
}

static void subscriber_remove(Manager *m, BusSubscriber *s) {
        for (BusSubscriber **p = &m->bus_subscribers; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        m->n_bus_subscribers--;
                        break;
                }
        subscriber_free(s);
}

/* The peer left the bus. */
static int on_track_empty(sd_bus_track *track, void *userdata) {
        BusSubscriber *s = userdata;

        subscriber_remove(s->manager, s);
        return 0;
}

static BusSubscriber *subscriber_find(Manager *m, const char *name) {
        for (BusSubscriber *s = m->bus_subscribers; s; s = s->next)
                if (strcmp(s->name, name) == 0)
                        return s;
        return NULL;
}

int bus_subscribe(Manager *m, const char *name, uid_t uid) {
        BusSubscriber *s;
        int r;

        if (subscriber_find(m, name))
                return 0;
        if (m->n_bus_subscribers >= BUS_SUBSCRIBERS_MAX)
                return -EUSERS;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (BusSubscriber) { .manager = m, .uid = uid, .name = strdup(name) };
        if (!s->name) {
                subscriber_free(s);
                return -ENOMEM;
        }
        r = sd_bus_track_new(m->bus, &s->track, on_track_empty, s);
        if (r >= 0)
                r = sd_bus_track_add_name(s->track, name);
        if (r < 0) {
                subscriber_free(s);
                return r;
        }
        s->next = m->bus_subscribers;
        m->bus_subscribers = s;
        m->n_bus_subscribers++;
        return 0;
}

int bus_unsubscribe(Manager *m, const char *name) {
        BusSubscriber *s = subscriber_find(m, name);

        if (!s)
                return -ENOENT;
        subscriber_remove(m, s);
        return 0;
}

void bus_subscribers_free(Manager *m) {
        while (m->bus_subscribers)
                subscriber_remove(m, m->bus_subscribers);
}

const char *bus_subscriber_next(Manager *m, const Injection *inj, BusSubscriber **iter) {
        BusSubscriber *s = *iter ? (*iter)->next : m->bus_subscribers;

        for (; s; s = s->next)
                if ((s->uid == 0 || s->uid == inj->owner_uid) &&
                    !(inj->owner_bus_name && strcmp(s->name, inj->owner_bus_name) == 0)) {
                        *iter = s;
                        return s->name;
                }
        *iter = NULL;
        return NULL;
}
