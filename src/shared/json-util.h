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
