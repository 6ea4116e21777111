/* SPDX-License-Identifier: MIT */
/* Adoption, when an engine starts (the daemon after a restart): what is
 * pinned is all there is. Leftovers of a crash are removed (temporary and
 * half-built directories, sites with nothing armed), every pinned
 * injection is reported, and the
 * ones that can no longer do anything (expired, exhausted, or whose
 * process or cgroup is gone) are removed. */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "log.h"
#include "pin.h"
#include "scope-device.h"
#include "scope-roots.h"
#include "scope.h"
#include "site.h"
#include "time-util.h"

struct adopt_ctx {
        AdoptResult *v;
        size_t n;
        uint64_t now;
};

/* What an injection found pinned is worth keeping: only one that can still
 * fail a call. */
static AdoptAction adopt_decide(const InjectionInfo *i) {
        const struct inject_slot *slot = &i->slot;

        if (i->state == INJECTION_EXHAUSTED)
                return ADOPT_EXHAUSTED;
        if (i->state == INJECTION_EXPIRED)
                return ADOPT_EXPIRED;
        if (slot->scope_kind == INJECT_SCOPE_PROCESS &&
            scope_process_alive((pid_t) slot->scope_id, slot->start_ticks) == 0)
                return ADOPT_ORPHANED;
        if (slot->scope_kind == INJECT_SCOPE_CGROUP && scope_cgroup_alive(slot->scope_id) == 0)
                return ADOPT_ORPHANED;
        if (slot->scope_kind == INJECT_SCOPE_DEVICE && scope_device_alive(NULL, slot->scope_id, NULL) == 0)
                return ADOPT_ORPHANED;  /* detached, or attached anew: another diskseq */
        return ADOPT_KEPT;
}

static int adopt_fn(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata) {
        struct adopt_ctx *c = userdata;
        AdoptAction action;
        AdoptResult *v;
        int r;

        if (!slot) {
                /* A half-built site, where nothing was ever armed, or one
                 * pinned by another version of injectd, which this one
                 * cannot read: removing it detaches its program, so none
                 * of its faults outlives what the daemon can account for. */
                log_warning("Removing the pinned site '%s': half-built, or left by another version of injectd.",
                            s->dir);
                (void) pin_dir_remove(s->dir);
                return 0;
        }

        v = realloc(c->v, (c->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->v = v;
        site_injection_info(s, slot, c->now, &c->v[c->n].info);
        action = c->v[c->n].action = adopt_decide(&c->v[c->n].info);
        c->n++;

        if (action == ADOPT_KEPT)
                return 0;
        /* Nothing lingers at adoption: an emptied site is retired now. */
        r = site_remove_slot(e, s, idx, false);
        if (r < 0)
                return r;
        if (s->info.n_live == 0)
                site_close(s);  /* tells site_foreach_slot() the site is gone */
        return 0;
}

static void remove_tmp_dirs(Engine *e) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        d = opendir(e->pin_root);
        if (!d)
                return;
        while ((de = readdir(d))) {
                char p[PATH_MAX];

                if (strncmp(de->d_name, PIN_TMP_PREFIX, strlen(PIN_TMP_PREFIX)) != 0)
                        continue;
                if (pin_path(p, sizeof(p), e->pin_root, de->d_name) >= 0)
                        (void) pin_dir_remove(p);
        }
}

int engine_adopt(Engine *e, AdoptResult **ret, size_t *ret_n) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        struct adopt_ctx c = { .now = now_nsec(CLOCK_BOOTTIME) };
        int r;

        r = engine_lock(e);
        if (r < 0)
                return r;
        locked = e;

        remove_tmp_dirs(e);
        /* Pins of a build whose structures differ from ours: its sites run
         * its program, which reads its own layout, and its outer maps take
         * no site of ours. Adopting them would leave faults this build
         * cannot account for and a function it cannot arm; they are
         * removed whole, their programs detached, and that is said. */
        r = engine_pinned_layout_fits(e);
        if (r < 0)
                return r;
        if (r == 0) {
                int n = engine_pins_remove_all(e);

                log_warning("The pins in %s were made by an injectd whose structures differ from this build's "
                            "(its outer maps refuse this build's site maps): removed them whole, %d site(s) with "
                            "every injection armed there, rather than adopt what this build cannot read.",
                            e->pin_root, n);
        }
        r = site_foreach_slot(e, adopt_fn, true, &c);
        if (r >= 0)
                /* A site left attached with nothing armed (an engine that
                 * ended during a linger without detaching it: killed)
                 * serves nobody. */
                r = site_retire_empty(e);
        if (r >= 0) {
                /* What survived is all the index should know. */
                engine_index_invalidate(e);
                r = engine_index_sync(e);
        }
        if (r >= 0)
                /* Roots of injections that did not survive go; the tags of
                 * surviving ones are pinned and were kept up to date by the
                 * pinned fork program all along. */
                r = scope_roots_sync(e);
        if (r < 0) {
                free(c.v);
                return r;
        }
        /* Sites whose slots are all empty serve nobody. */
        engine_gc_root(e);
        *ret = c.v;
        *ret_n = c.n;
        return 0;
}
