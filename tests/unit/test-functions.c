/* SPDX-License-Identifier: MIT */
/* The injectable-function table: the error-injection list's format, return
 * value checks per type, and LSM hooks found in real BTF. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "cleanup.h"
#include "functions.h"
#include "test-util.h"

static FunctionTable *parse(const char *text) {
        FunctionTable *t = calloc(1, sizeof(*t));
        FILE *f = fmemopen((void *) text, strlen(text), "r");

        ASSERT_NOT_NULL(t);
        ASSERT_NOT_NULL(f);
        ASSERT_RET(function_table_parse_list(t, f), 0);
        fclose(f);
        function_table_sort(t);
        return t;
}

static void test_list_format(void) {
        FunctionTable *t = parse(
                "open_ctree\tERRNO\n"
                "should_failslab\tERRNO\n"
                "btrfs_fn [btrfs]\tERRNO_NULL\n"
                "some_alloc\tNULL\n"
                "is_ok\tTRUE\n"
                "weird_fn\tFUTURE_TYPE\n"
                "garbage line without type\n"
                "__do_sys_getegid\tERRNO\n"      /* its x64 and ia32 entries, one name */
                "__do_sys_getegid\tERRNO\n");
        const InjectableFunction *f;

        /* The unknown type and the garbage are skipped, a name listed twice
         * is one function. */
        ASSERT_EQ(t->n, 6);
        f = function_table_find(t, "open_ctree");
        ASSERT_NOT_NULL(f);
        ASSERT_EQ(f->type, FUNC_TYPE_ERRNO);
        ASSERT_TRUE(f->listed);
        ASSERT_NULL(f->module);
        f = function_table_find(t, "btrfs_fn");
        ASSERT_NOT_NULL(f);
        ASSERT_STREQ(f->module, "btrfs");
        ASSERT_EQ(f->type, FUNC_TYPE_ERRNO_NULL);
        ASSERT_NULL(function_table_find(t, "weird_fn"));
        ASSERT_NULL(function_table_find(t, "vfs_read"));
        function_table_free(t);
}

static void test_type_ranges(void) {
        ASSERT_TRUE(func_type_accepts(FUNC_TYPE_ERRNO, -12));
        ASSERT_TRUE(func_type_accepts(FUNC_TYPE_ERRNO, -4095));
        ASSERT_FALSE(func_type_accepts(FUNC_TYPE_ERRNO, -4096));
        ASSERT_FALSE(func_type_accepts(FUNC_TYPE_ERRNO, 0));
        ASSERT_FALSE(func_type_accepts(FUNC_TYPE_ERRNO, 5));
        ASSERT_TRUE(func_type_accepts(FUNC_TYPE_NULL, 0));
        ASSERT_FALSE(func_type_accepts(FUNC_TYPE_NULL, -12));
        ASSERT_TRUE(func_type_accepts(FUNC_TYPE_TRUE, 1));
        ASSERT_FALSE(func_type_accepts(FUNC_TYPE_TRUE, 0));
        ASSERT_TRUE(func_type_accepts(FUNC_TYPE_ERRNO_NULL, 0));
        ASSERT_TRUE(func_type_accepts(FUNC_TYPE_ERRNO_NULL, -1));
        ASSERT_FALSE(func_type_accepts(FUNC_TYPE_ERRNO_NULL, 1));
        ASSERT_TRUE(func_type_accepts(FUNC_TYPE_LSM, -13));
        ASSERT_FALSE(func_type_accepts(FUNC_TYPE_LSM, 0));
        ASSERT_EQ(func_type_from_string("ERRNO_NULL"), FUNC_TYPE_ERRNO_NULL);
        ASSERT_EQ(func_type_from_string("errno"), -EINVAL);
        ASSERT_STREQ(func_type_to_string(FUNC_TYPE_LSM), "LSM");
}

/* Reading vmlinux BTF needs no privilege, so this runs on the host. */
static void test_btf_lsm_hooks(void) {
        FunctionTable *t = parse("__x64_sys_openat\tERRNO\nnot_in_btf_at_all\tERRNO\n");
        const InjectableFunction *f;
        struct btf *btf;

        btf = btf__load_vmlinux_btf();
        if (!btf)
                TEST_SKIP("no vmlinux BTF on this machine: %s", strerror(errno));
        ASSERT_RET(function_table_add_btf(t, btf), 0);
        btf__free(btf);

        f = function_table_find(t, "security_file_open");
        ASSERT_NOT_NULL(f);
        ASSERT_EQ(f->type, FUNC_TYPE_LSM);
        ASSERT_FALSE(f->listed);
        ASSERT_TRUE(f->in_btf);
        f = function_table_find(t, "__x64_sys_openat");
        ASSERT_NOT_NULL(f);
        ASSERT_TRUE(f->listed);
        ASSERT_EQ(f->type, FUNC_TYPE_ERRNO);    /* the list's type wins over "LSM" */
        ASSERT_TRUE(f->in_btf);
        f = function_table_find(t, "not_in_btf_at_all");
        ASSERT_NOT_NULL(f);
        ASSERT_FALSE(f->in_btf);
        /* void hooks cannot fail: security_file_free returns nothing. */
        ASSERT_NULL(function_table_find(t, "security_file_free"));
        function_table_free(t);
}

int main(void) {
        TEST_RUN(test_list_format);
        TEST_RUN(test_type_ranges);
        TEST_RUN(test_btf_lsm_hooks);
        return 0;
}
