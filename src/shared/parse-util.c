/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

bool injection_id_is_valid(const char *s) {
        bool nonzero = false;

        if (!s || strlen(s) != 16)
                return false;
        for (const char *p = s; *p; p++) {
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
                nonzero |= *p != '0';
        }
        return nonzero;
}

int parse_injection_id(const char *s, uint64_t *ret) {
        if (!injection_id_is_valid(s))
                return -EINVAL;
        *ret = strtoull(s, NULL, 16);
        return 0;
}

int parse_uid(const char *s, uint32_t *ret) {
        uint64_t v;
        int r;

        r = parse_u64(s, &v);
        if (r < 0)
                return r;
        if (v >= UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}
