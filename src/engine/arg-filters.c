/* SPDX-License-Identifier: MIT */
/* Argument filters: their names, where they apply, and the check of a
 * requested set before anything loads (arg-filters.h). */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "arg-filters.h"
#include "guards.h"

#define SLAB_ROOT "/sys/kernel/slab"

const ArgFilterName arg_filter_names[] = {
        { INJECT_FILTER_GFP_WAIT,    "ignore_gfp_wait",
          "only allocations that may not sleep (without __GFP_DIRECT_RECLAIM: GFP_ATOMIC, GFP_NOWAIT)" },
        { INJECT_FILTER_GFP_HIGHMEM, "ignore_gfp_highmem", "not allocations of high memory (__GFP_HIGHMEM)" },
        { INJECT_FILTER_MIN_ORDER,   "min_order",          "only allocations of at least 2^min_order pages" },
        { INJECT_FILTER_MIN_SIZE,    "min_size",           "only caches whose objects are at least min_size bytes" },
        { INJECT_FILTER_CACHE,       "cache",              "only the slab cache of that name" },
};
const size_t arg_filter_names_n = sizeof(arg_filter_names) / sizeof(arg_filter_names[0]);

uint32_t arg_filters_for(const char *function) {
        const Guard *g = guard_find(function);

        return g ? g->filters : 0;
}

/* "a, b and c": the names of the filters in mask, into buf. */
static const char *filter_list(uint32_t mask, char *buf, size_t size) {
        size_t n = 0, left = 0;

        for (size_t i = 0; i < arg_filter_names_n; i++)
                left += !!(mask & arg_filter_names[i].flag);
        buf[0] = '\0';
        for (size_t i = 0; i < arg_filter_names_n && n < size; i++) {
                if (!(mask & arg_filter_names[i].flag))
                        continue;
                left--;
                n += (size_t) snprintf(buf + n, size - n, "%s%s", arg_filter_names[i].name,
                                       left > 1 ? ", " : left == 1 ? " and " : "");
        }
        return buf;
}

static int check_cache(const char *name, const char *slab_root, InjectError *err) {
        char path[512];
        struct stat st;

        if (!*name || strlen(name) > INJECT_CACHE_LEN - 2)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_FILTER,
                                        "A slab cache name of 1 to %d characters is required for 'cache'",
                                        INJECT_CACHE_LEN - 2);
        for (const char *p = name; *p; p++)
                if (*p <= ' ' || *p > '~' || *p == '/')
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_FILTER,
                                                "'cache' must be a slab cache name (printable, no '/' or blanks)");
        slab_root = slab_root ?: SLAB_ROOT;
        if (stat(slab_root, &st) < 0)
                return 0;       /* no SLUB sysfs: the name cannot be checked, and nothing is merged there to tell */
        (void) snprintf(path, sizeof(path), "%s/%s", slab_root, name);
        if (lstat(path, &st) < 0)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_BAD_FILTER,
                                        "No slab cache '%s' on this kernel (%s lists them)", name, SLAB_ROOT);
        if (S_ISLNK(st.st_mode))
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_FILTER,
                                        "Slab cache '%s' is merged with other caches on this kernel (%s/%s is a "
                                        "link): its allocations carry another cache's name, so a filter cannot "
                                        "tell them apart; boot with slab_nomerge to separate them",
                                        name, SLAB_ROOT, name);
        return 0;
}

int arg_filters_check(const char *function, const ArgFilters *f, const char *slab_root, InjectError *err) {
        uint32_t ok = arg_filters_for(function), bad = f->mask & ~ok;
        char have[256], want[256];

        if (f->mask & ~(uint32_t) ((1u << arg_filter_names_n) - 1))
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_FILTER, "Unknown argument filter 0x%x",
                                        f->mask);
        if (bad) {
                if (!ok)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_FILTER,
                                                "Argument filters (%s) do not apply to '%s': they read the "
                                                "arguments of should_failslab and should_fail_alloc_page only",
                                                filter_list(bad, have, sizeof(have)), function);
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_FILTER,
                                        "Argument filters that do not apply to '%s': %s (it takes %s)", function,
                                        filter_list(bad, have, sizeof(have)), filter_list(ok, want, sizeof(want)));
        }
        if ((f->mask & INJECT_FILTER_CACHE) && !f->cache)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_FILTER, "'cache' needs a slab cache name");
        if (f->mask & INJECT_FILTER_CACHE)
                return check_cache(f->cache, slab_root, err);
        return 0;
}

void arg_filters_fill(const ArgFilters *f, struct inject_slot *slot) {
        slot->arg_filters = f->mask;
        slot->min_order = f->mask & INJECT_FILTER_MIN_ORDER ? f->min_order : 0;
        slot->min_size = f->mask & INJECT_FILTER_MIN_SIZE ? f->min_size : 0;
        memset(slot->cache, 0, sizeof(slot->cache));
        if ((f->mask & INJECT_FILTER_CACHE) && f->cache)
                strncpy(slot->cache, f->cache, INJECT_CACHE_LEN - 2);
}
