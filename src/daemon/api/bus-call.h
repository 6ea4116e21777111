/* SPDX-License-Identifier: MIT */
#pragma once

/* A method call the core answers later (bus-call.c): Inject, Cancel and
 * ReloadPolicy. */

#include <systemd/sd-bus.h>

#include "bus-api.h"
#include "cleanup.h"
#include "manager.h"

/* The call, to answer, and its requester's record (a reference), which it
 * lets go of with its answer. */
typedef struct BusCall {
        sd_bus_message *message;
        BusRequester *requester;
} BusCall;

/* A call for m, holding a reference to m and, unless b is NULL or the
 * bus refused another match, to the record of m's sender (bus-requester.c):
 * a call waiting for polkit ends with its requester. -ENOMEM. */
int bus_call_new(BusApi *b, sd_bus_message *m, BusCall **ret);
BusCall *bus_call_free(BusCall *call);

/* Cancel(id) (of the manager and of an injection object), or with id NULL
 * ReloadPolicy(): the core answers when it has decided, maybe after polkit. */
int bus_call_manage(BusApi *b, sd_bus_message *m, Manager *mgr, const char *id, sd_bus_error *error);
