/* SPDX-License-Identifier: MIT */
#pragma once

/* Who owns a block device, for device scopes. A loop device is the
 * caller's own when its backing file is: the file the kernel reads and
 * writes for it, found by identity (the device and inode LOOP_GET_STATUS64
 * reports), not by a path, and owned by the caller's uid. Holding that
 * file, the caller can already make the device return any bytes it likes,
 * so an I/O error on it takes nothing from anyone else. Any other disk is
 * nobody's own: only an administrator grants it (a policy rule's
 * "devices", or polkit's org.injectd.inject-global).
 *
 * The backing file is best shown by the caller: an fd of it, opened by
 * the caller (backing_fd), is checked whatever mount namespace either side
 * is in. Without one, the path the kernel gives in sysfs is looked up in
 * the daemon's own mount namespace, where it may not exist (ProtectHome=,
 * PrivateTmp=, a container's files). */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "scope-device.h"

/* 1: d is uid's own; 0: not (why says so, for the refusal); negative
 * errno when it cannot be told (why says why). -ESTALE: the device was
 * detached or attached anew while it was checked. dev_root: "/dev", or a
 * test's. */
int device_owned_by(const BlockDisk *d, uid_t uid, int backing_fd, const char *dev_root, char *why, size_t why_size);
