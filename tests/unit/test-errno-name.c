/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <limits.h>

#include "errno-name.h"
#include "test-util.h"

static void test_from_name(void) {
        int e;

        ASSERT_RET(errno_from_name("ENOMEM", &e), 0);
        ASSERT_EQ(e, ENOMEM);
        ASSERT_RET(errno_from_name("enomem", &e), 0);
        ASSERT_EQ(e, ENOMEM);
        ASSERT_RET(errno_from_name("eNoEnT", &e), 0);
        ASSERT_EQ(e, ENOENT);
        ASSERT_RET(errno_from_name("EHWPOISON", &e), 0);
        ASSERT_EQ(e, EHWPOISON);

        /* Second spellings strerrorname_np() does not return. */
        ASSERT_RET(errno_from_name("EWOULDBLOCK", &e), 0);
        ASSERT_EQ(e, EAGAIN);
        ASSERT_RET(errno_from_name("ENOTSUP", &e), 0);
        ASSERT_EQ(e, EOPNOTSUPP);
        ASSERT_RET(errno_from_name("edeadlock", &e), 0);
        ASSERT_EQ(e, EDEADLK);
}

static void test_from_number(void) {
        int e;

        ASSERT_RET(errno_from_name("12", &e), 0);
        ASSERT_EQ(e, 12);
        ASSERT_RET(errno_from_name("-12", &e), 0);
        ASSERT_EQ(e, 12);
        ASSERT_RET(errno_from_name("1", &e), 0);
        ASSERT_EQ(e, 1);
        ASSERT_RET(errno_from_name("4095", &e), 0);
        ASSERT_EQ(e, 4095);
        ASSERT_RET(errno_from_name("-4095", &e), 0);
        ASSERT_EQ(e, 4095);
        /* Numbers without a glibc name (kernel-internal ones, 512+) are
         * still valid numbers. */
        ASSERT_RET(errno_from_name("524", &e), 0);
        ASSERT_EQ(e, 524);
}

static void test_from_invalid(void) {
        static const char *const bad[] = {
                "", "0", "-0", "4096", "-4096", "99999999999999999999",
                "-", "--12", "+12", " 12", "12 ", "12x", "0x0c", "1e1",
                "EFOO", "ENOMEM ", " ENOMEM", "-ENOMEM", "E", "ENOMEMX",
                "ERESTARTSYS", /* kernel-internal, unknown to glibc */
        };
        int e = 4242;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = errno_from_name(bad[i], &e);
                char b[64];

                if (r != -EINVAL)
                        test_fail("errno_from_name(\"%s\"): expected -EINVAL, seen %s",
                                  bad[i], test_ret_str(b, sizeof(b), r));
        }
        /* ret untouched on failure. */
        ASSERT_EQ(e, 4242);

        ASSERT_RET(errno_from_name(NULL, &e), -EINVAL);
        ASSERT_RET(errno_from_name("ENOMEM", NULL), -EINVAL);
}

static void test_to_name(void) {
        ASSERT_STREQ(errno_to_name(ENOMEM), "ENOMEM");
        ASSERT_STREQ(errno_to_name(-ENOMEM), "ENOMEM");
        ASSERT_STREQ(errno_to_name(EPERM), "EPERM");
        ASSERT_STREQ(errno_to_name(EWOULDBLOCK), "EAGAIN");
        ASSERT_NULL(errno_to_name(0));
        ASSERT_NULL(errno_to_name(524));
        ASSERT_NULL(errno_to_name(4095));
        ASSERT_NULL(errno_to_name(4096));
        ASSERT_NULL(errno_to_name(-4096));
        ASSERT_NULL(errno_to_name(INT_MAX));
        ASSERT_NULL(errno_to_name(INT_MIN));
}

/* Every name glibc knows parses back to its number, in either case. */
static void test_round_trip(void) {
        unsigned n = 0;

        for (int i = 1; i <= ERRNO_MAX; i++) {
                const char *name = errno_to_name(i);
                char lower[64];
                int e = 0;

                if (!name)
                        continue;
                n++;

                ASSERT_RET(errno_from_name(name, &e), 0);
                ASSERT_EQ(e, i);

                for (size_t k = 0; k < sizeof(lower); k++) {
                        lower[k] = (char) (name[k] >= 'A' && name[k] <= 'Z' ?
                                           name[k] - 'A' + 'a' : name[k]);
                        if (name[k] == '\0')
                                break;
                }
                ASSERT_RET(errno_from_name(lower, &e), 0);
                ASSERT_EQ(e, i);
        }

        /* glibc 2.36 knows 133 numbers; fewer than 100 means something
         * is wrong with the lookup, not with glibc. */
        ASSERT_TRUE(n >= 100);
}

static void test_suggest(void) {
        const char *s = NULL;

        ASSERT_RET(errno_suggest("ENOENTT", &s), 1);
        ASSERT_STREQ(s, "ENOENT");
        ASSERT_RET(errno_suggest("NOMEM", &s), 1);
        ASSERT_STREQ(s, "ENOMEM");
        ASSERT_RET(errno_suggest("enomen", &s), 1);
        ASSERT_STREQ(s, "ENOMEM");
        ASSERT_RET(errno_suggest("EACCESS", &s), 1);
        ASSERT_STREQ(s, "EACCES");
        ASSERT_RET(errno_suggest("EINVALID", &s), 2);
        ASSERT_STREQ(s, "EINVAL");
        ASSERT_RET(errno_suggest("ENOMEM", &s), 0);
        ASSERT_STREQ(s, "ENOMEM");

        /* Nothing plausible: no suggestion, and s untouched. */
        s = "untouched";
        ASSERT_RET(errno_suggest("banana", &s), -ENOENT);
        ASSERT_RET(errno_suggest("X", &s), -ENOENT);
        ASSERT_RET(errno_suggest("ENOMEMENOMEMENOMEMENOMEMENOMEMENOMEM", &s), -ENOENT);
        ASSERT_STREQ(s, "untouched");

        ASSERT_RET(errno_suggest("", &s), -EINVAL);
        ASSERT_RET(errno_suggest(NULL, &s), -EINVAL);
}

int main(void) {
        TEST_RUN(test_from_name);
        TEST_RUN(test_from_number);
        TEST_RUN(test_from_invalid);
        TEST_RUN(test_to_name);
        TEST_RUN(test_round_trip);
        TEST_RUN(test_suggest);
        return 0;
}
