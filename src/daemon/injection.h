/* SPDX-License-Identifier: MIT */
#pragma once

/* The injection table inside the core: creating, finding, tracking and
 * ending the entries manager-types.h's Injection describes. The front ends
 * reach the functions they use through manager.h. */

#include "caller.h"
#include "manager-types.h"

/* A new entry for the armed (or adopted) injection info, in the table. */
int injection_add(Manager *m, const InjectionInfo *info, Injection **ret);
Injection *injection_free(Injection *inj);

/* The deadline timer, on the BPF program's clock. */
int injection_arm_timer(Injection *inj);
/* Hands the requester c to the front end of inj's transport and, when that
 * cannot follow it and inj did not detach, watches its process. owner is
 * the front end's handle (NULL after a restart). -ESRCH: it has left. */
int injection_follow_owner(Injection *inj, const Caller *c, void *owner);

/* Injections held by uid, or by everyone. */
unsigned manager_count_active(Manager *m, uid_t uid, bool any_uid);

const char *remove_reason_to_string(RemoveReason r);

Injection *manager_find(Manager *m, uint64_t id);
int manager_remove(Manager *m, Injection *inj, RemoveReason reason);
int manager_refresh(Manager *m, Injection *inj);
/* manager_refresh() of m->injections[which[k]] for k < n, with one read of
 * each site that holds some of them (engine_get_many()); the ones the
 * engine no longer has keep their last document. */
int manager_refresh_many(Manager *m, const size_t *which, size_t n);

/* The requester of inj has left: it ends, unless it detached. */
void manager_owner_gone(Manager *m, Injection *inj);
