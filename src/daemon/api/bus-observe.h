/* SPDX-License-Identifier: MIT */
#pragma once

/* Manager.Observe() (bus-observe.c): the method, the session objects
 * (/org/injectd/Injector1/observe/_<n>, their Stop() and Ended signal),
 * and freeing every session when the front end goes. */

#include <systemd/sd-bus.h>

#include "bus-api.h"

int bus_observe_method(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_observe_register(BusApi *b);
void bus_observes_free(BusApi *b);
