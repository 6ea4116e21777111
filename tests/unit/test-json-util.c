/* SPDX-License-Identifier: MIT */

#include <errno.h>

#include "json-reader.h"
#include "json-util.h"
#include "test-util.h"

static int parse(const char *s, JsonParseFlags flags, json_object **ret) {
        return json_parse_strict(s, strlen(s), flags, ret);
}

static void check_parse_fails(const char *s, size_t len, JsonParseFlags flags, int expected) {
        json_object *o = (json_object *) 0x1;
        char b1[64], b2[64];
        int r;

        r = json_parse_strict(s, len, flags, &o);
        if (r != expected)
                test_fail("json_parse_strict(\"%.*s\"): expected %s, seen %s", (int) len, s,
                          test_ret_str(b1, sizeof(b1), expected), test_ret_str(b2, sizeof(b2), r));
        if (o != (json_object *) 0x1)
                test_fail("json_parse_strict(\"%.*s\"): wrote ret on failure", (int) len, s);
}

#define PARSE_FAILS(s, expected) check_parse_fails(s, strlen(s), 0, expected)

static void test_parse_valid(void) {
        static const char *const good[] = {
                "{}", "[]", "0", "-0", "12", "-12", "1.5", "1e3", "-1.5E-3", "0.5e+10",
                "-0.0e-0", "[0,-0,10]", "\"x\"",
                "true", "false", "{\"a\":[1,2,{\"b\":null}]}", " \t\r\n{} \n",
                "\"\\u00e9\\n\\\"\"", "\"é\"", "\"\\u0000\"",
                "18446744073709551615", "-9223372036854775808",
                "[\"it's\", \"NaN\", \"Infinity\", \"'\"]",
        };

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                _cleanup_json_ json_object *o = NULL;
                int r = parse(good[i], 0, &o);

                if (r != 0)
                        test_fail("json_parse_strict(\"%s\"): expected 0, seen %d", good[i], r);
        }
}

static void test_parse_null(void) {
        json_object *o = (json_object *) 0x1;

        ASSERT_RET(parse("null", 0, &o), 0);
        ASSERT_NULL(o);
        check_parse_fails("null", 4, JSON_PARSE_OBJECT, -EINVAL);
}

static void test_parse_not_terminated(void) {
        _cleanup_json_ json_object *o = NULL;
        /* The length, not a NUL, ends the input; "123" must not become
         * "1234" nor be left incomplete. */
        const char buf[] = { '1', '2', '3', '4' };
        uint64_t u;

        ASSERT_RET(json_parse_strict(buf, 3, 0, &o), 0);
        ASSERT_RET(json_get_u64(o, NULL, 0, UINT64_MAX, &u), 0);
        ASSERT_EQ_U64(u, 123);
}

static void test_parse_malformed(void) {
        static const char *const bad[] = {
                "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\"}", "{a:1}", "01", "1.",
                ".5", "+1", "nan", "tRue", "nul", "/* c */ 1", "1 // c", "{} x",
                "{}{}", "1 2", "[1] [2]", "\"abc", "\"\\x41\"",
                /* Invalid UTF-8: stray byte, overlong, surrogate, truncated. */
                "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xe2\x82\"",
                "{\"\xc3\":1}",
                /* json-c's strict mode lets these through; we don't. */
                "{'a':1}", "['a']", "1.", "[1.]", "1.e5", "00", "-01", "[-0.e1]",
                "NaN", "-NaN", "Infinity", "-Infinity", "[Infinity]",
                "\"a\tb\"", "\"a\nb\"", "\"\x01\"", "{\"a\":\"\x1b[31m\"}",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                check_parse_fails(bad[i], strlen(bad[i]), 0, -EBADMSG);

        /* NUL bytes, inside and after a value. */
        check_parse_fails("{}\0", 3, 0, -EBADMSG);
        check_parse_fails("{} \0 ", 5, 0, -EBADMSG);
        check_parse_fails("\"a\0b\"", 5, 0, -EBADMSG);
        check_parse_fails("[1,\0]", 5, 0, -EBADMSG);

        check_parse_fails(NULL, 0, 0, -EBADMSG);
        check_parse_fails(NULL, 1, 0, -EINVAL);
        check_parse_fails("{}", (size_t) INT32_MAX + 1, 0, -E2BIG);
        ASSERT_RET(json_parse_strict("{}", 2, 0, NULL), -EINVAL);
}

static void test_parse_integer_range(void) {
        /* json-c would clamp these to UINT64_MAX and INT64_MIN. */
        PARSE_FAILS("18446744073709551616", -ERANGE);
        PARSE_FAILS("99999999999999999999", -ERANGE);
        PARSE_FAILS("100000000000000000000", -ERANGE);
        PARSE_FAILS("-9223372036854775809", -ERANGE);
        PARSE_FAILS("-10000000000000000000", -ERANGE);
        PARSE_FAILS("{\"a\":[1,18446744073709551616]}", -ERANGE);
        /* Doubles may be large; they are not clamped. */
        {
                _cleanup_json_ json_object *o = NULL;

                ASSERT_RET(parse("1e400", 0, &o), 0);
        }
        {
                _cleanup_json_ json_object *o = NULL;

                ASSERT_RET(parse("18446744073709551616.0", 0, &o), 0);
        }
}

static void test_parse_depth(void) {
        char buf[2 * (JSON_DEPTH_MAX + 1)];

        for (size_t depth = JSON_DEPTH_MAX; depth <= JSON_DEPTH_MAX + 1; depth++) {
                _cleanup_json_ json_object *o = NULL;
                int r;

                memset(buf, '[', depth);
                memset(buf + depth, ']', depth);
                r = json_parse_strict(buf, 2 * depth, 0, &o);
                if (r != (depth <= JSON_DEPTH_MAX ? 0 : -EBADMSG))
                        test_fail("nesting depth %zu: seen %d", depth, r);
        }
}

static void test_parse_object_flag(void) {
        _cleanup_json_ json_object *o = NULL;

        check_parse_fails("[]", 2, JSON_PARSE_OBJECT, -EINVAL);
        check_parse_fails("1", 1, JSON_PARSE_OBJECT, -EINVAL);
        check_parse_fails("\"{}\"", 4, JSON_PARSE_OBJECT, -EINVAL);
        /* Malformed stays malformed, whatever the flag. */
        check_parse_fails("[", 1, JSON_PARSE_OBJECT, -EBADMSG);
        ASSERT_RET(parse(" {\"a\": 1} ", JSON_PARSE_OBJECT, &o), 0);
        ASSERT_TRUE(json_object_is_type(o, json_type_object));
}

static const char doc[] =
        "{"
        "  \"str\": \"hello\","
        "  \"empty\": \"\","
        "  \"nul\": \"a\\u0000b\","
        "  \"zero\": 0,"
        "  \"small\": 42,"
        "  \"neg\": -5,"
        "  \"big\": 18446744073709551615,"
        "  \"above_i64\": 9223372036854775808,"
        "  \"i64max\": 9223372036854775807,"
        "  \"i64min\": -9223372036854775808,"
        "  \"dbl\": 1.0,"
        "  \"exp\": 1e3,"
        "  \"numstr\": \"12\","
        "  \"yes\": true,"
        "  \"no\": false,"
        "  \"null\": null,"
        "  \"obj\": { \"x\": 1 },"
        "  \"arr\": [ 1, \"two\" ]"
        "}";

static void test_get_string(void) {
        _cleanup_json_ json_object *o = NULL;
        const char *s = "untouched";

        ASSERT_RET(parse(doc, JSON_PARSE_OBJECT, &o), 0);

        ASSERT_RET(json_get_string(o, "str", &s), 0);
        ASSERT_STREQ(s, "hello");
        ASSERT_RET(json_get_string(o, "empty", &s), 0);
        ASSERT_STREQ(s, "");
        ASSERT_RET(json_get_string(o, "str", NULL), 0);

        s = "untouched";
        ASSERT_RET(json_get_string(o, "missing", &s), -ENOENT);
        ASSERT_RET(json_get_string(o, "null", &s), -ENOENT);
        ASSERT_RET(json_get_string(o, "small", &s), -EINVAL);
        ASSERT_RET(json_get_string(o, "yes", &s), -EINVAL);
        ASSERT_RET(json_get_string(o, "obj", &s), -EINVAL);
        ASSERT_RET(json_get_string(o, "nul", &s), -EINVAL);
        ASSERT_STREQ(s, "untouched");

        /* Not an object at all. */
        ASSERT_RET(json_get_string(json_object_object_get(o, "arr"), "x", &s), -EINVAL);
        ASSERT_RET(json_get_string(NULL, "x", &s), -EINVAL);
        ASSERT_RET(json_get_string(NULL, NULL, &s), -ENOENT);
        ASSERT_RET(json_get_string(json_object_array_get_idx(json_object_object_get(o, "arr"), 1),
                                   NULL, &s), 0);
        ASSERT_STREQ(s, "two");
}

static void test_get_u64(void) {
        _cleanup_json_ json_object *o = NULL;
        uint64_t u = 4242;

        ASSERT_RET(parse(doc, JSON_PARSE_OBJECT, &o), 0);

        ASSERT_RET(json_get_u64(o, "small", 0, UINT64_MAX, &u), 0);
        ASSERT_EQ_U64(u, 42);
        ASSERT_RET(json_get_u64(o, "zero", 0, 10, &u), 0);
        ASSERT_EQ_U64(u, 0);
        ASSERT_RET(json_get_u64(o, "big", 0, UINT64_MAX, &u), 0);
        ASSERT_EQ_U64(u, UINT64_MAX);
        ASSERT_RET(json_get_u64(o, "above_i64", 0, UINT64_MAX, &u), 0);
        ASSERT_EQ_U64(u, UINT64_C(9223372036854775808));
        ASSERT_RET(json_get_u64(o, "small", 42, 42, &u), 0);
        ASSERT_EQ_U64(u, 42);

        u = 4242;
        ASSERT_RET(json_get_u64(o, "small", 43, 100, &u), -ERANGE);
        ASSERT_RET(json_get_u64(o, "small", 0, 41, &u), -ERANGE);
        ASSERT_RET(json_get_u64(o, "big", 0, UINT64_MAX - 1, &u), -ERANGE);
        ASSERT_RET(json_get_u64(o, "neg", 0, UINT64_MAX, &u), -ERANGE);
        ASSERT_RET(json_get_u64(o, "i64min", 0, UINT64_MAX, &u), -ERANGE);
        ASSERT_RET(json_get_u64(o, "dbl", 0, UINT64_MAX, &u), -EINVAL);
        ASSERT_RET(json_get_u64(o, "exp", 0, UINT64_MAX, &u), -EINVAL);
        ASSERT_RET(json_get_u64(o, "numstr", 0, UINT64_MAX, &u), -EINVAL);
        ASSERT_RET(json_get_u64(o, "yes", 0, UINT64_MAX, &u), -EINVAL);
        ASSERT_RET(json_get_u64(o, "missing", 0, UINT64_MAX, &u), -ENOENT);
        ASSERT_RET(json_get_u64(o, "null", 0, UINT64_MAX, &u), -ENOENT);
        ASSERT_EQ_U64(u, 4242);
}

static void test_get_i64(void) {
        _cleanup_json_ json_object *o = NULL;
        int64_t i = 4242;

        ASSERT_RET(parse(doc, JSON_PARSE_OBJECT, &o), 0);

        ASSERT_RET(json_get_i64(o, "neg", INT64_MIN, INT64_MAX, &i), 0);
        ASSERT_EQ(i, -5);
        ASSERT_RET(json_get_i64(o, "small", -100, 100, &i), 0);
        ASSERT_EQ(i, 42);
        ASSERT_RET(json_get_i64(o, "i64max", INT64_MIN, INT64_MAX, &i), 0);
        ASSERT_EQ(i, INT64_MAX);
        ASSERT_RET(json_get_i64(o, "i64min", INT64_MIN, INT64_MAX, &i), 0);
        ASSERT_EQ(i, INT64_MIN);

        i = 4242;
        ASSERT_RET(json_get_i64(o, "neg", -4, 100, &i), -ERANGE);
        ASSERT_RET(json_get_i64(o, "small", -100, 41, &i), -ERANGE);
        /* Clamped to INT64_MAX by json-c's int64 getter; must not pass. */
        ASSERT_RET(json_get_i64(o, "above_i64", INT64_MIN, INT64_MAX, &i), -ERANGE);
        ASSERT_RET(json_get_i64(o, "big", INT64_MIN, INT64_MAX, &i), -ERANGE);
        ASSERT_RET(json_get_i64(o, "dbl", INT64_MIN, INT64_MAX, &i), -EINVAL);
        ASSERT_RET(json_get_i64(o, "numstr", INT64_MIN, INT64_MAX, &i), -EINVAL);
        ASSERT_RET(json_get_i64(o, "missing", INT64_MIN, INT64_MAX, &i), -ENOENT);
        ASSERT_EQ(i, 4242);
}

static void test_get_bool(void) {
        _cleanup_json_ json_object *o = NULL;
        bool b = false;

        ASSERT_RET(parse(doc, JSON_PARSE_OBJECT, &o), 0);

        ASSERT_RET(json_get_bool(o, "yes", &b), 0);
        ASSERT_TRUE(b);
        ASSERT_RET(json_get_bool(o, "no", &b), 0);
        ASSERT_FALSE(b);

        b = true;
        ASSERT_RET(json_get_bool(o, "zero", &b), -EINVAL);
        ASSERT_RET(json_get_bool(o, "str", &b), -EINVAL);
        ASSERT_RET(json_get_bool(o, "null", &b), -ENOENT);
        ASSERT_RET(json_get_bool(o, "missing", &b), -ENOENT);
        ASSERT_TRUE(b);
}

static void test_get_object_array(void) {
        _cleanup_json_ json_object *o = NULL;
        json_object *v = NULL;
        uint64_t u;

        ASSERT_RET(parse(doc, JSON_PARSE_OBJECT, &o), 0);

        ASSERT_RET(json_get_object(o, "obj", &v), 0);
        ASSERT_RET(json_get_u64(v, "x", 0, 10, &u), 0);
        ASSERT_EQ_U64(u, 1);
        ASSERT_RET(json_get_array(o, "arr", &v), 0);
        ASSERT_EQ(json_object_array_length(v), 2);
        ASSERT_RET(json_get_u64(json_object_array_get_idx(v, 0), NULL, 0, 10, &u), 0);
        ASSERT_EQ_U64(u, 1);

        ASSERT_RET(json_get_object(o, "arr", &v), -EINVAL);
        ASSERT_RET(json_get_array(o, "obj", &v), -EINVAL);
        ASSERT_RET(json_get_object(o, "null", &v), -ENOENT);
        ASSERT_RET(json_get_array(o, "missing", &v), -ENOENT);
}

static void test_check_keys(void) {
        static const char *const allowed[] = { "function", "error", "duration", NULL };
        static const char *const capitalized[] = { "Function", "error", NULL };
        static const char *const none[] = { NULL };
        _cleanup_json_ json_object *o = NULL, *p = NULL, *e = NULL, *a = NULL;
        const char *unknown = NULL;

        ASSERT_RET(parse("{\"function\":\"f\",\"error\":\"ENOMEM\"}", JSON_PARSE_OBJECT, &o), 0);
        ASSERT_RET(json_check_keys(o, allowed, &unknown), 0);
        ASSERT_NULL(unknown);

        /* The first unknown key in document order is reported. */
        ASSERT_RET(parse("{\"function\":\"f\",\"zeta\":1,\"alpha\":2}", JSON_PARSE_OBJECT, &p), 0);
        ASSERT_RET(json_check_keys(p, allowed, &unknown), -EBADMSG);
        ASSERT_STREQ(unknown, "zeta");
        ASSERT_RET(json_check_keys(p, allowed, NULL), -EBADMSG);

        /* Keys compare exactly. */
        ASSERT_RET(json_check_keys(o, capitalized, &unknown), -EBADMSG);
        ASSERT_STREQ(unknown, "function");

        ASSERT_RET(parse("{}", JSON_PARSE_OBJECT, &e), 0);
        ASSERT_RET(json_check_keys(e, none, &unknown), 0);
        ASSERT_RET(json_check_keys(e, NULL, &unknown), 0);
        ASSERT_RET(json_check_keys(o, none, &unknown), -EBADMSG);
        ASSERT_RET(json_check_keys(o, NULL, &unknown), -EBADMSG);

        unknown = "untouched";
        ASSERT_RET(parse("[]", 0, &a), 0);
        ASSERT_RET(json_check_keys(a, allowed, &unknown), -EINVAL);
        ASSERT_RET(json_check_keys(NULL, allowed, &unknown), -EINVAL);
        ASSERT_STREQ(unknown, "untouched");
}

int main(void) {
        TEST_RUN(test_parse_valid);
        TEST_RUN(test_parse_null);
        TEST_RUN(test_parse_not_terminated);
        TEST_RUN(test_parse_malformed);
        TEST_RUN(test_parse_integer_range);
        TEST_RUN(test_parse_depth);
        TEST_RUN(test_parse_object_flag);
        TEST_RUN(test_get_string);
        TEST_RUN(test_get_u64);
        TEST_RUN(test_get_i64);
        TEST_RUN(test_get_bool);
        TEST_RUN(test_get_object_array);
        TEST_RUN(test_check_keys);
        return 0;
}
