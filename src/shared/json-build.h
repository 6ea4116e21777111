/* SPDX-License-Identifier: MIT */
#pragma once

/* Building JSON documents so that running out of memory is an error, not a
 * hole. json-c's json_object_new_*() return NULL when out of memory, and
 * json_object_object_add() and json_object_array_add() would store that
 * NULL as a JSON null, or fail and leave the value to leak; unchecked, a
 * reply goes out with a key silently null or missing.
 *
 * Every helper here takes ownership of the value it is handed, whether it
 * succeeds or not, and treats a NULL value as the out-of-memory of the
 * constructor that made it: -ENOMEM. So constructors compose:
 *
 *     r = json_build_object(&o,
 *                           JSON_PAIR_STRING("name", name),
 *                           JSON_PAIR_U64("size", size),
 *                           JSON_PAIR_IF(verbose, JSON_PAIR_OBJECT("details", details_json(x))),
 *                           JSON_BUILD_END);
 *
 * where details_json() returns a new object or NULL, like json-c's own
 * constructors. After a failure the remaining arguments are still walked,
 * to release the objects they hand over. Being arguments, they are all
 * evaluated, those of a JSON_PAIR_IF() whose condition is false too: guard
 * a dereference or a costly constructor there with the same condition. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* Adds v under key in the object o, replacing what was there; v is o's
 * from then on, or released on failure. Returns 0; -ENOMEM if v is NULL or
 * json-c cannot add it; -EINVAL if o is not an object (v released). */
int json_add(json_object *o, const char *key, json_object *v);

/* A string s, or a JSON null for s == NULL. */
int json_add_string(json_object *o, const char *key, const char *s);
int json_add_u64(json_object *o, const char *key, uint64_t u);
int json_add_i64(json_object *o, const char *key, int64_t i);
int json_add_double(json_object *o, const char *key, double d);
int json_add_bool(json_object *o, const char *key, bool b);
int json_add_null(json_object *o, const char *key);
/* A new reference to v, which the caller keeps; v == NULL: a JSON null. */
int json_add_ref(json_object *o, const char *key, json_object *v);

/* Appends v to the array a, taking it as json_add() does. */
int json_append(json_object *a, json_object *v);
int json_append_string(json_object *a, const char *s);

/* A new array of the strings v[0..n) (n == SIZE_MAX: up to a NULL), or
 * NULL when out of memory: a constructor for json_add() and JSON_PAIR_OBJECT(). */
json_object *json_new_strv(const char *const *v, size_t n);

/* Copies every key of src into dst (new references, replacing dst's). */
int json_add_all(json_object *dst, json_object *src);

/* For the macros below; not for direct use. */
typedef enum JsonBuildTag {
        _JSON_BUILD_END = 0x6a736e00,   /* unlikely as a stray int: a missing JSON_BUILD_END shows */
        _JSON_BUILD_STRING,
        _JSON_BUILD_STRING_LEN,
        _JSON_BUILD_U64,
        _JSON_BUILD_I64,
        _JSON_BUILD_DOUBLE,
        _JSON_BUILD_BOOL,
        _JSON_BUILD_NULL,
        _JSON_BUILD_OBJECT,
        _JSON_BUILD_REF,
        _JSON_BUILD_IF,
} JsonBuildTag;

/* The pairs json_build_object() and json_add_pairs() take. Each macro
 * converts its value to the type the builder reads, so any integer type
 * may be passed. */
#define JSON_PAIR_STRING(k, s)        _JSON_BUILD_STRING, (const char *) (k), (const char *) (s)   /* NULL: null */
#define JSON_PAIR_STRING_LEN(k, s, n) _JSON_BUILD_STRING_LEN, (const char *) (k), (const char *) (s), (size_t) (n)
#define JSON_PAIR_U64(k, u)           _JSON_BUILD_U64, (const char *) (k), (uint64_t) (u)
#define JSON_PAIR_I64(k, i)           _JSON_BUILD_I64, (const char *) (k), (int64_t) (i)
#define JSON_PAIR_DOUBLE(k, d)        _JSON_BUILD_DOUBLE, (const char *) (k), (double) (d)
#define JSON_PAIR_BOOL(k, b)          _JSON_BUILD_BOOL, (const char *) (k), (int) !!(b)
#define JSON_PAIR_NULL(k)             _JSON_BUILD_NULL, (const char *) (k)
/* Takes v (a new object, or NULL: -ENOMEM), as json_add() does. */
#define JSON_PAIR_OBJECT(k, v)        _JSON_BUILD_OBJECT, (const char *) (k), (json_object *) (v)
/* A new reference to v, which stays the caller's; NULL: null. */
#define JSON_PAIR_REF(k, v)           _JSON_BUILD_REF, (const char *) (k), (json_object *) (v)
/* The pair that follows is added only if cond holds (its value is still
 * taken, and released). */
#define JSON_PAIR_IF(cond, ...)       _JSON_BUILD_IF, (int) !!(cond), __VA_ARGS__
#define JSON_BUILD_END                _JSON_BUILD_END

/* A new object of the pairs, ended by JSON_BUILD_END. Returns 0 and the
 * object in *ret; -ENOMEM (everything handed over released). */
int json_build_object(json_object **ret, ...);

/* Adds the pairs, ended by JSON_BUILD_END, to the object o. On failure o
 * may hold some of them. */
int json_add_pairs(json_object *o, ...);
