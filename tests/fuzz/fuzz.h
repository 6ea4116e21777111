/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by the libFuzzer targets of tests/fuzz (see README.md there).
 * A target aborts through FUZZ_ASSERT when the code under test breaks one
 * of its documented promises: libFuzzer treats the abort like a crash and
 * saves the input, so a wrong answer is found as surely as a bad access. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(expr)                                                       \
        do {                                                                    \
                if (!(expr)) {                                                  \
                        fprintf(stderr, "%s:%d: broken promise: %s\n",          \
                                __FILE__, __LINE__, #expr);                     \
                        abort();                                                \
                }                                                               \
        } while (0)

/* The input as a C string: a copy up to its first NUL, which is where
 * every C-string parser stops anyway. Aborts on allocation failure, which
 * is the harness's problem, not a finding. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = strndup((const char *) data, size);

        if (!s)
                abort();
        return s;
}
