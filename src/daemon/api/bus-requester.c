/* SPDX-License-Identifier: MIT */
/* The D-Bus requesters of Inject calls still being decided, one record per
 * unique bus name: the owner handle the core gets with each of the name's
 * requests. When the name goes, its requests still waiting for polkit are
 * dropped at once (manager_requester_gone()), and with them their polkit
 * checks, queued or in flight: polkitd answers one check after the other,
 * and a burst of callers that gave up (timeouts, killed CI jobs) would
 * otherwise spend its time, and the daemon's places in flight, on the
 * dead. Varlink does the same with its connections.
 *
 * A record lives while requests of its name are pending: each holds a
 * reference, dropped in its answer. Armed injections follow their
 * requester on their own (bus-owner.c); both watch the name with
 * bus_watch_name(). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-requester.h"
#include "bus-util.h"
#include "manager.h"
#include "log.h"

struct BusRequester {
        BusRequester *next;
        BusApi *api;                    /* NULL once the front end is gone */
        unsigned n_ref;
        char *name;                     /* the unique name */
        sd_bus_slot *name_watch;        /* NameOwnerChanged of name */
        bool gone;                      /* the name has left the bus */
};

static void requester_unlink(BusRequester *rq) {
        if (!rq->api)
                return;
        for (BusRequester **pp = &rq->api->requesters; *pp; pp = &(*pp)->next)
                if (*pp == rq) {
                        *pp = rq->next;
                        break;
                }
        rq->api = NULL;
        rq->name_watch = sd_bus_slot_unref(rq->name_watch);
}

BusRequester *bus_requester_unref(BusRequester *rq) {
        if (!rq || --rq->n_ref > 0)
                return NULL;
        requester_unlink(rq);
        free(rq->name);
        free(rq);
        return NULL;
}

BusRequester *bus_requester_ref(BusRequester *rq) {
        if (rq)
                rq->n_ref++;
        return rq;
}

/* The name's requests still waiting end with it: they are answered (to
 * nobody), and their answers drop their references, so one is held here
 * until manager_requester_gone() is done with the record. */
static void requester_gone(BusRequester *rq) {
        bus_requester_ref(rq);
        rq->gone = true;
        log_debug("D-Bus requester '%s' left; dropping its requests still waiting for polkit.", rq->name);
        if (rq->api)
                manager_requester_gone(rq->api->manager, rq);
        bus_requester_unref(rq);
}

static int on_name_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        BusRequester *rq = userdata;

        if (!rq->gone && bus_name_vanished(msg))
                requester_gone(rq);
        return 0;
}

int bus_requester_get(BusApi *b, const char *name, BusRequester **ret) {
        BusRequester *rq;
        int r;

        for (rq = b->requesters; rq; rq = rq->next)
                if (strcmp(rq->name, name) == 0) {
                        *ret = bus_requester_ref(rq);
                        return 0;
                }

        rq = calloc(1, sizeof(*rq));
        if (!rq)
                return -ENOMEM;
        *rq = (BusRequester) { .api = b, .n_ref = 1, .next = b->requesters, .name = strdup(name) };
        if (!rq->name) {
                free(rq);
                return -ENOMEM;
        }
        b->requesters = rq;
        r = bus_watch_name(b->bus, rq->name, &rq->name_watch, on_name_owner_changed, rq);
        if (r == -ESRCH) {
                /* Already gone: the caller drops the request once it is
                 * made, so that a detached one still goes on. */
                rq->gone = true;
                rq->name_watch = sd_bus_slot_unref(rq->name_watch);
        } else if (r < 0) {
                bus_requester_unref(rq);
                return r;
        }
        *ret = rq;
        return 0;
}

void bus_requester_check_gone(BusRequester *rq) {
        if (rq && rq->gone)
                requester_gone(rq);
}

void bus_requesters_free(BusApi *b) {
        /* Records still held by requests the core drops unanswered at
         * shutdown: they no longer watch anything. */
        while (b->requesters)
                requester_unlink(b->requesters);
}
