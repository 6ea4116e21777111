/* SPDX-License-Identifier: MIT */
/* Who owns a loop device (src/daemon/device-owner.c): proof by an fd of
 * its backing file opened read-write (read-only for a read-only disk),
 * the same inode as the loop's, and nothing else: not the file's owner
 * uid, not a path. And the order: a caller whose fd could prove nothing
 * has the daemon open no device. The devices here are stand-ins (a sysfs
 * and a /dev of the test's own, where no device node exists, so any
 * attempt to open one shows as an error); the real ioctls are the VM
 * scenarios' (device-scope, attack-device-owner). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device-owner.h"
#include "test-util.h"

static char root[] = "/tmp/test-device-owner-XXXXXX";
static char image[256], other[256], sysdir[256], devdir[256];

static void setup(void) {
        char path[512];
        FILE *f;

        ASSERT_NOT_NULL(mkdtemp(root));
        snprintf(image, sizeof(image), "%s/alice.img", root);
        snprintf(other, sizeof(other), "%s/other.img", root);
        snprintf(sysdir, sizeof(sysdir), "%s/sys", root);
        snprintf(devdir, sizeof(devdir), "%s/dev", root);
        ASSERT_OK(mkdir(sysdir, 0755) < 0 ? -errno : 0);
        ASSERT_OK(mkdir(devdir, 0755) < 0 ? -errno : 0);
        snprintf(path, sizeof(path), "%s/block", sysdir);
        ASSERT_OK(mkdir(path, 0755) < 0 ? -errno : 0);
        for (const char *n = "loop3"; n; n = strcmp(n, "loop3") == 0 ? "loop4" : NULL) {
                snprintf(path, sizeof(path), "%s/block/%s", sysdir, n);
                ASSERT_OK(mkdir(path, 0755) < 0 ? -errno : 0);
                snprintf(path, sizeof(path), "%s/block/%s/ro", sysdir, n);
                f = fopen(path, "w");
                ASSERT_NOT_NULL(f);
                fputs(strcmp(n, "loop4") == 0 ? "1\n" : "0\n", f);   /* loop4 is read-only */
                fclose(f);
        }
        for (const char *p = image; p; p = p == image ? other : NULL) {
                f = fopen(p, "w");
                ASSERT_NOT_NULL(f);
                fclose(f);
        }
}

static LoopBacking backing_of(const char *path, bool read_only) {
        struct stat st;

        ASSERT_OK(stat(path, &st) < 0 ? -errno : 0);
        return (LoopBacking) { .device = st.st_dev, .inode = st.st_ino, .read_only = read_only };
}

static void test_fd_checks(void) {
        char why[512];
        struct stat st;
        bool w = false;
        int fd, p[2];

        /* No fd: no proof, and the message says what to send. */
        ASSERT_EQ(device_backing_fd_check(-1, false, &st, &w, why, sizeof(why)), 0);
        ASSERT_TRUE(strstr(why, "backing_fd") && strstr(why, "read-write"));

        fd = open(image, O_RDWR | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(device_backing_fd_check(fd, false, &st, &w, why, sizeof(why)), 1);
        ASSERT_TRUE(w);
        close(fd);

        /* Read-only: enough for a read-only disk only. */
        fd = open(image, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(device_backing_fd_check(fd, false, &st, &w, why, sizeof(why)), 0);
        ASSERT_TRUE(strstr(why, "read-only") != NULL);
        ASSERT_EQ(device_backing_fd_check(fd, true, &st, &w, why, sizeof(why)), 1);
        ASSERT_FALSE(w);
        close(fd);

        /* O_PATH (what clients sent before) reads as O_RDONLY and proves nothing. */
        fd = open(image, O_PATH | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(device_backing_fd_check(fd, true, &st, &w, why, sizeof(why)), 0);
        ASSERT_TRUE(strstr(why, "O_PATH") != NULL);
        close(fd);

        fd = open(image, O_WRONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(device_backing_fd_check(fd, false, &st, &w, why, sizeof(why)), 0);
        close(fd);

        /* Not a regular file: a directory, a pipe. */
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(device_backing_fd_check(fd, true, &st, &w, why, sizeof(why)), 0);
        ASSERT_TRUE(strstr(why, "regular file") != NULL);
        close(fd);
        ASSERT_OK(pipe2(p, O_CLOEXEC) < 0 ? -errno : 0);
        ASSERT_EQ(device_backing_fd_check(p[0], true, &st, &w, why, sizeof(why)), 0);
        ASSERT_EQ(device_backing_fd_check(p[1], false, &st, &w, why, sizeof(why)), 0);
        close(p[0]);
        close(p[1]);
}

static void test_matches(void) {
        LoopBacking mine = backing_of(image, false), mine_ro = backing_of(image, true),
                    theirs = backing_of(other, false);
        char why[512];
        struct stat st;

        ASSERT_OK(stat(image, &st) < 0 ? -errno : 0);
        ASSERT_EQ(device_backing_matches("loop3", &st, true, &mine, why, sizeof(why)), 1);
        ASSERT_EQ(device_backing_matches("loop3", &st, true, &mine_ro, why, sizeof(why)), 1);
        ASSERT_EQ(device_backing_matches("loop3", &st, false, &mine_ro, why, sizeof(why)), 1);
        /* A read-only fd and a read-write attachment (sysfs said ro, then
         * the device was attached anew read-write: the ioctl decides). */
        ASSERT_EQ(device_backing_matches("loop3", &st, false, &mine, why, sizeof(why)), 0);
        ASSERT_TRUE(strstr(why, "read-write") != NULL);
        /* Another file, even one of the same owner (both are the test's). */
        ASSERT_EQ(device_backing_matches("loop3", &st, true, &theirs, why, sizeof(why)), 0);
        ASSERT_TRUE(strstr(why, "not loop3's backing file") != NULL);
        /* The same inode number on another device is another file. */
        theirs = mine;
        theirs.device++;
        ASSERT_EQ(device_backing_matches("loop3", &st, true, &theirs, why, sizeof(why)), 0);
}

/* The order: whatever cannot prove anything is refused before the device
 * is opened. dev_root has no nodes, so an open would fail (negative). */
static void test_no_open_without_proof(void) {
        BlockDisk loop3 = { .name = "loop3", .dev = makedev(7, 3), .diskseq = 9, .loop = true };
        BlockDisk loop4 = { .name = "loop4", .dev = makedev(7, 4), .diskseq = 10, .loop = true };
        BlockDisk sda = { .name = "sda", .dev = makedev(8, 0), .diskseq = 1, .loop = false };
        char why[512];
        int fd;

        /* Not a loop device: nobody's, whatever is sent. */
        ASSERT_EQ(device_owned_by(&sda, -1, sysdir, devdir, why, sizeof(why)), 0);
        ASSERT_TRUE(strstr(why, "not a loop device") != NULL);
        /* No fd: not the caller's (the file's owner is the caller, and
         * that proves nothing), and nothing opened. */
        ASSERT_EQ(device_owned_by(&loop3, -1, sysdir, devdir, why, sizeof(why)), 0);
        ASSERT_TRUE(strstr(why, "backing_fd") != NULL);
        /* A read-only fd for a read-write disk: refused before the open. */
        fd = open(image, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(device_owned_by(&loop3, fd, sysdir, devdir, why, sizeof(why)), 0);
        /* ... for a read-only disk, worth opening: the open is tried. */
        ASSERT_TRUE(device_owned_by(&loop4, fd, sysdir, devdir, why, sizeof(why)) < 0);
        ASSERT_TRUE(strstr(why, "cannot open") != NULL);
        close(fd);
        /* O_PATH: refused before the open. */
        fd = open(image, O_PATH | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(device_owned_by(&loop4, fd, sysdir, devdir, why, sizeof(why)), 0);
        close(fd);
        /* Read-write: the open is tried. */
        fd = open(image, O_RDWR | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(device_owned_by(&loop3, fd, sysdir, devdir, why, sizeof(why)) < 0);
        ASSERT_TRUE(strstr(why, "cannot open") != NULL);
        close(fd);
}

int main(void) {
        char cmd[512];

        setup();
        TEST_RUN(test_fd_checks);
        TEST_RUN(test_matches);
        TEST_RUN(test_no_open_without_proof);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : 1;
}
