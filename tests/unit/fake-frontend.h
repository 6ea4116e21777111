/* SPDX-License-Identifier: MIT */
#pragma once

/* A front end that only listens: what the manager published, in order. */

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

void fake_frontend_reset(void);
size_t fake_frontend_n_events(void);
const FakeEvent *fake_frontend_event(size_t i);
/* The last event about id, or NULL. */
const FakeEvent *fake_frontend_last_event(uint64_t id);
