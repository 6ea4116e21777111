/* SPDX-License-Identifier: MIT */
#pragma once

/* Argument guards: per function, the conditions under which a call must
 * never be failed, whatever an injection asks. They are the exclusions of
 * the kernel's own fault injection (mm/failslab.c, mm/page_alloc.c) that
 * its callers rely on: overriding the function skips them, so the program
 * puts them back (guard_holds() in bpf/inject.bpf.c). A guarded call is
 * counted (struct inject_slot.guarded) and let through. */

#include <stdint.h>

#include "inject.h"

typedef struct Guard {
        const char *function;
        enum inject_guard kind;
        const char *const *conditions;  /* "never failed when ...", NULL-terminated, for people */
        uint32_t filters;               /* the argument filters that apply (enum inject_arg_filter,
                                         * arg-filters.h): the program reads the arguments where
                                         * the guard says what they are */
} Guard;

/* The guard of a function, or NULL when it has none. */
const Guard *guard_find(const char *function);

/* What the program needs for the guard: for INJECT_GUARD_FAILSLAB, the
 * address of the kernel's kmem_cache pointer, from kallsyms_path (NULL:
 * /proc/kallsyms). 0 in *ret_bootstrap_cache when the guard needs none.
 * A negative errno when it cannot be read (-ENXIO: no such symbol, -EPERM:
 * addresses hidden): the site must not be loaded then, since it could not
 * tell the bootstrap cache (the program would fail nothing, guarded). */
int guard_resolve(const Guard *g, const char *kallsyms_path, uint64_t *ret_bootstrap_cache);
