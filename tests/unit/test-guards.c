/* SPDX-License-Identifier: MIT */
/* The guard table: which functions have guards and what they say, and the
 * bootstrap cache's address read from kallsyms as a data symbol, refused
 * when hidden or missing. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "guards.h"
#include "kallsyms.h"
#include "test-util.h"

static void test_table(void) {
        const Guard *g;

        g = guard_find("should_failslab");
        ASSERT_NOT_NULL(g);
        ASSERT_EQ(g->kind, INJECT_GUARD_FAILSLAB);
        ASSERT_NOT_NULL(g->conditions[0]);
        ASSERT_NOT_NULL(strstr(g->conditions[0], "__GFP_NOFAIL"));
        ASSERT_NOT_NULL(strstr(g->conditions[1], "bootstrap"));
        ASSERT_NULL(g->conditions[2]);

        g = guard_find("should_fail_alloc_page");
        ASSERT_NOT_NULL(g);
        ASSERT_EQ(g->kind, INJECT_GUARD_FAIL_ALLOC_PAGE);
        ASSERT_NOT_NULL(strstr(g->conditions[0], "__GFP_NOFAIL"));
        ASSERT_NULL(g->conditions[1]);

        ASSERT_NULL(guard_find("__x64_sys_openat"));
        ASSERT_NULL(guard_find("should_failslab_x"));
        ASSERT_NULL(guard_find(NULL));
}

static void test_resolve(void) {
        _cleanup_free_ char *p = test_write_fixture("test-guards",
                "ffffffff81000000 T _stext\n"
                "ffffffff81000100 T kmem_cache_alloc\n"
                "ffffffff82000040 t kmem_cache\t[mymod]\n"      /* a module's text: not it */
                "ffffffff82345678 D kmem_cache\n");
        _cleanup_free_ char *hidden = test_write_fixture("test-guards",
                "0000000000000000 T _stext\n"
                "0000000000000000 D kmem_cache\n");
        _cleanup_free_ char *none = test_write_fixture("test-guards", "ffffffff81000000 T _stext\n");
        uint64_t a = 1;

        ASSERT_RET(guard_resolve(guard_find("should_failslab"), p, &a), 0);
        ASSERT_EQ_U64(a, 0xffffffff82345678ULL);
        ASSERT_RET(guard_resolve(guard_find("should_fail_alloc_page"), none, &a), 0);
        ASSERT_EQ_U64(a, 0);
        ASSERT_RET(guard_resolve(NULL, none, &a), 0);
        ASSERT_EQ_U64(a, 0);

        a = 7;
        ASSERT_RET(guard_resolve(guard_find("should_failslab"), hidden, &a), -EPERM);
        ASSERT_RET(guard_resolve(guard_find("should_failslab"), none, &a), -ENXIO);
        ASSERT_RET(guard_resolve(guard_find("should_failslab"), "/nonexistent/kallsyms", &a), -ENOENT);
        ASSERT_EQ_U64(a, 7);    /* untouched on failure */

        (void) unlink(p);
        (void) unlink(hidden);
        (void) unlink(none);
}

int main(void) {
        test_table();
        test_resolve();
        return 0;
}
