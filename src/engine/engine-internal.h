/* SPDX-License-Identifier: MIT */
#pragma once

/* The Engine behind engine.h, and what engine.c offers the other files of
 * the engine: the lock, the maps every site shares, the pin root's upkeep.
 * Sites are in site.h, the cache of their programs in site-cache.h. */

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "kallsyms.h"
#include "probe.h"
#include "scope-tags.h"
#include "slot-index.h"

typedef struct OwnedSite OwnedSite;
typedef struct LingerSite LingerSite;
struct inject_bpf;
struct Site;

/* The outer maps (arrays of maps) that hold every site's maps at its index
 * (inject.h), shared by every copy of the program and pinned beside the
 * ring buffer. */
typedef enum SiteMapKind {
        SITE_MAP_SCOPES,
        SITE_MAP_SLOTS,
        SITE_MAP_INFO,
        _SITE_MAP_MAX,
} SiteMapKind;

struct Engine {
        char *pin_root;
        char *sites_dir;
        char *events_path;
        char *tags_path;
        int lock_fd;
        bool locked;                    /* this engine holds the engine lock */
        int events_fd;
        int tags_fd;
        char *outer_path[_SITE_MAP_MAX];
        int outer_fd[_SITE_MAP_MAX];
        struct inject_bpf *kprobe_program;      /* the one every kprobe site runs (site.c) */
        uint64_t ns_per_tick;
        uint32_t max_slots;             /* slots of a site loaded from now on */
        FunctionTable *functions;
        KallsymsCache kallsyms;
        EngineCaps caps;
        bool caps_done;
        KernelProbe *probe;
        ScopeTagsProgram *tags_program; /* tags.bpf.c, held for the engine's lifetime (scope-tags.h) */
        struct task_ns_bpf *task_ns;    /* task-ns.c's program, once loaded */
        int task_ns_error;              /* ... or why it did not load */

        /* site-cache.c's */
        LingerSite *lingering;          /* emptied sites kept attached for a while */
        uint64_t linger_usec;
        OwnedSite *owned;               /* sites we loaded: attached, or cached */
        unsigned n_cached;              /* ... of which detached, kept for reuse */
        uint64_t cache_grace_usec;
        unsigned cache_max;
        EngineSiteStats stats;
        EnginePhases phases;            /* the arm under way's (arm.c, site.c) */

        /* observe.c's: the roots of live observations, which count as
         * live process-scope roots (scope-roots.c) */
        ScopeRoot *observe_roots;
        size_t n_observe_roots;

        /* arm.c's: the roots of arms under way (engine_arm_begin()), live
         * too while their walk runs, though no slot is reachable yet */
        ScopeRoot *arming_roots;
        size_t n_arming_roots;

        /* engine-index.c's: where the pinned sites and injections are */
        SlotIndex index;
        uint64_t index_gen;             /* the pins' generation it shows */
        bool index_valid;
        bool index_synced;              /* synced under the lock we hold: nobody else changes the pins */
        bool index_changed;             /* slots taken or freed under the lock we hold */
};

/* Frees task-ns.c's program. */
void engine_task_ns_free(Engine *e);

/* libbpf's last warning or error, "" when it said nothing: the detail a
 * refusal from the kernel shows. */
const char *engine_libbpf_error(void);

/* Serializes every change to the pins, between engines in any process. */
int engine_lock(Engine *e);
void engine_unlock(Engine *e);
void engine_unlockp(Engine **e);

/* Opens (creates) the lock file, which also holds the pins' generation. */
int engine_lock_open(Engine *e);

/* The index of sites and injections (engine-index.c): every complete
 * pinned site, lingering ones included, and its injections.
 * engine_index_sync() makes it show the pins, rebuilding it when another
 * engine (or a failure) left it behind; a caller that holds the lock may
 * then trust it until it unlocks, and syncs again at no cost.
 * engine_index_add()/_remove() record the injections this engine armed or
 * removed, engine_index_add_site()/_remove_site() the sites it pinned or
 * unpinned; the generation is bumped for the others by engine_unlock(), or
 * by engine_index_bump_now() before a site is pinned. */
int engine_index_sync(Engine *e);
void engine_index_invalidate(Engine *e);
/* slot: the injection armed in slot idx; its root is indexed too. */
void engine_index_add(Engine *e, const char *dir, uint32_t n_slots, const struct inject_slot *slot, uint32_t idx);
/* The root the index keeps for slot: tag 0 unless process-scope and tagged. */
SlotIndexRoot engine_slot_root(const struct inject_slot *slot);
void engine_index_remove(Engine *e, uint64_t id);
void engine_index_bump_now(Engine *e);
void engine_index_add_site(Engine *e, const struct Site *s);
void engine_index_remove_site(Engine *e, const char *dir);
void engine_index_bump(Engine *e);

/* The task storage of process-scope tags, shared by every site and the
 * tagging programs; the pinned one if there is one. */
int engine_tags_fd(Engine *e);
/* Makes sure the shared ring buffer, tags and outer maps are pinned. */
int engine_pin_shared(Engine *e);
/* Once no site is left, removes whatever else of ours is in bpffs. */
void engine_gc_root(Engine *e);
/* 1 when the pinned outer maps (if any) take this build's sites, 0 when
 * another build with other structures made them, or a negative errno. */
int engine_pinned_layout_fits(Engine *e);
/* Unpins every site (detaching its program) and the maps they share: the
 * number of sites removed. */
int engine_pins_remove_all(Engine *e);

/* e->kallsyms's table, read on first use (kallsyms_cache_get()). */
int engine_load_kallsyms(Engine *e, const Kallsyms **ret);
