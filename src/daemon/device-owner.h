/* SPDX-License-Identifier: MIT */
#pragma once

/* Who owns a block device, for device scopes. A caller without privilege
 * owns a loop device only when it shows the daemon its backing file: an fd
 * of it that the caller opened read-write (backing_fd). That fd is proof
 * by access, not by name or uid: with it the caller can already make the
 * device return any bytes it likes, so an I/O error on it takes nothing
 * from anyone. The daemon checks that the fd is the same inode as the one
 * the loop device reads (LOOP_GET_STATUS64's lo_device and lo_inode) and
 * that it was opened O_RDWR; an O_RDONLY fd proves only a read-only
 * attachment, whose data nobody can change through the device anyway.
 *
 * Never proof: the uid owning the backing file (every loop device host
 * root attaches is uid 0's, and a container's root is uid 0 too), or a
 * path: the daemon does not look up sysfs' backing_file name in its own
 * mount namespace on a caller's behalf, where it may name another file.
 * Without backing_fd a loop device is not the caller's. Any other disk is
 * nobody's own: only an administrator grants it (a policy rule's
 * "devices", or polkit's org.injectd.inject-global). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "scope-device.h"

/* What the kernel says of a loop device's attachment. */
typedef struct LoopBacking {
        uint64_t device;                /* lo_device: st_dev of the backing file */
        uint64_t inode;                 /* lo_inode */
        bool read_only;                 /* LO_FLAGS_READ_ONLY */
} LoopBacking;

/* The checks of backing_fd that need no loop device: it is there, it is
 * a regular file, opened for reading and writing, or for reading only when
 * the disk is read-only (loop_read_only, as sysfs says before the device
 * is opened). 1: worth opening the device to compare; 0: no proof (why
 * says so); negative errno: cannot tell. ret_st, ret_writable: the fd's. */
int device_backing_fd_check(int backing_fd, bool loop_read_only, struct stat *ret_st, bool *ret_writable,
                            char *why, size_t why_size);

/* The proof itself: st (writable: opened O_RDWR) is the backing file of
 * the loop device name, attached as b says. 1: it is; 0: not (why). */
int device_backing_matches(const char *name, const struct stat *st, bool writable, const LoopBacking *b,
                           char *why, size_t why_size);

/* 1: d is the caller's own by backing_fd (-1: none sent); 0: not (why
 * says so, for the refusal); negative errno when it cannot be told (why
 * says why). -ESTALE: the device was detached or attached anew while it
 * was checked. sys_root, dev_root: SYS_BLOCK_ROOT and "/dev" (NULL), or a
 * test's. */
int device_owned_by(const BlockDisk *d, int backing_fd, const char *sys_root, const char *dev_root, char *why,
                    size_t why_size);
