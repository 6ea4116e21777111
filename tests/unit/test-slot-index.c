/* SPDX-License-Identifier: MIT */
/* The engine's in-memory index of injections (slot-index.c): what it
 * refuses, the lowest free slot, a full site, dropping a site, a pinned
 * site with no injection, the roots it keeps for tagging, and a long
 * random run checked against a plain array of (id, site, slot). */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slot-index.h"
#include "test-util.h"

static void test_basics(void) {
        SlotIndex x = {};
        const char *dir;
        uint32_t slot;

        ASSERT_RET(slot_index_find(&x, 1, &dir, &slot), -ENOENT);
        ASSERT_RET(slot_index_remove(&x, 1), -ENOENT);
        ASSERT_RET(slot_index_free_slot(&x, "a", 256, &slot), 0);
        ASSERT_EQ(slot, 0u);

        ASSERT_RET(slot_index_add(&x, "a", 256, 0, 0), -EINVAL);
        ASSERT_RET(slot_index_add(&x, "a", 0, 1, 0), -EINVAL);
        ASSERT_RET(slot_index_add(&x, "a", 256, 1, 256), -ERANGE);
        ASSERT_NULL(slot_index_site(&x, "a"));

        ASSERT_OK(slot_index_add(&x, "a", 256, 10, 0));
        ASSERT_OK(slot_index_add(&x, "a", 256, 11, 2));
        ASSERT_OK(slot_index_add(&x, "b", 4, 12, 0));
        ASSERT_RET(slot_index_add(&x, "b", 4, 10, 1), -EEXIST);
        ASSERT_RET(slot_index_add(&x, "a", 256, 13, 2), -EBUSY);
        ASSERT_RET(slot_index_add(&x, "a", 128, 13, 3), -ERANGE);
        ASSERT_RET(slot_index_add(&x, "c", 4, 13, 0), 0);
        ASSERT_RET(slot_index_remove(&x, 13), 0);
        ASSERT_NULL(slot_index_site(&x, "c"));
        ASSERT_EQ(x.n_entries, 3u);
        ASSERT_EQ(x.n_sites, 2u);

        ASSERT_OK(slot_index_find(&x, 11, &dir, &slot));
        ASSERT_STREQ(dir, "a");
        ASSERT_EQ(slot, 2u);
        ASSERT_OK(slot_index_find(&x, 12, &dir, &slot));
        ASSERT_STREQ(dir, "b");
        ASSERT_EQ(slot, 0u);
        ASSERT_RET(slot_index_find(&x, 0, &dir, &slot), -ENOENT);

        /* The lowest free one, in the first word and past it. */
        ASSERT_OK(slot_index_free_slot(&x, "a", 256, &slot));
        ASSERT_EQ(slot, 1u);
        for (uint32_t i = 1; i < 70; i++)
                if (i != 2)
                        ASSERT_OK(slot_index_add(&x, "a", 256, 100 + i, i));
        ASSERT_OK(slot_index_free_slot(&x, "a", 256, &slot));
        ASSERT_EQ(slot, 70u);
        ASSERT_OK(slot_index_remove(&x, 100 + 33));
        ASSERT_OK(slot_index_free_slot(&x, "a", 256, &slot));
        ASSERT_EQ(slot, 33u);
        ASSERT_EQ(slot_index_site(&x, "a")->n_used, 69u);

        /* A full site, with a size that is not a multiple of 64. */
        for (uint32_t i = 1; i < 4; i++)
                ASSERT_OK(slot_index_add(&x, "b", 4, 200 + i, i));
        ASSERT_RET(slot_index_free_slot(&x, "b", 4, &slot), -ENOSPC);
        ASSERT_OK(slot_index_remove(&x, 202));
        ASSERT_OK(slot_index_free_slot(&x, "b", 4, &slot));
        ASSERT_EQ(slot, 2u);

        /* Dropping a site forgets its injections and nobody else's. */
        slot_index_drop_site(&x, "a");
        ASSERT_NULL(slot_index_site(&x, "a"));
        ASSERT_RET(slot_index_find(&x, 10, &dir, &slot), -ENOENT);
        ASSERT_RET(slot_index_find(&x, 169, &dir, &slot), -ENOENT);
        ASSERT_EQ(x.n_entries, 3u);
        ASSERT_OK(slot_index_find(&x, 203, &dir, &slot));
        ASSERT_STREQ(dir, "b");
        ASSERT_EQ(slot, 3u);
        slot_index_drop_site(&x, "nothing");
        ASSERT_EQ(x.n_entries, 3u);

        slot_index_clear(&x);
        ASSERT_EQ(x.n_entries, 0u);
        ASSERT_EQ(x.n_sites, 0u);
        ASSERT_RET(slot_index_find(&x, 12, &dir, &slot), -ENOENT);
        ASSERT_OK(slot_index_add(&x, "b", 4, 12, 0));
        slot_index_done(&x);
}

/* A pinned site is known with no injection (lingering) until it is dropped. */
static void test_pinned(void) {
        SlotIndex x = {};
        uint32_t slot;

        ASSERT_RET(slot_index_pin_site(&x, "a", 0), -EINVAL);
        ASSERT_OK(slot_index_pin_site(&x, "a", 4));
        ASSERT_NOT_NULL(slot_index_site(&x, "a"));
        ASSERT_EQ(slot_index_site(&x, "a")->n_used, 0u);
        ASSERT_RET(slot_index_pin_site(&x, "a", 8), -ERANGE);
        ASSERT_OK(slot_index_pin_site(&x, "a", 4));
        ASSERT_EQ(x.n_sites, 1u);

        /* Its last injection removed, or refused, it stays. */
        ASSERT_OK(slot_index_add(&x, "a", 4, 1, 1));
        ASSERT_RET(slot_index_add(&x, "a", 4, 2, 1), -EBUSY);
        ASSERT_OK(slot_index_free_slot(&x, "a", 4, &slot));
        ASSERT_EQ(slot, 0u);
        ASSERT_OK(slot_index_remove(&x, 1));
        ASSERT_NOT_NULL(slot_index_site(&x, "a"));
        ASSERT_OK(slot_index_free_slot(&x, "a", 4, &slot));
        ASSERT_EQ(slot, 0u);

        /* An unpinned one beside it goes with its last injection. */
        ASSERT_OK(slot_index_add(&x, "b", 4, 3, 0));
        ASSERT_OK(slot_index_remove(&x, 3));
        ASSERT_NULL(slot_index_site(&x, "b"));

        ASSERT_OK(slot_index_add(&x, "a", 4, 4, 3));
        slot_index_drop_site(&x, "a");
        ASSERT_NULL(slot_index_site(&x, "a"));
        ASSERT_RET(slot_index_find(&x, 4, NULL, NULL), -ENOENT);
        ASSERT_EQ(x.n_sites, 0u);
        ASSERT_EQ(x.n_entries, 0u);
        slot_index_done(&x);
}

/* Ids that all land in few buckets test the probing and the back shift. */
#define N_MODEL 600
#define N_SITES 3
#define SITE_SLOTS 256

static void test_random(bool clustered) {
        static const char *const dirs[N_SITES] = { "s0", "s1", "s2" };
        struct { uint64_t id; unsigned site; uint32_t slot; } m[N_MODEL] = {};
        static bool taken[N_SITES][SITE_SLOTS];
        SlotIndex x = {};
        unsigned seed = clustered ? 7 : 3;
        size_t n = 0;

        memset(taken, 0, sizeof(taken));
        for (unsigned step = 0; step < 100000; step++) {
                unsigned op = (unsigned) rand_r(&seed) % 10;
                unsigned site = (unsigned) rand_r(&seed) % N_SITES;
                uint64_t id = clustered ? ((uint64_t) (rand_r(&seed) % 2048) + 1) << 40
                                        : ((uint64_t) rand_r(&seed) << 32 | (uint64_t) rand_r(&seed)) + 1;
                bool known = false;
                uint32_t slot, want = UINT32_MAX;
                const char *dir;
                int r;

                for (size_t i = 0; i < n; i++)
                        known = known || m[i].id == id;

                if (op < 5 && n < N_MODEL) {
                        /* The model's lowest free slot of the site. */
                        for (uint32_t s = 0; s < SITE_SLOTS && want == UINT32_MAX; s++)
                                if (!taken[site][s])
                                        want = s;
                        r = slot_index_free_slot(&x, dirs[site], SITE_SLOTS, &slot);
                        if (want == UINT32_MAX) {
                                ASSERT_RET(r, -ENOSPC);
                                continue;
                        }
                        ASSERT_RET(r, 0);
                        ASSERT_EQ(slot, want);
                        r = slot_index_add(&x, dirs[site], SITE_SLOTS, id, slot);
                        if (known) {
                                ASSERT_RET(r, -EEXIST);
                                continue;
                        }
                        ASSERT_RET(r, 0);
                        taken[site][slot] = true;
                        m[n].id = id;
                        m[n].site = site;
                        m[n++].slot = slot;
                } else if (op < 9 && n > 0) {
                        size_t i = (size_t) rand_r(&seed) % n;

                        ASSERT_OK(slot_index_remove(&x, m[i].id));
                        ASSERT_RET(slot_index_find(&x, m[i].id, &dir, &slot), -ENOENT);
                        taken[m[i].site][m[i].slot] = false;
                        m[i] = m[--n];
                } else if (op == 9 && step % 97 == 0) {
                        size_t k = 0;

                        slot_index_drop_site(&x, dirs[site]);
                        memset(taken[site], 0, sizeof(taken[site]));
                        for (size_t i = 0; i < n; i++)
                                if (m[i].site != site)
                                        m[k++] = m[i];
                        n = k;
                }

                if (step % 1000 == 0 || step > 99000) {
                        size_t used[N_SITES] = {};

                        ASSERT_EQ(x.n_entries, n);
                        for (size_t i = 0; i < n; i++) {
                                ASSERT_OK(slot_index_find(&x, m[i].id, &dir, &slot));
                                ASSERT_STREQ(dir, dirs[m[i].site]);
                                ASSERT_EQ(slot, m[i].slot);
                                used[m[i].site]++;
                        }
                        for (unsigned s = 0; s < N_SITES; s++) {
                                const SlotIndexSite *is = slot_index_site(&x, dirs[s]);

                                ASSERT_EQ(is ? is->n_used : 0u, used[s]);
                        }
                }
        }
        slot_index_done(&x);
}

/* The roots the tagging pass needs come from the index alone (issue 30):
 * each process-scope injection's (tgid, start, tag), through rehashes and
 * removals, none for the others. */
static void test_roots(void) {
        SlotIndex x = {};
        const SlotIndexRoot *r;
        bool seen[600] = {};
        size_t i = 0, n = 0;
        char dir[16];

        for (uint64_t id = 1; id <= 512; id++) {
                SlotIndexRoot root = { .tgid = (uint32_t) id + 1000, .start_ticks = id * 7, .tag = id % 2 ? id : 0 };

                snprintf(dir, sizeof(dir), "s%u", (unsigned) (id % 32));
                ASSERT_OK(slot_index_add_root(&x, dir, 64, id, (uint32_t) (id / 32), &root));
        }
        for (uint64_t id = 1; id <= 512; id += 4)
                ASSERT_OK(slot_index_remove(&x, id));   /* ids 1, 5, 9, ...: every other tagged one */
        while ((r = slot_index_next_root(&x, &i))) {
                ASSERT_TRUE(r->tag > 0 && r->tag <= 512);
                ASSERT_EQ(r->tag % 4, 3u);
                ASSERT_EQ(r->tgid, (uint32_t) r->tag + 1000);
                ASSERT_EQ(r->start_ticks, r->tag * 7);
                ASSERT_TRUE(!seen[r->tag]);
                seen[r->tag] = true;
                n++;
        }
        ASSERT_EQ(n, 128u);
        /* Removed, then armed again without a root: none. */
        ASSERT_OK(slot_index_remove(&x, 3));
        ASSERT_OK(slot_index_add(&x, "s3", 64, 3, 0));
        i = n = 0;
        while ((r = slot_index_next_root(&x, &i)))
                n++;
        ASSERT_EQ(n, 127u);
        slot_index_done(&x);
}

int main(void) {
        test_basics();
        test_roots();
        test_pinned();
        test_random(false);
        test_random(true);
        printf("ok\n");
        return 0;
}
