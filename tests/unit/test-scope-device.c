/* SPDX-License-Identifier: MIT */
/* Device scopes in the engine: which functions take one, and a block
 * device named by a user found in a sysfs tree built here the way the
 * kernel lays it out (class/block/NAME links to the device's directory,
 * block/NAME for whole disks only, dev/block/MAJ:MIN links, a partition's
 * directory inside its disk's, loop/ only while a loop device has a file):
 * its diskseq, partitions and empty loop devices refused, names that are
 * not names refused before anything is read. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "scope-device.h"
#include "test-util.h"

static char root[] = "/tmp/test-scope-device-XXXXXX";

static void write_file(const char *rel, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        f = fopen(path, "w");
        ASSERT_NOT_NULL(f);
        fputs(text, f);
        fclose(f);
}

static void make_dir(const char *rel) {
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        ASSERT_OK(mkdir(path, 0755) < 0 ? -errno : 0);
}

static void make_link(const char *target, const char *rel) {
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        ASSERT_OK(symlink(target, path) < 0 ? -errno : 0);
}

/* A disk NAME (MAJ:MIN, diskseq SEQ; 0: none) as sysfs shows it. */
static void add_disk(const char *name, unsigned maj, unsigned min, unsigned long long seq, bool loop_file) {
        char rel[256], buf[64];

        snprintf(rel, sizeof(rel), "devices/%s", name);
        make_dir(rel);
        snprintf(rel, sizeof(rel), "devices/%s/dev", name);
        snprintf(buf, sizeof(buf), "%u:%u\n", maj, min);
        write_file(rel, buf);
        if (seq) {
                snprintf(rel, sizeof(rel), "devices/%s/diskseq", name);
                snprintf(buf, sizeof(buf), "%llu\n", seq);
                write_file(rel, buf);
        }
        if (loop_file) {
                snprintf(rel, sizeof(rel), "devices/%s/loop", name);
                make_dir(rel);
        }
        snprintf(buf, sizeof(buf), "../../devices/%s", name);
        snprintf(rel, sizeof(rel), "class/block/%s", name);
        make_link(buf, rel);
        snprintf(buf, sizeof(buf), "../devices/%s", name);
        snprintf(rel, sizeof(rel), "block/%s", name);
        make_link(buf, rel);
        snprintf(buf, sizeof(buf), "../../../devices/%s", name);
        snprintf(rel, sizeof(rel), "dev/block/%u:%u", maj, min);
        make_link(buf, rel);
}

static void add_partition(const char *disk, const char *name, unsigned maj, unsigned min) {
        char rel[256], buf[64];

        snprintf(rel, sizeof(rel), "devices/%s/%s", disk, name);
        make_dir(rel);
        snprintf(rel, sizeof(rel), "devices/%s/%s/partition", disk, name);
        write_file(rel, "1\n");
        snprintf(rel, sizeof(rel), "devices/%s/%s/dev", disk, name);
        snprintf(buf, sizeof(buf), "%u:%u\n", maj, min);
        write_file(rel, buf);
        snprintf(buf, sizeof(buf), "../../devices/%s/%s", disk, name);
        snprintf(rel, sizeof(rel), "class/block/%s", name);
        make_link(buf, rel);
        snprintf(buf, sizeof(buf), "../../../devices/%s/%s", disk, name);
        snprintf(rel, sizeof(rel), "dev/block/%u:%u", maj, min);
        make_link(buf, rel);
}

static void test_functions(void) {
        ASSERT_EQ(device_arg_for("should_fail_bio"), INJECT_DEVICE_ARG_BIO);
        ASSERT_EQ(device_arg_for("should_failslab"), INJECT_DEVICE_ARG_NONE);
        ASSERT_EQ(device_arg_for(""), INJECT_DEVICE_ARG_NONE);
        ASSERT_EQ(device_arg_for(NULL), INJECT_DEVICE_ARG_NONE);
        ASSERT_NOT_NULL(strstr(device_scope_functions, "should_fail_bio"));
}

static void test_lookup(void) {
        BlockDisk d;
        char name[BLOCK_NAME_MAX];

        /* Every way of naming loop3: the same disk. */
        const char *const names[] = { "loop3", "/dev/loop3", "7:3" };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                memset(&d, 0, sizeof(d));
                ASSERT_OK(scope_device_lookup(root, names[i], &d));
                ASSERT_STREQ(d.name, "loop3");
                ASSERT_EQ_U64(d.diskseq, 42);
                ASSERT_TRUE(d.dev == makedev(7, 3));
                ASSERT_TRUE(d.loop);
        }
        ASSERT_OK(scope_device_lookup(root, "sda", &d));
        ASSERT_FALSE(d.loop);
        ASSERT_EQ_U64(d.diskseq, 1);

        /* A partition names its disk in the refusal. */
        memset(&d, 0, sizeof(d));
        ASSERT_RET(scope_device_lookup(root, "sda1", &d), -EISDIR);
        ASSERT_STREQ(d.name, "sda");
        ASSERT_RET(scope_device_lookup(root, "8:1", &d), -EISDIR);
        /* A loop device with no file, a disk with no diskseq: nothing to name. */
        ASSERT_RET(scope_device_lookup(root, "loop4", &d), -ENOMEDIUM);
        ASSERT_RET(scope_device_lookup(root, "old0", &d), -ENOMEDIUM);
        ASSERT_RET(scope_device_lookup(root, "loop99", &d), -ENOENT);
        ASSERT_RET(scope_device_lookup(root, "9:9", &d), -ENOENT);
        /* Not names: refused before anything is read, so never a path. */
        const char *const bad[] = { "", ".", "..", "../sda", "/dev/../sda", "sd a", "loop3/loop",
                                    "7:", ":3", "7:3x", "-1:3", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ASSERT_RET(scope_device_lookup(root, bad[i], &d), -EINVAL);
        ASSERT_RET(scope_device_lookup(root, NULL, &d), -EINVAL);

        ASSERT_TRUE(scope_device_is_netdev(root, "eth0"));
        ASSERT_FALSE(scope_device_is_netdev(root, "loop3"));
        ASSERT_FALSE(scope_device_is_netdev(root, "../net/eth0"));

        ASSERT_EQ(scope_device_alive(root, 42, name), 1);
        ASSERT_STREQ(name, "loop3");
        ASSERT_EQ(scope_device_alive(root, 43, NULL), 0);
}

int main(void) {
        char cmd[600];

        ASSERT_NOT_NULL(mkdtemp(root));
        make_dir("devices");
        make_dir("class");
        make_dir("class/block");
        make_dir("block");
        make_dir("dev");
        make_dir("dev/block");
        make_dir("class/net");
        make_dir("class/net/eth0");
        add_disk("loop3", 7, 3, 42, true);
        add_disk("loop4", 7, 4, 43 - 1 + 100, false);
        add_disk("sda", 8, 0, 1, false);
        add_disk("old0", 250, 0, 0, false);
        add_partition("sda", "sda1", 8, 1);

        test_functions();
        test_lookup();

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : 1;
}
