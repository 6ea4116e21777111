/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errno-name.h"
#include "spec.h"
#include "string-util.h"

FailSpec *fail_spec_free(FailSpec *s) {
        if (!s)
                return NULL;
        free(s->function);
        for (size_t i = 0; i < s->n_callers; i++)
                free(s->callers[i]);
        free(s->callers);
        arg_filter_args_done(&s->filters);
        free(s->device);
        free(s);
        return NULL;
}

bool function_name_is_valid(const char *s) {
        size_t n;

        if (!s)
                return false;
        n = strlen(s);
        if (n < 1 || n > FAIL_SPEC_FUNCTION_MAX)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.'))
                        return false;
        return true;
}

int parse_percent(const char *s, double *ret) {
        char *end;
        double v;

        if (!s || !*s || *s == ' ' || *s == '+' || *s == '-')
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s)
                return -EINVAL;
        if (*end == '%')
                end++;
        if (*end != '\0' || !isfinite(v) || v <= 0 || v > 100)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* A decimal count: digits only, no sign, no blanks, fits in 64 bits. */
static int parse_count(const char *s, uint64_t *ret) {
        uint64_t v = 0;

        if (!s || !*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        *ret = v;
        return 0;
}

void arg_filter_args_done(ArgFilterArgs *a) {
        free(a->cache);
        *a = (ArgFilterArgs) {};
}

static const char *const arg_filter_keys[] = {
        "ignore-gfp-wait", "ignore-gfp-highmem", "min-order", "min-size", "cache", NULL,
};

bool arg_filter_is_key(const char *key) {
        for (const char *const *k = arg_filter_keys; *k; k++)
                if (strcmp(*k, key) == 0)
                        return true;
        return false;
}

int arg_filter_args_set(ArgFilterArgs *a, const char *key, const char *value, char **reterr_message) {
        bool flag = strncmp(key, "ignore-", 7) == 0;
        uint64_t n;

        if (flag && value)
                return strprintf(reterr_message, "'%s' takes no value", key) < 0 ? -ENOMEM : -EINVAL;
        if (!flag && (!value || !*value))
                return strprintf(reterr_message, "'%s' needs a value", key) < 0 ? -ENOMEM : -EINVAL;
        if (strcmp(key, "ignore-gfp-wait") == 0 || strcmp(key, "ignore-gfp-highmem") == 0) {
                bool *b = key[11] == 'w' ? &a->ignore_gfp_wait : &a->ignore_gfp_highmem;

                if (*b)
                        return strprintf(reterr_message, "'%s' given twice", key) < 0 ? -ENOMEM : -EINVAL;
                *b = true;
                return 0;
        }
        if (strcmp(key, "min-order") == 0 || strcmp(key, "min-size") == 0) {
                bool order = key[4] == 'o', *has = order ? &a->has_min_order : &a->has_min_size;

                if (*has)
                        return strprintf(reterr_message, "'%s' given twice", key) < 0 ? -ENOMEM : -EINVAL;
                if (parse_count(value, &n) < 0 || (order ? n > 63 : n < 1 || n > UINT32_MAX))
                        return strprintf(reterr_message, order ? "min-order=%s is not an order from 0 to 63" :
                                         "min-size=%s is not a size in bytes from 1 to 4294967295", value) < 0 ?
                                -ENOMEM : -EINVAL;
                *(order ? &a->min_order : &a->min_size) = n;
                *has = true;
                return 0;
        }
        if (strcmp(key, "cache") == 0) {
                if (a->cache)
                        return strprintf(reterr_message, "'cache' given twice") < 0 ? -ENOMEM : -EINVAL;
                a->cache = strdup(value);
                return a->cache ? 0 : -ENOMEM;
        }
        return strprintf(reterr_message, "'%s' is not an argument filter", key) < 0 ? -ENOMEM : -EINVAL;
}

/* Writes "invalid --fail 'SPEC': <fmt...>" to *reterr_message; returns
 * -EINVAL, or -ENOMEM. fmt must be a literal. */
#define spec_error(reterr_message, spec, fmt, ...)                                                      \
        (strprintf((reterr_message), "invalid --fail '%s': " fmt, (spec), ##__VA_ARGS__) < 0 ? -ENOMEM : -EINVAL)

int fail_spec_parse(const char *s, FailSpec **ret, char **reterr_message) {
        _cleanup_(fail_spec_freep) FailSpec *spec = NULL;
        _cleanup_free_ char *copy = NULL;
        char *head, *rest, *colon, *item;
        bool seen_every = false, seen_times = false, seen_probability = false;
        int r;

        if (!s || !*s)
                return spec_error(reterr_message, s ?: "", "empty specification");

        copy = strdup(s);
        spec = calloc(1, sizeof(*spec));
        if (!copy || !spec)
                return -ENOMEM;

        head = copy;
        rest = strchr(copy, ',');
        if (rest)
                *rest++ = '\0';

        colon = strchr(head, ':');
        if (colon) {
                *colon++ = '\0';
                if (!*colon)
                        return spec_error(reterr_message, s, "empty error after ':'");
                r = errno_from_name(colon, &spec->error);
                if (r < 0) {
                        const char *near = NULL;

                        if (errno_suggest(colon, &near) >= 0 && near)
                                return spec_error(reterr_message, s, "unknown errno '%s' (did you mean %s?)", colon, near);
                        return spec_error(reterr_message, s, "unknown errno '%s'", colon);
                }
        }
        if (!*head)
                return spec_error(reterr_message, s, "the function name is missing");
        if (!function_name_is_valid(head))
                return spec_error(reterr_message, s,
                                  "'%s' is not a kernel function name (1 to %d of A-Z a-z 0-9 _ .)",
                                  head, FAIL_SPEC_FUNCTION_MAX);
        spec->function = strdup(head);
        if (!spec->function)
                return -ENOMEM;

        while (rest) {
                char *value;

                item = rest;
                rest = strchr(item, ',');
                if (rest)
                        *rest++ = '\0';
                if (!*item)
                        return spec_error(reterr_message, s, "empty field");
                value = strchr(item, '=');
                if (value)
                        *value++ = '\0';
                if (arg_filter_is_key(item)) {
                        _cleanup_free_ char *msg = NULL;

                        r = arg_filter_args_set(&spec->filters, item, value, &msg);
                        if (r == -EINVAL)
                                return spec_error(reterr_message, s, "%s", msg);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!value)
                        return spec_error(reterr_message, s, "'%s' is not KEY=VALUE", item);
                if (!*value)
                        return spec_error(reterr_message, s, "'%s=' needs a value", item);

                if (strcmp(item, "after") == 0) {
                        if (spec->has_after)
                                return spec_error(reterr_message, s, "'after' given twice");
                        if (parse_count(value, &spec->after) < 0)
                                return spec_error(reterr_message, s, "after=%s is not a count (0 or more)", value);
                        spec->has_after = true;
                } else if (strcmp(item, "every") == 0 || strcmp(item, "times") == 0) {
                        bool every = item[0] == 'e';
                        bool *seen = every ? &seen_every : &seen_times;
                        uint64_t *v = every ? &spec->every : &spec->times;

                        if (*seen)
                                return spec_error(reterr_message, s, "'%s' given twice", item);
                        if (parse_count(value, v) < 0 || *v == 0)
                                return spec_error(reterr_message, s, "%s=%s is not a count of 1 or more", item, value);
                        *seen = true;
                } else if (strcmp(item, "probability") == 0) {
                        if (seen_probability)
                                return spec_error(reterr_message, s, "'probability' given twice");
                        if (parse_percent(value, &spec->probability) < 0)
                                return spec_error(reterr_message, s,
                                                  "probability=%s is not a percentage above 0 and at most 100", value);
                        seen_probability = true;
                } else if (strcmp(item, "kernel-log") == 0) {
                        uint64_t v;

                        if (parse_count(value, &v) < 0 || v > 2)
                                return spec_error(reterr_message, s, "kernel-log=%s is not 0, 1 or 2", value);
                        spec->kernel_log = (unsigned) v;
                } else if (strcmp(item, "device") == 0) {
                        if (spec->device)
                                return spec_error(reterr_message, s, "'device' given twice");
                        spec->device = strdup(value);
                        if (!spec->device)
                                return -ENOMEM;
                } else if (strcmp(item, "caller") == 0) {
                        char **n;

                        if (spec->n_callers >= FAIL_SPEC_CALLERS_MAX)
                                return spec_error(reterr_message, s, "at most %d callers", FAIL_SPEC_CALLERS_MAX);
                        if (!function_name_is_valid(value))
                                return spec_error(reterr_message, s, "caller '%s' is not a kernel function name", value);
                        n = realloc(spec->callers, (spec->n_callers + 2) * sizeof(char *));
                        if (!n)
                                return -ENOMEM;
                        spec->callers = n;
                        spec->callers[spec->n_callers] = strdup(value);
                        if (!spec->callers[spec->n_callers])
                                return -ENOMEM;
                        spec->callers[++spec->n_callers] = NULL;
                } else
                        return spec_error(reterr_message, s,
                                          "unknown key '%s' (after, every, times, probability, caller, ignore-gfp-wait, "
                                          "ignore-gfp-highmem, min-order, min-size, cache, kernel-log, device)", item);
        }

        *ret = TAKE_PTR(spec);
        return 0;
}
