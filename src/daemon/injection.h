/* SPDX-License-Identifier: MIT */
#pragma once

/* The injection table inside the core: creating, tracking and ending the
 * entries manager.h's Injection describes. The front ends use manager.h. */

#include "caller.h"
#include "manager.h"

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
