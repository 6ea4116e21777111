/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "edit-distance.h"
#include "errno-name.h"

/* strerrorname_np() only knows one name per number, so the second spelling
 * of the few numbers that have two would otherwise be refused. The values
 * come from <errno.h>; this lists spellings, not numbers. */
static const struct {
        const char *name;
        int value;
} errno_aliases[] = {
        { "EWOULDBLOCK", EWOULDBLOCK },
        { "EDEADLOCK",   EDEADLOCK   },
        { "ENOTSUP",     ENOTSUP     },
};

/* Longer input than any errno name cannot be a near miss. */
#define SUGGEST_MAX_LEN 32

static char ascii_upper(char c) {
        return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

/* strcasecmp() follows the locale, and in a Turkish one "einval" would not
 * match "EINVAL"; errno names are ASCII whatever the user's locale. */
static bool ascii_strcaseeq(const char *a, const char *b) {
        for (; *a && *b; a++, b++)
                if (ascii_upper(*a) != ascii_upper(*b))
                        return false;
        return *a == *b;
}

static int parse_errno_number(const char *s, int *ret) {
        const char *p = s;
        unsigned long v;
        char *end;

        if (*p == '-')
                p++;

        /* strtoul() would skip white space and accept a second sign or a
         * "0x" prefix; errno numbers are plain decimal. */
        if (*p < '0' || *p > '9')
                return -EINVAL;

        errno = 0;
        v = strtoul(p, &end, 10);
        if (errno != 0 || *end != '\0')
                return -EINVAL;
        if (v < 1 || v > ERRNO_MAX)
                return -EINVAL;

        *ret = (int) v;
        return 0;
}

int errno_from_name(const char *s, int *ret) {
        if (!s || !ret)
                return -EINVAL;

        if (*s == '-' || (*s >= '0' && *s <= '9'))
                return parse_errno_number(s, ret);

        for (int i = 1; i <= ERRNO_MAX; i++) {
                const char *n = strerrorname_np(i);

                if (n && ascii_strcaseeq(n, s)) {
                        *ret = i;
                        return 0;
                }
        }

        for (size_t i = 0; i < ELEMENTSOF(errno_aliases); i++)
                if (ascii_strcaseeq(errno_aliases[i].name, s)) {
                        *ret = errno_aliases[i].value;
                        return 0;
                }

        return -EINVAL;
}

const char *errno_to_name(int err) {
        /* -INT_MIN does not exist; everything that large is unknown anyway. */
        if (err < -ERRNO_MAX || err > ERRNO_MAX || err == 0)
                return NULL;

        return strerrorname_np(abs(err));
}

int errno_suggest(const char *s, const char **ret_name) {
        const char *best = NULL;
        size_t best_d = SIZE_MAX, ls, limit;

        if (!s || !ret_name)
                return -EINVAL;

        ls = strlen(s);
        if (ls == 0)
                return -EINVAL;
        if (ls > SUGGEST_MAX_LEN)
                return -ENOENT;

        /* A suggestion only helps if it looks like a typo of what was typed:
         * allow one edit for short input and up to a third of it otherwise,
         * so that "EFOO" is not "corrected" into an unrelated name. */
        limit = ls / 3 > 1 ? ls / 3 : 1;

        /* Walking numbers upwards means ties go to the lower, and usually
         * more common, errno. */
        for (int i = 1; i <= ERRNO_MAX; i++) {
                const char *n = strerrorname_np(i);
                size_t d, ln;

                if (!n)
                        continue;

                ln = strlen(n);
                if (ln > SUGGEST_MAX_LEN)
                        continue;

                d = edit_distance(s, n);
                if (d < best_d) {
                        best_d = d;
                        best = n;
                }
        }

        if (!best || best_d > limit)
                return -ENOENT;

        *ret_name = best;
        return (int) best_d;
}
