/* SPDX-License-Identifier: MIT */
#pragma once

/* Argument filters (enum inject_arg_filter in bpf/inject.h): what the
 * kernel's failslab and fail_page_alloc knobs say (ignore-gfp-wait,
 * ignore-gfp-highmem, min-order, cache-filter), read by the program from
 * the function's own arguments. They apply only where the program knows
 * what the arguments are: the functions of the guard table (guards.c),
 * each with the filters that mean something for it. */

#include <stdint.h>

#include "inject-error.h"
#include "inject.h"

typedef struct ArgFilters {
        uint32_t mask;          /* enum inject_arg_filter; 0: none */
        uint32_t min_order;     /* INJECT_FILTER_MIN_ORDER */
        uint32_t min_size;      /* INJECT_FILTER_MIN_SIZE, bytes */
        const char *cache;      /* INJECT_FILTER_CACHE */
} ArgFilters;

typedef struct ArgFilterName {
        enum inject_arg_filter flag;
        const char *name;               /* the request's key: "ignore_gfp_wait" */
        const char *description;        /* for people: what a call must be to be failed */
} ArgFilterName;

/* Every filter, in bit order, and how many. */
extern const ArgFilterName arg_filter_names[];
extern const size_t arg_filter_names_n;

/* The filters that apply to a function (0: none does). */
uint32_t arg_filters_for(const char *function);

/* Refuses (INJECT_ERROR_BAD_FILTER) a filter that does not apply to the
 * function, naming the ones that do, and a cache that the program could
 * not tell apart: a name too long or not a slab cache in slab_root (NULL:
 * /sys/kernel/slab), or one SLUB merged with others (its entry there is a
 * link), whose allocations carry another cache's name. Without slab_root
 * (SLAB, or no sysfs), any well-formed name is taken. */
int arg_filters_check(const char *function, const ArgFilters *f, const char *slab_root, InjectError *err);

/* Writes them into the slot, which arg_filters_check() accepted. */
void arg_filters_fill(const ArgFilters *f, struct inject_slot *slot);
