/* SPDX-License-Identifier: MIT */
/* Finding armed injections: one (engine_get), several (engine_get_many),
 * all of them (engine_list),
 * and taking one out (engine_disarm). The engine's index (engine-index.c)
 * says which site and slot hold an injection, so only that slot is read;
 * a list opens only the sites that hold injections, and reads each one's
 * slots, counters included, in one batch. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "scope-roots.h"
#include "site.h"
#include "time-util.h"

/* Opens the site that holds id and reads its slot. An index that points
 * at a gone site or a slot holding something else is read again from the
 * pins, once. */
static int find_slot(Engine *e, uint64_t id, Site *ret_site, uint32_t *ret_idx, struct inject_slot *ret_slot) {
        int r;

        for (unsigned attempt = 0;; attempt++) {
                _cleanup_(site_closep) Site s = SITE_NULL;
                struct inject_slot slot;
                const char *dir;
                uint32_t idx;

                r = engine_index_sync(e);
                if (r < 0)
                        return r;
                r = slot_index_find(&e->index, id, &dir, &idx);
                if (r < 0)
                        return r;
                r = site_open(dir, &s);
                if (r >= 0 && idx < s.n_slots) {
                        if (bpf_map_lookup_elem(s.slots_fd, &idx, &slot) < 0)
                                return negative_errno();
                        if (slot.id == id) {
                                *ret_site = s;
                                s = SITE_NULL;
                                *ret_idx = idx;
                                *ret_slot = slot;
                                return 0;
                        }
                } else if (r < 0 && r != -ENOENT && r != -ENOLINK)
                        return r;
                if (attempt > 0)
                        return -ENOENT;
                engine_index_invalidate(e);
        }
}

int engine_get(Engine *e, uint64_t id, InjectionInfo *ret) {
        _cleanup_(site_closep) Site s = SITE_NULL;
        struct inject_slot slot;
        uint32_t idx;
        int r;

        r = find_slot(e, id, &s, &idx, &slot);
        if (r < 0)
                return r;
        site_injection_info(&s, &slot, now_nsec(CLOCK_BOOTTIME), ret);
        return 0;
}

int engine_disarm(Engine *e, uint64_t id, InjectionInfo *ret_final, InjectError *err) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        _cleanup_(site_closep) Site s = SITE_NULL;
        struct inject_slot slot;
        InjectionInfo info;
        uint32_t idx;
        int r;

        r = engine_lock(e);
        if (r < 0)
                return r;
        locked = e;
        r = find_slot(e, id, &s, &idx, &slot);
        if (r == -ENOENT)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_NO_SUCH_INJECTION,
                                        "No injection with id %016llx", (unsigned long long) id);
        if (r >= 0) {
                site_injection_info(&s, &slot, now_nsec(CLOCK_BOOTTIME), &info);
                r = site_remove_slot(e, &s, idx, true);
        }
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot disarm %016llx: %s",
                                        (unsigned long long) id, strerror(-r));
        /* Its root's tags stay on tasks, matching nothing, until the next
         * tagging pass or the tasks' end; with no root left the fork program
         * detaches. A failure here only keeps it attached until the next
         * arm, disarm or adoption tries again. */
        if (info.slot.scope_kind == INJECT_SCOPE_PROCESS)
                (void) scope_roots_sync(e);
        if (ret_final)
                *ret_final = info;
        return 0;
}

typedef struct GetManyItem {
        const char *dir;        /* the index's own string: one per site */
        uint32_t idx;
        size_t i;               /* into ids */
} GetManyItem;

static int get_many_cmp(const void *a, const void *b) {
        const GetManyItem *x = a, *y = b;

        return x->dir < y->dir ? -1 : x->dir > y->dir ? 1 : 0;
}

/* Reads the slots of one site, once, for every id the index places in it.
 * The ones it no longer holds are looked for again one by one
 * (engine_get(), which reads the pins again). */
static int get_many_site(Engine *e, const uint64_t *ids, const GetManyItem *v, size_t n, uint64_t now,
                         InjectionInfo *ret, int *ret_r) {
        _cleanup_(site_closep) Site s = SITE_NULL;
        _cleanup_free_ struct inject_slot *slots = NULL;
        int r;

        r = site_open(v[0].dir, &s);
        if (r >= 0)
                r = site_read_slots(&s, &slots);
        if (r < 0 && r != -ENOENT && r != -ENOLINK)
                return r;
        for (size_t k = 0; k < n; k++) {
                size_t i = v[k].i;

                if (slots && v[k].idx < s.n_slots && slots[v[k].idx].id == ids[i]) {
                        site_injection_info(&s, &slots[v[k].idx], now, &ret[i]);
                        ret_r[i] = 0;
                } else
                        ret_r[i] = -EAGAIN;     /* below, alone */
        }
        return 0;
}

int engine_get_many(Engine *e, const uint64_t *ids, size_t n, InjectionInfo *ret, int *ret_r) {
        _cleanup_free_ GetManyItem *v = NULL;
        size_t n_v = 0;
        uint64_t now;
        int r;

        r = engine_index_sync(e);
        if (r < 0)
                return r;
        v = calloc(n ?: 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *dir;
                uint32_t idx;

                ret_r[i] = slot_index_find(&e->index, ids[i], &dir, &idx) < 0 ? -EAGAIN : 0;
                if (ret_r[i] == 0)
                        v[n_v++] = (GetManyItem) { .dir = dir, .idx = idx, .i = i };
        }
        /* Grouped by site: pointers are compared, the index keeps one
         * string per site, and nothing here rebuilds it. */
        qsort(v, n_v, sizeof(*v), get_many_cmp);
        now = now_nsec(CLOCK_BOOTTIME);
        for (size_t a = 0, b; a < n_v; a = b) {
                for (b = a + 1; b < n_v && v[b].dir == v[a].dir; b++)
                        ;
                r = get_many_site(e, ids, v + a, b - a, now, ret, ret_r);
                if (r < 0)
                        return r;
        }
        /* Not where the index said, or not in it: the slow way, which
         * rebuilds a stale index once. */
        for (size_t i = 0; i < n; i++)
                if (ret_r[i] == -EAGAIN)
                        ret_r[i] = engine_get(e, ids[i], &ret[i]);
        return 0;
}

/* The sites' names first: the index may be rebuilt while we read. */
int engine_list(Engine *e, InjectionInfo **ret, size_t *ret_n) {
        _cleanup_free_ InjectionInfo *v = NULL;
        char **dirs = NULL;
        size_t n = 0, n_dirs = 0;
        uint64_t now;
        int r;

        r = engine_index_sync(e);
        if (r < 0)
                return r;
        dirs = calloc(e->index.n_sites ?: 1, sizeof(*dirs));
        if (!dirs)
                return -ENOMEM;
        for (size_t i = 0; i < e->index.n_sites; i++) {
                if (e->index.sites[i]->n_used == 0)
                        continue;       /* lingering: nothing to list */
                dirs[n_dirs] = strdup(e->index.sites[i]->dir);
                if (!dirs[n_dirs]) {
                        r = -ENOMEM;
                        goto finish;
                }
                n_dirs++;
        }

        now = now_nsec(CLOCK_BOOTTIME);
        for (size_t i = 0; i < n_dirs; i++) {
                _cleanup_(site_closep) Site s = SITE_NULL;
                _cleanup_free_ struct inject_slot *slots = NULL;
                InjectionInfo *w;

                r = site_open(dirs[i], &s);
                if (r == -ENOENT || r == -ENOLINK) {
                        engine_index_invalidate(e);     /* gone under us: read again next time */
                        continue;
                }
                if (r < 0)
                        goto finish;
                r = site_read_slots(&s, &slots);
                if (r < 0)
                        goto finish;
                w = realloc(v, (n + s.n_slots) * sizeof(*v));
                if (!w) {
                        r = -ENOMEM;
                        goto finish;
                }
                v = w;
                for (uint32_t k = 0; k < s.n_slots; k++)
                        if (slots[k].id)
                                site_injection_info(&s, &slots[k], now, &v[n++]);
        }
        r = 0;
        *ret = TAKE_PTR(v);
        *ret_n = n;

finish:
        for (size_t i = 0; i < n_dirs; i++)
                free(dirs[i]);
        free(dirs);
        return r;
}
