/* SPDX-License-Identifier: MIT */
/* Finding armed injections in the pins: one (engine_get), all of them
 * (engine_list), and taking one out (engine_disarm). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "scope-roots.h"
#include "site.h"
#include "time-util.h"

struct find_ctx {
        uint64_t id;
        bool remove;
        bool found;
        InjectionInfo info;
};

static int find_fn(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata) {
        struct find_ctx *c = userdata;
        int r;

        if (slot->id != c->id)
                return 0;
        site_injection_info(s, slot, now_nsec(CLOCK_BOOTTIME), &c->info);
        c->found = true;
        if (c->remove) {
                r = site_remove_slot(e, s, idx);
                if (r < 0)
                        return r;
        }
        return 1;
}

int engine_get(Engine *e, uint64_t id, InjectionInfo *ret) {
        struct find_ctx c = { .id = id };
        int r;

        r = site_foreach_slot(e, find_fn, false, &c);
        if (r < 0)
                return r;
        if (!c.found)
                return -ENOENT;
        *ret = c.info;
        return 0;
}

int engine_disarm(Engine *e, uint64_t id, InjectionInfo *ret_final, InjectError *err) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        struct find_ctx c = { .id = id, .remove = true };
        int r;

        r = engine_lock(e);
        if (r < 0)
                return r;
        locked = e;
        r = site_foreach_slot(e, find_fn, false, &c);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot disarm %016llx: %s",
                                        (unsigned long long) id, strerror(-r));
        if (!c.found)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_NO_SUCH_INJECTION,
                                        "No injection with id %016llx", (unsigned long long) id);
        /* Its root's tags stay on tasks, matching nothing, until the next
         * tagging pass or the tasks' end; with no root left the fork program
         * detaches. A failure here only keeps it attached until the next
         * arm, disarm or adoption tries again. */
        if (c.info.slot.scope_kind == INJECT_SCOPE_PROCESS)
                (void) scope_roots_sync(e);
        if (ret_final)
                *ret_final = c.info;
        return 0;
}

struct list_ctx {
        InjectionInfo *v;
        size_t n;
};

static int list_fn(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata) {
        struct list_ctx *c = userdata;
        InjectionInfo *v;

        v = realloc(c->v, (c->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->v = v;
        site_injection_info(s, slot, now_nsec(CLOCK_BOOTTIME), &c->v[c->n++]);
        return 0;
}

int engine_list(Engine *e, InjectionInfo **ret, size_t *ret_n) {
        struct list_ctx c = {};
        int r;

        r = site_foreach_slot(e, list_fn, false, &c);
        if (r < 0) {
                free(c.v);
                return r;
        }
        *ret = c.v;
        *ret_n = c.n;
        return 0;
}
