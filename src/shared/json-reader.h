/* SPDX-License-Identifier: MIT */
#pragma once

/* The one strict JSON reader for outside input: text in, json-c objects
 * out, in one pass. It takes RFC 8259 and nothing else: no trailing data,
 * no NUL bytes, no comments, single quotes, NaN or Infinity, no raw
 * control characters, invalid UTF-8 or unpaired surrogates in strings,
 * nesting at most JSON_DEPTH_MAX deep, and integers that fit in
 * [INT64_MIN, UINT64_MAX] (json-c would clamp the others silently).
 *
 * Unlike json-c it refuses duplicate keys: json-c keeps the last one, and a
 * policy file or a call must not mean something other than what it seems
 * to say. And it can record where each value and key stands, so that a
 * caller that finds something wrong in the objects can say where in the
 * text it is. Nothing here logs. */

#include <stddef.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "json-util.h"

typedef enum JsonReadFlags {
        JSON_READ_OBJECT = 1 << 0, /* the top-level value must be an object */
} JsonReadFlags;

typedef struct JsonPosition {
        size_t offset;          /* in bytes from the start of the text */
        unsigned line;          /* 1-based */
        unsigned column;        /* 1-based, in bytes */
} JsonPosition;

/* Why and where the text is malformed. An error at the very end of a text
 * that ends in a newline is placed on the last line, not on the empty one
 * after it: that is where an editor shows the problem. */
typedef struct JsonReadError {
        char message[128];      /* e.g. "duplicate key \"name\"", without position */
        JsonPosition position;
} JsonReadError;

/* Where the values and keys of one document stand. */
typedef struct JsonPositions JsonPositions;

JsonPositions *json_positions_free(JsonPositions *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(JsonPositions *, json_positions_free)

/* Parses exactly one JSON value from text[0..len), which need not be
 * NUL-terminated. A top-level null gives *ret == NULL, unless
 * JSON_READ_OBJECT is set. With ret_positions, records where each value
 * and key stands (for the lookups below, which work on the objects as
 * read: keys added or removed later are not known to them).
 *
 * Returns 0 and a new reference in *ret (and *ret_positions if asked);
 * -EBADMSG for malformed text and -ERANGE for an integer out of range,
 * both with *reterr (optional) filled in; -EINVAL for bad arguments, or if
 * JSON_READ_OBJECT is set and the value is not an object; -E2BIG if len
 * exceeds what json-c can hold (INT32_MAX); -ENOMEM. */
int json_read(const char *text, size_t len, JsonReadFlags flags,
              json_object **ret, JsonPositions **ret_positions, JsonReadError *reterr);

typedef enum JsonParseFlags {
        JSON_PARSE_OBJECT = 1 << 0, /* the top-level value must be an object */
} JsonParseFlags;

/* json_read() without positions or messages: exactly one
 * JSON value from buf[0..len), which need not be NUL-terminated, strict as
 * RFC 8259 and refusing duplicate keys, NUL bytes, nesting deeper than
 * JSON_DEPTH_MAX, invalid UTF-8 and integers outside [INT64_MIN,
 * UINT64_MAX] (which json-c would silently clamp). A top-level "null"
 * gives *ret == NULL unless JSON_PARSE_OBJECT is set. Returns 0 and a new
 * reference in *ret; -EBADMSG for malformed input, -ERANGE for an integer
 * out of range, -EINVAL if JSON_PARSE_OBJECT is set and the value is not an
 * object, -E2BIG if len exceeds what json-c takes (INT32_MAX), -ENOMEM. */
int json_parse_strict(const char *buf, size_t len, JsonParseFlags flags, json_object **ret);

/* These return 0 and the position, or -ENOENT if the document has no such
 * thing (or obj is not a container of it). */

/* The top-level value. */
int json_positions_root(const JsonPositions *p, JsonPosition *ret);

/* Element index of array. */
int json_positions_element(const JsonPositions *p, json_object *array, size_t index, JsonPosition *ret);

/* The member key of object: where its key (the opening quote) and its value
 * stand. Either output may be NULL. */
int json_positions_member(const JsonPositions *p, json_object *object, const char *key,
                          JsonPosition *ret_key, JsonPosition *ret_value);
