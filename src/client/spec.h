/* SPDX-License-Identifier: MIT */
#pragma once

/* The fault specifications of "injectctl run --fail SPEC":
 *
 *   FUNCTION[:ERROR][,after=N][,every=N][,times=N][,probability=P%][,caller=FUNC]...
 *           [,ignore-gfp-wait][,ignore-gfp-highmem][,min-order=N][,min-size=N][,cache=NAME]
 *           [,kernel-log=N][,device=DEV]
 *
 * ERROR is an errno name or number (ENOENT, 2); without it the caller
 * picks a value that fits the function's type. caller= may be repeated
 * (at most FAIL_SPEC_CALLERS_MAX). The last five are argument filters
 * (ArgFilterArgs), which the daemon accepts only on the functions they
 * apply to. device= scopes the fault to a block device's I/O (DEV as
 * "inject --device" takes it: loop3, /dev/loop3, 7:3) instead of the
 * command's process tree; the daemon resolves and checks the name.
 * Parsing never talks to the daemon: a malformed SPEC is refused before
 * anything is sent. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"

/* The daemon's limits, checked here already so the user hears early. */
#define FAIL_SPEC_FUNCTION_MAX 63
#define FAIL_SPEC_CALLERS_MAX 4

/* Argument filters as SPEC keys and inject options name them. */
typedef struct ArgFilterArgs {
        bool ignore_gfp_wait;
        bool ignore_gfp_highmem;
        bool has_min_order, has_min_size;
        uint64_t min_order;
        uint64_t min_size;
        char *cache;
} ArgFilterArgs;

void arg_filter_args_done(ArgFilterArgs *a);

/* Whether key is an argument filter's ("ignore-gfp-wait", "min-order", ...). */
bool arg_filter_is_key(const char *key);

/* Sets the filter key to value (NULL for the flags, which take none).
 * Returns 0; -EINVAL with a sentence in *reterr_message (to free) for a
 * value that is not one, a flag given a value or a key given twice;
 * -ENOMEM. */
int arg_filter_args_set(ArgFilterArgs *a, const char *key, const char *value, char **reterr_message);

typedef struct FailSpec {
        char *function;
        int error;              /* positive errno; 0: not given */
        uint64_t after;         /* has_after: given (0 is a valid value) */
        uint64_t every;         /* 0: not given, else >= 1 */
        uint64_t times;         /* 0: not given, else >= 1 */
        double probability;     /* percent; 0: not given, else (0, 100] */
        bool has_after;
        char **callers;         /* NULL-terminated, or NULL */
        size_t n_callers;
        ArgFilterArgs filters;
        unsigned kernel_log;    /* kernel-log=N: 0 none, 1 a kernel log record per fault, 2 with the stack */
        char *device;           /* device=DEV: the scope is this block device; NULL: the command's process tree */
} FailSpec;

FailSpec *fail_spec_free(FailSpec *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(FailSpec *, fail_spec_free)

/* Parses s. Returns 0 and a new FailSpec in *ret; -EINVAL for a malformed
 * SPEC with a sentence saying what is wrong in *reterr_message (to free;
 * written on -EINVAL only); -ENOMEM. */
int fail_spec_parse(const char *s, FailSpec **ret, char **reterr_message);

/* "25%", "25", "0.5%": a percentage in (0, 100]. Returns 0, -EINVAL. */
int parse_percent(const char *s, double *ret);

/* A kernel symbol name as the daemon takes it: 1..FAIL_SPEC_FUNCTION_MAX
 * characters of [A-Za-z0-9_.]. */
bool function_name_is_valid(const char *s);
