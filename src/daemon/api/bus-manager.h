/* SPDX-License-Identifier: MIT */
#pragma once

/* The D-Bus front end as injectd.c starts it (bus-manager.c): the manager
 * object, /org/injectd/Injector1, and the listener of the core. */

#include "bus-api.h"
#include "cleanup.h"
#include "manager.h"

/* Connects to the system bus, serves the objects and takes the name. */
int bus_api_new(Manager *m, BusApi **ret);
BusApi *bus_api_free(BusApi *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(BusApi *, bus_api_free);
