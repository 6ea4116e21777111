/* SPDX-License-Identifier: MIT */
#pragma once

/* Types shared by bpf/observe.bpf.c and the engine that loads it
 * (src/engine/observe.c): counting, without failing anything, the calls one
 * process tree makes to a set of functions, and from how many distinct
 * kernel stacks. One program, attached to every function at once
 * (kprobe.multi), serves one observation. */

#ifndef __VMLINUX_MIN_H__
#include <linux/types.h>
#endif

#define OBSERVE_MAX_FUNCTIONS   4096    /* functions one observation attaches to */
/* The stack budget: distinct kernel stacks one observation keeps (the
 * stack map), and as many (function, stack) pairs. Calls past the budget
 * are counted, their stacks are not (stack_errors). The counts map
 * holds one entry per function attached. The engine sizes the maps to
 * these before the load (the object's own sizes are templates). */
#define OBSERVE_MAX_STACKS      4096
#define OBSERVE_MAX_PAIRS       4096
#define OBSERVE_STACK_DEPTH     32      /* frames a stack is told apart by */

/* Per function, keyed by its entry address (bpf_get_func_ip()). */
struct observe_count {
        __u64 calls;            /* calls by a task in the observed tree, in task context */
        __u64 stack_errors;     /* calls whose stack could not be recorded (map full) */
};

struct observe_pair_key {
        __u64 ip;
        __s64 stack_id;         /* in the stack map */
};

/* Call numbers kept per (function, stack), so that a plan can fail a
 * stack's later calls too (issue 28 item 3): the stack's own calls 0,
 * 2^shift, 2*2^shift, ... When the array is full, every other sample is
 * dropped and shift grows by one: exact for a stack of up to
 * OBSERVE_SAMPLES calls, spread evenly over any longer one. */
#define OBSERVE_SAMPLES         16

/* Per (function, stack): how often, and the function's call number (0 for
 * its first call) when this stack first called it, which is the after=N
 * that fails this very call again in a repeated run; likewise its last
 * call, and the samples above. */
struct observe_pair {
        __u64 calls;
        __u64 first_call;
        __u64 last_call;
        __u32 shift;            /* samples[i] is the stack's call i << shift */
        __u32 n_samples;
        __u64 samples[OBSERVE_SAMPLES];
};
