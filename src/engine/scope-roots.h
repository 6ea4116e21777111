/* SPDX-License-Identifier: MIT */
#pragma once

/* Which process-scope roots are live, read from the armed injections, and
 * the kernel's tags (scope-tags.h) brought in step with them. */

#include <stddef.h>

#include "engine.h"
#include "inject.h"
#include "scope-tags.h"

typedef struct ScopeRootSet {
        ScopeRoot *v;           /* one per pid */
        size_t n;
} ScopeRootSet;

void scope_root_set_done(ScopeRootSet *s);

/* Gives a new process-scope slot its root's tag, and leaves in ret the
 * roots the kernel must hold once the slot is armed. */
int scope_roots_tag_slot(Engine *e, struct inject_slot *slot, ScopeRootSet *ret);
/* Makes the kernel hold exactly these roots. Returns > 0 when that many
 * tasks sit in more nested process scopes than a tag holds. */
int scope_roots_apply(Engine *e, const ScopeRootSet *s);
/* Both steps for the roots of what is armed now, after a disarm. */
int scope_roots_sync(Engine *e);

/* Observations (observe.h) tag their tree like a process scope. This gives
 * the root pid/start_ticks a tag (the one an injection on it already has,
 * else a new one), records it among the engine's observation roots, which
 * every sync keeps, and tags the tree. */
int scope_roots_add_observer(Engine *e, pid_t pid, uint64_t start_ticks, uint64_t *ret_tag);
/* Forgets one observation's root and syncs: the tag goes unless an
 * injection or another observation still uses it. */
int scope_roots_remove_observer(Engine *e, pid_t pid, uint64_t start_ticks);
