/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdarg.h>

#include "cleanup.h"
#include "json-build.h"
#include "json-util.h"

int json_add(json_object *o, const char *key, json_object *v) {
        /* A NULL value would be stored as a JSON null: here it can only be
         * a constructor that ran out of memory. */
        if (!v)
                return -ENOMEM;
        if (!json_object_is_type(o, json_type_object) || !key) {
                json_object_put(v);
                return -EINVAL;
        }
        /* On failure json-c has not taken v. */
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_add_null(json_object *o, const char *key) {
        if (!json_object_is_type(o, json_type_object) || !key)
                return -EINVAL;
        return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
}

int json_add_string(json_object *o, const char *key, const char *s) {
        return s ? json_add(o, key, json_object_new_string(s)) : json_add_null(o, key);
}

int json_add_u64(json_object *o, const char *key, uint64_t u) {
        return json_add(o, key, json_object_new_uint64(u));
}

int json_add_i64(json_object *o, const char *key, int64_t i) {
        return json_add(o, key, json_object_new_int64(i));
}

int json_add_double(json_object *o, const char *key, double d) {
        return json_add(o, key, json_object_new_double(d));
}

int json_add_bool(json_object *o, const char *key, bool b) {
        return json_add(o, key, json_object_new_boolean(b));
}

int json_add_ref(json_object *o, const char *key, json_object *v) {
        return v ? json_add(o, key, json_object_get(v)) : json_add_null(o, key);
}

int json_append(json_object *a, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (!json_object_is_type(a, json_type_array)) {
                json_object_put(v);
                return -EINVAL;
        }
        if (json_object_array_add(a, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_append_string(json_object *a, const char *s) {
        if (!s)
                return -EINVAL;
        return json_append(a, json_object_new_string(s));
}

json_object *json_new_strv(const char *const *v, size_t n) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (size_t i = 0; i < n && (n != SIZE_MAX || v[i]); i++)
                if (json_append_string(a, v[i]) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

int json_add_all(json_object *dst, json_object *src) {
        int r;

        if (!json_object_is_type(src, json_type_object))
                return -EINVAL;
        json_object_object_foreach(src, k, v) {
                r = json_add_ref(dst, k, v);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Reads one pair from ap and, if add, adds it to o. Whatever the pair hands
 * over is taken in every case. Returns 0, or < 0; sets *done at
 * JSON_BUILD_END, or where nothing more can be read. */
static int build_one(json_object *o, va_list *ap, bool add, bool *done) {
        JsonBuildTag tag = va_arg(*ap, int);
        union {
                const char *s;
                uint64_t u;
                int64_t i;
                double d;
                bool b;
                json_object *v;
        } x = {};
        const char *key;
        size_t n = 0;

        if (tag == _JSON_BUILD_END) {
                *done = true;
                return 0;
        }
        if (tag == _JSON_BUILD_IF) {
                bool cond = va_arg(*ap, int);
                int r;

                r = build_one(o, ap, add && cond, done);
                /* A condition must guard a pair, not the end. */
                return *done ? -EINVAL : r;
        }

        /* First read the pair, whether it is added or not, ... */
        key = va_arg(*ap, const char *);
        switch (tag) {
        case _JSON_BUILD_STRING:     x.s = va_arg(*ap, const char *); break;
        case _JSON_BUILD_STRING_LEN: x.s = va_arg(*ap, const char *); n = va_arg(*ap, size_t); break;
        case _JSON_BUILD_U64:        x.u = va_arg(*ap, uint64_t); break;
        case _JSON_BUILD_I64:        x.i = va_arg(*ap, int64_t); break;
        case _JSON_BUILD_DOUBLE:     x.d = va_arg(*ap, double); break;
        case _JSON_BUILD_BOOL:       x.b = va_arg(*ap, int); break;
        case _JSON_BUILD_NULL:       break;
        case _JSON_BUILD_OBJECT:
        case _JSON_BUILD_REF:        x.v = va_arg(*ap, json_object *); break;
        default:
                /* The arguments can no longer be read: what follows leaks,
                 * but a wrong tag is a programming error, not input. */
                *done = true;
                return -EINVAL;
        }

        if (!add) {
                if (tag == _JSON_BUILD_OBJECT)
                        json_object_put(x.v);
                return 0;
        }

        /* ... then add it. */
        switch (tag) {
        case _JSON_BUILD_STRING:
                return json_add_string(o, key, x.s);
        case _JSON_BUILD_STRING_LEN:
                if (!x.s || n > INT32_MAX)
                        return -EINVAL;
                return json_add(o, key, json_object_new_string_len(x.s, (int) n));
        case _JSON_BUILD_U64:
                return json_add_u64(o, key, x.u);
        case _JSON_BUILD_I64:
                return json_add_i64(o, key, x.i);
        case _JSON_BUILD_DOUBLE:
                return json_add_double(o, key, x.d);
        case _JSON_BUILD_BOOL:
                return json_add_bool(o, key, x.b);
        case _JSON_BUILD_NULL:
                return json_add_null(o, key);
        case _JSON_BUILD_OBJECT:
                return json_add(o, key, x.v);
        default: /* _JSON_BUILD_REF */
                return json_add_ref(o, key, x.v);
        }
}

/* Adds the pairs to o, starting from the result r so far. After the first
 * failure, keeps reading to release what the remaining pairs hand over,
 * adding nothing. */
static int build_pairs(json_object *o, va_list *ap, int r) {
        bool done = false;

        while (!done) {
                int k = build_one(o, ap, r >= 0, &done);

                if (k < 0 && r >= 0)
                        r = k;
        }
        return r;
}

int json_add_pairs(json_object *o, ...) {
        va_list ap;
        int r;

        va_start(ap, o);
        r = build_pairs(o, &ap, json_object_is_type(o, json_type_object) ? 0 : -EINVAL);
        va_end(ap);
        return r;
}

int json_build_object(json_object **ret, ...) {
        _cleanup_json_ json_object *o = NULL;
        va_list ap;
        int r;

        o = json_object_new_object();

        va_start(ap, ret);
        /* Without an object, the pairs are still read, to release theirs. */
        r = build_pairs(o, &ap, o ? 0 : -ENOMEM);
        va_end(ap);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}
