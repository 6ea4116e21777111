/* SPDX-License-Identifier: MIT */

/* errno names and numbers (src/shared/errno-name.c): the input is parsed as
 * an errno name or number, offered to the "did you mean" search, and read
 * as a number to name. Names and numbers must translate back and forth. */

#include <errno.h>

#include "errno-name.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = fuzz_strndup(data, size);
        const char *name;
        int n = 0, back, r;

        r = errno_from_name(s, &n);
        FUZZ_ASSERT(r == 0 || r == -EINVAL);
        if (r == 0) {
                FUZZ_ASSERT(n >= 1 && n <= ERRNO_MAX);
                name = errno_to_name(n);
                if (name) {
                        FUZZ_ASSERT(errno_from_name(name, &back) == 0);
                        FUZZ_ASSERT(back == n);
                }
        }

        r = errno_suggest(s, &name);
        FUZZ_ASSERT(r >= 0 || r == -ENOENT || r == -EINVAL);
        if (r >= 0) {
                FUZZ_ASSERT(name);
                FUZZ_ASSERT(errno_from_name(name, &back) == 0);
                /* Distance 0 is the name itself, in some case. */
                if (r == 0)
                        FUZZ_ASSERT(errno_from_name(s, &n) == 0 && n == back);
        }

        n = 0;
        memcpy(&n, data, size < sizeof(n) ? size : sizeof(n));
        name = errno_to_name(n);
        if (name) {
                FUZZ_ASSERT(errno_from_name(name, &back) == 0);
                FUZZ_ASSERT(back == (n < 0 ? -n : n));
        }
        return 0;
}
