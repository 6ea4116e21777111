/* SPDX-License-Identifier: MIT */
#pragma once

/* Where each armed injection lives, in memory: injection id → (site, slot),
 * and for each site which of its slots are taken; also which sites are
 * pinned with none taken (lingering ones). The engine keeps one, so
 * finding a free slot, a cancel and a list do not read every slot of every
 * site from the kernel. It is a cache of the pins, which stay the truth:
 * the engine rebuilds it from them when it starts (adoption) and whenever
 * another engine changed them (engine-internal.h, engine_index_sync()).
 * Pure data, no BPF: tests/unit/test-slot-index.c. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct SlotIndexSite {
        char *dir;              /* the site's pin directory: its name */
        uint32_t n_slots;       /* slots the site has (its slots map's max_entries) */
        uint32_t n_used;
        uint64_t *used;         /* bit i: slot i holds an injection */
        bool pinned;            /* known to be pinned: kept with no injection */
} SlotIndexSite;

/* A process-scope injection's root, as its slot says (scope_id,
 * start_ticks, scope_tag): kept here so that an arm's tagging pass learns
 * the live roots without reading every site's slots (issue 30). */
typedef struct SlotIndexRoot {
        uint32_t tgid;
        uint64_t start_ticks;
        uint64_t tag;           /* 0: none (not process-scope, or untagged) */
} SlotIndexRoot;

typedef struct SlotIndexEntry {
        uint64_t id;            /* 0: an empty bucket */
        SlotIndexSite *site;
        uint32_t slot;
        SlotIndexRoot root;
} SlotIndexEntry;

typedef struct SlotIndex {
        SlotIndexEntry *buckets;        /* open addressing, linear probing, no tombstones */
        size_t n_buckets;               /* 0 or a power of two */
        size_t n_entries;
        SlotIndexSite **sites;          /* sites with an injection, or pinned */
        size_t n_sites;
} SlotIndex;

void slot_index_done(SlotIndex *x);
/* Forgets everything; keeps the memory of the table. */
void slot_index_clear(SlotIndex *x);

/* -EINVAL: id 0 or n_slots 0; -ERANGE: slot >= n_slots, or n_slots differs
 * from the site's; -EEXIST: id is indexed already; -EBUSY: the slot is
 * taken. Nothing changes on failure. */
int slot_index_add(SlotIndex *x, const char *dir, uint32_t n_slots, uint64_t id, uint32_t slot);
/* The same, and the injection's root (NULL or tag 0: none). */
int slot_index_add_root(SlotIndex *x, const char *dir, uint32_t n_slots, uint64_t id, uint32_t slot,
                        const SlotIndexRoot *root);
/* The roots of the indexed injections, one by one: *i starts at 0; NULL at
 * the end. No order; a root named by several injections comes as often. */
const SlotIndexRoot *slot_index_next_root(const SlotIndex *x, size_t *i);
/* -ENOENT when id is not indexed. ret_dir stays valid until the site is
 * forgotten: dropped, or its last injection removed when it is not pinned. */
int slot_index_find(const SlotIndex *x, uint64_t id, const char **ret_dir, uint32_t *ret_slot);
int slot_index_remove(SlotIndex *x, uint64_t id);
/* Records that the site is pinned: it stays indexed when it has no
 * injection, until it is dropped. */
int slot_index_pin_site(SlotIndex *x, const char *dir, uint32_t n_slots);
/* Forgets the site, pinned or not, and every injection of it. */
void slot_index_drop_site(SlotIndex *x, const char *dir);
/* The lowest free slot of the site, which has n_slots slots (when it is
 * not indexed, it has no injection: 0). -ENOSPC when all are taken. */
int slot_index_free_slot(const SlotIndex *x, const char *dir, uint32_t n_slots, uint32_t *ret);
/* The site's entry, NULL when it is neither pinned nor has an injection. */
const SlotIndexSite *slot_index_site(const SlotIndex *x, const char *dir);
