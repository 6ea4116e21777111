/* SPDX-License-Identifier: MIT */
#pragma once
#define __VMLINUX_MIN_H__

/* The few kernel types our programs read, declared by hand instead of a
 * vmlinux.h dumped from the build host's BTF: the build then does not depend
 * on the build machine's kernel, and the programs still relocate (CO-RE,
 * preserve_access_index) against whatever kernel loads them. UAPI headers
 * provide the map and program constants. */

#include <linux/types.h>
#include <linux/bpf.h>

struct pt_regs;

typedef struct {
        unsigned int val;
} kuid_t;

typedef struct {
        unsigned int val;
} kgid_t;

/* Two __u32 words up to 6.2, one __u64 from 6.3: 8 bytes either way, and
 * CO-RE takes any struct for any struct, so the programs read it whole. */
typedef struct {
        __u32 cap[2];
} kernel_cap_t;

struct user_namespace {
        int level;
} __attribute__((preserve_access_index));

struct cred {
        kuid_t uid;
        kgid_t gid;
        kuid_t suid;
        kgid_t sgid;
        kuid_t euid;
        kgid_t egid;
        kuid_t fsuid;
        kgid_t fsgid;
        kernel_cap_t cap_permitted;
        kernel_cap_t cap_effective;
        struct user_namespace *user_ns;
} __attribute__((preserve_access_index));

struct task_struct {
        unsigned int flags;             /* PF_KTHREAD, for fault events */
        const struct cred *cred;
        int pid;
        int tgid;
        struct task_struct *real_parent;
        struct task_struct *group_leader;
        __u64 start_boottime;
        char comm[16];
        struct pid *thread_pid;
} __attribute__((preserve_access_index));

struct ns_common {
        unsigned int inum;
} __attribute__((preserve_access_index));

struct pid_namespace {
        unsigned int level;
        struct ns_common ns;
} __attribute__((preserve_access_index));

struct upid {
        int nr;
        struct pid_namespace *ns;
} __attribute__((preserve_access_index));

/* numbers[] has level + 1 elements. */
struct pid {
        unsigned int level;
        struct upid numbers[1];
} __attribute__((preserve_access_index));

struct seq_file;

struct bpf_iter_meta {
        struct seq_file *seq;
        __u64 session_id;
        __u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
        struct bpf_iter_meta *meta;
        struct task_struct *task;
} __attribute__((preserve_access_index));

/* A slab cache, for the argument filters of should_failslab(): SLUB's and
 * SLAB's struct kmem_cache both have these. */
struct kmem_cache {
        unsigned int object_size;
        const char *name;
} __attribute__((preserve_access_index));

/* A bio's disk, for device scopes (should_fail_bio()): the disk's diskseq
 * names it as attached now (block/genhd.c gives each new disk, and each
 * new medium of a loop device, a number never used before). */
struct gendisk {
        __u64 diskseq;
} __attribute__((preserve_access_index));

struct block_device {
        struct gendisk *bd_disk;
} __attribute__((preserve_access_index));

struct bio {
        struct block_device *bi_bdev;
} __attribute__((preserve_access_index));
