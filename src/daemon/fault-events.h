/* SPDX-License-Identifier: MIT */
#pragma once

#include "manager.h"

/* Starts reading the engine's ring buffer of injected faults, once: each
 * fault goes to the listeners, and the last one an injection allows ends it. */
int manager_open_events(Manager *m);
