/* SPDX-License-Identifier: MIT */

#include <errno.h>

#include "format-table.h"
#include "test-util.h"

/* Prints t into a string, for comparison. */
static char *print_to_string(const Table *t, TablePrintFlags flags) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        ASSERT_NOT_NULL(f);
        ASSERT_RET(table_print(t, f, flags), 0);
        ASSERT_EQ(fclose(f), 0);
        return buf;
}

static void test_basic(void) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_free_ char *s = NULL, *n = NULL;

        ASSERT_RET(table_new(&t, "ID", "FUNCTION", "ERROR", "LEFT", NULL), 0);
        ASSERT_RET(table_set_align(t, 0, TABLE_ALIGN_RIGHT), 0);
        ASSERT_RET(table_set_align(t, 3, TABLE_ALIGN_RIGHT), 0);
        ASSERT_EQ(table_get_rows(t), 0);

        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "1"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "should_failslab"), 0);
        ASSERT_EQ(table_get_rows(t), 1);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_RED, "ENOMEM"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "5min"), 0);
        ASSERT_EQ(table_get_rows(t), 1);

        ASSERT_RET(table_add_cellf(t, TABLE_COLOR_NONE, "%d", 12), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "open_ctree"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, NULL), 0);
        ASSERT_RET(table_add_cellf(t, TABLE_COLOR_GREY, "%ss", "30"), 0);
        ASSERT_EQ(table_get_rows(t), 2);

        s = print_to_string(t, 0);
        ASSERT_STREQ(s,
                     "ID  FUNCTION         ERROR   LEFT\n"
                     " 1  should_failslab  ENOMEM  5min\n"
                     "12  open_ctree                30s\n");

        n = print_to_string(t, TABLE_PRINT_NO_HEADER);
        ASSERT_STREQ(n,
                     " 1  should_failslab  ENOMEM  5min\n"
                     "12  open_ctree                30s\n");
}

static void test_last_column_unpadded(void) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_free_ char *s = NULL;

        ASSERT_RET(table_new(&t, "A", "B", NULL), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "x"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "long value"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "yyy"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "z"), 0);

        s = print_to_string(t, 0);
        ASSERT_STREQ(s,
                     "A    B\n"
                     "x    long value\n"
                     "yyy  z\n");
}

static void test_color(void) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_free_ char *s = NULL, *plain = NULL;

        ASSERT_RET(table_new(&t, "STATE", "N", NULL), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_GREEN, "on"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "1"), 0);

        /* Colors wrap the text only; padding stays outside, so widths are
         * unaffected by the escape sequences. */
        s = print_to_string(t, TABLE_PRINT_COLOR);
        ASSERT_STREQ(s,
                     "\033[1mSTATE\033[0m  \033[1mN\033[0m\n"
                     "\033[32mon\033[0m     1\n");

        plain = print_to_string(t, 0);
        ASSERT_STREQ(plain,
                     "STATE  N\n"
                     "on     1\n");

        ASSERT_RET(table_add_cell(t, _TABLE_COLOR_MAX, "x"), -EINVAL);
        ASSERT_RET(table_add_cell(t, (TableColor) -1, "x"), -EINVAL);
}

static void test_escaping(void) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_free_ char *s = NULL;

        ASSERT_RET(table_new(&t, "COMM", "N", NULL), 0);
        /* A process picks its own comm: it must not reach the terminal raw. */
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "\033[2Jevil\r\n"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "1"), 0);
        /* Valid UTF-8 passes and counts one column per code point. */
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "café"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "2"), 0);
        /* Invalid UTF-8, a C1 control (U+009B, CSI) and DEL are escaped. */
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "a\xff\xc2\x9b\x7f"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "3"), 0);
        /* Truncated sequence, overlong '/', surrogate, beyond U+10FFFF. */
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE,
                                  "\xe2\x82|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "4"), 0);
        /* 2-, 3- and 4-byte sequences at the edges of validity. */
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE,
                                  "\xc2\xa0\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"), 0);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "5"), 0);

        s = print_to_string(t, 0);
        ASSERT_STREQ(s,
                     "COMM                                             N\n"
                     "\\x1b[2Jevil\\x0d\\x0a                              1\n"
                     "café                                             2\n"
                     "a\\xff\\xc2\\x9b\\x7f                                3\n"
                     "\\xe2\\x82|\\xc0\\xaf|\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80  4\n"
                     "\xc2\xa0\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"
                     "                                             5\n");
}

static void test_errors(void) {
        _cleanup_(table_freep) Table *t = NULL;
        Table *u = (Table *) 0x1;
        FILE *f;

        ASSERT_RET(table_new(&u, (const char *) NULL, NULL), -EINVAL);
        ASSERT_TRUE(u == (Table *) 0x1);
        ASSERT_RET(table_new(NULL, "A", NULL), -EINVAL);

        ASSERT_RET(table_new(&t, "A", "B", NULL), 0);
        ASSERT_RET(table_set_align(t, 2, TABLE_ALIGN_RIGHT), -EINVAL);
        ASSERT_RET(table_set_align(t, 1, (TableAlign) 7), -EINVAL);
        ASSERT_RET(table_add_cell(NULL, TABLE_COLOR_NONE, "x"), -EINVAL);

        /* An incomplete row is a caller bug. */
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "x"), 0);
        ASSERT_RET(table_print(t, stdout, 0), -EINVAL);
        ASSERT_RET(table_add_cell(t, TABLE_COLOR_NONE, "y"), 0);

        /* Write errors surface. */
        f = fopen("/dev/full", "we");
        if (f) {
                ASSERT_RET(table_print(t, f, 0), -ENOSPC);
                (void) fclose(f);
        } else
                printf("/dev/full not available, not testing write errors\n");

        ASSERT_NULL(table_free(NULL));
}

/* Many rows, to go through reallocation. */
static void test_many(void) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_free_ char *s = NULL;
        const char *last;

        ASSERT_RET(table_new(&t, "N", NULL), 0);
        ASSERT_RET(table_set_align(t, 0, TABLE_ALIGN_RIGHT), 0);
        for (int i = 0; i < 1000; i++)
                ASSERT_RET(table_add_cellf(t, TABLE_COLOR_NONE, "%d", i), 0);
        ASSERT_EQ(table_get_rows(t), 1000);

        s = print_to_string(t, 0);
        ASSERT_EQ(strlen(s), 1001 * 4);
        ASSERT_TRUE(strncmp(s, "  N\n  0\n", 8) == 0);
        last = s + strlen(s) - 4;
        ASSERT_STREQ(last, "999\n");
}

int main(void) {
        TEST_RUN(test_basic);
        TEST_RUN(test_last_column_unpadded);
        TEST_RUN(test_color);
        TEST_RUN(test_escaping);
        TEST_RUN(test_errors);
        TEST_RUN(test_many);
        return 0;
}
