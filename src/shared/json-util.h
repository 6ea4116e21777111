/* SPDX-License-Identifier: MIT */
#pragma once

/* Strict parsing and typed, range-checked access on top of json-c, so the
 * policy loader and both wire protocols refuse the same bad input with the
 * same errors. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cleanup.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put)
#define _cleanup_json_ _cleanup_(json_object_putp)

/* Deepest nesting json_read() accepts; 64 levels parse, 65 don't. */
#define JSON_DEPTH_MAX 64

typedef enum JsonParseFlags {
        JSON_PARSE_OBJECT = 1 << 0, /* the top-level value must be an object */
} JsonParseFlags;

/* json_read() (json-reader.h) without positions or messages: exactly one
 * JSON value from buf[0..len), which need not be NUL-terminated, strict as
 * RFC 8259 and refusing duplicate keys, NUL bytes, nesting deeper than
 * JSON_DEPTH_MAX, invalid UTF-8 and integers outside [INT64_MIN,
 * UINT64_MAX] (which json-c would silently clamp). A top-level "null"
 * gives *ret == NULL unless JSON_PARSE_OBJECT is set. Returns 0 and a new
 * reference in *ret; -EBADMSG for malformed input, -ERANGE for an integer
 * out of range, -EINVAL if JSON_PARSE_OBJECT is set and the value is not an
 * object, -E2BIG if len exceeds what json-c takes (INT32_MAX), -ENOMEM. */
int json_parse_strict(const char *buf, size_t len, JsonParseFlags flags, json_object **ret);

/* The getters below look up key in the object obj, or check obj itself if
 * key is NULL (for array elements). A JSON null counts as missing, as in
 * Varlink. They return 0 and write *ret (if ret is non-NULL), or
 *   -ENOENT  key missing or null,
 *   -EINVAL  obj is not an object, or the value has the wrong type,
 *   -ERANGE  the number is outside [min, max].
 * Returned pointers are borrowed from obj. */

/* Refuses strings with embedded NUL ("\u0000"), which C would truncate. */
int json_get_string(json_object *obj, const char *key, const char **ret);

/* Integers only: 1.0 and 1e3 are doubles and -EINVAL, as are strings.
 * Negative numbers are -ERANGE. */
int json_get_u64(json_object *obj, const char *key, uint64_t min, uint64_t max, uint64_t *ret);
int json_get_i64(json_object *obj, const char *key, int64_t min, int64_t max, int64_t *ret);

/* true and false only; 0, 1 and "true" are -EINVAL. */
int json_get_bool(json_object *obj, const char *key, bool *ret);

int json_get_object(json_object *obj, const char *key, json_object **ret);
int json_get_array(json_object *obj, const char *key, json_object **ret);

/* Checks that every key of obj is in the NULL-terminated list allowed.
 * Returns 0; -EBADMSG with the first unknown key (in document order) in
 * *reterr_unknown, which borrows from obj; -EINVAL if obj is not an object.
 * (reterr_: unlike ret_ parameters, written on that failure only.) */
int json_check_keys(json_object *obj, const char *const *allowed, const char **reterr_unknown);
