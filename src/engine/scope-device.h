/* SPDX-License-Identifier: MIT */
#pragma once

/* Device scopes: turning the block device a user names into what the BPF
 * program compares (the disk's diskseq, enum inject_device_arg in
 * bpf/inject.h), telling whether that disk is still there, and which
 * functions a device scope applies to. Who owns a device is not the
 * engine's to say (src/daemon/device-owner.h). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "inject.h"

#define SYS_BLOCK_ROOT "/sys"           /* where class/block, block and dev/block are */
#define BLOCK_NAME_MAX 32               /* a disk's kernel name, with its NUL (DISK_NAME_LEN) */

typedef struct BlockDisk {
        char name[BLOCK_NAME_MAX];      /* the kernel's name: "loop3" */
        dev_t dev;
        uint64_t diskseq;               /* > 0 */
        bool loop;                      /* a loop device: it has /sys/block/NAME/loop */
} BlockDisk;

/* Where the function's arguments name a block device (INJECT_DEVICE_ARG_NONE:
 * nowhere, and a device scope does not apply to it). */
enum inject_device_arg device_arg_for(const char *function);

/* The functions that take a device scope, for messages: "should_fail_bio". */
extern const char device_scope_functions[];

/* The whole disk that what names: a kernel name ("loop3"), the same under
 * /dev ("/dev/loop3": the prefix is taken off, the path is never
 * resolved, so it means the same in any mount namespace) or "MAJ:MIN".
 * sys_root: SYS_BLOCK_ROOT, or a test's copy. -EINVAL: not a name;
 * -ENOENT: no such block device; -EISDIR: a partition (ret->name is then
 * its disk's name); -ENOMEDIUM: a disk with nothing attached (no diskseq,
 * or a loop device without a backing file). */
int scope_device_lookup(const char *sys_root, const char *what, BlockDisk *ret);

/* Whether what names a network interface (/sys/class/net/NAME): for the
 * refusal that says device scopes are block devices only. */
bool scope_device_is_netdev(const char *sys_root, const char *what);

/* 1 if a disk with this diskseq exists, 0 if none does, negative errno if
 * it cannot tell; ret_name (may be NULL) gets its name. */
int scope_device_alive(const char *sys_root, uint64_t diskseq, char ret_name[BLOCK_NAME_MAX]);
