/* SPDX-License-Identifier: MIT */
#pragma once

/* The daemon's one owner of state: the injection table with its TTL timers,
 * owners and persistence under /run/injectd, and the path every request
 * takes (parse → scope → policy → limits → polkit → engine). The D-Bus and
 * Varlink front ends only translate to and from it: they call it, and hear
 * back through the ManagerListener and OwnerTracker they register. It does
 * not know them.
 *
 * This is the front ends' façade: it declares the manager's life cycle
 * (manager.c) and includes the headers of the core files they call. Inside
 * the core, a file includes manager-types.h for the types and the header of
 * each file it calls, each below it in the order of tools/check-layers.py. */

#include "injection-json.h"
#include "injection.h"
#include "manage.h"
#include "manager-listeners.h"
#include "manager-types.h"
#include "request-pipeline.h"
#include "request.h"

int manager_new(const ManagerOptions *o, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Signals, the policy, polkit (asked over bus; NULL: no polkit, as when it
 * is not on the bus), adoption of pinned injections, events. The front ends
 * register before, so that they hear of the adopted injections; the core
 * also runs with none, as the unit tests run it. */
int manager_start(Manager *m, sd_bus *bus);
void manager_stop(Manager *m);          /* disarm all unless keep_on_exit */

/* GetCapabilities (capabilities.c, which stands above the manager). */
int manager_capabilities_json(Manager *m, const Caller *c, json_object **ret);
