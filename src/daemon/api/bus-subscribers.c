/* SPDX-License-Identifier: MIT */
/* D-Bus peers that called Manager.Subscribe(): they get the signals of
 * every injection they may see (their own user's; root: all), not only of
 * those their own connection armed. Like systemd's Manager.Subscribe(),
 * each subscription lasts until the peer calls Unsubscribe() or leaves
 * the bus. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-subscribers.h"
#include "manager.h"

/* Bounds the daemon's work per signal whatever clients do; one
 * unprivileged user holds at most options.subscriptions_per_user of them,
 * and the last BUS_SUBSCRIBERS_RESERVED are kept for privileged callers. */
#define BUS_SUBSCRIBERS_MAX MANAGER_SUBSCRIPTIONS_MAX
#define BUS_SUBSCRIBERS_RESERVED 16

struct BusSubscriber {
        struct BusSubscriber *next;
        BusApi *api;
        char *name;             /* unique bus name */
        uid_t uid;
        bool privileged;        /* sees every injection's signals */
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

static void subscriber_remove(BusApi *b, BusSubscriber *s) {
        for (BusSubscriber **p = &b->subscribers; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        b->n_subscribers--;
                        break;
                }
        subscriber_free(s);
}

/* The peer left the bus. */
static int on_track_empty(sd_bus_track *track, void *userdata) {
        BusSubscriber *s = userdata;

        subscriber_remove(s->api, s);
        return 0;
}

static BusSubscriber *subscriber_find(BusApi *b, const char *name) {
        for (BusSubscriber *s = b->subscribers; s; s = s->next)
                if (strcmp(s->name, name) == 0)
                        return s;
        return NULL;
}

static unsigned subscribers_of(BusApi *b, uid_t uid) {
        unsigned n = 0;

        for (BusSubscriber *s = b->subscribers; s; s = s->next)
                n += s->uid == uid;
        return n;
}

int bus_subscribe(BusApi *b, const char *name, const Caller *c) {
        unsigned per_user = b->manager->options.subscriptions_per_user ?: MANAGER_SUBSCRIPTIONS_PER_USER_DEFAULT;
        BusSubscriber *s;
        int r;

        if (subscriber_find(b, name))
                return 0;
        if (b->n_subscribers >= BUS_SUBSCRIBERS_MAX)
                return -EUSERS;
        if (!c->privileged &&
            (b->n_subscribers >= BUS_SUBSCRIBERS_MAX - BUS_SUBSCRIBERS_RESERVED ||
             subscribers_of(b, c->uid) >= per_user))
                return -EDQUOT;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (BusSubscriber) { .api = b, .uid = c->uid, .privileged = c->privileged, .name = strdup(name) };
        if (!s->name) {
                subscriber_free(s);
                return -ENOMEM;
        }
        r = sd_bus_track_new(b->bus, &s->track, on_track_empty, s);
        if (r >= 0)
                r = sd_bus_track_add_name(s->track, name);
        if (r < 0) {
                subscriber_free(s);
                return r;
        }
        s->next = b->subscribers;
        b->subscribers = s;
        b->n_subscribers++;
        return 0;
}

int bus_unsubscribe(BusApi *b, const char *name) {
        BusSubscriber *s = subscriber_find(b, name);

        if (!s)
                return -ENOENT;
        subscriber_remove(b, s);
        return 0;
}

void bus_subscribers_free(BusApi *b) {
        while (b->subscribers)
                subscriber_remove(b, b->subscribers);
}

const char *bus_subscriber_next(BusApi *b, const Injection *inj, const char *owner, BusSubscriber **iter) {
        BusSubscriber *s = *iter ? (*iter)->next : b->subscribers;

        for (; s; s = s->next)
                if ((s->privileged || (s->uid == inj->owner_uid && !inj->owner_privileged)) &&
                    !(owner && strcmp(s->name, owner) == 0)) {
                        *iter = s;
                        return s->name;
                }
        *iter = NULL;
        return NULL;
}
