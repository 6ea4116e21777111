/* SPDX-License-Identifier: MIT */
/* The kernel configuration reader: plain and gzip files, the fallback
 * order, and what an unreadable configuration answers. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "kconfig.h"
#include "test-util.h"

static const char sample[] =
        "#\n"
        "# Automatically generated file; DO NOT EDIT.\n"
        "#\n"
        "CONFIG_BPF_SYSCALL=y\n"
        "CONFIG_BPF_LSM=y\n"
        "# CONFIG_FUNCTION_ERROR_INJECTION is not set\n"
        "# CONFIG_BPF_KPROBE_OVERRIDE is not set\n"
        "CONFIG_BTRFS_FS=m\n"
        "CONFIG_LSM=\"landlock,lockdown,yama,bpf\"\n"
        "CONFIG_NR_CPUS=64\n"
        "CONFIG_DISABLED=n\n"
        "not a config line\n";

static char dir[] = "/tmp/test-kconfig.XXXXXX";

static char *path_in_dir(const char *name) {
        char *p;

        ASSERT_TRUE(asprintf(&p, "%s/%s", dir, name) > 0);
        return p;
}

static void write_plain(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        ASSERT_NOT_NULL(f);
        ASSERT_EQ(fputs(text, f) >= 0, 1);
        ASSERT_EQ(fclose(f), 0);
}

static void write_gz(const char *path, const char *text) {
        gzFile g = gzopen(path, "wb");

        ASSERT_NOT_NULL(g);
        ASSERT_EQ(gzputs(g, text), (int) strlen(text));
        ASSERT_EQ(gzclose(g), Z_OK);
}

static void check_sample(const KernelConfig *k) {
        const char *v = NULL;

        ASSERT_TRUE(kconfig_readable(k));
        ASSERT_EQ(kconfig_get(k, "CONFIG_BPF_SYSCALL", NULL), KCONFIG_YES);
        ASSERT_TRUE(kconfig_enabled(k, "CONFIG_BPF_LSM"));
        ASSERT_EQ(kconfig_get(k, "CONFIG_FUNCTION_ERROR_INJECTION", NULL), KCONFIG_UNSET);
        ASSERT_FALSE(kconfig_enabled(k, "CONFIG_BPF_KPROBE_OVERRIDE"));
        ASSERT_EQ(kconfig_get(k, "CONFIG_BTRFS_FS", NULL), KCONFIG_MODULE);
        ASSERT_TRUE(kconfig_enabled(k, "CONFIG_BTRFS_FS"));
        ASSERT_EQ(kconfig_get(k, "CONFIG_LSM", &v), KCONFIG_VALUE);
        ASSERT_STREQ(v, "\"landlock,lockdown,yama,bpf\"");
        ASSERT_EQ(kconfig_get(k, "CONFIG_NR_CPUS", &v), KCONFIG_VALUE);
        ASSERT_STREQ(v, "64");
        ASSERT_EQ(kconfig_get(k, "CONFIG_DISABLED", NULL), KCONFIG_UNSET);
        ASSERT_EQ(kconfig_get(k, "CONFIG_NEVER_MENTIONED", NULL), KCONFIG_UNSET);
        ASSERT_EQ(k->n, 6);
}

static void test_parse(void) {
        KernelConfig *k = calloc(1, sizeof(*k));
        FILE *f = fmemopen((void *) sample, strlen(sample), "r");

        ASSERT_NOT_NULL(k);
        ASSERT_NOT_NULL(f);
        ASSERT_RET(kconfig_parse(k, f), 0);
        fclose(f);
        /* Parsed, but not loaded from a file: not "readable". */
        ASSERT_FALSE(kconfig_readable(k));
        ASSERT_EQ(kconfig_get(k, "CONFIG_BPF_SYSCALL", NULL), KCONFIG_UNKNOWN);
        k->source = strdup("memory");
        check_sample(k);
        kconfig_free(k);
}

static void test_plain_and_gz(void) {
        _cleanup_free_ char *plain = path_in_dir("config-plain"), *gz = path_in_dir("config.gz");
        KernelConfig *k = NULL;

        write_plain(plain, sample);
        write_gz(gz, sample);

        ASSERT_RET(kconfig_load((const char *const[]) { plain, NULL }, &k), 0);
        ASSERT_STREQ(k->source, plain);
        check_sample(k);
        k = kconfig_free(k);

        ASSERT_RET(kconfig_load((const char *const[]) { gz, NULL }, &k), 0);
        ASSERT_STREQ(k->source, gz);
        check_sample(k);
        k = kconfig_free(k);
        (void) unlink(plain);
        (void) unlink(gz);
}

/* The first readable file wins; a missing one and one without a single
 * option are skipped, and each is named if none is readable. */
static void test_fallback(void) {
        _cleanup_free_ char *missing = path_in_dir("missing.gz"), *empty = path_in_dir("empty"),
                           *good = path_in_dir("config-good");
        KernelConfig *k = NULL;

        write_plain(empty, "# nothing here\n");
        write_plain(good, sample);

        ASSERT_RET(kconfig_load((const char *const[]) { missing, empty, good, NULL }, &k), 0);
        ASSERT_STREQ(k->source, good);
        ASSERT_NULL(k->tried);
        check_sample(k);
        k = kconfig_free(k);

        ASSERT_RET(kconfig_load((const char *const[]) { missing, empty, NULL }, &k), 0);
        ASSERT_FALSE(kconfig_readable(k));
        ASSERT_NULL(k->source);
        ASSERT_NOT_NULL(k->tried);
        ASSERT_NOT_NULL(strstr(k->tried, missing));
        ASSERT_NOT_NULL(strstr(k->tried, "No such file or directory"));
        ASSERT_NOT_NULL(strstr(k->tried, empty));
        ASSERT_EQ(k->n, 0);
        /* An unreadable configuration claims nothing either way. */
        ASSERT_EQ(kconfig_get(k, "CONFIG_BPF_SYSCALL", NULL), KCONFIG_UNKNOWN);
        ASSERT_EQ(kconfig_get(k, "CONFIG_FUNCTION_ERROR_INJECTION", NULL), KCONFIG_UNKNOWN);
        ASSERT_FALSE(kconfig_enabled(k, "CONFIG_BPF_SYSCALL"));
        k = kconfig_free(k);
        ASSERT_EQ(kconfig_get(NULL, "CONFIG_BPF_SYSCALL", NULL), KCONFIG_UNKNOWN);
        (void) unlink(empty);
        (void) unlink(good);
}

/* The defaults on this machine: whatever they find, the answer is
 * consistent (a source and options, or no source and the reasons). */
static void test_defaults(void) {
        KernelConfig *k = NULL;

        ASSERT_RET(kconfig_load(NULL, &k), 0);
        if (kconfig_readable(k)) {
                ASSERT_TRUE(k->n > 100);
                ASSERT_NOT_NULL(strstr(k->source, "config"));
                printf("kernel configuration: %s, %zu options\n", k->source, k->n);
        } else {
                ASSERT_NOT_NULL(k->tried);
                ASSERT_NOT_NULL(strstr(k->tried, "/proc/config.gz"));
                printf("no kernel configuration: %s\n", k->tried);
        }
        kconfig_free(k);
}

int main(void) {
        ASSERT_NOT_NULL(mkdtemp(dir));
        test_parse();
        test_plain_and_gz();
        test_fallback();
        test_defaults();
        (void) rmdir(dir);
        return 0;
}
