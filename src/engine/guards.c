/* SPDX-License-Identifier: MIT */
/* The guard table: which calls of which functions are never failed.
 *
 * Linux's fault injection for slab and page allocations decides in
 * __should_failslab() and __should_fail_alloc_page(); a kprobe override or
 * an fmod_ret program on should_failslab() or should_fail_alloc_page()
 * replaces that decision, exclusions included. The exclusions kept here
 * are the unconditional ones, which callers depend on for correctness:
 *
 *   - __GFP_NOFAIL: the caller was promised the allocation never fails.
 *     Some retry forever (jbd2's journal heads), others dereference NULL.
 *   - the kmem_cache bootstrap cache (should_failslab only): the cache of
 *     caches, which the kernel never fails.
 *
 * The others are tunables of the kernel's random fault attributes
 * (failslab's ignore-gfp-wait and cache-filter, i.e. only caches created
 * with SLAB_FAILSLAB; fail_page_alloc's ignore-gfp-wait, ignore-gfp-highmem
 * and min-order). They narrow what a random fault hits; a failure there is
 * one the kernel handles. They are not guards but argument filters, which
 * an injection asks for (arg-filters.h; docs/engine.md). */

#include <errno.h>
#include <string.h>

#include "guards.h"
#include "kallsyms.h"

static const char *const failslab_conditions[] = {
        "the allocation has __GFP_NOFAIL",
        "the cache is the kmem_cache bootstrap cache",
        NULL,
};

static const char *const fail_alloc_page_conditions[] = {
        "the allocation has __GFP_NOFAIL",
        NULL,
};

/* The filters of each: mm/failslab.c's knobs (and the object size, which
 * it passes on as should_fail()'s size), and mm/page_alloc.c's. */
static const Guard guards[] = {
        { "should_failslab",        INJECT_GUARD_FAILSLAB,        failslab_conditions,
          INJECT_FILTER_GFP_WAIT | INJECT_FILTER_MIN_SIZE | INJECT_FILTER_CACHE },
        { "should_fail_alloc_page", INJECT_GUARD_FAIL_ALLOC_PAGE, fail_alloc_page_conditions,
          INJECT_FILTER_GFP_WAIT | INJECT_FILTER_GFP_HIGHMEM | INJECT_FILTER_MIN_ORDER },
};

const Guard *guard_find(const char *function) {
        if (!function)
                return NULL;
        for (size_t i = 0; i < sizeof(guards) / sizeof(guards[0]); i++)
                if (strcmp(guards[i].function, function) == 0)
                        return &guards[i];
        return NULL;
}

int guard_resolve(const Guard *g, const char *kallsyms_path, uint64_t *ret_bootstrap_cache) {
        uint64_t addr = 0;
        int r;

        if (g && g->kind == INJECT_GUARD_FAILSLAB) {
                r = kallsyms_data_symbol(kallsyms_path, "kmem_cache", &addr);
                if (r < 0)
                        return r;
        }
        *ret_bootstrap_cache = addr;
        return 0;
}
