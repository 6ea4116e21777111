/* SPDX-License-Identifier: MIT */

#include <errno.h>

#include "json-reader.h"
#include "test-util.h"

/* Reads s and expects failure r with message at line:column. */
static void check_error_at(int line_no, const char *s, size_t len, int expected,
                           unsigned line, unsigned column, const char *message) {
        json_object *o = (json_object *) 0x1;
        JsonReadError e = {};
        char b1[64], b2[64];
        int r;

        r = json_read(s, len, 0, &o, NULL, &e);
        if (r != expected)
                test_fail("line %d: json_read(\"%.*s\"): expected %s, seen %s", line_no, (int) len, s,
                          test_ret_str(b1, sizeof(b1), expected), test_ret_str(b2, sizeof(b2), r));
        if (o != (json_object *) 0x1)
                test_fail("line %d: json_read(\"%.*s\"): wrote ret on failure", line_no, (int) len, s);
        if (strcmp(e.message, message) != 0 || e.position.line != line || e.position.column != column)
                test_fail("line %d: json_read(\"%.*s\"): expected %u:%u: %s, seen %u:%u: %s", line_no,
                          (int) len, s, line, column, message, e.position.line, e.position.column, e.message);
}

#define ERROR_AT(s, expected, line, column, message) \
        check_error_at(__LINE__, s, strlen(s), expected, line, column, message)

static json_object *read_ok(const char *s, JsonPositions **ret_positions) {
        json_object *o = NULL;
        JsonReadError e = {};
        int r;

        r = json_read(s, strlen(s), 0, &o, ret_positions, &e);
        if (r != 0)
                test_fail("json_read(\"%s\"): expected 0, seen %d (%u:%u: %s)", s, r,
                          e.position.line, e.position.column, e.message);
        return o;
}

static void test_values(void) {
        _cleanup_json_ json_object *o = NULL;
        json_object *v;
        uint64_t u;
        int64_t i;
        const char *s;

        o = read_ok("{\"i\": -9223372036854775808, \"u\": 18446744073709551615, \"z\": -0,"
                    " \"d\": 1.5e1, \"s\": \"a\\u00e9\\ud83d\\ude00\\n\\/\", \"t\": true, \"f\": false,"
                    " \"n\": null, \"a\": [1, [], {}], \"nul\": \"x\\u0000y\"}", NULL);
        ASSERT_TRUE(json_object_is_type(o, json_type_object));

        ASSERT_RET(json_get_i64(o, "i", INT64_MIN, INT64_MAX, &i), 0);
        ASSERT_TRUE(i == INT64_MIN);
        ASSERT_RET(json_get_u64(o, "u", 0, UINT64_MAX, &u), 0);
        ASSERT_EQ_U64(u, UINT64_MAX);
        ASSERT_RET(json_get_i64(o, "z", INT64_MIN, INT64_MAX, &i), 0);
        ASSERT_EQ(i, 0);

        v = json_object_object_get(o, "d");
        ASSERT_TRUE(json_object_is_type(v, json_type_double));
        ASSERT_TRUE(json_object_get_double(v) == 15.0);
        /* Written back as it came, as json-c's own parser does. */
        ASSERT_STREQ(json_object_to_json_string(v), "1.5e1");

        ASSERT_RET(json_get_string(o, "s", &s), 0);
        ASSERT_STREQ(s, "a\xc3\xa9\xf0\x9f\x98\x80\n/");

        ASSERT_TRUE(json_object_get_boolean(json_object_object_get(o, "t")));
        ASSERT_FALSE(json_object_get_boolean(json_object_object_get(o, "f")));
        ASSERT_TRUE(json_object_object_get_ex(o, "n", &v));
        ASSERT_NULL(v);
        ASSERT_EQ(json_object_array_length(json_object_object_get(o, "a")), 3);

        /* Kept with its length; json_get_string() refuses it. */
        v = json_object_object_get(o, "nul");
        ASSERT_EQ(json_object_get_string_len(v), 3);
        ASSERT_RET(json_get_string(o, "nul", &s), -EINVAL);
}

static void test_top_level(void) {
        json_object *o = (json_object *) 0x1;
        const char buf[] = { '1', '2', '3', '4' };
        int64_t i;

        ASSERT_RET(json_read("null", 4, 0, &o, NULL, NULL), 0);
        ASSERT_NULL(o);

        o = (json_object *) 0x1;
        ASSERT_RET(json_read("null", 4, JSON_READ_OBJECT, &o, NULL, NULL), -EINVAL);
        ASSERT_RET(json_read("[]", 2, JSON_READ_OBJECT, &o, NULL, NULL), -EINVAL);
        ASSERT_TRUE(o == (json_object *) 0x1);

        /* The length, not a NUL, ends the text. */
        ASSERT_RET(json_read(buf, 3, 0, &o, NULL, NULL), 0);
        ASSERT_RET(json_get_i64(o, NULL, 0, 1000, &i), 0);
        ASSERT_EQ(i, 123);
        json_object_put(o);

        ASSERT_RET(json_read(NULL, 1, 0, &o, NULL, NULL), -EINVAL);
        ASSERT_RET(json_read("{}", 2, 0, NULL, NULL, NULL), -EINVAL);
        ASSERT_RET(json_read("{}", (size_t) INT32_MAX + 1, 0, &o, NULL, NULL), -E2BIG);
}

static void test_errors(void) {
        ERROR_AT("", -EBADMSG, 1, 1, "empty file");
        ERROR_AT(" \n\n", -EBADMSG, 1, 1, "empty file");
        ERROR_AT("{\"a\": 1,\n \"a\": 2}", -EBADMSG, 2, 2, "duplicate key \"a\"");
        /* Keys are compared as decoded, and shown as written. */
        ERROR_AT("{\"name\": 1, \"n\\u0061me\": 2}", -EBADMSG, 1, 13, "duplicate key \"n\\u0061me\"");
        /* Duplicates are refused at any depth, not across objects. */
        ERROR_AT("[{\"a\": 1}, {\"a\": 1, \"b\": {\"c\": 1, \"c\": 1}}]", -EBADMSG, 1, 35,
                 "duplicate key \"c\"");
        ERROR_AT("{\"a\\u0000\": 1}", -EBADMSG, 1, 2, "key \"a\\u0000\" contains a NUL character");
        ERROR_AT("{\"a\": 1,}", -EBADMSG, 1, 9, "expected a quoted key (trailing comma?)");
        ERROR_AT("[1,]", -EBADMSG, 1, 4, "expected a value (trailing comma?)");
        ERROR_AT("[1 2]", -EBADMSG, 1, 4, "expected ',' or ']' (missing comma?)");
        ERROR_AT("{\"a\" 1}", -EBADMSG, 1, 6, "expected ':' after the key");
        ERROR_AT("{\n\"a\": 01}", -EBADMSG, 2, 6, "invalid number");
        ERROR_AT("[1.]", -EBADMSG, 1, 2, "invalid number");
        ERROR_AT("['a']", -EBADMSG, 1, 2, "unexpected character '''");
        ERROR_AT("[NaN]", -EBADMSG, 1, 2, "unexpected character 'N'");
        ERROR_AT("[\xff]", -EBADMSG, 1, 2, "unexpected byte 0xff");
        ERROR_AT("[tru]", -EBADMSG, 1, 2, "unexpected character 't'");
        ERROR_AT("[18446744073709551616]", -ERANGE, 1, 2, "integer out of range");
        ERROR_AT("[-9223372036854775809]", -ERANGE, 1, 2, "integer out of range");
        ERROR_AT("\"a\tb\"", -EBADMSG, 1, 3, "control character in a string (write it as an escape)");
        ERROR_AT("\"\\x\"", -EBADMSG, 1, 2, "invalid escape sequence");
        ERROR_AT("\"\\u12g4\"", -EBADMSG, 1, 2, "invalid \\u escape");
        ERROR_AT("\"\\ud800\"", -EBADMSG, 1, 2, "invalid \\u escape (unpaired surrogate)");
        ERROR_AT("\"\\ud800\\u0041\"", -EBADMSG, 1, 2, "invalid \\u escape (unpaired surrogate)");
        ERROR_AT("\"\\udc00\"", -EBADMSG, 1, 2, "invalid \\u escape (unpaired surrogate)");
        ERROR_AT("\"\xc0\xaf\"", -EBADMSG, 1, 2, "invalid UTF-8");
        ERROR_AT("{} x", -EBADMSG, 1, 4, "trailing data after the JSON value");
        ERROR_AT("{\n", -EBADMSG, 1, 2, "unexpected end of file");
        ERROR_AT("\"abc\n", -EBADMSG, 1, 5, "control character in a string (write it as an escape)");
        ERROR_AT("\"abc", -EBADMSG, 1, 5, "unexpected end of file in a string");
        check_error_at(__LINE__, "{}\0", 3, -EBADMSG, 1, 3, "NUL byte");
        check_error_at(__LINE__, "\"a\0b\"", 5, -EBADMSG, 1, 3, "NUL byte in a string");
}

static void test_depth(void) {
        char buf[2 * (JSON_DEPTH_MAX + 1)];

        for (size_t depth = JSON_DEPTH_MAX; depth <= JSON_DEPTH_MAX + 1; depth++) {
                _cleanup_json_ json_object *o = NULL;
                JsonReadError e = {};
                int r;

                memset(buf, '[', depth);
                memset(buf + depth, ']', depth);
                r = json_read(buf, 2 * depth, 0, &o, NULL, &e);
                if (r != (depth <= JSON_DEPTH_MAX ? 0 : -EBADMSG))
                        test_fail("nesting depth %zu: seen %d", depth, r);
                if (r < 0)
                        ASSERT_STREQ(e.message, "nesting too deep");
        }
}

static void assert_position(int line_no, int r, JsonPosition p, unsigned line, unsigned column) {
        if (r != 0 || p.line != line || p.column != column)
                test_fail("line %d: expected %u:%u, seen %d, %u:%u", line_no, line, column, r, p.line, p.column);
}

#define ASSERT_POSITION(expr, p, line, column) assert_position(__LINE__, (expr), (p), line, column)

static void test_positions(void) {
        _cleanup_(json_positions_freep) JsonPositions *p = NULL;
        _cleanup_json_ json_object *o = NULL;
        json_object *rules, *rule, *errors;
        JsonPosition k = {}, v = {};

        o = read_ok("\n"
                    "  {\n"
                    "    \"rules\": [\n"
                    "      { \"name\": \"a\",\n"
                    "        \"errors\": [ \"EPERM\",\n"
                    "                    null ] },\n"
                    "      null\n"
                    "    ],\n"
                    "    \"x\": {}\n"
                    "  }\n", &p);

        ASSERT_POSITION(json_positions_root(p, &v), v, 2, 3);
        ASSERT_EQ(v.offset, 3);

        ASSERT_POSITION(json_positions_member(p, o, "rules", &k, &v), k, 3, 5);
        ASSERT_POSITION(0, v, 3, 14);
        rules = json_object_object_get(o, "rules");
        ASSERT_POSITION(json_positions_element(p, rules, 0, &v), v, 4, 7);
        /* A null has no json-c object, but it has a place. */
        ASSERT_POSITION(json_positions_element(p, rules, 1, &v), v, 7, 7);
        ASSERT_RET(json_positions_element(p, rules, 2, &v), -ENOENT);

        rule = json_object_array_get_idx(rules, 0);
        ASSERT_POSITION(json_positions_member(p, rule, "name", &k, NULL), k, 4, 9);
        ASSERT_POSITION(json_positions_member(p, rule, "errors", NULL, &v), v, 5, 19);
        errors = json_object_object_get(rule, "errors");
        ASSERT_POSITION(json_positions_element(p, errors, 0, &v), v, 5, 21);
        ASSERT_POSITION(json_positions_element(p, errors, 1, &v), v, 6, 21);

        ASSERT_POSITION(json_positions_member(p, o, "x", &k, &v), v, 9, 10);

        /* What the document does not have. */
        ASSERT_RET(json_positions_member(p, rule, "users", &k, &v), -ENOENT);
        ASSERT_RET(json_positions_member(p, rules, "name", &k, &v), -ENOENT);
        ASSERT_RET(json_positions_element(p, rule, 0, &v), -ENOENT);
        ASSERT_RET(json_positions_element(p, json_object_object_get(o, "x"), 0, &v), -ENOENT);
        ASSERT_RET(json_positions_element(NULL, rules, 0, &v), -ENOENT);
        ASSERT_RET(json_positions_root(NULL, &v), -ENOENT);
}

static void test_positions_escaped_key(void) {
        _cleanup_(json_positions_freep) JsonPositions *p = NULL;
        _cleanup_json_ json_object *o = NULL;
        JsonPosition k = {}, v = {};

        o = read_ok("{\"\\u00e9t\\u00e9\": [1], \"b\": 2}", &p);
        ASSERT_POSITION(json_positions_member(p, o, "\xc3\xa9t\xc3\xa9", &k, &v), k, 1, 2);
        ASSERT_POSITION(0, v, 1, 19);
        ASSERT_POSITION(json_positions_member(p, o, "b", &k, &v), v, 1, 29);
}

/* A document without arrays or objects has positions too. */
static void test_positions_scalar(void) {
        _cleanup_(json_positions_freep) JsonPositions *p = NULL;
        _cleanup_json_ json_object *o = NULL;
        JsonPosition v = {};

        o = read_ok("\n  42", &p);
        ASSERT_POSITION(json_positions_root(p, &v), v, 2, 3);
        ASSERT_RET(json_positions_element(p, o, 0, &v), -ENOENT);
        ASSERT_RET(json_positions_member(p, o, "a", NULL, &v), -ENOENT);
}

int main(void) {
        TEST_RUN(test_values);
        TEST_RUN(test_top_level);
        TEST_RUN(test_errors);
        TEST_RUN(test_depth);
        TEST_RUN(test_positions);
        TEST_RUN(test_positions_escaped_key);
        TEST_RUN(test_positions_scalar);
        return 0;
}
