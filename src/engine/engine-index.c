/* SPDX-License-Identifier: MIT */
/* The engine's index of armed injections (slot-index.h), kept in step with
 * the pins. Several engines may change the pins (the daemon, and
 * injectd-engine beside it in tests), always under the engine lock. The
 * lock file holds a generation number: an engine that changed which slots
 * hold injections writes the next one before it lets go of the lock. An
 * engine whose index was built at another generation rebuilds it from the
 * pins, reading each site's slots in one batch: O(sites) system calls,
 * instead of one per slot of every site on every operation. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "pin.h"
#include "site.h"
#include "slot-index.h"

int engine_lock_open(Engine *e) {
        if (e->lock_fd >= 0)
                return 0;
        if (mkdir(ENGINE_STATE_DIR, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        e->lock_fd = open(ENGINE_STATE_DIR "/engine.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (e->lock_fd < 0)
                return negative_errno();
        return 0;
}

/* An empty lock file (as created) is generation 0. */
static int generation_read(Engine *e, uint64_t *ret) {
        uint64_t g = 0;
        ssize_t n;
        int r;

        r = engine_lock_open(e);
        if (r < 0)
                return r;
        n = pread(e->lock_fd, &g, sizeof(g), 0);
        if (n < 0)
                return negative_errno();
        *ret = n == sizeof(g) ? g : 0;
        return 0;
}

/* Under the lock, when this engine changed which slots are taken. An
 * engine that cannot say so to the others cannot trust its own index
 * either: it forgets it, and the others may keep a stale one until the
 * next change. */
void engine_index_bump(Engine *e) {
        uint64_t g;

        if (!e->index_changed)
                return;
        e->index_changed = false;
        if (generation_read(e, &g) < 0 || (g++, pwrite(e->lock_fd, &g, sizeof(g), 0) != sizeof(g))) {
                e->index_valid = false;
                return;
        }
        e->index_gen = g;
}

void engine_index_invalidate(Engine *e) {
        e->index_valid = false;
}

SlotIndexRoot engine_slot_root(const struct inject_slot *slot) {
        if (slot->scope_kind != INJECT_SCOPE_PROCESS || !slot->scope_tag)
                return (SlotIndexRoot) {};
        return (SlotIndexRoot) { .tgid = slot->scope_id, .start_ticks = slot->start_ticks, .tag = slot->scope_tag };
}

static int index_slot_fn(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata) {
        SlotIndexRoot root = engine_slot_root(slot);
        int r;

        r = slot_index_add_root(&e->index, s->dir, s->n_slots, slot->id, idx, &root);
        return r == -EEXIST ? 0 : r;    /* ids are random: never twice */
}

/* Every complete site is indexed, lingering ones too: an arm asks the
 * index, not bpffs, whether a function has a site of another backend. */
static int index_site_fn(Engine *e, Site *s, void *userdata) {
        int r;

        r = slot_index_pin_site(&e->index, s->dir, s->n_slots);
        if (r < 0)
                return r;
        return site_each_slot(e, s, index_slot_fn, NULL);
}

/* Half-built sites are left out: nothing in them is armed. */
static int index_rebuild(Engine *e) {
        slot_index_clear(&e->index);
        return site_foreach(e, index_site_fn, false, NULL);
}

int engine_index_sync(Engine *e) {
        uint64_t g;
        int r;

        /* Under the lock, once synced, only this engine changes the pins. */
        if (e->index_valid && e->index_synced)
                return 0;
        r = generation_read(e, &g);
        if (r < 0)
                return r;
        if (e->index_valid && g == e->index_gen) {
                e->index_synced = e->locked;
                return 0;
        }
        r = index_rebuild(e);
        if (r < 0) {
                e->index_valid = false;
                return r;
        }
        e->index_gen = g;
        e->index_valid = true;
        e->index_synced = e->locked;
        e->stats.index_rebuilds++;
        return 0;
}

/* The site of an injection armed is pinned, whoever pinned it. */
void engine_index_add(Engine *e, const char *dir, uint32_t n_slots, const struct inject_slot *slot, uint32_t idx) {
        SlotIndexRoot root = engine_slot_root(slot);

        e->index_changed = true;
        if (e->index_valid && (slot_index_pin_site(&e->index, dir, n_slots) < 0 ||
                               slot_index_add_root(&e->index, dir, n_slots, slot->id, idx, &root) < 0))
                e->index_valid = false;
}

void engine_index_remove(Engine *e, uint64_t id) {
        e->index_changed = true;
        if (e->index_valid && slot_index_remove(&e->index, id) < 0)
                e->index_valid = false;
}

/* A new site, or one gone, changes what the other engines' indexes say as
 * a slot does: they read the pins again. A site about to be pinned is told
 * at once, not when we unlock: should this engine be killed before, the
 * others still learn of the site, which may be left attached. */
void engine_index_bump_now(Engine *e) {
        e->index_changed = true;
        engine_index_bump(e);
}

void engine_index_add_site(Engine *e, const Site *s) {
        e->index_changed = true;
        if (e->index_valid && slot_index_pin_site(&e->index, s->dir, s->n_slots) < 0)
                e->index_valid = false;
}

void engine_index_remove_site(Engine *e, const char *dir) {
        e->index_changed = true;
        if (e->index_valid)
                slot_index_drop_site(&e->index, dir);
}
