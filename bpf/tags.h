/* SPDX-License-Identifier: MIT */
#pragma once

/* Types shared by bpf/tags.bpf.c and the engine that runs it
 * (src/engine/scope-tags.c): what inject_tag_subtree writes about the tasks
 * of one process and their children. */

#ifndef __VMLINUX_MIN_H__
#include <linux/types.h>
#endif

enum {
        INJECT_TAG_REC_TASK = 1,        /* a thread of the process shown: tagged (flags say how) */
        INJECT_TAG_REC_CHILD,           /* a child process of the thread before it: walk it next */
        INJECT_TAG_REC_LOST,            /* a thread's children could not all be read: its list changed
                                         * under the walk (an exit, a reparenting), or is too long */
};

/* What tagging one task did (INJECT_TAG_REC_TASK's flags). */
enum {
        INJECT_TAG_CHANGED = 1 << 0,    /* its tags were written */
        INJECT_TAG_OVER = 1 << 1,       /* it is in more process scopes than a tag holds */
        INJECT_TAG_FAILED = 1 << 2,     /* it could not be tagged (no memory) */
};

/* Children read per bpf_loop() run, and runs per thread: a thread with more
 * than their product of children gets INJECT_TAG_REC_LOST. */
#define INJECT_TAG_KID_BATCH    64
#define INJECT_TAG_KID_ROUNDS   256

struct inject_tag_rec {
        __u32 kind;             /* INJECT_TAG_REC_* */
        __u32 flags;            /* INJECT_TAG_*, for a task */
        __u32 id;               /* a task: its thread id; a child: its pid (a thread group leader's) */
        __u32 tgid;             /* the thread group of id, in the initial pid namespace */
        __u32 parent;           /* a task: its real_parent's thread group */
        __u32 pad;
};
