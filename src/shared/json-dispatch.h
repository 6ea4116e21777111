/* SPDX-License-Identifier: MIT */
#pragma once

/* Declarative parsing of JSON objects: a table says, per key, what type
 * its value must have, which parser turns it into C, where in the caller's
 * struct the result goes, and whether the key is required. json_dispatch()
 * applies a table to an object, so a request is described once instead of
 * being read by a hand-written call per key, and every refusal (an unknown
 * key, a wrong type, a missing key, a value out of range) names the key in
 * the same words, whichever parser found it.
 *
 *     static const JsonDispatch table[] = {
 *             { "name", JSON_DISPATCH_STRING,   json_dispatch_string, offsetof(Foo, name), JSON_DISPATCH_MANDATORY },
 *             { "size", JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    offsetof(Foo, size), 0, .min = 1, .max = 4096 },
 *             {}
 *     };
 *     r = json_dispatch(o, table, 0, &foo, &err);
 *
 * Values a parser allocates (json_dispatch_string()) stay in the struct
 * on failure too: the caller frees the struct either way. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cleanup.h"

/* What a key's value must be, checked before its parser runs. Each has the
 * noun the refusal uses: "'key' must be <noun>". */
typedef enum JsonDispatchType {
        JSON_DISPATCH_ANY,              /* anything: the parser checks, and says what it wants */
        JSON_DISPATCH_STRING,           /* "a string" */
        JSON_DISPATCH_BOOLEAN,          /* "a boolean" */
        JSON_DISPATCH_INTEGER,          /* "an integer" (1.0 is not) */
        JSON_DISPATCH_UNSIGNED,         /* "a non-negative integer"; a negative one is out of range */
        JSON_DISPATCH_NUMBER,           /* "a number": an integer or not */
        JSON_DISPATCH_OBJECT,           /* "an object" */
        JSON_DISPATCH_ARRAY,            /* "an array" */
        _JSON_DISPATCH_TYPE_MAX,
} JsonDispatchType;

typedef enum JsonDispatchFlags {
        /* Per entry: */
        JSON_DISPATCH_MANDATORY     = 1 << 0,   /* absent (or null) is "'key' is required" */
        JSON_DISPATCH_NULLABLE      = 1 << 1,   /* an explicit null reaches the parser (as v == NULL),
                                                 * which resets the destination; without this flag a
                                                 * null counts as absent, as Varlink says */
        /* Per call, for json_dispatch()'s flags: */
        JSON_DISPATCH_ALLOW_UNKNOWN = 1 << 8,   /* keys not in the table are skipped, not refused */
} JsonDispatchFlags;

/* Why json_dispatch() refused: the key at fault and a sentence that names
 * it ("'times' must be an integer from 1 to 9"), ready for the requester. */
typedef struct JsonDispatchError {
        char key[65];                   /* at most 64 bytes of the key; "" if none */
        char message[320];
} JsonDispatchError;

typedef struct JsonDispatch JsonDispatch;

/* Parses v (NULL: a JSON null, for JSON_DISPATCH_NULLABLE entries) into
 * dest, the caller's struct plus the entry's offset. Returns >= 0, or a
 * negative errno with err filled in (json_dispatch_refuse()). */
typedef int (*JsonDispatchFn)(const char *key, json_object *v, void *dest, const JsonDispatch *entry,
                              JsonDispatchError *err);

struct JsonDispatch {
        const char *key;                /* NULL ends the table */
        JsonDispatchType type;
        JsonDispatchFn parse;
        size_t offset;                  /* of the destination in the caller's struct */
        JsonDispatchFlags flags;
        /* For the integer parsers, the range; for json_dispatch_string(),
         * the length in bytes. Both 0: no bound beyond the type's. */
        int64_t min;
        uint64_t max;
};

/* Applies table to the object o, writing into the struct at base. Checks,
 * in this order: o is an object; every key of o is in the table (in
 * document order; unless JSON_DISPATCH_ALLOW_UNKNOWN); then per entry, in
 * table order: a mandatory key is there, the value has the entry's type,
 * the parser accepts it. Returns 0, or on the first refusal a negative
 * errno with err filled in:
 *   -EBADMSG  a key the table does not know ("Unknown key 'k'")
 *   -ENXIO    a mandatory key absent or null ("'k' is required")
 *   -EINVAL   o is not an object, a value of the wrong type, a string of
 *             the wrong length
 *   -ERANGE   a number out of the entry's range
 *   -ENOMEM, or what a parser of the caller's returns. */
int json_dispatch(json_object *o, const JsonDispatch table[], JsonDispatchFlags flags, void *base,
                  JsonDispatchError *err);

/* For parsers: records "'key' <what>" in err and returns r. */
int json_dispatch_refuse(JsonDispatchError *err, int r, const char *key, const char *fmt, ...) _printf_(4, 5);
/* The same with a sentence of the parser's own, which should name the key. */
int json_dispatch_refuse_full(JsonDispatchError *err, int r, const char *key, const char *fmt, ...) _printf_(4, 5);

/* The parsers for the common cases. Integer ranges come from the entry's
 * min and max; a value outside is "'k' must be an integer from MIN to MAX".
 * A null (JSON_DISPATCH_NULLABLE) resets the destination: NULL, 0, false. */
int json_dispatch_string(const char *key, json_object *v, void *dest, const JsonDispatch *entry,
                         JsonDispatchError *err);          /* char **: a copy, the old one freed;
                                                            * no NUL inside; length in [min, max] */
int json_dispatch_const_string(const char *key, json_object *v, void *dest, const JsonDispatch *entry,
                               JsonDispatchError *err);    /* const char **: borrowed from the object */
int json_dispatch_u64(const char *key, json_object *v, void *dest, const JsonDispatch *entry,
                      JsonDispatchError *err);             /* uint64_t * */
int json_dispatch_i64(const char *key, json_object *v, void *dest, const JsonDispatch *entry,
                      JsonDispatchError *err);             /* int64_t * */
int json_dispatch_double(const char *key, json_object *v, void *dest, const JsonDispatch *entry,
                         JsonDispatchError *err);          /* double *, finite */
int json_dispatch_bool(const char *key, json_object *v, void *dest, const JsonDispatch *entry,
                       JsonDispatchError *err);            /* bool * */
int json_dispatch_borrow(const char *key, json_object *v, void *dest, const JsonDispatch *entry,
                         JsonDispatchError *err);          /* json_object **: borrowed, any type */
