/* SPDX-License-Identifier: MIT */
#pragma once

/* Types shared by bpf/task-ns.bpf.c and the engine that loads it
 * (src/engine/task-ns.c): what the iterator writes about one task. */

#ifndef __VMLINUX_MIN_H__
#include <linux/types.h>
#endif

/* Levels of pid namespaces a task can be at: the initial one (0) and 32
 * nested below it (the kernel's MAX_PID_NS_LEVEL). */
#define TASK_NS_LEVELS 33

struct task_ns_record {
        __u32 pid;              /* the task's (thread's) id, in the initial pid namespace */
        __u32 tgid;             /* its thread group's */
        __u32 level;            /* of the task's own pid namespace; < TASK_NS_LEVELS */
        __u32 pad;
        __u64 start_ticks;      /* the thread group leader's start, as /proc/PID/stat field 22 */
        /* For each level 0..level: the inode number of the task's pid
         * namespace at that level (what /proc/PID/ns/pid shows for the
         * deepest one) and the task's pid in it (NSpid in /proc/PID/status). */
        __u32 inum[TASK_NS_LEVELS];
        __u32 nr[TASK_NS_LEVELS];
};
