/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stddef.h>

#include "json-dispatch.h"
#include "json-reader.h"
#include "json-util.h"
#include "scope-kind.h"
#include "test-util.h"

typedef struct Thing {
        char *name;
        const char *label;
        uint64_t size;
        int64_t offset;
        double ratio;
        bool on;
        json_object *extra;
        int custom_calls;
} Thing;

static void thing_done(Thing *t) {
        free(t->name);
        *t = (Thing) {};
}

static int parse_custom(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        Thing *t = dest;

        t->custom_calls++;
        if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), "no") == 0)
                return json_dispatch_refuse_full(err, -EPERM, key, "The custom key says no");
        return 0;
}

static const JsonDispatch table[] = {
        { "name",   JSON_DISPATCH_STRING,   json_dispatch_string,       offsetof(Thing, name), JSON_DISPATCH_MANDATORY,
          .min = 1, .max = 8 },
        { "label",  JSON_DISPATCH_STRING,   json_dispatch_const_string, offsetof(Thing, label), JSON_DISPATCH_NULLABLE },
        { "size",   JSON_DISPATCH_UNSIGNED, json_dispatch_u64,          offsetof(Thing, size), 0, .min = 1, .max = 100 },
        { "offset", JSON_DISPATCH_INTEGER,  json_dispatch_i64,          offsetof(Thing, offset), 0, .min = -5, .max = 5 },
        { "ratio",  JSON_DISPATCH_NUMBER,   json_dispatch_double,       offsetof(Thing, ratio) },
        { "on",     JSON_DISPATCH_BOOLEAN,  json_dispatch_bool,         offsetof(Thing, on), JSON_DISPATCH_NULLABLE },
        { "extra",  JSON_DISPATCH_OBJECT,   json_dispatch_borrow,       offsetof(Thing, extra) },
        { "custom", JSON_DISPATCH_ANY,      parse_custom,               0 },
        {}
};

/* Dispatches the JSON text s into *t; returns what json_dispatch() did. */
static int dispatch(const char *s, JsonDispatchFlags flags, Thing *t, JsonDispatchError *err, json_object **ret_o) {
        json_object *o = NULL;
        int r;

        r = json_parse_strict(s, strlen(s), 0, &o);
        if (r < 0)
                test_fail("test input '%s' does not parse: %d", s, r);
        r = json_dispatch(o, table, flags, t, err);
        if (ret_o)
                *ret_o = o;
        else
                json_object_put(o);
        return r;
}

/* s is refused with r, and the error names key and says message. */
static void check_refused(const char *s, int expected, const char *key, const char *message) {
        JsonDispatchError err = {};
        Thing t = {};
        char b1[64], b2[64];
        int r;

        r = dispatch(s, 0, &t, &err, NULL);
        if (r != expected)
                test_fail("json_dispatch('%s'): expected %s, seen %s", s,
                          test_ret_str(b1, sizeof(b1), expected), test_ret_str(b2, sizeof(b2), r));
        ASSERT_STREQ(err.key, key);
        ASSERT_STREQ(err.message, message);
        thing_done(&t);
}

static void test_all_keys(void) {
        _cleanup_json_ json_object *o = NULL;
        JsonDispatchError err = {};
        Thing t = {};

        ASSERT_RET(dispatch("{\"name\":\"box\",\"label\":\"L\",\"size\":100,\"offset\":-5,\"ratio\":0.5,"
                            "\"on\":true,\"extra\":{\"a\":1},\"custom\":1}", 0, &t, &err, &o), 0);
        ASSERT_STREQ(t.name, "box");
        ASSERT_STREQ(t.label, "L");
        ASSERT_EQ_U64(t.size, 100);
        ASSERT_EQ(t.offset, -5);
        ASSERT_TRUE(t.ratio == 0.5);
        ASSERT_TRUE(t.on);
        ASSERT_TRUE(json_object_is_type(t.extra, json_type_object));
        ASSERT_EQ(t.custom_calls, 1);
        ASSERT_STREQ(err.message, "");
        thing_done(&t);
}

static void test_absent_and_null(void) {
        Thing t = { .size = 7, .on = true };

        /* Absent optional keys leave the destination alone; a null counts
         * as absent unless the entry is nullable, which resets it. */
        ASSERT_RET(dispatch("{\"name\":\"a\",\"size\":null,\"custom\":null}", 0, &t, NULL, NULL), 0);
        ASSERT_EQ_U64(t.size, 7);
        ASSERT_EQ(t.custom_calls, 0);
        ASSERT_TRUE(t.on);
        ASSERT_RET(dispatch("{\"name\":\"a\",\"on\":null,\"label\":null}", 0, &t, NULL, NULL), 0);
        ASSERT_FALSE(t.on);
        ASSERT_NULL(t.label);
        /* An integer where a number goes. */
        ASSERT_RET(dispatch("{\"name\":\"a\",\"ratio\":3}", 0, &t, NULL, NULL), 0);
        ASSERT_TRUE(t.ratio == 3.0);
        thing_done(&t);
}

static void test_mandatory(void) {
        check_refused("{}", -ENXIO, "name", "'name' is required");
        check_refused("{\"name\":null}", -ENXIO, "name", "'name' is required");
}

static void test_unknown(void) {
        JsonDispatchError err = {};
        Thing t = {};

        /* Unknown keys are found before any value is looked at. */
        check_refused("{\"size\":0,\"colour\":\"blue\",\"shape\":1}", -EBADMSG, "colour", "Unknown key 'colour'");
        check_refused("{\"name\":\"a\",\"NAME\":1}", -EBADMSG, "NAME", "Unknown key 'NAME'");
        /* ... unless they may be. */
        ASSERT_RET(dispatch("{\"name\":\"a\",\"colour\":\"blue\"}", JSON_DISPATCH_ALLOW_UNKNOWN, &t, &err, NULL), 0);
        ASSERT_STREQ(t.name, "a");
        thing_done(&t);

        /* A long key is cut short in the message. */
        {
                char s[300], key[65], want[100];

                snprintf(s, sizeof(s), "{\"%0200d\":1}", 0);
                snprintf(key, sizeof(key), "%064d", 0);
                snprintf(want, sizeof(want), "Unknown key '%s'", key);
                check_refused(s, -EBADMSG, key, want);
        }
}

static void test_wrong_types(void) {
        check_refused("{\"name\":1}", -EINVAL, "name", "'name' must be a string");
        check_refused("{\"name\":\"a\",\"label\":true}", -EINVAL, "label", "'label' must be a string");
        check_refused("{\"name\":\"a\",\"size\":\"1\"}", -EINVAL, "size", "'size' must be a non-negative integer");
        check_refused("{\"name\":\"a\",\"size\":1.0}", -EINVAL, "size", "'size' must be a non-negative integer");
        check_refused("{\"name\":\"a\",\"offset\":1e0}", -EINVAL, "offset", "'offset' must be an integer");
        check_refused("{\"name\":\"a\",\"ratio\":\"0.5\"}", -EINVAL, "ratio", "'ratio' must be a number");
        check_refused("{\"name\":\"a\",\"on\":1}", -EINVAL, "on", "'on' must be a boolean");
        check_refused("{\"name\":\"a\",\"extra\":[]}", -EINVAL, "extra", "'extra' must be an object");
        /* A NUL inside would cut the string short in C. */
        check_refused("{\"name\":\"a\\u0000b\"}", -EINVAL, "name", "'name' must be a string");
        check_refused("{\"name\":\"a\",\"label\":\"a\\u0000b\"}", -EINVAL, "label", "'label' must be a string");
}

static void test_ranges(void) {
        check_refused("{\"name\":\"\"}", -EINVAL, "name", "'name' must be 1 to 8 characters");
        check_refused("{\"name\":\"123456789\"}", -EINVAL, "name", "'name' must be 1 to 8 characters");
        check_refused("{\"name\":\"a\",\"size\":0}", -ERANGE, "size", "'size' must be an integer from 1 to 100");
        check_refused("{\"name\":\"a\",\"size\":101}", -ERANGE, "size", "'size' must be an integer from 1 to 100");
        check_refused("{\"name\":\"a\",\"size\":-1}", -ERANGE, "size", "'size' must be an integer from 1 to 100");
        check_refused("{\"name\":\"a\",\"offset\":-6}", -ERANGE, "offset", "'offset' must be an integer from -5 to 5");
        check_refused("{\"name\":\"a\",\"offset\":18446744073709551615}", -ERANGE, "offset",
                      "'offset' must be an integer from -5 to 5");
}

static void test_parser_refusal(void) {
        check_refused("{\"name\":\"a\",\"custom\":\"no\"}", -EPERM, "custom", "The custom key says no");
}

static void test_table_order(void) {
        /* The first entry of the table that fails is reported, whatever
         * the order in the document. */
        check_refused("{\"on\":3,\"size\":0,\"name\":\"a\"}", -ERANGE, "size", "'size' must be an integer from 1 to 100");
}

static void test_not_object(void) {
        JsonDispatchError err = {};
        Thing t = {};

        ASSERT_RET(json_dispatch(NULL, table, 0, &t, &err), -EINVAL);
        ASSERT_STREQ(err.message, "Expected a JSON object");
        ASSERT_RET(dispatch("[1]", 0, &t, &err, NULL), -EINVAL);
        ASSERT_RET(dispatch("\"x\"", 0, &t, NULL, NULL), -EINVAL);
}

static void test_string_replaces(void) {
        Thing t = {};

        /* A second dispatch frees the first copy (ASan would see a leak). */
        ASSERT_RET(dispatch("{\"name\":\"one\"}", 0, &t, NULL, NULL), 0);
        ASSERT_RET(dispatch("{\"name\":\"two\"}", 0, &t, NULL, NULL), 0);
        ASSERT_STREQ(t.name, "two");
        thing_done(&t);
}

static void test_unbounded(void) {
        static const JsonDispatch wide[] = {
                { "u", JSON_DISPATCH_UNSIGNED, json_dispatch_u64, offsetof(Thing, size) },
                { "i", JSON_DISPATCH_INTEGER, json_dispatch_i64, offsetof(Thing, offset) },
                { "s", JSON_DISPATCH_STRING, json_dispatch_string, offsetof(Thing, name) },
                {}
        };
        _cleanup_json_ json_object *o = NULL;
        Thing t = {};

        static const char text[] = "{\"u\":18446744073709551615,\"i\":-9223372036854775808,\"s\":\"\"}";

        ASSERT_OK(json_parse_strict(text, strlen(text), 0, &o));
        ASSERT_RET(json_dispatch(o, wide, 0, &t, NULL), 0);
        ASSERT_EQ_U64(t.size, UINT64_MAX);
        ASSERT_TRUE(t.offset == INT64_MIN);
        ASSERT_STREQ(t.name, "");
        thing_done(&t);
}

static void test_nullable_string(void) {
        static const JsonDispatch t2[] = {
                { "s", JSON_DISPATCH_STRING, json_dispatch_string, offsetof(Thing, name), JSON_DISPATCH_NULLABLE },
                { "d", JSON_DISPATCH_NUMBER, json_dispatch_double, offsetof(Thing, ratio), JSON_DISPATCH_NULLABLE },
                { "u", JSON_DISPATCH_UNSIGNED, json_dispatch_u64, offsetof(Thing, size), JSON_DISPATCH_NULLABLE },
                { "i", JSON_DISPATCH_INTEGER, json_dispatch_i64, offsetof(Thing, offset), JSON_DISPATCH_NULLABLE },
                { "o", JSON_DISPATCH_OBJECT, json_dispatch_borrow, offsetof(Thing, extra), JSON_DISPATCH_NULLABLE },
                {}
        };
        _cleanup_json_ json_object *o = json_object_new_object();
        Thing t = { .name = strdup("old"), .ratio = 1, .size = 1, .offset = 1, .extra = (json_object *) 0x1 };

        /* A nullable null reaches the parser, which resets the
         * destination (and frees the old string: ASan would tell). */
        ASSERT_NOT_NULL(o);
        ASSERT_OK(json_object_object_add(o, "s", NULL));
        ASSERT_OK(json_object_object_add(o, "d", NULL));
        ASSERT_OK(json_object_object_add(o, "u", NULL));
        ASSERT_OK(json_object_object_add(o, "i", NULL));
        ASSERT_OK(json_object_object_add(o, "o", NULL));
        ASSERT_RET(json_dispatch(o, t2, 0, &t, NULL), 0);
        ASSERT_NULL(t.name);
        ASSERT_TRUE(t.ratio == 0);
        ASSERT_EQ_U64(t.size, 0);
        ASSERT_EQ(t.offset, 0);
        ASSERT_NULL(t.extra);
}

static void test_not_finite(void) {
        _cleanup_json_ json_object *o = json_object_new_object();
        JsonDispatchError err = {};
        Thing t = {};

        /* The strict reader never makes one, but a built document can. */
        ASSERT_NOT_NULL(o);
        ASSERT_OK(json_object_object_add(o, "name", json_object_new_string("a")));
        ASSERT_OK(json_object_object_add(o, "ratio", json_object_new_double(1.0 / 0.0)));
        ASSERT_RET(json_dispatch(o, table, 0, &t, &err), -ERANGE);
        ASSERT_STREQ(err.message, "'ratio' must be a finite number");
        thing_done(&t);
}

static void test_scope_kind(void) {
        char choices[64];

        ASSERT_EQ(scope_kind_from_string("cgroup"), SCOPE_KIND_CGROUP);
        ASSERT_EQ(scope_kind_from_string("process"), SCOPE_KIND_PROCESS);
        ASSERT_EQ(scope_kind_from_string("global"), SCOPE_KIND_GLOBAL);
        ASSERT_EQ(scope_kind_from_string("device"), SCOPE_KIND_DEVICE);
        ASSERT_RET(scope_kind_from_string("everything"), -EINVAL);
        ASSERT_RET(scope_kind_from_string(""), -EINVAL);
        ASSERT_RET(scope_kind_from_string(NULL), -EINVAL);
        ASSERT_NULL(scope_kind_to_string(_SCOPE_KIND_MAX));
        ASSERT_NULL(scope_kind_to_string(-1));

        /* The refusal's list says the table's words, in its order. */
        snprintf(choices, sizeof(choices), "\"%s\", \"%s\", \"%s\" or \"%s\"", scope_kind_to_string(0),
                 scope_kind_to_string(1), scope_kind_to_string(2), scope_kind_to_string(3));
        ASSERT_EQ(_SCOPE_KIND_MAX, 4);
        ASSERT_STREQ(SCOPE_KIND_CHOICES, choices);
}

int main(void) {
        TEST_RUN(test_all_keys);
        TEST_RUN(test_absent_and_null);
        TEST_RUN(test_mandatory);
        TEST_RUN(test_unknown);
        TEST_RUN(test_wrong_types);
        TEST_RUN(test_ranges);
        TEST_RUN(test_parser_refusal);
        TEST_RUN(test_table_order);
        TEST_RUN(test_not_object);
        TEST_RUN(test_string_replaces);
        TEST_RUN(test_unbounded);
        TEST_RUN(test_nullable_string);
        TEST_RUN(test_not_finite);
        TEST_RUN(test_scope_kind);
        return 0;
}
