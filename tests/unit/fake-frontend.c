/* SPDX-License-Identifier: MIT */
/* The front ends' side of the manager (manager.h: "implemented by the front
 * ends, called by the manager"), recording what the manager publishes. */

#include "bus-api.h"
#include "fake-frontend.h"

static struct {
        FakeEvent events[1024];
        size_t n;
} fake;

void fake_frontend_reset(void) {
        fake.n = 0;
}

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

static void record(FakeEventType type, uint64_t id, RemoveReason reason) {
        if (fake.n < ELEMENTSOF(fake.events))
                fake.events[fake.n++] = (FakeEvent) { .type = type, .id = id, .reason = reason };
}

void bus_injection_added(Manager *m, Injection *inj) {
        record(FAKE_EVENT_ADDED, inj->id, 0);
}

void bus_injection_removed(Manager *m, Injection *inj, RemoveReason reason) {
        record(FAKE_EVENT_REMOVED, inj->id, reason);
}

void bus_injection_fault(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm) {
        record(FAKE_EVENT_FAULT, inj->id, 0);
}

int bus_start(Manager *m) {
        return 0;       /* no bus: m->bus stays NULL */
}

int varlink_api_start(Manager *m) {
        return 0;
}

void bus_subscribers_free(Manager *m) {
}
