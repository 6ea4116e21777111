/* SPDX-License-Identifier: MIT */
/* The in-memory index of armed injections (slot-index.h). Ids are random
 * 64-bit numbers (arm.c), so a multiplicative hash spreads them; the table
 * is probed linearly and deletions shift the following entries back, so
 * there are no tombstones to grow old. Sites are few (one per function and
 * backend armed): a list searched by name. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "slot-index.h"

#define SLOT_INDEX_MIN_BUCKETS 64

static size_t bucket_of(const SlotIndex *x, uint64_t id) {
        return (size_t) ((id * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (x->n_buckets - 1);
}

static SlotIndexSite *site_free(SlotIndexSite *s) {
        if (!s)
                return NULL;
        free(s->dir);
        free(s->used);
        free(s);
        return NULL;
}

void slot_index_clear(SlotIndex *x) {
        for (size_t i = 0; i < x->n_sites; i++)
                site_free(x->sites[i]);
        x->n_sites = 0;
        if (x->buckets)
                memset(x->buckets, 0, x->n_buckets * sizeof(*x->buckets));
        x->n_entries = 0;
}

void slot_index_done(SlotIndex *x) {
        slot_index_clear(x);
        free(x->sites);
        free(x->buckets);
        *x = (SlotIndex) {};
}

static size_t site_pos(const SlotIndex *x, const char *dir) {
        for (size_t i = 0; i < x->n_sites; i++)
                if (strcmp(x->sites[i]->dir, dir) == 0)
                        return i;
        return SIZE_MAX;
}

const SlotIndexSite *slot_index_site(const SlotIndex *x, const char *dir) {
        size_t i = site_pos(x, dir);

        return i == SIZE_MAX ? NULL : x->sites[i];
}

static bool site_test(const SlotIndexSite *s, uint32_t slot) {
        return s->used[slot / 64] & (UINT64_C(1) << (slot % 64));
}

static void site_flip(SlotIndexSite *s, uint32_t slot) {
        s->used[slot / 64] ^= UINT64_C(1) << (slot % 64);
}

static size_t find_bucket(const SlotIndex *x, uint64_t id) {
        if (x->n_buckets == 0)
                return SIZE_MAX;
        for (size_t b = bucket_of(x, id);; b = (b + 1) & (x->n_buckets - 1)) {
                if (x->buckets[b].id == id)
                        return b;
                if (x->buckets[b].id == 0)
                        return SIZE_MAX;
        }
}

static void insert_bucket(SlotIndex *x, SlotIndexEntry e) {
        size_t b = bucket_of(x, e.id);

        while (x->buckets[b].id)
                b = (b + 1) & (x->n_buckets - 1);
        x->buckets[b] = e;
}

/* Kept at most half full, so a probe ends soon. */
static int reserve(SlotIndex *x, size_t n_entries) {
        SlotIndexEntry *old = x->buckets, *v;
        size_t n_old = x->n_buckets, n = n_old ?: SLOT_INDEX_MIN_BUCKETS;

        while (n < 2 * n_entries)
                n *= 2;
        if (n == n_old)
                return 0;
        v = calloc(n, sizeof(*v));
        if (!v)
                return -ENOMEM;
        x->buckets = v;
        x->n_buckets = n;
        for (size_t i = 0; i < n_old; i++)
                if (old[i].id)
                        insert_bucket(x, old[i]);
        free(old);
        return 0;
}

static int site_get(SlotIndex *x, const char *dir, uint32_t n_slots, SlotIndexSite **ret) {
        SlotIndexSite *s, **v;
        size_t i = site_pos(x, dir);

        if (i != SIZE_MAX) {
                if (x->sites[i]->n_slots != n_slots)
                        return -ERANGE;
                *ret = x->sites[i];
                return 0;
        }
        v = realloc(x->sites, (x->n_sites + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        x->sites = v;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->dir = strdup(dir);
        s->n_slots = n_slots;
        s->used = calloc((n_slots + 63) / 64, sizeof(uint64_t));
        if (!s->dir || !s->used) {
                site_free(s);
                return -ENOMEM;
        }
        x->sites[x->n_sites++] = s;
        *ret = s;
        return 0;
}

static void site_forget(SlotIndex *x, SlotIndexSite *s) {
        size_t i = site_pos(x, s->dir);

        x->sites[i] = x->sites[--x->n_sites];
        site_free(s);
}

int slot_index_add(SlotIndex *x, const char *dir, uint32_t n_slots, uint64_t id, uint32_t slot) {
        return slot_index_add_root(x, dir, n_slots, id, slot, NULL);
}

const SlotIndexRoot *slot_index_next_root(const SlotIndex *x, size_t *i) {
        for (; *i < x->n_buckets; (*i)++) {
                const SlotIndexEntry *b = &x->buckets[*i];

                if (b->id && b->root.tag) {
                        (*i)++;
                        return &b->root;
                }
        }
        return NULL;
}

int slot_index_add_root(SlotIndex *x, const char *dir, uint32_t n_slots, uint64_t id, uint32_t slot,
                        const SlotIndexRoot *root) {
        SlotIndexSite *s;
        int r;

        if (id == 0 || n_slots == 0)
                return -EINVAL;
        if (slot >= n_slots)
                return -ERANGE;
        if (find_bucket(x, id) != SIZE_MAX)
                return -EEXIST;
        r = reserve(x, x->n_entries + 1);
        if (r < 0)
                return r;
        r = site_get(x, dir, n_slots, &s);
        if (r < 0)
                return r;
        if (site_test(s, slot)) {
                if (s->n_used == 0 && !s->pinned)       /* just made for us */
                        site_forget(x, s);
                return -EBUSY;
        }
        site_flip(s, slot);
        s->n_used++;
        insert_bucket(x, (SlotIndexEntry) { .id = id, .site = s, .slot = slot,
                                            .root = root && root->tag ? *root : (SlotIndexRoot) {} });
        x->n_entries++;
        return 0;
}

int slot_index_find(const SlotIndex *x, uint64_t id, const char **ret_dir, uint32_t *ret_slot) {
        size_t b = id ? find_bucket(x, id) : SIZE_MAX;

        if (b == SIZE_MAX)
                return -ENOENT;
        if (ret_dir)
                *ret_dir = x->buckets[b].site->dir;
        if (ret_slot)
                *ret_slot = x->buckets[b].slot;
        return 0;
}

/* Backward-shift deletion: every entry after the hole that may sit in it
 * (its home bucket is not strictly between the hole and it) moves into it. */
static void delete_bucket(SlotIndex *x, size_t hole) {
        size_t mask = x->n_buckets - 1;

        for (size_t j = (hole + 1) & mask; x->buckets[j].id; j = (j + 1) & mask) {
                size_t home = bucket_of(x, x->buckets[j].id);

                if (((j - home) & mask) >= ((j - hole) & mask)) {
                        x->buckets[hole] = x->buckets[j];
                        hole = j;
                }
        }
        x->buckets[hole] = (SlotIndexEntry) {};
        x->n_entries--;
}

int slot_index_remove(SlotIndex *x, uint64_t id) {
        size_t b = id ? find_bucket(x, id) : SIZE_MAX;
        SlotIndexSite *s;

        if (b == SIZE_MAX)
                return -ENOENT;
        s = x->buckets[b].site;
        site_flip(s, x->buckets[b].slot);
        delete_bucket(x, b);
        if (--s->n_used == 0 && !s->pinned)
                site_forget(x, s);
        return 0;
}

int slot_index_pin_site(SlotIndex *x, const char *dir, uint32_t n_slots) {
        SlotIndexSite *s;
        int r;

        if (n_slots == 0)
                return -EINVAL;
        r = site_get(x, dir, n_slots, &s);
        if (r < 0)
                return r;
        s->pinned = true;
        return 0;
}

void slot_index_drop_site(SlotIndex *x, const char *dir) {
        size_t i = site_pos(x, dir);
        SlotIndexSite *s;

        if (i == SIZE_MAX)
                return;
        s = x->sites[i];
        /* A deletion may shift the next entry into bucket b: look again
         * before moving on. Entries only move backwards, onto buckets
         * already looked at when they wrap around, and those hold none of
         * the site's. */
        for (size_t b = 0; b < x->n_buckets && s->n_used > 0;)
                if (x->buckets[b].id && x->buckets[b].site == s) {
                        delete_bucket(x, b);
                        s->n_used--;
                } else
                        b++;
        site_forget(x, s);
}

int slot_index_free_slot(const SlotIndex *x, const char *dir, uint32_t n_slots, uint32_t *ret) {
        const SlotIndexSite *s = slot_index_site(x, dir);

        if (n_slots == 0)
                return -ENOSPC;
        if (!s) {
                *ret = 0;
                return 0;
        }
        for (uint32_t w = 0; w < (s->n_slots + 63) / 64; w++) {
                uint32_t i;

                if (s->used[w] == UINT64_MAX)
                        continue;
                i = w * 64 + (uint32_t) __builtin_ctzll(~s->used[w]);
                if (i >= s->n_slots || i >= n_slots)
                        break;
                *ret = i;
                return 0;
        }
        return -ENOSPC;
}
