/* SPDX-License-Identifier: MIT */
/* A listening front end for the unit tests (see fake-frontend.h). */

#include <errno.h>
#include <string.h>

#include "cleanup.h"
#include "fake-frontend.h"

static struct {
        FakeEvent events[1024];
        size_t n;
        struct {
                uint64_t id;
                void *owner;
        } tracked[256];
        size_t n_tracked;
        unsigned n_track_calls;
        void *gone[64];
        size_t n_gone;
} fake;

size_t fake_frontend_n_events(void) {
        return fake.n;
}

const FakeEvent *fake_frontend_event(size_t i) {
        return i < fake.n ? &fake.events[i] : NULL;
}

const FakeEvent *fake_frontend_last_event(uint64_t id) {
        for (size_t i = fake.n; i > 0; i--)
                if (fake.events[i - 1].id == id)
                        return &fake.events[i - 1];
        return NULL;
}

unsigned fake_frontend_n_tracked(void) {
        return fake.n_track_calls;
}

static void record(FakeEventType type, uint64_t id, RemoveReason reason) {
        if (fake.n < ELEMENTSOF(fake.events))
                fake.events[fake.n++] = (FakeEvent) { .type = type, .id = id, .reason = reason };
}

static void on_added(Manager *m, Injection *inj, void *userdata) {
        record(FAKE_EVENT_ADDED, inj->id, 0);
}

static void on_removed(Manager *m, Injection *inj, RemoveReason reason, void *userdata) {
        record(FAKE_EVENT_REMOVED, inj->id, reason);
        for (size_t i = 0; i < fake.n_tracked; i++)
                if (fake.tracked[i].id == inj->id) {
                        fake.tracked[i] = fake.tracked[--fake.n_tracked];
                        break;
                }
}

static void on_fault(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm, void *userdata) {
        record(FAKE_EVENT_FAULT, inj->id, 0);
}

static bool is_gone(void *owner) {
        for (size_t i = 0; owner && i < fake.n_gone; i++)
                if (fake.gone[i] == owner)
                        return true;
        return false;
}

static bool tracker_gone(Manager *m, const Caller *c, void *owner, void *userdata) {
        return is_gone(owner);
}

static int tracker_track(Manager *m, Injection *inj, const Caller *c, void *owner, void *userdata) {
        fake.n_track_calls++;
        if (!owner)
                return 0;
        if (is_gone(owner))
                return -ESRCH;
        if (fake.n_tracked >= ELEMENTSOF(fake.tracked))
                return -ENOMEM;
        fake.tracked[fake.n_tracked].id = inj->id;
        fake.tracked[fake.n_tracked++].owner = owner;
        return 1;
}

static const ManagerListener listener = {
        .added = on_added,
        .removed = on_removed,
        .fault = on_fault,
};

static const OwnerTracker tracker = {
        .gone = tracker_gone,
        .track = tracker_track,
};

void fake_frontend_attach(Manager *m) {
        memset(&fake, 0, sizeof(fake));
        (void) manager_add_listener(m, &listener);
        manager_set_owner_tracker(m, TRANSPORT_VARLINK, &tracker);
}

void fake_frontend_owner_vanishes(void *owner) {
        if (fake.n_gone < ELEMENTSOF(fake.gone))
                fake.gone[fake.n_gone++] = owner;
}

void fake_frontend_owner_leaves(Manager *m, void *owner) {
        fake_frontend_owner_vanishes(owner);
        manager_requester_gone(m, owner);
        for (size_t i = 0; i < fake.n_tracked;) {
                Injection *inj;

                if (fake.tracked[i].owner != owner) {
                        i++;
                        continue;
                }
                inj = manager_find(m, fake.tracked[i].id);
                fake.tracked[i] = fake.tracked[--fake.n_tracked];
                if (inj)
                        manager_owner_gone(m, inj);     /* a detached one stays, no longer followed */
        }
}
