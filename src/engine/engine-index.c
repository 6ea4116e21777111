/* SPDX-License-Identifier: MIT */
/* The engine's index of armed injections (slot-index.h), kept in step with
 * the pins. Several engines may change the pins (the daemon, and
 * injectd-engine beside it in tests), always under the engine lock. The
 * lock file holds a generation number: an engine that changed which slots
 * hold injections writes the next one before it lets go of the lock. An
 * engine whose index was built at another generation rebuilds it from the
 * pins, reading each site's slots in one batch: O(sites) system calls,
 * instead of one per slot of every site on every operation. */

#include <dirent.h>
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

static int index_rebuild(Engine *e) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        slot_index_clear(&e->index);
        d = opendir(e->sites_dir);
        if (!d)
                return errno == ENOENT ? 0 : negative_errno();
        while ((de = readdir(d))) {
                _cleanup_(site_closep) Site s = SITE_NULL;
                _cleanup_free_ struct inject_slot *v = NULL;
                char dir[PATH_MAX];

                if (de->d_name[0] == '.')
                        continue;
                if (pin_path(dir, sizeof(dir), e->sites_dir, de->d_name) < 0)
                        continue;
                if (site_open(dir, &s) < 0)
                        continue;       /* half-built: nothing in it is armed */
                r = site_read_slots(&s, &v);
                if (r < 0)
                        return r;
                for (uint32_t i = 0; i < s.n_slots; i++) {
                        if (!v[i].id)
                                continue;
                        r = slot_index_add(&e->index, dir, s.n_slots, v[i].id, i);
                        if (r < 0 && r != -EEXIST)      /* ids are random: never twice */
                                return r;
                }
        }
        return 0;
}

int engine_index_sync(Engine *e) {
        uint64_t g;
        int r;

        r = generation_read(e, &g);
        if (r < 0)
                return r;
        if (e->index_valid && g == e->index_gen)
                return 0;
        r = index_rebuild(e);
        if (r < 0) {
                e->index_valid = false;
                return r;
        }
        e->index_gen = g;
        e->index_valid = true;
        e->stats.index_rebuilds++;
        return 0;
}

void engine_index_add(Engine *e, const char *dir, uint32_t n_slots, uint64_t id, uint32_t slot) {
        e->index_changed = true;
        if (e->index_valid && slot_index_add(&e->index, dir, n_slots, id, slot) < 0)
                e->index_valid = false;
}

void engine_index_remove(Engine *e, uint64_t id) {
        e->index_changed = true;
        if (e->index_valid && slot_index_remove(&e->index, id) < 0)
                e->index_valid = false;
}
