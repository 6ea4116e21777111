/* SPDX-License-Identifier: MIT */
/* The live process-scope roots, one per tag, read from every site's slots:
 * what the kernel's roots map must hold (scope-tags.h). A root is a process
 * some process-scope injection is armed on; every injection on it shares
 * its tag, so the tasks tagged for one are in scope for all. */

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "scope-roots.h"
#include "scope.h"

void scope_root_set_done(ScopeRootSet *s) {
        free(s->v);
        *s = (ScopeRootSet) {};
}

/* The set holds one root per pid. A root of a pid already there takes its
 * place when replace is set (a new root: the old one of its pid is dead),
 * or when it is another root that runs: when a dead root's injection
 * outlives it and its pid is reused by a new root, the one that runs is
 * what new tasks must be tagged for. */
static int root_set_put(ScopeRootSet *s, const ScopeRoot *root, bool replace) {
        ScopeRoot *v;

        for (size_t i = 0; i < s->n; i++) {
                if (s->v[i].tgid != root->tgid)
                        continue;
                if (replace ||
                    (s->v[i].tag != root->tag && scope_process_alive(root->tgid, root->start_ticks) > 0))
                        s->v[i] = *root;
                return 0;
        }
        v = realloc(s->v, (s->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        s->v = v;
        s->v[s->n++] = *root;
        return 0;
}

static int collect_roots(Engine *e, ScopeRootSet *ret) {
        _cleanup_(scope_root_set_done) ScopeRootSet s = {};
        const SlotIndexRoot *root;
        size_t i = 0;
        int r;

        /* The index keeps each slot's root (engine_index_add(), and its
         * rebuild from the pins): no site is opened nor any slot read,
         * where reading every site's slots array took milliseconds a site
         * (issue 30). */
        r = engine_index_sync(e);
        if (r < 0)
                return r;
        while ((root = slot_index_next_root(&e->index, &i))) {
                r = root_set_put(&s, &(ScopeRoot) { root->tgid, root->start_ticks, root->tag }, false);
                if (r < 0)
                        return r;
        }
        /* Observations' roots are live too, though no slot names them. */
        for (size_t i = 0; i < e->n_observe_roots; i++) {
                r = root_set_put(&s, &e->observe_roots[i], false);
                if (r < 0)
                        return r;
        }
        /* So are those of arms under way: a root dropped from the roots map
         * mid-walk would leave its tasks' tags computed without it. */
        for (size_t i = 0; i < e->n_arming_roots; i++) {
                r = root_set_put(&s, &e->arming_roots[i], false);
                if (r < 0)
                        return r;
        }
        *ret = s;
        s = (ScopeRootSet) {};
        return 0;
}

static bool root_same(const ScopeRoot *a, const ScopeRoot *b) {
        return a->tgid == b->tgid && a->start_ticks == b->start_ticks && a->tag == b->tag;
}

bool scope_roots_arming_has(Engine *e, const ScopeRoot *root) {
        for (size_t i = 0; i < e->n_arming_roots; i++)
                if (root_same(&e->arming_roots[i], root))
                        return true;
        return false;
}

int scope_roots_arming_add(Engine *e, const ScopeRoot *root) {
        ScopeRoot *v;

        v = realloc(e->arming_roots, (e->n_arming_roots + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        e->arming_roots = v;
        e->arming_roots[e->n_arming_roots++] = *root;
        return 0;
}

void scope_roots_arming_remove(Engine *e, const ScopeRoot *root) {
        /* One entry per arm: two arms on one root add it twice. */
        for (size_t i = 0; i < e->n_arming_roots; i++)
                if (root_same(&e->arming_roots[i], root)) {
                        e->arming_roots[i] = e->arming_roots[--e->n_arming_roots];
                        return;
                }
}

/* A new root gets the injection's own id as its tag, which no task carries
 * yet. */
int scope_roots_tag_slot(Engine *e, struct inject_slot *slot, ScopeRootSet *ret) {
        _cleanup_(scope_root_set_done) ScopeRootSet s = {};
        int r;

        r = collect_roots(e, &s);
        if (r < 0)
                return r;
        slot->scope_tag = 0;
        for (size_t i = 0; i < s.n; i++)
                if (s.v[i].tgid == slot->scope_id && s.v[i].start_ticks == slot->start_ticks)
                        slot->scope_tag = s.v[i].tag;
        if (!slot->scope_tag) {
                slot->scope_tag = slot->id;
                r = root_set_put(&s, &(ScopeRoot) { slot->scope_id, slot->start_ticks, slot->scope_tag }, true);
                if (r < 0)
                        return r;
        }
        *ret = s;
        s = (ScopeRootSet) {};
        return 0;
}

int scope_roots_apply(Engine *e, const ScopeRootSet *s) {
        size_t visited = 0;
        int fd = -1, r;

        if (s->n > 0) {
                fd = engine_tags_fd(e);
                if (fd < 0)
                        return fd;
        }
        r = scope_tags_apply(e->pin_root, &e->tags_program, fd, e->ns_per_tick, s->v, s->n, &visited);
        e->phases.tag_tasks += visited;
        return r;
}

int scope_roots_begin(Engine *e, const ScopeRootSet *s, uint32_t also, ScopeTagsWalk **ret) {
        int fd = -1;

        *ret = NULL;
        if (s->n > 0) {
                fd = engine_tags_fd(e);
                if (fd < 0)
                        return fd;
        }
        return scope_tags_begin(e->pin_root, &e->tags_program, fd, e->ns_per_tick, s->v, s->n, also, ret);
}

int scope_roots_sync(Engine *e) {
        _cleanup_(scope_root_set_done) ScopeRootSet s = {};
        int r;

        r = collect_roots(e, &s);
        if (r < 0)
                return r;
        return scope_roots_apply(e, &s);
}

int scope_roots_add_observer(Engine *e, pid_t pid, uint64_t start_ticks, uint64_t *ret_tag) {
        _cleanup_(scope_root_set_done) ScopeRootSet s = {};
        ScopeRoot root = { .tgid = (uint32_t) pid, .start_ticks = start_ticks }, *v;
        int r;

        r = collect_roots(e, &s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s.n; i++)
                if (s.v[i].tgid == root.tgid && s.v[i].start_ticks == start_ticks)
                        root.tag = s.v[i].tag;
        /* A new root: a random tag no task carries, never 0 (which ends a
         * task's list). Injections' tags are their ids, drawn alike. */
        while (!root.tag)
                if (getrandom(&root.tag, sizeof(root.tag), 0) != sizeof(root.tag))
                        return errno ? -errno : -EIO;
        v = realloc(e->observe_roots, (e->n_observe_roots + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        e->observe_roots = v;
        e->observe_roots[e->n_observe_roots++] = root;
        r = root_set_put(&s, &root, true);
        if (r >= 0)
                r = scope_roots_apply(e, &s);
        if (r < 0) {
                e->n_observe_roots--;
                (void) scope_roots_sync(e);
                return r;
        }
        *ret_tag = root.tag;
        return 0;
}

int scope_roots_remove_observer(Engine *e, pid_t pid, uint64_t start_ticks) {
        for (size_t i = 0; i < e->n_observe_roots; i++)
                if (e->observe_roots[i].tgid == (uint32_t) pid && e->observe_roots[i].start_ticks == start_ticks) {
                        e->observe_roots[i] = e->observe_roots[--e->n_observe_roots];
                        break;
                }
        return scope_roots_sync(e);
}
