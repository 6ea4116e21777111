/* SPDX-License-Identifier: MIT */
/* What a site's last injection leaves behind, kept for reuse in two
 * stages: the linger, then (fmod_ret only) the cache.
 *
 * The linger, for both backends. Attaching is most of a request on a
 * function nothing holds (a kprobe is created and kernel text patched, tens
 * of milliseconds under emulation), and a sweep or a test suite arms the
 * same function again right after its last injection ended. So an emptied
 * site stays pinned, attached, with nothing armed, for e->linger_usec: a
 * request in that time finds it as it would a site another injection holds
 * (engine_arm() only writes map entries). Every call of the function then
 * still runs the program, which finds nothing armed and returns at its
 * first check (bpf/inject.bpf.c, n_live): it fails nothing, and costs the
 * callers a kprobe's or trampoline's entry and two map lookups. The
 * lingering sites are this engine's memory (e->lingering); when a linger
 * is over (engine_site_cache_expire(), the daemon's timer), the site is
 * retired as any emptied site used to be at once: unpinned, which detaches
 * it. The engine ends every linger when the linger is set to 0, when the
 * cache is flushed and when it is freed; a daemon killed during a linger
 * leaves an empty site pinned, which the next engine_adopt() retires.
 *
 * The cache, for fmod_ret sites. Loading an fmod_ret site means
 * verifying its own program (a trampoline program is verified against its
 * target's BTF, so it cannot be shared): hundreds of milliseconds under
 * emulation, most of a cold request. So an fmod_ret site this engine
 * loaded keeps its program and its maps (with its index in the outer maps,
 * which the program has in its read-only data) in e->owned. When the
 * site's last injection ends, the site is unpinned, which detaches the
 * program (callers of the function pay nothing), but the program stays for
 * a grace period: the next request on the same function re-attaches it
 * instead of loading it again. Only this process can re-attach it, so a
 * restarted daemon starts with an empty cache; what is pinned is adopted
 * as before. A kprobe site needs no cache: it runs the one kprobe program
 * loaded for the engine's lifetime (site.c), so creating one is creating
 * its maps and attaching, with nothing verified. */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "log.h"
#include "pin.h"
#include "site-cache.h"
#include "site.h"
#include "time-util.h"

struct OwnedSite {
        OwnedSite *prev, *next;         /* e->owned, most recently used first */
        char function[INJECT_FUNC_LEN];
        Backend backend;
        struct inject_bpf *program;
        SiteMaps maps;                  /* the site's, published at maps.index while we keep them */
        bool detached;                  /* not pinned: a cached entry */
        uint64_t detached_ns;           /* CLOCK_BOOTTIME, when detached is set */
};

struct LingerSite {
        LingerSite *next;
        char function[INJECT_FUNC_LEN];
        Backend backend;
        uint64_t since_ns;              /* CLOCK_BOOTTIME, when its last injection ended */
};

static LingerSite **linger_find(Engine *e, const char *function, Backend b) {
        LingerSite **p;

        for (p = &e->lingering; *p; p = &(*p)->next)
                if ((*p)->backend == b && strncmp((*p)->function, function, INJECT_FUNC_LEN) == 0)
                        break;
        return p;
}

bool site_linger(Engine *e, const Site *s) {
        LingerSite **p, *l;

        if (e->linger_usec == 0)
                return false;
        p = linger_find(e, s->info.function, s->info.backend);
        l = *p;
        if (!l) {
                l = calloc(1, sizeof(*l));
                if (!l)
                        return false;
                memcpy(l->function, s->info.function, INJECT_FUNC_LEN - 1);      /* calloc: NUL-ended */
                l->backend = s->info.backend;
                *p = l;
        }
        l->since_ns = now_nsec(CLOCK_BOOTTIME);
        return true;
}

void site_linger_reuse(Engine *e, const Site *s) {
        LingerSite **p = linger_find(e, s->info.function, s->info.backend), *l = *p;

        e->stats.linger_reuses++;
        if (!l)         /* not ours: another engine emptied it and left it pinned */
                return;
        *p = l->next;
        free(l);
}

int site_linger_cut(Engine *e, Site *s) {
        LingerSite **p = linger_find(e, s->info.function, s->info.backend), *l = *p;

        if (l) {        /* else another engine's, emptied and left pinned */
                *p = l->next;
                free(l);
                e->stats.lingers_ended++;
        }
        return site_retire(e, s);
}

/* Retires the site of l if it is still pinned with nothing armed (another
 * engine may have armed or retired it since), under the lock. The slots
 * say, not the site map: they are what an arm writes first. */
static void linger_end(Engine *e, const LingerSite *l) {
        _cleanup_(site_closep) Site s = SITE_NULL;
        _cleanup_free_ char *dir = NULL;
        int r;

        r = site_dir_name(e, l->function, l->backend, &dir);
        if (r >= 0)
                r = site_open(dir, &s);
        if (r >= 0)
                r = site_recount(&s);
        if (r >= 0 && s.info.n_live == 0)
                r = site_retire(e, &s);
        if (r < 0 && r != -ENOENT && r != -ENOLINK)
                log_warning_errno(r, "Cannot detach the lingering %s site of '%s', it stays attached (nothing is "
                                  "armed there) until the daemon's next start: %m", backend_to_string(l->backend),
                                  l->function);
}

/* Ends the lingers that are over, or all of them; returns when the next
 * one is (CLOCK_BOOTTIME ns), UINT64_MAX when none is left. */
static uint64_t site_linger_expire(Engine *e, bool all) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        uint64_t now = now_nsec(CLOCK_BOOTTIME), next = UINT64_MAX, linger_ns = e->linger_usec * 1000;
        LingerSite **p = &e->lingering, *l;
        int r;

        while ((l = *p)) {
                if (!all && now - l->since_ns < linger_ns) {
                        if (l->since_ns + linger_ns < next)
                                next = l->since_ns + linger_ns;
                        p = &l->next;
                        continue;
                }
                if (!locked) {
                        r = engine_lock(e);
                        if (r < 0 && !all) {
                                log_warning_errno(r, "Cannot take the engine lock to detach lingering sites, "
                                                  "trying again later: %m");
                                return now + linger_ns;
                        }
                        if (r >= 0)
                                locked = e;
                }
                if (locked)
                        linger_end(e, l);
                *p = l->next;
                free(l);
                e->stats.lingers_ended++;
        }
        return next;
}

void engine_set_site_linger(Engine *e, uint64_t linger_usec) {
        e->linger_usec = linger_usec;
        if (linger_usec == 0)
                (void) site_linger_expire(e, true);
}

static bool site_cache_enabled(const Engine *e) {
        return e->cache_grace_usec > 0 && e->cache_max > 0;
}

static OwnedSite *owned_site_free(Engine *e, OwnedSite *o) {
        if (!o)
                return NULL;
        if (o->prev)
                o->prev->next = o->next;
        else if (e->owned == o)
                e->owned = o->next;
        if (o->next)
                o->next->prev = o->prev;
        if (o->detached) {
                /* Detached, nothing else uses its index. Attached (at
                 * engine_free()), the pinned site still does. */
                site_maps_unpublish(e, &o->maps);
                e->n_cached--;
        }
        site_maps_close(&o->maps);
        site_program_free(o->program);
        free(o);
        return NULL;
}

void site_cache_held(Engine *e, bool *held) {
        for (OwnedSite *o = e->owned; o; o = o->next)
                if (o->maps.index < INJECT_MAX_SITES)
                        held[o->maps.index] = true;
}

void site_cache_free_all(Engine *e) {
        while (e->owned)
                owned_site_free(e, e->owned);
}

static void owned_site_to_front(Engine *e, OwnedSite *o) {
        if (e->owned == o)
                return;
        if (o->prev)
                o->prev->next = o->next;
        if (o->next)
                o->next->prev = o->prev;
        o->prev = NULL;
        o->next = e->owned;
        if (e->owned)
                e->owned->prev = o;
        e->owned = o;
}

static OwnedSite *owned_site_find(Engine *e, const char *function, Backend b) {
        for (OwnedSite *o = e->owned; o; o = o->next)
                if (o->backend == b && strncmp(o->function, function, INJECT_FUNC_LEN) == 0)
                        return o;
        return NULL;
}

void site_cache_own(Engine *e, const char *function, Backend b, struct inject_bpf *p, SiteMaps *m) {
        OwnedSite *o;

        /* Pinned and attached: closing our fds changes nothing. */
        if (!site_cache_enabled(e) || !(o = calloc(1, sizeof(*o)))) {
                site_maps_close(m);
                site_program_free(p);
                return;
        }
        strncpy(o->function, function, INJECT_FUNC_LEN - 1);
        o->backend = b;
        o->program = p;
        o->maps = *m;
        *m = SITE_MAPS_NULL;
        o->next = e->owned;
        if (e->owned)
                e->owned->prev = o;
        e->owned = o;
}

/* Empties a program's maps: no scope, no slot, nothing counted. A
 * re-attached program must start exactly as a freshly loaded one, so no
 * scope of an earlier injection can ever match (each scope entry also names
 * its injection's id, which a new injection never reuses). */
static int owned_site_reset(OwnedSite *o) {
        const struct inject_slot empty = {};
        _cleanup_free_ struct inject_slot *v = NULL;
        struct inject_scope_key key;
        const SiteMaps m = o->maps;
        int r;

        /* Deleting the key we just got makes the next "first key" lookup
         * start over, so this ends when the hash is empty. */
        while (bpf_map_get_next_key(m.scopes, NULL, &key) == 0)
                if (bpf_map_delete_elem(m.scopes, &key) < 0 && errno != ENOENT)
                        return negative_errno();
        if (errno != ENOENT)
                return negative_errno();

        v = calloc(m.n_slots, sizeof(*v));
        if (!v)
                return -ENOMEM;
        r = slots_read(m.slots, m.n_slots, v);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < m.n_slots; i++)
                if (memcmp(&v[i], &empty, sizeof(empty)) != 0 &&
                    bpf_map_update_elem(m.slots, &i, &empty, BPF_ANY) < 0)
                        return negative_errno();

        return site_info_reset(m.site);
}

/* Frees the least recently used cached entries beyond the cap. */
static void site_cache_trim(Engine *e) {
        OwnedSite *o, *prev;

        if (e->n_cached <= e->cache_max)
                return;
        for (o = e->owned; o && o->next; o = o->next)
                ;
        for (; o && e->n_cached > e->cache_max; o = prev) {
                prev = o->prev;
                if (!o->detached)
                        continue;
                owned_site_free(e, o);
                e->stats.evicted++;
        }
}

/* Marks a program of ours as detached, with its maps emptied. Fails, and
 * then must be freed, when the maps cannot be emptied: a program whose maps
 * may still hold a scope is never reused. */
static int owned_site_detach(Engine *e, OwnedSite *o) {
        int r;

        r = owned_site_reset(o);
        if (r < 0)
                return r;
        if (!o->detached) {
                o->detached = true;
                e->n_cached++;
        }
        o->detached_ns = now_nsec(CLOCK_BOOTTIME);
        return 0;
}

bool site_cache_put(Engine *e, const char *function, Backend b) {
        OwnedSite *o = owned_site_find(e, function, b);

        if (!o)
                return false;
        if (!site_cache_enabled(e) || owned_site_detach(e, o) < 0) {
                owned_site_free(e, o);
                return false;
        }
        owned_site_to_front(e, o);
        site_cache_trim(e);
        /* Trimmed at once (a cap of 0 cannot be: the cache is off then)? */
        return owned_site_find(e, function, b) == o;
}

/* An entry we think is attached whose site is no longer pinned was
 * detached behind our back (another engine removed its last injection):
 * count it as cached from now on, so that it expires. */
static void site_cache_notice_detached(Engine *e) {
        OwnedSite *o, *n;

        for (o = e->owned; o; o = n) {
                _cleanup_free_ char *dir = NULL;
                char p[PATH_MAX];

                n = o->next;
                if (o->detached)
                        continue;
                if (site_dir_name(e, o->function, o->backend, &dir) < 0 ||
                    pin_path(p, sizeof(p), dir, "link") < 0 || access(p, F_OK) >= 0 || errno != ENOENT)
                        continue;
                if (!site_cache_enabled(e) || owned_site_detach(e, o) < 0)
                        owned_site_free(e, o);
        }
        site_cache_trim(e);
}

/* A cached program keeps the shared maps it was loaded with. Should
 * another engine have pinned new ones meanwhile (injectd-engine beside the
 * daemon), the cached program would read tags and write events nobody
 * else sees: it must not be re-attached. Nor may it should its index no
 * longer hold its maps (another engine retired the site and freed the
 * index, which some other site may hold now). */
static bool owned_site_maps_current(Engine *e, const OwnedSite *o) {
        return site_program_maps_current(e, o->program) && site_maps_published(e, &o->maps);
}

bool site_cache_reattach(Engine *e, const char *function, Backend b, const char *dir) {
        InjectError ignored = {};
        OwnedSite *o;
        int r;

        /* A program we loaded earlier for this site is not pinned, since the
         * site is not: it is detached, and its maps were emptied when it was. */
        o = owned_site_find(e, function, b);
        if (o && !o->detached) {
                site_cache_put(e, function, b);
                o = owned_site_find(e, function, b);
        }
        if (!o)
                return false;
        if (!owned_site_maps_current(e, o)) {
                log_info("The cached %s program for '%s' uses shared maps that are no longer pinned; "
                         "loading it afresh.", backend_to_string(b), function);
                owned_site_free(e, o);
                return false;
        }

        /* Should the kernel refuse to re-attach it, load afresh: that either
         * works or says why with its own error. */
        r = site_program_attach(e, o->program, function, b, &o->maps, dir, &ignored);
        if (r < 0) {
                log_warning_errno(r, "Cannot re-attach the cached %s program for '%s', loading it afresh: %s",
                                  backend_to_string(b), function, ignored.name ? ignored.message : strerror(-r));
                owned_site_free(e, o);
                e->stats.reattach_failures++;
                return false;
        }
        o->detached = false;
        e->n_cached--;
        owned_site_to_front(e, o);
        e->stats.reattaches++;
        return true;
}

void engine_set_site_cache(Engine *e, uint64_t grace_usec, unsigned max_sites) {
        e->cache_grace_usec = grace_usec;
        e->cache_max = max_sites;
        if (!site_cache_enabled(e))
                engine_site_cache_flush(e);
        else
                site_cache_trim(e);
}

uint64_t engine_site_cache_expire(Engine *e) {
        uint64_t now, next, grace_ns = e->cache_grace_usec * 1000;
        OwnedSite *o, *n;

        /* First: an fmod_ret site whose linger ends joins the cache. */
        next = site_linger_expire(e, false);
        now = now_nsec(CLOCK_BOOTTIME);
        site_cache_notice_detached(e);
        for (o = e->owned; o; o = n) {
                n = o->next;
                if (!o->detached)
                        continue;
                if (now - o->detached_ns >= grace_ns) {
                        owned_site_free(e, o);
                        e->stats.expired++;
                } else if (o->detached_ns + grace_ns < next)
                        next = o->detached_ns + grace_ns;
        }
        return next;
}

void engine_site_cache_flush(Engine *e) {
        OwnedSite *o, *n;

        (void) site_linger_expire(e, true);
        for (o = e->owned; o; o = n) {
                n = o->next;
                if (o->detached)
                        owned_site_free(e, o);
        }
}

void engine_site_stats(Engine *e, EngineSiteStats *ret) {
        *ret = e->stats;
        ret->n_cached = e->n_cached;
        ret->n_lingering = 0;
        for (LingerSite *l = e->lingering; l; l = l->next)
                ret->n_lingering++;
        ret->n_owned = 0;
        for (OwnedSite *o = e->owned; o; o = o->next)
                ret->n_owned++;
}
