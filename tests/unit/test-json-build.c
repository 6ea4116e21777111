/* SPDX-License-Identifier: MIT */

/* The checked JSON builder. That every value handed over is released on
 * failure is checked by the sanitizers' leak detector, which fails this
 * test on a leak. */

#include <errno.h>
#include <stddef.h>

#include "json-build.h"
#include "json-util.h"
#include "test-util.h"

/* o as compact JSON equals want. */
static void check_json(json_object *o, const char *want) {
        ASSERT_STREQ(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), want);
}

static void test_add(void) {
        _cleanup_json_ json_object *o = json_object_new_object(), *shared = json_object_new_string("s");

        ASSERT_NOT_NULL(o);
        ASSERT_NOT_NULL(shared);
        ASSERT_RET(json_add_string(o, "s", "x"), 0);
        ASSERT_RET(json_add_string(o, "n", NULL), 0);
        ASSERT_RET(json_add_u64(o, "u", UINT64_MAX), 0);
        ASSERT_RET(json_add_i64(o, "i", INT64_MIN), 0);
        ASSERT_RET(json_add_double(o, "d", 0.5), 0);
        ASSERT_RET(json_add_bool(o, "b", true), 0);
        ASSERT_RET(json_add_null(o, "z"), 0);
        ASSERT_RET(json_add_ref(o, "r", shared), 0);
        ASSERT_RET(json_add_ref(o, "rn", NULL), 0);
        ASSERT_RET(json_add(o, "a", json_object_new_array()), 0);
        check_json(o, "{\"s\":\"x\",\"n\":null,\"u\":18446744073709551615,\"i\":-9223372036854775808,"
                      "\"d\":0.5,\"b\":true,\"z\":null,\"r\":\"s\",\"rn\":null,\"a\":[]}");
        /* The reference taken is o's; shared is still the caller's. */
        ASSERT_EQ(json_object_put(shared), 0);
        shared = NULL;

        /* A key added again replaces the value. */
        ASSERT_RET(json_add_u64(o, "u", 1), 0);
        ASSERT_EQ_U64(json_object_get_uint64(json_object_object_get(o, "u")), 1);
}

static void test_add_refused(void) {
        _cleanup_json_ json_object *o = json_object_new_object(), *a = json_object_new_array();

        ASSERT_NOT_NULL(o);
        ASSERT_NOT_NULL(a);
        /* NULL is what a constructor gives when out of memory: never a
         * silent null. */
        ASSERT_RET(json_add(o, "k", NULL), -ENOMEM);
        ASSERT_FALSE(json_object_object_get_ex(o, "k", NULL));
        ASSERT_RET(json_append(a, NULL), -ENOMEM);
        ASSERT_EQ(json_object_array_length(a), 0);

        /* Into what is not an object or an array: refused, and the value
         * released (the leak detector checks). */
        ASSERT_RET(json_add(a, "k", json_object_new_string("leak?")), -EINVAL);
        ASSERT_RET(json_add(NULL, "k", json_object_new_string("leak?")), -EINVAL);
        ASSERT_RET(json_add(o, NULL, json_object_new_string("leak?")), -EINVAL);
        ASSERT_RET(json_add_null(a, "k"), -EINVAL);
        ASSERT_RET(json_add_null(o, NULL), -EINVAL);
        ASSERT_RET(json_append(o, json_object_new_string("leak?")), -EINVAL);
        ASSERT_RET(json_append_string(a, NULL), -EINVAL);
}

static void test_append(void) {
        _cleanup_json_ json_object *a = json_object_new_array();

        ASSERT_NOT_NULL(a);
        ASSERT_RET(json_append_string(a, "x"), 0);
        ASSERT_RET(json_append(a, json_object_new_int(2)), 0);
        check_json(a, "[\"x\",2]");
}

static void test_strv(void) {
        static const char *const v[] = { "a", "b", NULL };
        _cleanup_json_ json_object *two = json_new_strv(v, 2), *until_null = json_new_strv(v, SIZE_MAX),
                                   *none = json_new_strv(NULL, 0);

        check_json(two, "[\"a\",\"b\"]");
        check_json(until_null, "[\"a\",\"b\"]");
        check_json(none, "[]");
}

static void test_add_all(void) {
        _cleanup_json_ json_object *dst = json_object_new_object(), *src = NULL, *a = json_object_new_array();

        ASSERT_RET(json_build_object(&src, JSON_PAIR_U64("x", 1), JSON_PAIR_STRING("y", "z"), JSON_BUILD_END), 0);
        ASSERT_RET(json_add_u64(dst, "x", 0), 0);
        ASSERT_RET(json_add_all(dst, src), 0);
        check_json(dst, "{\"x\":1,\"y\":\"z\"}");
        ASSERT_RET(json_add_all(dst, a), -EINVAL);
}

static void test_build(void) {
        _cleanup_json_ json_object *o = NULL, *shared = json_object_new_array();
        char buf[] = { 'a', 'b', 'c' };
        int small = -3;

        ASSERT_NOT_NULL(shared);
        ASSERT_RET(json_build_object(&o,
                                     JSON_PAIR_STRING("s", "x"),
                                     JSON_PAIR_STRING("sn", NULL),
                                     JSON_PAIR_STRING_LEN("sl", buf, 2),
                                     JSON_PAIR_U64("u", 7u),
                                     JSON_PAIR_I64("i", small),         /* an int, widened by the macro */
                                     JSON_PAIR_DOUBLE("d", 1),
                                     JSON_PAIR_BOOL("b", 5),            /* any non-zero is true */
                                     JSON_PAIR_NULL("z"),
                                     JSON_PAIR_OBJECT("o", json_object_new_object()),
                                     JSON_PAIR_REF("r", shared),
                                     JSON_PAIR_REF("rn", NULL),
                                     JSON_PAIR_IF(true, JSON_PAIR_U64("yes", 1)),
                                     JSON_PAIR_IF(false, JSON_PAIR_U64("no", 1)),
                                     JSON_PAIR_IF(false, JSON_PAIR_OBJECT("no2", json_object_new_string("released"))),
                                     JSON_BUILD_END), 0);
        check_json(o, "{\"s\":\"x\",\"sn\":null,\"sl\":\"ab\",\"u\":7,\"i\":-3,\"d\":1.0,\"b\":true,\"z\":null,"
                      "\"o\":{},\"r\":[],\"rn\":null,\"yes\":1}");

        /* Adding to an existing object. */
        ASSERT_RET(json_add_pairs(o, JSON_PAIR_U64("more", 1), JSON_BUILD_END), 0);
        ASSERT_TRUE(json_object_object_get_ex(o, "more", NULL));
}

static void test_build_refused(void) {
        json_object *o = (json_object *) 0x1;

        /* A constructor that ran out of memory: -ENOMEM, *ret untouched,
         * and what the later pairs hand over released. */
        ASSERT_RET(json_build_object(&o,
                                     JSON_PAIR_OBJECT("first", json_object_new_string("released")),
                                     JSON_PAIR_OBJECT("oom", NULL),
                                     JSON_PAIR_OBJECT("later", json_object_new_string("released")),
                                     JSON_PAIR_IF(true, JSON_PAIR_OBJECT("later2", json_object_new_string("released"))),
                                     JSON_PAIR_U64("u", 1),
                                     JSON_BUILD_END), -ENOMEM);
        ASSERT_TRUE(o == (json_object *) 0x1);

        /* A condition must guard a pair. */
        ASSERT_RET(json_build_object(&o, JSON_PAIR_U64("u", 1), _JSON_BUILD_IF, 1, JSON_BUILD_END), -EINVAL);
        ASSERT_TRUE(o == (json_object *) 0x1);

        /* A string of a length json-c cannot hold, or none. */
        ASSERT_RET(json_build_object(&o, JSON_PAIR_STRING_LEN("s", NULL, 0), JSON_BUILD_END), -EINVAL);
        ASSERT_RET(json_build_object(&o, JSON_PAIR_STRING_LEN("s", "x", (size_t) INT32_MAX + 1), JSON_BUILD_END),
                   -EINVAL);

        /* Pairs for what is not an object: refused, values released. */
        ASSERT_RET(json_add_pairs(NULL, JSON_PAIR_OBJECT("o", json_object_new_string("released")), JSON_BUILD_END),
                   -EINVAL);
}

int main(void) {
        TEST_RUN(test_add);
        TEST_RUN(test_add_refused);
        TEST_RUN(test_append);
        TEST_RUN(test_strv);
        TEST_RUN(test_add_all);
        TEST_RUN(test_build);
        TEST_RUN(test_build_refused);
        return 0;
}
