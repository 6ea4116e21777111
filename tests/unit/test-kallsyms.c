/* SPDX-License-Identifier: MIT */
/* kallsyms parsing: sizes come from the next symbol, lookups by name prefer
 * vmlinux, and a kernel that hides addresses is reported, not misread. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cleanup.h"
#include "kallsyms.h"
#include "test-util.h"

static void test_sizes_and_lookup(void) {
        _cleanup_free_ char *p = test_write_fixture("test-kallsyms",
                "ffffffff81000000 T _stext\n"
                "ffffffff81000100 t helper_a\n"
                "ffffffff81000100 t helper_a_alias\n"
                "ffffffff81000180 D some_data\n"
                "ffffffff81000200 T do_thing\n"
                "ffffffff81000300 T end_of_text\n"
                "ffffffffa0000000 t do_thing\t[mymod]\n"
                "ffffffffa0000040 t mod_fn\t[mymod]\n");
        Kallsyms *k = NULL;
        const KSym *s;

        ASSERT_RET(kallsyms_load(p, &k), 0);
        ASSERT_EQ(k->n, 7);     /* the data symbol is not text */

        s = kallsyms_find(k, "helper_a");
        ASSERT_NOT_NULL(s);
        ASSERT_EQ_U64(s->addr, 0xffffffff81000100ULL);
        ASSERT_EQ_U64(s->size, 0x100);  /* up to do_thing, skipping the alias and the data */

        s = kallsyms_find(k, "do_thing");       /* vmlinux wins over the module's */
        ASSERT_NOT_NULL(s);
        ASSERT_NULL(s->module);
        ASSERT_EQ_U64(s->size, 0x100);

        s = kallsyms_find(k, "mod_fn");
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(s->module, "mymod");
        ASSERT_EQ_U64(s->size, 0);      /* the last symbol has no known end */

        ASSERT_NULL(kallsyms_find(k, "missing"));

        s = kallsyms_lookup_addr(k, 0xffffffff81000250ULL);
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(s->name, "do_thing");
        ASSERT_NULL(kallsyms_lookup_addr(k, 0xffffffff80000000ULL));

        k = kallsyms_free(k);
        ASSERT_NULL(k);
        unlink(p);
}

static void test_format_addr(void) {
        _cleanup_free_ char *p = test_write_fixture("test-kallsyms",
                "ffffffff81000000 T _stext\n"
                "ffffffff81000200 T do_thing\n"
                "ffffffff81000300 T end_of_text\n"
                "ffffffffa0000000 t mod_fn\t[mymod]\n"
                "ffffffffa0000040 t mod_last\t[mymod]\n");
        Kallsyms *k = NULL;
        char buf[64];

        ASSERT_RET(kallsyms_load(p, &k), 0);
        ASSERT_RET(kallsyms_format_addr(k, 0xffffffff81000234ULL, buf, sizeof(buf)), 0);
        ASSERT_STREQ(buf, "do_thing+0x34");
        ASSERT_RET(kallsyms_format_addr(k, 0xffffffffa0000010ULL, buf, sizeof(buf)), 0);
        ASSERT_STREQ(buf, "mod_fn+0x10 [mymod]");
        /* Beyond the last symbol (a BPF trampoline, say): no symbol's, and
         * never shown as the address. */
        strcpy(buf, "untouched");
        ASSERT_RET(kallsyms_format_addr(k, 0xffffffffc0001234ULL, buf, sizeof(buf)), -ENOENT);
        ASSERT_STREQ(buf, "untouched");
        /* Below the first. */
        ASSERT_RET(kallsyms_format_addr(k, 0xffffffff80000000ULL, buf, sizeof(buf)), -ENOENT);
        /* Without kallsyms at all; then truncated to the buffer. */
        ASSERT_RET(kallsyms_format_addr(NULL, 0xffffffff81000234ULL, buf, sizeof(buf)), -ENOENT);
        ASSERT_STREQ(buf, "untouched");
        ASSERT_RET(kallsyms_format_addr(k, 0xffffffff81000234ULL, buf, 5), 0);
        ASSERT_STREQ(buf, "do_t");

        kallsyms_free(k);
        unlink(p);
}

static void test_hidden_addresses(void) {
        _cleanup_free_ char *p = test_write_fixture("test-kallsyms",
                "0000000000000000 T _stext\n"
                "0000000000000000 T do_thing\n");
        Kallsyms *k = NULL;

        ASSERT_RET(kallsyms_load(p, &k), -EPERM);
        ASSERT_NULL(k);
        unlink(p);
}

static void test_missing_file(void) {
        Kallsyms *k = NULL;

        ASSERT_RET(kallsyms_load("/nonexistent/kallsyms", &k), -ENOENT);
        ASSERT_NULL(k);
}

/* Read on first use; read again on request, not sooner than the interval
 * allows; a failed read keeps the old table and is not retried sooner. */
static void test_cache(void) {
        _cleanup_free_ char *p = test_write_fixture("test-kallsyms", "ffffffff81000000 T _stext\n"
                                               "ffffffff81000200 T end_of_text\n");
        KallsymsCache c = { .path = p, .min_interval_usec = 10 };
        const Kallsyms *k;
        char buf[64];
        FILE *f;

        ASSERT_RET(kallsyms_cache_get(&c, 100, &k), 0);
        ASSERT_EQ(k->n, 2);
        ASSERT_RET(kallsyms_format_addr(k, 0xffffffffa0000010ULL, buf, sizeof(buf)), -ENOENT);

        /* A module is loaded. */
        f = fopen(p, "a");
        ASSERT_NOT_NULL(f);
        fputs("ffffffffa0000000 t mod_fn\t[mymod]\nffffffffa0000100 t mod_end\t[mymod]\n", f);
        fclose(f);
        ASSERT_RET(kallsyms_cache_get(&c, 101, &k), 0);
        ASSERT_EQ(k->n, 2);                                     /* no reason to read again */
        ASSERT_RET(kallsyms_cache_refresh(&c, 105), 0);         /* too soon */
        ASSERT_RET(kallsyms_cache_refresh(&c, 110), 1);
        ASSERT_RET(kallsyms_cache_get(&c, 111, &k), 0);
        ASSERT_EQ(k->n, 4);
        ASSERT_RET(kallsyms_format_addr(k, 0xffffffffa0000010ULL, buf, sizeof(buf)), 0);
        ASSERT_STREQ(buf, "mod_fn+0x10 [mymod]");

        /* Unreadable now: the refresh fails, the table read before stays. */
        ASSERT_EQ(unlink(p), 0);
        ASSERT_RET(kallsyms_cache_refresh(&c, 200), -ENOENT);
        ASSERT_RET(kallsyms_cache_get(&c, 201, &k), 0);
        ASSERT_EQ(k->n, 4);
        kallsyms_cache_done(&c);

        /* Never readable: the error, and no new read before the interval. */
        ASSERT_RET(kallsyms_cache_get(&c, 300, &k), -ENOENT);
        f = fopen(p, "w");
        ASSERT_NOT_NULL(f);
        fputs("ffffffff81000000 T _stext\nffffffff81000200 T end_of_text\n", f);
        fclose(f);
        ASSERT_RET(kallsyms_cache_get(&c, 305, &k), -ENOENT);
        ASSERT_RET(kallsyms_cache_get(&c, 310, &k), 0);
        ASSERT_EQ(k->n, 2);
        kallsyms_cache_done(&c);
        unlink(p);
}

int main(void) {
        TEST_RUN(test_sizes_and_lookup);
        TEST_RUN(test_format_addr);
        TEST_RUN(test_hidden_addresses);
        TEST_RUN(test_missing_file);
        TEST_RUN(test_cache);
        return 0;
}
