/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "json-util.h"

/* Looks up key, or takes obj itself for key == NULL, treating null as
 * missing and checking the type. */
static int json_get_typed(json_object *obj, const char *key, json_type type, json_object **ret) {
        json_object *v;

        if (key) {
                if (!json_object_is_type(obj, json_type_object))
                        return -EINVAL;
                if (!json_object_object_get_ex(obj, key, &v))
                        return -ENOENT;
        } else
                v = obj;

        /* json-c represents null as a NULL pointer. */
        if (!v)
                return -ENOENT;
        if (!json_object_is_type(v, type))
                return -EINVAL;

        *ret = v;
        return 0;
}

int json_get_string(json_object *obj, const char *key, const char **ret) {
        json_object *v;
        const char *s;
        int r;

        r = json_get_typed(obj, key, json_type_string, &v);
        if (r < 0)
                return r;

        s = json_object_get_string(v);
        if (strlen(s) != (size_t) json_object_get_string_len(v))
                return -EINVAL;

        if (ret)
                *ret = s;
        return 0;
}

int json_get_u64(json_object *obj, const char *key, uint64_t min, uint64_t max, uint64_t *ret) {
        json_object *v;
        uint64_t u;
        int r;

        r = json_get_typed(obj, key, json_type_int, &v);
        if (r < 0)
                return r;

        /* json-c keeps an int as int64 or, above INT64_MAX, as uint64, and
         * each getter clamps the other: a negative int64 reads as uint64 0,
         * so the sign has to be checked through the int64 getter. */
        if (json_object_get_int64(v) < 0)
                return -ERANGE;

        u = json_object_get_uint64(v);
        if (u < min || u > max)
                return -ERANGE;

        if (ret)
                *ret = u;
        return 0;
}

int json_get_i64(json_object *obj, const char *key, int64_t min, int64_t max, int64_t *ret) {
        json_object *v;
        int64_t i;
        int r;

        r = json_get_typed(obj, key, json_type_int, &v);
        if (r < 0)
                return r;

        /* A uint64 above INT64_MAX reads as INT64_MAX through the int64
         * getter; only the uint64 getter tells them apart. */
        i = json_object_get_int64(v);
        if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t) INT64_MAX)
                return -ERANGE;
        if (i < min || i > max)
                return -ERANGE;

        if (ret)
                *ret = i;
        return 0;
}

int json_get_bool(json_object *obj, const char *key, bool *ret) {
        json_object *v;
        int r;

        r = json_get_typed(obj, key, json_type_boolean, &v);
        if (r < 0)
                return r;

        if (ret)
                *ret = json_object_get_boolean(v);
        return 0;
}

int json_get_object(json_object *obj, const char *key, json_object **ret) {
        json_object *v;
        int r;

        r = json_get_typed(obj, key, json_type_object, &v);
        if (r < 0)
                return r;

        if (ret)
                *ret = v;
        return 0;
}

int json_get_array(json_object *obj, const char *key, json_object **ret) {
        json_object *v;
        int r;

        r = json_get_typed(obj, key, json_type_array, &v);
        if (r < 0)
                return r;

        if (ret)
                *ret = v;
        return 0;
}

int json_check_keys(json_object *obj, const char *const *allowed, const char **reterr_unknown) {
        if (!json_object_is_type(obj, json_type_object))
                return -EINVAL;

        json_object_object_foreach(obj, key, value) {
                bool found = false;

                (void) value;

                for (const char *const *a = allowed; a && *a; a++)
                        if (strcmp(*a, key) == 0) {
                                found = true;
                                break;
                        }

                if (!found) {
                        if (reterr_unknown)
                                *reterr_unknown = key;
                        return -EBADMSG;
                }
        }

        return 0;
}
