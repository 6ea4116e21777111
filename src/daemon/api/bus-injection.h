/* SPDX-License-Identifier: MIT */
#pragma once

/* The per-injection objects (bus-injection.c). */

#include "bus-api.h"
#include "manager.h"

#define BUS_INJECTION_PATH_MAX 96
/* The object path of inj, /org/injectd/Injector1/injection/_<id>. */
const char *bus_injection_path(const Injection *inj, char buf[static BUS_INJECTION_PATH_MAX]);
int bus_injection_register(BusApi *b);
void bus_injection_fault(BusApi *b, Injection *inj, const struct inject_event *ev, const char *comm);
/* Sends what the rate limit held back. */
void bus_injection_removed(BusApi *b, Injection *inj);
