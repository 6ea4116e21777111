/* SPDX-License-Identifier: MIT */
#pragma once

/* Assertions for the unit tests. Each failure names the expression, what
 * was expected and what was seen, then exits 1 (meson: fail). A test that
 * cannot run exits 77 (meson: skip) after saying why. */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_TEST_SKIP 77

/* Renders a return value, naming negative errnos: "-22 (-EINVAL)". Not
 * errno_to_name(), so that the test of that function does not rely on it. */
static inline const char *test_ret_str(char *buf, size_t n, intmax_t v) {
        const char *name = v < 0 && v >= -4095 ? strerrorname_np((int) -v) : NULL;

        if (name)
                snprintf(buf, n, "%" PRIdMAX " (-%s)", v, name);
        else
                snprintf(buf, n, "%" PRIdMAX, v);
        return buf;
}

#define test_fail(fmt, ...)                                                     \
        do {                                                                    \
                fprintf(stderr, "%s:%d: FAIL: " fmt "\n",                       \
                        __FILE__, __LINE__, __VA_ARGS__);                       \
                exit(EXIT_FAILURE);                                             \
        } while (false)

/* Writes text to a new file /tmp/NAME-XXXXXX and returns its path (free
 * and unlink it), for tests that read a file such as /proc/kallsyms. */
static inline char *test_write_fixture(const char *name, const char *text) {
        char *p;
        FILE *f;
        int fd;

        if (asprintf(&p, "/tmp/%s-XXXXXX", name) < 0)
                test_fail("%s", "asprintf: out of memory");
        fd = mkstemp(p);
        if (fd < 0)
                test_fail("mkstemp: %s", strerror(errno));
        f = fdopen(fd, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                test_fail("writing '%s': %s", p, strerror(errno));
        return p;
}

#define ASSERT_EQ(expr, expected)                                               \
        do {                                                                    \
                intmax_t _seen = (intmax_t) (expr), _exp = (intmax_t) (expected); \
                if (_seen != _exp)                                              \
                        test_fail("%s: expected %" PRIdMAX ", seen %" PRIdMAX,  \
                                  #expr, _exp, _seen);                          \
        } while (false)

#define ASSERT_EQ_U64(expr, expected)                                           \
        do {                                                                    \
                uint64_t _seen = (uint64_t) (expr), _exp = (uint64_t) (expected); \
                if (_seen != _exp)                                              \
                        test_fail("%s: expected %" PRIu64 ", seen %" PRIu64,    \
                                  #expr, _exp, _seen);                          \
        } while (false)

/* For return codes: compares exactly and prints errno names. */
#define ASSERT_RET(expr, expected)                                              \
        do {                                                                    \
                intmax_t _seen = (intmax_t) (expr), _exp = (intmax_t) (expected); \
                char _b1[64], _b2[64];                                          \
                if (_seen != _exp)                                              \
                        test_fail("%s: expected %s, seen %s", #expr,            \
                                  test_ret_str(_b1, sizeof(_b1), _exp),         \
                                  test_ret_str(_b2, sizeof(_b2), _seen));       \
        } while (false)

/* Success is any value >= 0. */
#define ASSERT_OK(expr)                                                         \
        do {                                                                    \
                intmax_t _seen = (intmax_t) (expr);                             \
                char _b[64];                                                    \
                if (_seen < 0)                                                  \
                        test_fail("%s: expected success (>= 0), seen %s", #expr, \
                                  test_ret_str(_b, sizeof(_b), _seen));         \
        } while (false)

#define ASSERT_TRUE(expr)                                                       \
        do {                                                                    \
                if (!(expr))                                                    \
                        test_fail("%s: expected true, seen false", #expr);      \
        } while (false)

#define ASSERT_FALSE(expr)                                                      \
        do {                                                                    \
                if (expr)                                                       \
                        test_fail("%s: expected false, seen true", #expr);      \
        } while (false)

/* NULL-safe; NULL only equals NULL. */
#define ASSERT_STREQ(expr, expected)                                            \
        do {                                                                    \
                const char *_seen = (expr), *_exp = (expected);                 \
                if (!_seen != !_exp || (_seen && strcmp(_seen, _exp) != 0))     \
                        test_fail("%s: expected %s%s%s, seen %s%s%s", #expr,    \
                                  _exp ? "\"" : "", _exp ?: "NULL", _exp ? "\"" : "", \
                                  _seen ? "\"" : "", _seen ?: "NULL", _seen ? "\"" : ""); \
        } while (false)

#define ASSERT_NULL(expr)                                                       \
        do {                                                                    \
                const void *_seen = (expr);                                     \
                if (_seen)                                                      \
                        test_fail("%s: expected NULL, seen %p", #expr, _seen);  \
        } while (false)

#define ASSERT_NOT_NULL(expr)                                                   \
        do {                                                                    \
                if (!(expr))                                                    \
                        test_fail("%s: expected non-NULL, seen NULL", #expr);   \
        } while (false)

#define TEST_SKIP(fmt, ...)                                                     \
        do {                                                                    \
                printf("SKIP: " fmt "\n", ##__VA_ARGS__);                       \
                exit(EXIT_TEST_SKIP);                                           \
        } while (false)

/* Runs one test function and says so, so a failure's context is visible. */
#define TEST_RUN(fn)                                                            \
        do {                                                                    \
                printf("%s\n", #fn);                                            \
                fflush(stdout);                                                 \
                fn();                                                           \
        } while (false)
