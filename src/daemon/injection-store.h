/* SPDX-License-Identifier: MIT */
#pragma once

/* What the engine's pins do not know, kept under MANAGER_STATE_DIR so that
 * a restarted daemon can adopt its injections: who asked, and on what terms. */

#include "caller.h"
#include "manager-types.h"

/* Records inj, armed for owner. */
int injection_store_save(const Injection *inj, const Caller *owner);
/* Reads inj's record back into inj and ret_owner (its uid, pid, start,
 * transport and bus name; free it with caller_done()). */
int injection_store_load(Injection *inj, Caller *ret_owner);
void injection_store_remove(uint64_t id);
/* Removes the records of the injections for which alive() says false:
 * those the table does not hold. A callback, so that the store, below the
 * table in the core's order, does not call back up into it. */
typedef bool (*injection_store_alive_t)(uint64_t id, void *userdata);
void injection_store_prune(injection_store_alive_t alive, void *userdata);
