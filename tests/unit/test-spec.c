/* SPDX-License-Identifier: MIT */
/* The --fail SPEC parser of "injectctl run" (src/client/spec.c): every
 * field, and every malformed form refused with a message. */

#include <errno.h>
#include <string.h>

#include "spec.h"
#include "test-util.h"

static FailSpec *parse_ok(const char *s) {
        _cleanup_free_ char *msg = NULL;
        FailSpec *spec = NULL;
        int r;

        r = fail_spec_parse(s, &spec, &msg);
        if (r < 0)
                test_fail("fail_spec_parse(\"%s\"): expected success, seen %d (%s)", s, r, msg ?: "no message");
        return spec;
}

/* Refused with -EINVAL, and the message names the spec and contains what. */
static void parse_bad(const char *s, const char *what) {
        _cleanup_free_ char *msg = NULL;
        FailSpec *spec = NULL;

        ASSERT_RET(fail_spec_parse(s, &spec, &msg), -EINVAL);
        ASSERT_NULL(spec);
        ASSERT_NOT_NULL(msg);
        if (!strstr(msg, what))
                test_fail("fail_spec_parse(\"%s\"): expected a message with '%s', seen '%s'", s, what, msg);
        if (*s && !strstr(msg, s))
                test_fail("fail_spec_parse(\"%s\"): expected the message to quote the spec, seen '%s'", s, msg);
}

static void test_function_only(void) {
        _cleanup_(fail_spec_freep) FailSpec *s = parse_ok("should_failslab");

        ASSERT_STREQ(s->function, "should_failslab");
        ASSERT_EQ(s->error, 0);
        ASSERT_FALSE(s->has_after);
        ASSERT_EQ_U64(s->every, 0);
        ASSERT_EQ_U64(s->times, 0);
        ASSERT_TRUE(s->probability == 0);
        ASSERT_EQ(s->n_callers, 0);
        ASSERT_NULL(s->callers);
        ASSERT_NULL(s->device);
}

/* device= is passed on as written: the daemon resolves the name. */
static void test_device(void) {
        _cleanup_(fail_spec_freep) FailSpec *a = parse_ok("should_fail_bio:EIO,device=loop3");
        _cleanup_(fail_spec_freep) FailSpec *b = parse_ok("should_fail_bio,times=1,device=/dev/loop3");
        _cleanup_(fail_spec_freep) FailSpec *c = parse_ok("should_fail_bio,device=7:3");

        ASSERT_EQ(a->error, EIO);
        ASSERT_STREQ(a->device, "loop3");
        ASSERT_STREQ(b->device, "/dev/loop3");
        ASSERT_EQ_U64(b->times, 1);
        ASSERT_STREQ(c->device, "7:3");
}

static void test_error(void) {
        _cleanup_(fail_spec_freep) FailSpec *a = parse_ok("__x64_sys_openat:ENOENT");
        _cleanup_(fail_spec_freep) FailSpec *b = parse_ok("__x64_sys_openat:enomem");
        _cleanup_(fail_spec_freep) FailSpec *c = parse_ok("__x64_sys_openat:5");

        ASSERT_STREQ(a->function, "__x64_sys_openat");
        ASSERT_EQ(a->error, ENOENT);
        ASSERT_EQ(b->error, ENOMEM);
        ASSERT_EQ(c->error, EIO);
}

static void test_all_fields(void) {
        _cleanup_(fail_spec_freep) FailSpec *s =
                parse_ok("__x64_sys_openat:ENOENT,after=2,every=3,times=1,probability=50%,caller=do_sys_openat2,caller=do_filp_open");

        ASSERT_EQ(s->error, ENOENT);
        ASSERT_TRUE(s->has_after);
        ASSERT_EQ_U64(s->after, 2);
        ASSERT_EQ_U64(s->every, 3);
        ASSERT_EQ_U64(s->times, 1);
        ASSERT_TRUE(s->probability == 50);
        ASSERT_EQ(s->n_callers, 2);
        ASSERT_STREQ(s->callers[0], "do_sys_openat2");
        ASSERT_STREQ(s->callers[1], "do_filp_open");
        ASSERT_NULL(s->callers[2]);
}

static void test_field_values(void) {
        _cleanup_(fail_spec_freep) FailSpec *a = parse_ok("f,after=0");
        _cleanup_(fail_spec_freep) FailSpec *b = parse_ok("f,probability=0.5");
        _cleanup_(fail_spec_freep) FailSpec *c = parse_ok("f,probability=100%");
        _cleanup_(fail_spec_freep) FailSpec *d = parse_ok("f,times=18446744073709551615");
        _cleanup_(fail_spec_freep) FailSpec *e = parse_ok("f,caller=a,caller=b,caller=c,caller=d");
        _cleanup_(fail_spec_freep) FailSpec *f = parse_ok("btrfs.open_ctree:ENOMEM");

        ASSERT_TRUE(a->has_after);
        ASSERT_EQ_U64(a->after, 0);
        ASSERT_TRUE(b->probability == 0.5);
        ASSERT_TRUE(c->probability == 100);
        ASSERT_EQ_U64(d->times, UINT64_MAX);
        ASSERT_EQ(e->n_callers, 4);
        ASSERT_STREQ(f->function, "btrfs.open_ctree");
}

static void test_malformed(void) {
        FailSpec *spec = NULL;
        char *msg = NULL;

        ASSERT_RET(fail_spec_parse("", &spec, &msg), -EINVAL);
        ASSERT_NOT_NULL(msg);
        free(msg);

        parse_bad(":ENOENT", "function name is missing");
        parse_bad(",after=1", "function name is missing");
        parse_bad("f:", "empty error");
        parse_bad("f:ENOENTT", "did you mean ENOENT?");
        parse_bad("f:EBOGUSXYZQQ", "unknown errno");
        parse_bad("f:0", "unknown errno");
        parse_bad("f:4096", "unknown errno");
        parse_bad("f:-", "unknown errno");
        parse_bad("bad-name", "not a kernel function name");
        parse_bad("f o", "not a kernel function name");
        parse_bad("a234567890123456789012345678901234567890123456789012345678901234", "not a kernel function name");
        parse_bad("f,", "empty field");
        parse_bad("f,,after=1", "empty field");
        parse_bad("f,after", "not KEY=VALUE");
        parse_bad("f,after=", "needs a value");
        parse_bad("f,after=-1", "not a count");
        parse_bad("f,after=1x", "not a count");
        parse_bad("f,after= 1", "not a count");
        parse_bad("f,after=18446744073709551616", "not a count");
        parse_bad("f,after=1,after=2", "given twice");
        parse_bad("f,every=0", "1 or more");
        parse_bad("f,every=two", "1 or more");
        parse_bad("f,every=2,every=3", "given twice");
        parse_bad("f,times=0", "1 or more");
        parse_bad("f,times=1,times=1", "given twice");
        parse_bad("f,probability=0", "percentage");
        parse_bad("f,probability=101%", "percentage");
        parse_bad("f,probability=-5", "percentage");
        parse_bad("f,probability=5%%", "percentage");
        parse_bad("f,probability=nan", "percentage");
        parse_bad("f,probability=50,probability=60", "given twice");
        parse_bad("f,caller=a,caller=b,caller=c,caller=d,caller=e", "at most 4 callers");
        parse_bad("f,caller=not-a-function", "not a kernel function name");
        parse_bad("f,device", "not KEY=VALUE");
        parse_bad("f,device=", "needs a value");
        parse_bad("f,device=loop3,device=loop4", "given twice");
        parse_bad("f,bogus=1", "unknown key 'bogus'");
        parse_bad("f,After=1", "unknown key");
}

static void test_percent(void) {
        double v;

        ASSERT_OK(parse_percent("25%", &v));
        ASSERT_TRUE(v == 25);
        ASSERT_OK(parse_percent("0.01", &v));
        ASSERT_TRUE(v == 0.01);
        ASSERT_RET(parse_percent("", &v), -EINVAL);
        ASSERT_RET(parse_percent("%", &v), -EINVAL);
        ASSERT_RET(parse_percent("0%", &v), -EINVAL);
        ASSERT_RET(parse_percent("100.1", &v), -EINVAL);
        ASSERT_RET(parse_percent("inf", &v), -EINVAL);
        ASSERT_RET(parse_percent(" 5", &v), -EINVAL);
}

static void test_arg_filters(void) {
        _cleanup_(fail_spec_freep) FailSpec *a =
                parse_ok("should_failslab,ignore-gfp-wait,cache=dentry,min-size=64,times=2");
        _cleanup_(fail_spec_freep) FailSpec *b = parse_ok("should_fail_alloc_page,ignore-gfp-highmem,min-order=0");

        ASSERT_TRUE(a->filters.ignore_gfp_wait);
        ASSERT_FALSE(a->filters.ignore_gfp_highmem);
        ASSERT_STREQ(a->filters.cache, "dentry");
        ASSERT_TRUE(a->filters.has_min_size);
        ASSERT_EQ_U64(a->filters.min_size, 64);
        ASSERT_FALSE(a->filters.has_min_order);
        ASSERT_EQ_U64(a->times, 2);
        ASSERT_TRUE(b->filters.ignore_gfp_highmem);
        ASSERT_TRUE(b->filters.has_min_order);
        ASSERT_EQ_U64(b->filters.min_order, 0);

        parse_bad("f,ignore-gfp-wait=1", "'ignore-gfp-wait' takes no value");
        parse_bad("f,ignore-gfp-wait,ignore-gfp-wait", "'ignore-gfp-wait' given twice");
        parse_bad("f,min-order=64", "min-order=64 is not an order from 0 to 63");
        parse_bad("f,min-size=0", "min-size=0 is not a size");
        parse_bad("f,cache=", "'cache' needs a value");
        parse_bad("f,cache=a,cache=b", "'cache' given twice");
        parse_bad("f,min-order", "'min-order' needs a value");
}

int main(void) {
        TEST_RUN(test_function_only);
        TEST_RUN(test_error);
        TEST_RUN(test_device);
        TEST_RUN(test_all_fields);
        TEST_RUN(test_field_values);
        TEST_RUN(test_malformed);
        TEST_RUN(test_percent);
        TEST_RUN(test_arg_filters);
        return 0;
}
