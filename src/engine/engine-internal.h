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

typedef struct OwnedSite OwnedSite;

struct Engine {
        char *pin_root;
        char *sites_dir;
        char *events_path;
        char *tags_path;
        int lock_fd;
        int events_fd;
        int tags_fd;
        uint64_t ns_per_tick;
        FunctionTable *functions;
        KallsymsCache kallsyms;
        EngineCaps caps;
        bool caps_done;
        KernelProbe *probe;
        struct task_ns_bpf *task_ns;    /* task-ns.c's program, once loaded */
        int task_ns_error;              /* ... or why it did not load */

        /* site-cache.c's */
        OwnedSite *owned;               /* sites we loaded: attached, or cached */
        unsigned n_cached;              /* ... of which detached, kept for reuse */
        uint64_t cache_grace_usec;
        unsigned cache_max;
        EngineSiteStats stats;
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

/* The task storage of process-scope tags, shared by every site and the
 * tagging programs; the pinned one if there is one. */
int engine_tags_fd(Engine *e);
/* Makes sure the shared ring buffer and tags are pinned. */
int engine_pin_shared(Engine *e);
/* Once no site is left, removes whatever else of ours is in bpffs. */
void engine_gc_root(Engine *e);

/* e->kallsyms's table, read on first use (kallsyms_cache_get()). */
int engine_load_kallsyms(Engine *e, const Kallsyms **ret);
