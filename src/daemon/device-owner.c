/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "device-owner.h"
#include "io-util.h"

#ifndef BLKGETDISKSEQ
#define BLKGETDISKSEQ _IOR(0x12, 128, __u64)    /* Linux 5.15 */
#endif

#define DELETED_SUFFIX " (deleted)"

/* The device node, checked to be the disk d names: /dev/NAME is the
 * kernel's name there, '!' standing for '/' (devtmpfs). */
static int open_disk(const BlockDisk *d, const char *dev_root, char *why, size_t why_size) {
        char path[256], name[BLOCK_NAME_MAX];
        _cleanup_close_ int fd = -1;
        struct stat st;

        snprintf(name, sizeof(name), "%s", d->name);
        for (char *p = name; *p; p++)
                if (*p == '!')
                        *p = '/';
        snprintf(path, sizeof(path), "%s/%s", dev_root ?: "/dev", name);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                int r = negative_errno();

                snprintf(why, why_size, "cannot open %s to ask it for its backing file: %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != d->dev) {
                snprintf(why, why_size, "%s is not the block device %u:%u", path, major(d->dev), minor(d->dev));
                return -ENODEV;
        }
        return TAKE_FD(fd);
}

static int diskseq_of(int fd, uint64_t *ret) {
        return ioctl(fd, BLKGETDISKSEQ, ret) < 0 ? negative_errno() : 0;
}

/* The backing file as the daemon sees it, by the path the kernel gives. */
static int stat_backing_path(const BlockDisk *d, struct stat *st, char *why, size_t why_size) {
        char path[256], file[4096];
        _cleanup_close_ int fd = -1;
        size_t n;
        ssize_t k;

        snprintf(path, sizeof(path), SYS_BLOCK_ROOT "/block/%s/loop/backing_file", d->name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (k = read_retry(fd, file, sizeof(file) - 1)) <= 0) {
                snprintf(why, why_size, "cannot read its backing file's name from %s", path);
                return -EIO;
        }
        file[k] = 0;
        file[strcspn(file, "\n")] = 0;
        n = strlen(file);
        /* d_path()'s mark of an unlinked file, which anyone could name a
         * file of their own after. */
        if (n >= strlen(DELETED_SUFFIX) && strcmp(file + n - strlen(DELETED_SUFFIX), DELETED_SUFFIX) == 0) {
                snprintf(why, why_size, "its backing file was deleted");
                return -ENOENT;
        }
        if (stat(file, st) < 0) {
                int r = negative_errno();

                /* The advice first: a long path is what a short buffer cuts. */
                snprintf(why, why_size, "the daemon cannot see its backing file (%s): send an fd of it as "
                         "backing_fd, as injectctl does; the daemon looked at %s", strerror(-r), file);
                return r;
        }
        return 0;
}

int device_owned_by(const BlockDisk *d, uid_t uid, int backing_fd, const char *dev_root, char *why, size_t why_size) {
        struct loop_info64 info = {};
        _cleanup_close_ int fd = -1;
        uint64_t before = 0, after = 0;
        struct stat st;
        int r;

        why[0] = 0;
        if (!d->loop) {
                snprintf(why, why_size, "%s is not a loop device: only an administrator can grant it", d->name);
                return 0;
        }
        fd = open_disk(d, dev_root, why, why_size);
        if (fd < 0)
                return fd;
        /* The same attachment from the first read to the last: what was
         * checked is what the diskseq names. */
        r = diskseq_of(fd, &before);
        if (r < 0) {
                snprintf(why, why_size, "cannot read %s's diskseq: %s", d->name, strerror(-r));
                return r;
        }
        if (before != d->diskseq)
                goto changed;
        if (ioctl(fd, LOOP_GET_STATUS64, &info) < 0) {
                r = negative_errno();
                if (r == -ENXIO)
                        goto changed;   /* detached meanwhile */
                snprintf(why, why_size, "cannot ask %s for its backing file: %s", d->name, strerror(-r));
                return r;
        }
        if (backing_fd >= 0) {
                if (fstat(backing_fd, &st) < 0) {
                        r = negative_errno();
                        snprintf(why, why_size, "cannot read 'backing_fd': %s", strerror(-r));
                        return r;
                }
        } else {
                r = stat_backing_path(d, &st, why, why_size);
                if (r < 0)
                        return r;
        }
        r = diskseq_of(fd, &after);
        if (r < 0 || after != before)
                goto changed;
        if ((uint64_t) st.st_dev != info.lo_device || (uint64_t) st.st_ino != info.lo_inode) {
                snprintf(why, why_size, backing_fd >= 0 ? "'backing_fd' is not %s's backing file" :
                         "%s's backing file was replaced at its path", d->name);
                return backing_fd >= 0 ? 0 : -ESTALE;
        }
        if (st.st_uid != uid) {
                snprintf(why, why_size, "%s's backing file belongs to uid %u", d->name, (unsigned) st.st_uid);
                return 0;
        }
        return 1;

changed:
        snprintf(why, why_size, "%s was detached or attached to another file while it was checked", d->name);
        return -ESTALE;
}
