/* SPDX-License-Identifier: MIT */

#include <errno.h>

#include "duration.h"
#include "test-util.h"

static void check_parse(const char *s, uint64_t expected) {
        char b[64];
        uint64_t u = 4242;
        int r;

        r = parse_duration(s, &u);
        if (r != 0)
                test_fail("parse_duration(\"%s\"): expected 0, seen %s",
                          s, test_ret_str(b, sizeof(b), r));
        if (u != expected)
                test_fail("parse_duration(\"%s\"): expected %" PRIu64 "us, seen %" PRIu64 "us",
                          s, expected, u);
}

static void check_parse_fails(const char *s, int expected) {
        char b1[64], b2[64];
        uint64_t u = 4242;
        int r;

        r = parse_duration(s, &u);
        if (r != expected)
                test_fail("parse_duration(\"%s\"): expected %s, seen %s", s,
                          test_ret_str(b1, sizeof(b1), expected), test_ret_str(b2, sizeof(b2), r));
        /* ret untouched on failure. */
        if (u != 4242)
                test_fail("parse_duration(\"%s\"): wrote %" PRIu64 " on failure", s, u);
}

static void test_parse(void) {
        check_parse("30s", 30 * USEC_PER_SEC);
        check_parse("5min", 5 * USEC_PER_MINUTE);
        check_parse("1h30m", USEC_PER_HOUR + 30 * USEC_PER_MINUTE);
        check_parse("1h 30min", USEC_PER_HOUR + 30 * USEC_PER_MINUTE);
        check_parse("500ms", 500 * USEC_PER_MSEC);
        check_parse("2d", 2 * USEC_PER_DAY);
        check_parse("90", 90 * USEC_PER_SEC);
        check_parse("1.5s", 1500 * USEC_PER_MSEC);
        check_parse("0", 0);
        check_parse("0s", 0);
        check_parse("0.0ms", 0);
        check_parse("  1s  ", USEC_PER_SEC);
        check_parse("5 min", 5 * USEC_PER_MINUTE);
        check_parse("1s1ms1us", USEC_PER_SEC + USEC_PER_MSEC + 1);
        check_parse("1s 1s", 2 * USEC_PER_SEC);
        check_parse("1w 2d", 9 * USEC_PER_DAY);
        check_parse("007s", 7 * USEC_PER_SEC);
}

static void test_parse_units(void) {
        static const struct {
                const char *s;
                uint64_t usec;
        } units[] = {
                { "7us", 7 }, { "7usec", 7 },
                { "7ms", 7 * USEC_PER_MSEC }, { "7msec", 7 * USEC_PER_MSEC },
                { "7s", 7 * USEC_PER_SEC }, { "7sec", 7 * USEC_PER_SEC },
                { "1second", USEC_PER_SEC }, { "7seconds", 7 * USEC_PER_SEC },
                { "7m", 7 * USEC_PER_MINUTE }, { "7min", 7 * USEC_PER_MINUTE },
                { "1minute", USEC_PER_MINUTE }, { "7minutes", 7 * USEC_PER_MINUTE },
                { "7h", 7 * USEC_PER_HOUR }, { "7hr", 7 * USEC_PER_HOUR },
                { "1hour", USEC_PER_HOUR }, { "7hours", 7 * USEC_PER_HOUR },
                { "7d", 7 * USEC_PER_DAY }, { "1day", USEC_PER_DAY }, { "7days", 7 * USEC_PER_DAY },
                { "7w", 7 * USEC_PER_WEEK }, { "1week", USEC_PER_WEEK },
                { "7weeks", 7 * USEC_PER_WEEK },
        };

        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                check_parse(units[i].s, units[i].usec);
}

static void test_parse_fractions(void) {
        check_parse("1.5", 1500 * USEC_PER_MSEC);
        check_parse("1.5h", 90 * USEC_PER_MINUTE);
        check_parse("0.5ms", 500);
        check_parse("2.25min 0.5s", 135 * USEC_PER_SEC + 500 * USEC_PER_MSEC);
        /* Below a microsecond is truncated. */
        check_parse("1.5us", 1);
        check_parse("0.0000001s", 0);
        check_parse("0.999999999s", 999999);
        /* Exact however many digits: a hair under a third of a week. */
        check_parse("0.333333333333333333333333333333w", USEC_PER_WEEK / 3 - 1);
        check_parse("0.1w", USEC_PER_WEEK / 10);
        check_parse("0.123456789123d", UINT64_C(10666666580) /* floor(86400e6 * 0.123456789123) */);
}

static void test_parse_invalid(void) {
        check_parse_fails("", -EINVAL);
        check_parse_fails("   ", -EINVAL);
        check_parse_fails("s", -EINVAL);
        check_parse_fails("5x", -EINVAL);
        check_parse_fails("5 sx", -EINVAL);
        check_parse_fails("5S", -EINVAL);
        check_parse_fails("5 mins", -EINVAL);
        check_parse_fails("5s junk", -EINVAL);
        check_parse_fails("5s,", -EINVAL);
        check_parse_fails("5s.", -EINVAL);
        check_parse_fails("1h 30", -EINVAL);
        check_parse_fails("30 1h", -EINVAL);
        check_parse_fails("1 2", -EINVAL);
        check_parse_fails(".5s", -EINVAL);
        check_parse_fails("5.s", -EINVAL);
        check_parse_fails("1..5s", -EINVAL);
        check_parse_fails("+5s", -EINVAL);
        check_parse_fails("5s-", -EINVAL);
        check_parse_fails("infinity", -EINVAL);
        check_parse_fails("0x10s", -EINVAL);
        check_parse_fails("1e3s", -EINVAL);
        check_parse_fails(NULL, -EINVAL);

        check_parse_fails("-", -EINVAL);
        check_parse_fails("-s", -EINVAL);
        check_parse_fails("-5s", -ERANGE);
        check_parse_fails("-0", -ERANGE);
        check_parse_fails(" -1", -ERANGE);
        check_parse_fails("18446744073709551616us", -ERANGE);
        check_parse_fails("18446744073709551616", -ERANGE);
        check_parse_fails("18446744073709552s", -ERANGE);
        check_parse_fails("30500569w", -ERANGE);
        check_parse_fails("18446744073709551615us 1us", -ERANGE);
        check_parse_fails("99999999999999999999999999999h", -ERANGE);
}

static void test_parse_limits(void) {
        check_parse("18446744073709551615us", UINT64_MAX);
        check_parse("18446744073709551615usec", UINT64_MAX);
        check_parse("30500568w", 30500568 * USEC_PER_WEEK);
}

static void check_format(uint64_t usec, const char *expected) {
        char buf[FORMAT_DURATION_MAX];
        uint64_t back = 0;

        ASSERT_STREQ(format_duration(buf, sizeof(buf), usec), expected);

        /* Whatever we print, we read back. */
        if (parse_duration(buf, &back) != 0 || back != usec)
                test_fail("round trip of %" PRIu64 " via \"%s\": seen %" PRIu64, usec, buf, back);
}

static void test_format(void) {
        check_format(0, "0");
        check_format(1, "1us");
        check_format(500 * USEC_PER_MSEC, "500ms");
        check_format(30 * USEC_PER_SEC, "30s");
        check_format(5 * USEC_PER_MINUTE, "5min");
        check_format(USEC_PER_HOUR + 30 * USEC_PER_MINUTE, "1h 30min");
        check_format(1500 * USEC_PER_MSEC, "1s 500ms");
        check_format(2 * USEC_PER_DAY, "2d");
        check_format(USEC_PER_WEEK + USEC_PER_DAY + USEC_PER_HOUR + USEC_PER_MINUTE +
                     USEC_PER_SEC + USEC_PER_MSEC + 1, "1w 1d 1h 1min 1s 1ms 1us");
        check_format(UINT64_MAX, "30500568w 6d 8h 1min 49s 551ms 615us");
}

static void test_format_small_buffer(void) {
        char buf[FORMAT_DURATION_MAX];

        ASSERT_NULL(format_duration(buf, 0, 0));
        ASSERT_NULL(format_duration(buf, 1, 0));
        ASSERT_STREQ(format_duration(buf, 2, 0), "0");
        /* Exactly the length plus the NUL fits; one less does not. */
        ASSERT_NULL(format_duration(buf, 4, 5 * USEC_PER_MINUTE));
        ASSERT_STREQ(format_duration(buf, 5, 5 * USEC_PER_MINUTE), "5min");
        ASSERT_NULL(format_duration(buf, 7, USEC_PER_HOUR + USEC_PER_MINUTE));
        ASSERT_STREQ(format_duration(buf, 8, USEC_PER_HOUR + USEC_PER_MINUTE), "1h 1min");
        ASSERT_NULL(format_duration(NULL, 10, 1));

        /* The macro's buffer fits the longest value. */
        ASSERT_STREQ(FORMAT_DURATION(UINT64_MAX), "30500568w 6d 8h 1min 49s 551ms 615us");
}

/* Round trips over a spread of values, including every boundary of every
 * unit, to catch a component being dropped or doubled. */
static void test_round_trip(void) {
        static const uint64_t units[] = {
                1, USEC_PER_MSEC, USEC_PER_SEC, USEC_PER_MINUTE,
                USEC_PER_HOUR, USEC_PER_DAY, USEC_PER_WEEK,
        };
        uint64_t x = 0x9e3779b97f4a7c15;

        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                for (int d = -1; d <= 1; d++) {
                        char buf[FORMAT_DURATION_MAX];
                        uint64_t back, v = units[i] + (uint64_t) d;

                        ASSERT_NOT_NULL(format_duration(buf, sizeof(buf), v));
                        ASSERT_RET(parse_duration(buf, &back), 0);
                        ASSERT_EQ_U64(back, v);
                }

        for (int i = 0; i < 10000; i++) {
                char buf[FORMAT_DURATION_MAX];
                uint64_t back, v;

                /* xorshift64, shifted down by a varying amount so that all
                 * magnitudes show up. */
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                v = x >> (i % 64);

                ASSERT_NOT_NULL(format_duration(buf, sizeof(buf), v));
                ASSERT_RET(parse_duration(buf, &back), 0);
                ASSERT_EQ_U64(back, v);
        }
}

int main(void) {
        TEST_RUN(test_parse);
        TEST_RUN(test_parse_units);
        TEST_RUN(test_parse_fractions);
        TEST_RUN(test_parse_invalid);
        TEST_RUN(test_parse_limits);
        TEST_RUN(test_format);
        TEST_RUN(test_format_small_buffer);
        TEST_RUN(test_round_trip);
        return 0;
}
