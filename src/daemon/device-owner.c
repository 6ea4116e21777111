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
#include "scope-device.h"

#ifndef BLKGETDISKSEQ
#define BLKGETDISKSEQ _IOR(0x12, 128, __u64)    /* Linux 5.15 */
#endif

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

/* Whether sysfs says the disk is read-only (/sys/block/NAME/ro), which a
 * loop device attached with LO_FLAGS_READ_ONLY is: read before the device
 * is opened, so that a read-only fd opens no read-write device. Anything
 * but "1" is taken as read-write, which asks more of the fd. */
static bool disk_read_only(const BlockDisk *d, const char *sys_root) {
        char path[256], buf[8] = {};
        _cleanup_close_ int fd = -1;

        snprintf(path, sizeof(path), "%s/block/%s/ro", sys_root ?: SYS_BLOCK_ROOT, d->name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        return fd >= 0 && read_retry(fd, buf, sizeof(buf) - 1) > 0 && buf[0] == '1';
}

int device_backing_fd_check(int backing_fd, bool loop_read_only, struct stat *ret_st, bool *ret_writable,
                            char *why, size_t why_size) {
        struct stat st;
        int flags, r;

        why[0] = 0;
        if (backing_fd < 0) {
                snprintf(why, why_size, "no backing file was sent: a loop device is yours only when you send an fd "
                         "of its backing file, opened read-write, as 'backing_fd' (injectctl and the Python "
                         "client do); the daemon does not look its path up for you");
                return 0;
        }
        if (fstat(backing_fd, &st) < 0) {
                r = negative_errno();
                snprintf(why, why_size, "cannot read 'backing_fd': %s", strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                snprintf(why, why_size, "'backing_fd' is not a regular file: a loop device is shown to be yours "
                         "by its backing file, opened read-write");
                return 0;
        }
        flags = fcntl(backing_fd, F_GETFL);
        if (flags < 0) {
                r = negative_errno();
                snprintf(why, why_size, "cannot read the access mode of 'backing_fd': %s", strerror(-r));
                return r;
        }
        /* O_PATH reads as O_RDONLY in the access mode, and grants neither. */
        if (flags & O_PATH) {
                snprintf(why, why_size, "'backing_fd' was opened with O_PATH: open the backing file read-write "
                         "(read-only for a read-only loop device)");
                return 0;
        }
        switch (flags & O_ACCMODE) {
        case O_RDWR:
                *ret_writable = true;
                break;
        case O_RDONLY:
                if (!loop_read_only) {
                        snprintf(why, why_size, "'backing_fd' was opened read-only and the loop device is "
                                 "read-write: send the backing file opened read-write, which shows that you "
                                 "may change its data already");
                        return 0;
                }
                *ret_writable = false;
                break;
        default:        /* O_WRONLY: no less than O_RDWR in what it can change, but say what is asked */
                snprintf(why, why_size, "'backing_fd' was opened write-only: open the backing file read-write");
                return 0;
        }
        *ret_st = st;
        return 1;
}

int device_backing_matches(const char *name, const struct stat *st, bool writable, const LoopBacking *b,
                           char *why, size_t why_size) {
        why[0] = 0;
        if ((uint64_t) st->st_dev != b->device || (uint64_t) st->st_ino != b->inode) {
                snprintf(why, why_size, "'backing_fd' is not %s's backing file", name);
                return 0;
        }
        /* sysfs' ro was read before the device was opened; this is the
         * attachment the diskseq names. */
        if (!writable && !b->read_only) {
                snprintf(why, why_size, "'backing_fd' was opened read-only and %s is attached read-write: send "
                         "its backing file opened read-write", name);
                return 0;
        }
        return 1;
}

int device_owned_by(const BlockDisk *d, int backing_fd, const char *sys_root, const char *dev_root, char *why,
                    size_t why_size) {
        struct loop_info64 info = {};
        _cleanup_close_ int fd = -1;
        uint64_t before = 0, after = 0;
        LoopBacking b;
        bool writable = false;
        struct stat st;
        int r;

        why[0] = 0;
        if (!d->loop) {
                snprintf(why, why_size, "%s is not a loop device: only an administrator can grant it", d->name);
                return 0;
        }
        /* Everything that needs no open of the device first: a caller
         * without an fd that could prove anything has the daemon open
         * nothing. */
        r = device_backing_fd_check(backing_fd, disk_read_only(d, sys_root), &st, &writable, why, why_size);
        if (r <= 0)
                return r;

        /* The inode the loop device reads is told only by LOOP_GET_STATUS64
         * on an open device (sysfs gives the backing file's name, which is
         * a path in someone's mount namespace, not an inode), so the device
         * is opened: read-only, non-blocking, never exclusively. Can the
         * close below detach it? In linux 6.1 lo_release() detaches a
         * device with LO_FLAGS_AUTOCLEAR at the close that leaves it
         * without openers (disk_openers() == 0), whatever the mode of the
         * fd: so yes, when the daemon is its last opener. But then every
         * other opener closed it while the daemon held it open, and without
         * the daemon the last of those closes would have detached it right
         * there (autoclear is set only through an open fd, whose close
         * counts too). The daemon's close only defers, by the few
         * microseconds of two ioctls, a detach that autoclear already asked
         * for; it never detaches a device that would otherwise stay. And
         * only a caller holding a regular file opened read-write (or
         * read-only, for a read-only disk) gets this far. */
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
        r = diskseq_of(fd, &after);
        if (r < 0 || after != before)
                goto changed;
        b = (LoopBacking) {
                .device = info.lo_device,
                .inode = info.lo_inode,
                .read_only = info.lo_flags & LO_FLAGS_READ_ONLY,
        };
        return device_backing_matches(d->name, &st, writable, &b, why, why_size);

changed:
        snprintf(why, why_size, "%s was detached or attached to another file while it was checked", d->name);
        return -ESTALE;
}
