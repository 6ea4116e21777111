/* SPDX-License-Identifier: MIT */
#pragma once

/* A front end for the unit tests of the core: a ManagerListener that records
 * what the manager publishes, in order, and an OwnerTracker for Varlink
 * requests that follows requesters by an opaque handle (any pointer the
 * test passes to manager_inject() as owner). A NULL owner is not followed:
 * the core then watches the requester's process itself. */

#include <stdbool.h>
#include <stdint.h>

#include "manager.h"

typedef enum FakeEventType {
        FAKE_EVENT_ADDED,
        FAKE_EVENT_REMOVED,
        FAKE_EVENT_FAULT,
} FakeEventType;

typedef struct FakeEvent {
        FakeEventType type;
        uint64_t id;
        RemoveReason reason;    /* FAKE_EVENT_REMOVED */
} FakeEvent;

/* Forgets the events and owners; registers with m. */
void fake_frontend_attach(Manager *m);
size_t fake_frontend_n_events(void);
const FakeEvent *fake_frontend_event(size_t i);
/* The last event about id, or NULL. */
const FakeEvent *fake_frontend_last_event(uint64_t id);
/* How many injections the tracker was asked to follow. */
unsigned fake_frontend_n_tracked(void);

/* The requester behind owner leaves, and the front end tells the core, as
 * a closed connection does: manager_requester_gone(), then
 * manager_owner_gone() for each injection it followed for it. */
void fake_frontend_owner_leaves(Manager *m, void *owner);
/* It leaves, but the front end only notices when asked (OwnerTracker.gone),
 * as with a D-Bus requester whose name vanished while polkit decided. */
void fake_frontend_owner_vanishes(void *owner);
