/* SPDX-License-Identifier: MIT */
#pragma once

/* Process scopes kept as tags on tasks (bpf/tags.bpf.c, struct inject_tag
 * in inject.h). The engine decides which roots are live; this keeps the
 * kernel side in step: the roots map, the fork program that copies tags to
 * new tasks, and the pass that tags the tasks already there. Everything is
 * pinned under <pin_root>/tags, so it outlives the process that set it up,
 * and exists only while some root is live. */

#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"

typedef struct ScopeRoot {
        uint32_t tgid;
        uint64_t start_ticks;
        uint64_t tag;
} ScopeRoot;

/* The tagging programs, loaded, verified and attached once and held by
 * the engine for its lifetime, so that process scopes going from none to
 * one pin them again instead of loading them again. While no process scope
 * is armed they stay attached but unpinned: the fork program then runs on
 * every fork and finds no tags on the parent (one task-storage lookup,
 * which fails, behind a BPF trampoline: tens of nanoseconds against the
 * tens of microseconds of a fork; reasoned from what it does, not
 * measured), except under a task that still carries an ended scope's tags,
 * whose children inherit them and match nothing. They go when the engine
 * is freed, unless pinned. */
typedef struct ScopeTagsProgram ScopeTagsProgram;

ScopeTagsProgram *scope_tags_program_free(ScopeTagsProgram *p);
/* Loads and attaches them into *held unless it holds them already, against
 * the task-storage map tags_fd (held ones loaded against another map are
 * loaded again). */
int scope_tags_prepare(ScopeTagsProgram **held, int tags_fd, uint64_t ns_per_tick);

/* A new task-storage map of struct inject_tag: every site program and the
 * tagging programs share it. Returns its fd. */
int scope_tags_map_new(void);

/* Makes the roots map hold exactly roots[0..n). With none, unpins
 * everything under <pin_root>/tags (the fork program detaches). Otherwise
 * attaches the fork program first, so no child escapes, then, for each root
 * added, recomputes the tags of the root's tasks and their descendants
 * (every task's, on a kernel that cannot show one process's: the fallback,
 * said in the debug log). The programs pinned are *held
 * (scope_tags_prepare()) when held is given, else loaded for the occasion.
 * *ret_visited counts the tasks visited, in every pass. Returns the number
 * of tasks in more nested process scopes than a tag holds
 * (INJECT_MAX_TAGS; the outermost ones then miss them), or a negative
 * errno. */
int scope_tags_apply(const char *pin_root, ScopeTagsProgram **held, int tags_fd, uint64_t ns_per_tick,
                     const ScopeRoot *roots, size_t n, size_t *ret_visited);

/* The same in steps, for a caller that must not be held for the whole
 * walk (the daemon's event loop). scope_tags_begin() makes the roots map
 * hold exactly roots[0..n) and attaches the fork program, so that from
 * then on no child of a tagged task escapes; *ret is then the walk of the
 * subtrees of the roots added (and of the root whose tgid is also, added
 * or not: another arm's walk of it may still be under way), or NULL when
 * there is nothing to walk. Each scope_tags_walk_step() visits at most
 * budget processes (the whole-machine fallback, on kernels before 6.1 or
 * when exits kept every pass from completing, is one step whatever the
 * budget): 1 while there is more, 0 once every task below the roots
 * carries its tags, or a negative errno. *ret_visited: the tasks that step
 * visited. scope_tags_walk_over(): what scope_tags_apply() returns, once
 * done. Freeing a walk before it is done leaves the roots map as it is:
 * the caller syncs it again (scope_roots_sync()). */
typedef struct ScopeTagsWalk ScopeTagsWalk;
int scope_tags_begin(const char *pin_root, ScopeTagsProgram **held, int tags_fd, uint64_t ns_per_tick,
                     const ScopeRoot *roots, size_t n, uint32_t also, ScopeTagsWalk **ret);
int scope_tags_walk_step(ScopeTagsWalk *t, size_t budget, size_t *ret_visited);
int scope_tags_walk_over(const ScopeTagsWalk *t);
ScopeTagsWalk *scope_tags_walk_free(ScopeTagsWalk *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(ScopeTagsWalk *, scope_tags_walk_free);

/* Unpins whatever is under <pin_root>/tags. */
int scope_tags_remove(const char *pin_root);
