/* SPDX-License-Identifier: MIT */
/* The guard table: which functions have guards and what they say, and the
 * bootstrap cache's address read from kallsyms as a data symbol, refused
 * when hidden or missing. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "arg-filters.h"
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

/* Which filters apply where, and the refusals of arg_filters_check(),
 * with a slab directory of one cache, one merged (a link) and none. */
static void test_arg_filters(void) {
        char root[] = "/tmp/test-arg-filters.XXXXXX", path[256];
        InjectError err = {};

        ASSERT_EQ(arg_filters_for("should_failslab"),
                  INJECT_FILTER_GFP_WAIT | INJECT_FILTER_MIN_SIZE | INJECT_FILTER_CACHE);
        ASSERT_EQ(arg_filters_for("should_fail_alloc_page"),
                  INJECT_FILTER_GFP_WAIT | INJECT_FILTER_GFP_HIGHMEM | INJECT_FILTER_MIN_ORDER);
        ASSERT_EQ(arg_filters_for("__x64_sys_openat"), 0);

        ASSERT_NOT_NULL(mkdtemp(root));
        snprintf(path, sizeof(path), "%s/dentry", root);
        ASSERT_RET(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/filp", root);
        ASSERT_RET(symlink(":A-0000256", path), 0);

        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("should_failslab", &(ArgFilters) { .mask = INJECT_FILTER_CACHE, .cache = "dentry" },
                                     root, &err), 0);
        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("__x64_sys_openat", &(ArgFilters) {}, root, &err), 0);
        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("__x64_sys_openat", &(ArgFilters) { .mask = INJECT_FILTER_GFP_WAIT }, root, &err),
                   -EINVAL);
        ASSERT_STREQ(err.name, INJECT_ERROR_BAD_FILTER);
        ASSERT_NOT_NULL(strstr(err.message, "ignore_gfp_wait) do not apply to '__x64_sys_openat'"));
        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("should_failslab", &(ArgFilters) { .mask = INJECT_FILTER_MIN_ORDER }, root, &err),
                   -EINVAL);
        ASSERT_NOT_NULL(strstr(err.message, "min_order (it takes ignore_gfp_wait, min_size and cache)"));
        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("should_failslab", &(ArgFilters) { .mask = INJECT_FILTER_CACHE, .cache = "filp" },
                                     root, &err), -EINVAL);
        ASSERT_NOT_NULL(strstr(err.message, "is merged with other caches"));
        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("should_failslab", &(ArgFilters) { .mask = INJECT_FILTER_CACHE, .cache = "nope" },
                                     root, &err), -ENOENT);
        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("should_failslab", &(ArgFilters) { .mask = INJECT_FILTER_CACHE,
                                                                        .cache = "a_name_of_31_characters_long_xx" },
                                     root, &err), -EINVAL);
        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("should_failslab", &(ArgFilters) { .mask = INJECT_FILTER_CACHE, .cache = "a/b" },
                                     root, &err), -EINVAL);
        /* No SLUB sysfs: any well-formed name. */
        err = (InjectError) {};         /* the first error set is kept */
        ASSERT_RET(arg_filters_check("should_failslab", &(ArgFilters) { .mask = INJECT_FILTER_CACHE, .cache = "nope" },
                                     "/nonexistent", &err), 0);

        snprintf(path, sizeof(path), "%s/dentry", root);
        (void) rmdir(path);
        snprintf(path, sizeof(path), "%s/filp", root);
        (void) unlink(path);
        (void) rmdir(root);
}

int main(void) {
        test_table();
        test_resolve();
        test_arg_filters();
        return 0;
}
