/* SPDX-License-Identifier: MIT */
#pragma once

/* The front ends' registrations (ManagerListener and OwnerTracker of
 * manager-types.h), and the core's side of them: tells every
 * ManagerListener what happened, in the order they registered. */

#include "manager-types.h"

/* The front ends' registrations. A listener or tracker is borrowed: it must
 * stay until it is removed or the manager is freed. */
int manager_add_listener(Manager *m, const ManagerListener *l);
void manager_remove_listener(Manager *m, const ManagerListener *l);
void manager_set_owner_tracker(Manager *m, Transport t, const OwnerTracker *tracker);

void manager_publish_added(Manager *m, Injection *inj);
void manager_publish_removed(Manager *m, Injection *inj, RemoveReason reason);
void manager_publish_fault(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm);

/* The tracker of inj's transport, or NULL when no front end serves it. */
const OwnerTracker *manager_owner_tracker(Manager *m, Transport t);
