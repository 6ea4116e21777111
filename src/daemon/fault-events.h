/* SPDX-License-Identifier: MIT */
#pragma once

#include "manager-types.h"

/* Starts reading the engine's ring buffer of injected faults, once: each
 * fault goes to the listeners, and the last one an injection allows ends it. */
int manager_open_events(Manager *m);

/* The per-injection rate limit of fault events: true to pass this one on
 * (at most rate per second, in bursts of up to a second's worth), false
 * to drop it, counted in inj->events_suppressed. rate 0: all. now is
 * CLOCK_MONOTONIC in µs. */
bool fault_event_admit(Injection *inj, unsigned rate, uint64_t now);
