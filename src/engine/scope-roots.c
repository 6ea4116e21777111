/* SPDX-License-Identifier: MIT */
/* The live process-scope roots, one per tag, read from every site's slots:
 * what the kernel's roots map must hold (scope-tags.h). A root is a process
 * some process-scope injection is armed on; every injection on it shares
 * its tag, so the tasks tagged for one are in scope for all. */

#include <errno.h>
#include <stdlib.h>

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
        _cleanup_free_ InjectionInfo *v = NULL;
        size_t n;
        int r;

        r = engine_list(e, &v, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const struct inject_slot *slot = &v[i].slot;

                if (slot->scope_kind != INJECT_SCOPE_PROCESS || !slot->scope_tag)
                        continue;
                r = root_set_put(&s, &(ScopeRoot) { slot->scope_id, slot->start_ticks, slot->scope_tag }, false);
                if (r < 0)
                        return r;
        }
        *ret = s;
        s = (ScopeRootSet) {};
        return 0;
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

int scope_roots_sync(Engine *e) {
        _cleanup_(scope_root_set_done) ScopeRootSet s = {};
        int r;

        r = collect_roots(e, &s);
        if (r < 0)
                return r;
        return scope_roots_apply(e, &s);
}
