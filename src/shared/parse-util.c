/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "parse-util.h"

int parse_u64(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        /* strtoull() would accept "-1" as UINT64_MAX, and leading space. */
        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}
