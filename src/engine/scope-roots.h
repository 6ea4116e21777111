/* SPDX-License-Identifier: MIT */
#pragma once

/* Which process-scope roots are live, read from the armed injections, and
 * the kernel's tags (scope-tags.h) brought in step with them. */

#include <stdbool.h>
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
/* scope_roots_apply() in steps (scope_tags_begin()): the roots map and the
 * fork program now, *ret the walk still to do (NULL: none). also: a root
 * walked even if the map has it already. */
int scope_roots_begin(Engine *e, const ScopeRootSet *s, uint32_t also, ScopeTagsWalk **ret);
/* The roots of arms under way, live like armed ones until the arm ends
 * (armed: its slot names it; undone: gone). One entry per arm. */
bool scope_roots_arming_has(Engine *e, const ScopeRoot *root);
int scope_roots_arming_add(Engine *e, const ScopeRoot *root);
void scope_roots_arming_remove(Engine *e, const ScopeRoot *root);
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
