/* SPDX-License-Identifier: MIT */

#include "test-util.h"
#include "utf8.h"

#define CHAR_LEN(s) utf8_char_len(s, sizeof(s) - 1)
#define VALID(s) utf8_is_valid(s, sizeof(s) - 1)

static void test_char_len(void) {
        ASSERT_EQ(CHAR_LEN("a"), 1);
        ASSERT_EQ(utf8_char_len("\0", 1), 1);
        ASSERT_EQ(CHAR_LEN("\x7f"), 1);
        ASSERT_EQ(CHAR_LEN("\xc2\x80"), 2);           /* U+0080, lowest 2-byte */
        ASSERT_EQ(CHAR_LEN("\xc3\xa9"), 2);           /* é */
        ASSERT_EQ(CHAR_LEN("\xdf\xbf"), 2);           /* U+07FF */
        ASSERT_EQ(CHAR_LEN("\xe0\xa0\x80"), 3);       /* U+0800, lowest 3-byte */
        ASSERT_EQ(CHAR_LEN("\xed\x9f\xbf"), 3);       /* U+D7FF, below surrogates */
        ASSERT_EQ(CHAR_LEN("\xee\x80\x80"), 3);       /* U+E000, above surrogates */
        ASSERT_EQ(CHAR_LEN("\xef\xbf\xbf"), 3);       /* U+FFFF */
        ASSERT_EQ(CHAR_LEN("\xf0\x90\x80\x80"), 4);   /* U+10000, lowest 4-byte */
        ASSERT_EQ(CHAR_LEN("\xf0\x9f\x98\x80"), 4);   /* 😀 */
        ASSERT_EQ(CHAR_LEN("\xf4\x8f\xbf\xbf"), 4);   /* U+10FFFF, highest */
        /* Only the first character counts. */
        ASSERT_EQ(CHAR_LEN("\xc3\xa9xyz"), 2);
}

static void test_char_len_invalid(void) {
        ASSERT_EQ(utf8_char_len("a", 0), 0);
        ASSERT_EQ(CHAR_LEN("\x80"), 0);               /* lone continuation */
        ASSERT_EQ(CHAR_LEN("\xbf"), 0);
        ASSERT_EQ(CHAR_LEN("\xc0\xaf"), 0);           /* overlong '/' */
        ASSERT_EQ(CHAR_LEN("\xc1\xbf"), 0);           /* overlong */
        ASSERT_EQ(CHAR_LEN("\xe0\x9f\xbf"), 0);       /* overlong 3-byte */
        ASSERT_EQ(CHAR_LEN("\xf0\x8f\xbf\xbf"), 0);   /* overlong 4-byte */
        ASSERT_EQ(CHAR_LEN("\xed\xa0\x80"), 0);       /* U+D800, surrogate */
        ASSERT_EQ(CHAR_LEN("\xed\xbf\xbf"), 0);       /* U+DFFF, surrogate */
        ASSERT_EQ(CHAR_LEN("\xf4\x90\x80\x80"), 0);   /* U+110000 */
        ASSERT_EQ(CHAR_LEN("\xf5\x80\x80\x80"), 0);
        ASSERT_EQ(CHAR_LEN("\xff"), 0);
        ASSERT_EQ(CHAR_LEN("\xc3"), 0);               /* truncated */
        ASSERT_EQ(CHAR_LEN("\xe2\x82"), 0);
        ASSERT_EQ(CHAR_LEN("\xf0\x9f\x98"), 0);
        ASSERT_EQ(CHAR_LEN("\xc3x"), 0);              /* not a continuation */
        ASSERT_EQ(CHAR_LEN("\xe2\x82x"), 0);
        ASSERT_EQ(CHAR_LEN("\xf0\x9f\x98x"), 0);
        /* n bounds the read even if the bytes beyond would complete it. */
        ASSERT_EQ(utf8_char_len("\xc3\xa9", 1), 0);
        ASSERT_EQ(utf8_char_len("\xf0\x9f\x98\x80", 3), 0);
}

static void test_is_valid(void) {
        ASSERT_TRUE(utf8_is_valid("", 0));
        ASSERT_TRUE(VALID("hello"));
        ASSERT_TRUE(VALID("caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac"));
        ASSERT_TRUE(VALID("a\0b"));
        ASSERT_FALSE(VALID("caf\xc3"));
        ASSERT_FALSE(VALID("a\xc0\xaf" "b"));
        ASSERT_FALSE(VALID("\xed\xa0\x80\xed\xb0\x80"));   /* CESU-8 pair */
}

int main(void) {
        TEST_RUN(test_char_len);
        TEST_RUN(test_char_len_invalid);
        TEST_RUN(test_is_valid);
        return 0;
}
