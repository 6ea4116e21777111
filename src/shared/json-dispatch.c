/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-dispatch.h"
#include "json-util.h"

static const char *const type_noun[_JSON_DISPATCH_TYPE_MAX] = {
        [JSON_DISPATCH_ANY]      = "a value",
        [JSON_DISPATCH_STRING]   = "a string",
        [JSON_DISPATCH_BOOLEAN]  = "a boolean",
        [JSON_DISPATCH_INTEGER]  = "an integer",
        [JSON_DISPATCH_UNSIGNED] = "a non-negative integer",
        [JSON_DISPATCH_NUMBER]   = "a number",
        [JSON_DISPATCH_OBJECT]   = "an object",
        [JSON_DISPATCH_ARRAY]    = "an array",
};

static bool type_matches(JsonDispatchType t, json_object *v) {
        switch (t) {
        case JSON_DISPATCH_ANY:
                return true;
        case JSON_DISPATCH_STRING:
                return json_object_is_type(v, json_type_string);
        case JSON_DISPATCH_BOOLEAN:
                return json_object_is_type(v, json_type_boolean);
        case JSON_DISPATCH_INTEGER:
        case JSON_DISPATCH_UNSIGNED:
                return json_object_is_type(v, json_type_int);
        case JSON_DISPATCH_NUMBER:
                return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
        case JSON_DISPATCH_OBJECT:
                return json_object_is_type(v, json_type_object);
        case JSON_DISPATCH_ARRAY:
                return json_object_is_type(v, json_type_array);
        default:
                return false;
        }
}

static int refuse_va(JsonDispatchError *err, int r, const char *key, bool prefix, const char *fmt, va_list ap) {
        char what[sizeof(err->message) - 72]; /* room for the quoted key */

        if (!err)
                return r;

        (void) vsnprintf(what, sizeof(what), fmt, ap);
        snprintf(err->key, sizeof(err->key), "%.64s", key ?: "");
        /* Keys come from outside: bound them, as the sentence goes back. */
        if (prefix)
                snprintf(err->message, sizeof(err->message), "'%.64s' %s", key ?: "", what);
        else
                snprintf(err->message, sizeof(err->message), "%s", what);
        return r;
}

int json_dispatch_refuse(JsonDispatchError *err, int r, const char *key, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = refuse_va(err, r, key, true, fmt, ap);
        va_end(ap);
        return r;
}

int json_dispatch_refuse_full(JsonDispatchError *err, int r, const char *key, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = refuse_va(err, r, key, false, fmt, ap);
        va_end(ap);
        return r;
}

static const JsonDispatch *table_find(const JsonDispatch table[], const char *key) {
        for (const JsonDispatch *d = table; d->key; d++)
                if (strcmp(d->key, key) == 0)
                        return d;
        return NULL;
}

int json_dispatch(json_object *o, const JsonDispatch table[], JsonDispatchFlags flags, void *base,
                  JsonDispatchError *err) {
        int r;

        if (!json_object_is_type(o, json_type_object))
                return json_dispatch_refuse_full(err, -EINVAL, NULL, "Expected a JSON object");

        /* Unknown keys first, all of them before any value is looked at:
         * a misspelt key is the likelier mistake, and the clearer report. */
        if (!(flags & JSON_DISPATCH_ALLOW_UNKNOWN)) {
                json_object_object_foreach(o, key, value) {
                        (void) value;
                        if (!table_find(table, key))
                                return json_dispatch_refuse_full(err, -EBADMSG, key, "Unknown key '%.64s'", key);
                }
        }

        for (const JsonDispatch *d = table; d->key; d++) {
                json_object *v = NULL;
                bool present;

                /* json-c keeps a JSON null as a NULL value. */
                present = json_object_object_get_ex(o, d->key, &v);
                if (present && !v && !(d->flags & JSON_DISPATCH_NULLABLE))
                        present = false;

                if (!present) {
                        if (d->flags & JSON_DISPATCH_MANDATORY)
                                return json_dispatch_refuse(err, -ENXIO, d->key, "is required");
                        continue;
                }

                if (v && !type_matches(d->type, v))
                        return json_dispatch_refuse(err, -EINVAL, d->key, "must be %s",
                                                    type_noun[d->type < _JSON_DISPATCH_TYPE_MAX ? d->type : 0]);

                r = d->parse(d->key, v, (uint8_t *) base + d->offset, d, err);
                if (r < 0)
                        return r;
        }

        return 0;
}

static bool unbounded(const JsonDispatch *d) {
        return d->min == 0 && d->max == 0;
}

int json_dispatch_string(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        char **p = dest, *copy;
        const char *s;
        size_t n;

        if (!v) {
                free(*p);
                *p = NULL;
                return 0;
        }
        /* Refuses an embedded NUL, which C would cut the string at. */
        if (json_get_string(v, NULL, &s) < 0)
                return json_dispatch_refuse(err, -EINVAL, key, "must be a string");

        n = strlen(s);
        if (!unbounded(d) && ((d->min > 0 && n < (uint64_t) d->min) || n > d->max))
                return json_dispatch_refuse(err, -EINVAL, key, "must be %lld to %llu characters",
                                            (long long) d->min, (unsigned long long) d->max);

        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        free(*p);
        *p = copy;
        return 0;
}

int json_dispatch_const_string(const char *key, json_object *v, void *dest, const JsonDispatch *d,
                               JsonDispatchError *err) {
        const char **p = dest;
        const char *s;

        if (!v) {
                *p = NULL;
                return 0;
        }
        if (json_get_string(v, NULL, &s) < 0)
                return json_dispatch_refuse(err, -EINVAL, key, "must be a string");
        *p = s;
        return 0;
}

int json_dispatch_u64(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        uint64_t *p = dest, lo, hi, u;
        int r;

        if (!v) {
                *p = 0;
                return 0;
        }
        lo = unbounded(d) || d->min < 0 ? 0 : (uint64_t) d->min;
        hi = unbounded(d) ? UINT64_MAX : d->max;

        r = json_get_u64(v, NULL, lo, hi, &u);
        if (r == -ERANGE)
                return json_dispatch_refuse(err, r, key, "must be an integer from %llu to %llu",
                                            (unsigned long long) lo, (unsigned long long) hi);
        if (r < 0)
                return json_dispatch_refuse(err, -EINVAL, key, "must be a non-negative integer");
        *p = u;
        return 0;
}

int json_dispatch_i64(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        int64_t *p = dest, lo, hi, i;
        int r;

        if (!v) {
                *p = 0;
                return 0;
        }
        lo = unbounded(d) ? INT64_MIN : d->min;
        hi = unbounded(d) || d->max > INT64_MAX ? INT64_MAX : (int64_t) d->max;

        r = json_get_i64(v, NULL, lo, hi, &i);
        if (r == -ERANGE)
                return json_dispatch_refuse(err, r, key, "must be an integer from %lld to %lld",
                                            (long long) lo, (long long) hi);
        if (r < 0)
                return json_dispatch_refuse(err, -EINVAL, key, "must be an integer");
        *p = i;
        return 0;
}

int json_dispatch_double(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        double *p = dest, x;

        if (!v) {
                *p = 0;
                return 0;
        }
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return json_dispatch_refuse(err, -EINVAL, key, "must be a number");
        x = json_object_get_double(v);
        /* The strict reader refuses NaN and Infinity, but a document
         * built in memory may hold them. */
        if (!isfinite(x))
                return json_dispatch_refuse(err, -ERANGE, key, "must be a finite number");
        *p = x;
        return 0;
}

int json_dispatch_bool(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        bool *p = dest;

        if (!v) {
                *p = false;
                return 0;
        }
        if (json_get_bool(v, NULL, p) < 0)
                return json_dispatch_refuse(err, -EINVAL, key, "must be a boolean");
        return 0;
}

int json_dispatch_borrow(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        json_object **p = dest;

        *p = v;
        return 0;
}
