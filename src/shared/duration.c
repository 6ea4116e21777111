/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "duration.h"

static const struct {
        const char *name;
        uint64_t usec;
} duration_units[] = {
        { "us",      1               },
        { "usec",    1               },
        { "ms",      USEC_PER_MSEC   },
        { "msec",    USEC_PER_MSEC   },
        { "s",       USEC_PER_SEC    },
        { "sec",     USEC_PER_SEC    },
        { "second",  USEC_PER_SEC    },
        { "seconds", USEC_PER_SEC    },
        { "m",       USEC_PER_MINUTE },
        { "min",     USEC_PER_MINUTE },
        { "minute",  USEC_PER_MINUTE },
        { "minutes", USEC_PER_MINUTE },
        { "h",       USEC_PER_HOUR   },
        { "hr",      USEC_PER_HOUR   },
        { "hour",    USEC_PER_HOUR   },
        { "hours",   USEC_PER_HOUR   },
        { "d",       USEC_PER_DAY    },
        { "day",     USEC_PER_DAY    },
        { "days",    USEC_PER_DAY    },
        { "w",       USEC_PER_WEEK   },
        { "week",    USEC_PER_WEEK   },
        { "weeks",   USEC_PER_WEEK   },
};

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_alpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n';
}

static const char *skip_space(const char *p) {
        while (is_space(*p))
                p++;
        return p;
}

/* Matches a whole word, so "ms" is never read as "m" followed by "s". */
static int lookup_unit(const char *p, size_t len, uint64_t *ret) {
        for (size_t i = 0; i < ELEMENTSOF(duration_units); i++)
                if (strlen(duration_units[i].name) == len &&
                    memcmp(duration_units[i].name, p, len) == 0) {
                        *ret = duration_units[i].usec;
                        return 0;
                }

        return -EINVAL;
}

static int add_u64(uint64_t a, uint64_t b, uint64_t *ret) {
        if (a > UINT64_MAX - b)
                return -ERANGE;
        *ret = a + b;
        return 0;
}

static int mul_u64(uint64_t a, uint64_t b, uint64_t *ret) {
        if (b != 0 && a > UINT64_MAX / b)
                return -ERANGE;
        *ret = a * b;
        return 0;
}

/* Parses one component at *p and advances *p past it. */
static int parse_component(const char **p, bool *ret_had_unit, uint64_t *ret_usec) {
        const char *s = *p, *frac = NULL, *word;
        uint64_t whole = 0, unit, usec;
        size_t n_frac = 0;
        bool had_unit;
        int r;

        if (!is_digit(*s))
                return -EINVAL;

        for (; is_digit(*s); s++) {
                r = mul_u64(whole, 10, &whole);
                if (r < 0)
                        return r;
                r = add_u64(whole, (uint64_t) (*s - '0'), &whole);
                if (r < 0)
                        return r;
        }

        if (*s == '.') {
                s++;
                frac = s;
                /* "5." and ".5" are refused: one spelling per value. */
                if (!is_digit(*s))
                        return -EINVAL;
                for (; is_digit(*s); s++)
                        n_frac++;
        }

        s = skip_space(s);
        word = s;
        while (is_alpha(*s))
                s++;

        had_unit = s > word;
        if (had_unit) {
                r = lookup_unit(word, (size_t) (s - word), &unit);
                if (r < 0)
                        return r;
        } else
                unit = USEC_PER_SEC;

        r = mul_u64(whole, unit, &usec);
        if (r < 0)
                return r;

        if (frac) {
                /* floor(unit * 0.d1d2...dn), exact for any number of digits
                 * and without overflow, by Horner's rule from the last digit:
                 * x = (dk * unit + x) / 10. Flooring at every step gives the
                 * same result as flooring once, and the sum stays below
                 * 10 * unit. Digits below a microsecond are thus dropped. */
                uint64_t x = 0;

                for (size_t i = n_frac; i > 0; i--)
                        x = ((uint64_t) (frac[i - 1] - '0') * unit + x) / 10;

                r = add_u64(usec, x, &usec);
                if (r < 0)
                        return r;
        }

        *p = s;
        *ret_had_unit = had_unit;
        *ret_usec = usec;
        return 0;
}

int parse_duration(const char *s, uint64_t *ret_usec) {
        uint64_t total = 0;
        unsigned n = 0;
        bool bare = false;
        const char *p;
        int r;

        if (!s || !ret_usec)
                return -EINVAL;

        p = skip_space(s);
        if (*p == '\0')
                return -EINVAL;

        /* A sign is never valid, but "-5s" deserves a clearer error than a
         * parse failure: it is a duration out of range, not a typo. */
        if (p[0] == '-' && is_digit(p[1]))
                return -ERANGE;

        while (*p != '\0') {
                uint64_t usec;
                bool had_unit;

                r = parse_component(&p, &had_unit, &usec);
                if (r < 0)
                        return r;

                /* "1h 30" is ambiguous (30s? 30min?): only a duration made
                 * of a single number may leave out the unit. */
                if (!had_unit)
                        bare = true;
                n++;
                if (bare && n > 1)
                        return -EINVAL;

                r = add_u64(total, usec, &total);
                if (r < 0)
                        return r;

                p = skip_space(p);
        }

        *ret_usec = total;
        return 0;
}

char *format_duration(char *buf, size_t n, uint64_t usec) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } table[] = {
                { "w",   USEC_PER_WEEK   },
                { "d",   USEC_PER_DAY    },
                { "h",   USEC_PER_HOUR   },
                { "min", USEC_PER_MINUTE },
                { "s",   USEC_PER_SEC    },
                { "ms",  USEC_PER_MSEC   },
                { "us",  1               },
        };
        size_t l = 0;

        if (!buf || n == 0)
                return NULL;

        if (usec == 0) {
                if (n < 2)
                        return NULL;
                strcpy(buf, "0");
                return buf;
        }

        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(table) && usec > 0; i++) {
                uint64_t v = usec / table[i].usec;
                int k;

                if (v == 0)
                        continue;
                usec %= table[i].usec;

                k = snprintf(buf + l, n - l, "%s%" PRIu64 "%s",
                             l > 0 ? " " : "", v, table[i].suffix);
                if (k < 0 || (size_t) k >= n - l)
                        return NULL;
                l += (size_t) k;
        }

        return buf;
}
