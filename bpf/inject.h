/* SPDX-License-Identifier: MIT */
#pragma once

/* Types shared by bpf/inject.bpf.c and the engine that loads it.
 *
 * A (function, backend) is a "site": three maps (its scopes hash, its
 * slots array and its info, struct inject_site_info) created by the engine
 * and placed, at the site's index, in three outer maps (arrays of maps)
 * that every copy of the program shares. The kprobe program is one for
 * every site, loaded once, and finds its site through the attach cookie
 * (the index); an fmod_ret program is loaded per site, with its index in
 * its read-only data. Injections on a site are entries of its maps, so
 * arming the 100th injection on a function loads nothing and costs a caller
 * outside every scope no more than the first one did: one task-storage
 * lookup for process scopes (a task in one carries a tag, struct
 * inject_tag) and one hash lookup per cgroup level in use, whatever the
 * number of injections. */

#ifndef __VMLINUX_MIN_H__
#include <linux/types.h>
#endif

#define INJECT_MAX_SLOTS        256     /* injections per site, by default (the engine's --max-per-function) */
#define INJECT_MAX_SITES        4096    /* sites at once: entries of the outer maps (8 bytes each) */
#define INJECT_MAX_CALLERS      4       /* caller filters per injection */
#define INJECT_STACK_DEPTH      32      /* kernel frames searched for a caller */
#define INJECT_MAX_CGROUP_LEVEL 32      /* cgroup levels a scope may sit at (bits of a u32 mask) */
#define INJECT_MAX_PROC_DEPTH   64      /* real_parent steps walked when tagging a process tree */
#define INJECT_MAX_TAGS         8       /* process scopes that may nest around one task */
#define INJECT_MAX_ROOTS        4096    /* live process-scope roots, across all sites */
#define INJECT_COMM_LEN         16      /* TASK_COMM_LEN */
#define INJECT_FUNC_LEN         64      /* function names in events */
#define INJECT_PPM              1000000 /* probability is in parts per million */
#define INJECT_EVENTS_SIZE      (256 * 1024)
#define INJECT_UID_ANY          0xffffffffu     /* no credential filter */

/* Argument guards: conditions under which a function is never failed,
 * whatever the injection says, because the kernel's own fault injection
 * never fails it there either and its callers rely on that
 * (src/engine/guards.c has the table, docs/engine.md the reasons). The
 * engine sets a site's guard in its info (struct inject_site_info). */
enum inject_guard {
        INJECT_GUARD_NONE             = 0,
        INJECT_GUARD_FAILSLAB         = 1,      /* should_failslab(struct kmem_cache *s, gfp_t gfpflags):
                                                 * not with __GFP_NOFAIL, not the kmem_cache bootstrap cache */
        INJECT_GUARD_FAIL_ALLOC_PAGE  = 2,      /* should_fail_alloc_page(gfp_t gfp_mask, unsigned int order):
                                                 * not with __GFP_NOFAIL */
};

/* gfp bits, the same in every kernel with BPF trampolines
 * (include/linux/gfp_types.h; from 6.10 they are enumerators, same values). */
#define INJECT_GFP_HIGHMEM              0x02u   /* ___GFP_HIGHMEM */
#define INJECT_GFP_DIRECT_RECLAIM       0x400u  /* ___GFP_DIRECT_RECLAIM: the allocation may sleep */
#define INJECT_GFP_NOFAIL               0x8000u /* ___GFP_NOFAIL */

/* Argument filters: an injection that has one fails only the calls whose
 * arguments pass it, as the kernel's own failslab and fail_page_alloc
 * knobs narrow theirs (Documentation/fault-injection). They are read where
 * the site's guard says the arguments are (enum inject_guard: the same
 * functions), so they exist only on those functions (src/engine/guards.c
 * lists which apply where). A call they reject is seen, not matched. */
enum inject_arg_filter {
        INJECT_FILTER_GFP_WAIT    = 1u << 0,    /* only allocations that may not sleep (no __GFP_DIRECT_RECLAIM) */
        INJECT_FILTER_GFP_HIGHMEM = 1u << 1,    /* not __GFP_HIGHMEM allocations */
        INJECT_FILTER_MIN_ORDER   = 1u << 2,    /* only orders >= min_order */
        INJECT_FILTER_MIN_SIZE    = 1u << 3,    /* only caches whose object_size >= min_size */
        INJECT_FILTER_CACHE       = 1u << 4,    /* only the slab cache named cache */
};

/* A slab cache's name in a filter: at most INJECT_CACHE_LEN - 2 characters,
 * so that a longer name in the kernel, read truncated to INJECT_CACHE_LEN - 1,
 * never equals one. */
#define INJECT_CACHE_LEN        32

enum inject_scope_kind {
        INJECT_SCOPE_NONE    = 0,       /* never valid: an empty scope is not "everything" */
        INJECT_SCOPE_CGROUP  = 1,       /* a cgroup and its subtree; id = cgroup id */
        INJECT_SCOPE_PROCESS = 2,       /* a thread group and its descendants; id = tgid
                                         * (in the scopes map: the root's tag, see inject_tag) */
        INJECT_SCOPE_GLOBAL  = 3,       /* every caller; id = 0 */
        INJECT_SCOPE_DEVICE  = 4,       /* calls about one block device, in any context; id = the
                                         * disk's diskseq (enum inject_device_arg) */
};

/* Where a function's arguments name a block device, for device scopes:
 * what the program reads to find the disk a call is about. A device scope
 * exists only on such functions (src/engine/device-args.c). The disk is
 * named by its diskseq, a number the kernel gives each disk, and each
 * medium a loop device is given, and never reuses: a loop device detached
 * and attached to another file is another scope. */
enum inject_device_arg {
        INJECT_DEVICE_ARG_NONE = 0,
        INJECT_DEVICE_ARG_BIO  = 1,     /* argument 0 is a struct bio *: bio->bi_bdev->bd_disk->diskseq */
};

/* Key of the per-site scope hash. At most one injection per (site, scope). */
struct inject_scope_key {
        __u32 kind;
        __u32 pad;
        __u64 id;
};

struct inject_scope_val {
        __u32 slot;
        __u32 pad;
        __u64 inj_id;           /* guards against a slot reused under an in-flight call */
        __u64 start_ticks;      /* process scope: leader's start time (clock ticks since boot),
                                 * so a recycled pid never inherits a fault */
};

struct inject_caller {
        __u64 start;            /* [start, end) of a kernel function, from kallsyms */
        __u64 end;
};

/* One injection. User space writes the configuration once, into a free slot,
 * before the scope entry that makes it reachable; BPF only updates the
 * counters, atomically, so they are exact across CPUs. */
struct inject_slot {
        __u64 id;               /* 0: free */
        __u64 created_ns;       /* CLOCK_BOOTTIME */
        __u64 deadline_ns;      /* CLOCK_BOOTTIME; checked on every call */
        __s64 retval;
        __u32 scope_kind;
        __u32 cgroup_level;
        __u64 scope_id;
        __u64 start_ticks;
        __u64 scope_tag;        /* process scope: its root's tag (see struct inject_tag) */
        __u64 after;            /* the first `after` matching calls pass */
        __u64 every;            /* then every `every`-th matching call fails (>= 1) */
        __u64 times;            /* at most `times` faults; 0: unlimited */
        __u32 probability_ppm;  /* INJECT_PPM: always */
        __u32 n_callers;
        struct inject_caller callers[INJECT_MAX_CALLERS];
        char comm[INJECT_COMM_LEN];     /* empty: any */
        __u32 owner_uid;        /* INJECT_UID_ANY, or: only tasks whose uid, euid, suid and fsuid
                                 * all equal it, whose egid, sgid and fsgid are their gid, and
                                 * that hold no capability (a setuid, setgid or file-capability
                                 * program in the scope is never failed) */
        __u32 arg_filters;      /* enum inject_arg_filter; 0: none, the arguments are not read */
        __u32 min_order;        /* INJECT_FILTER_MIN_ORDER */
        __u32 min_size;         /* INJECT_FILTER_MIN_SIZE: bytes */
        char cache[INJECT_CACHE_LEN];   /* INJECT_FILTER_CACHE: NUL-padded */

        /* Counters, written only by BPF. */
        __u64 seen;             /* calls by a task in scope, before the deadline */
        __u64 matched;          /* ... that also passed the credential, task-context, comm,
                                 * caller and argument filters, and no guard forbade failing
                                 * them: what the triggers count */
        __u64 injected;         /* ... that were made to fail */
        __u64 claims;           /* fault claims, to keep `times` exact under concurrency */
        __u64 guarded;          /* calls that passed the filters but that a guard (enum inject_guard)
                                 * forbids failing: never matched, never failed */
};

/* What the program must look at; user space keeps it in step with the slots,
 * so callers pay only for the kinds of scope that exist on this site. */
struct inject_site_info {
        __u32 cgroup_levels;    /* bit L: some injection is scoped to a cgroup at level L */
        __u32 n_process;
        __u32 n_global;
        __u32 n_live;
        __u32 n_callers;        /* injections with caller filters: the stack must be captured */
        /* Written once, when the site is created. */
        __u32 backend;          /* read only by user space: what this site is, for adoption */
        char function[INJECT_FUNC_LEN]; /* in events */
        __u32 index;            /* the site's in the outer maps: the kprobe link's cookie */
        __u32 guard;            /* enum inject_guard */
        __u64 guard_bootstrap_cache;    /* INJECT_GUARD_FAILSLAB: &kmem_cache, the kernel's pointer
                                         * to its bootstrap cache (from kallsyms) */
        __u32 device_arg;       /* enum inject_device_arg, written once */
        __u32 n_device;         /* injections scoped to a device (last, so that a site pinned
                                 * before device scopes reads none) */
};

/* Process scopes are kept as a tag on each task (BPF task-local storage,
 * one map shared by every site) instead of found by walking the caller's
 * ancestry on every call. Each live process-scope root (a thread group)
 * has a tag: a random nonzero number, shared by every injection on that
 * root and replaced when the root has none left, so an ended injection's
 * tasks never match a later one. A task carries the tags of the roots it
 * descends from (its own thread group included), nearest first; every
 * thread carries them, and a new task copies its parent's at fork. A site
 * looks each tag up in its scopes map ({PROCESS, tag}); the first hit is
 * the nearest process-scope injection. */
struct inject_tag {
        __u64 tags[INJECT_MAX_TAGS];    /* 0 ends the list */
};

/* A live process-scope root, keyed by tgid in the roots map: what the
 * tagging pass looks for among a task's ancestors. */
struct inject_root {
        __u64 tag;
        __u64 start_ticks;      /* the leader's start time, so a recycled pid is not the root */
};

/* One record per injected fault, in the shared ring buffer. */
struct inject_event {
        __u64 time_ns;          /* CLOCK_BOOTTIME */
        __u64 inj_id;
        __s64 retval;
        __u32 pid;
        __u32 tgid;
        char comm[INJECT_COMM_LEN];
        char function[INJECT_FUNC_LEN];
        /* The kernel stack of the failed call, innermost first (the
         * function itself, then its callers), for sweep reports. n_stack:
         * frames captured, 0 when the kernel would not give one. */
        __u32 n_stack;
        __u32 cpu;              /* where it failed, for the kernel log record (src/daemon/fault-kmsg.c) */
        __u64 stack[INJECT_STACK_DEPTH];
        /* Whose task it was, as the fault saw it, for who may see the event
         * (src/daemon/fault-redact.c): its uid when its real, effective,
         * saved and filesystem uids are all that one, else INJECT_UID_ANY;
         * and INJECT_TASK_KTHREAD. Last, so that a record of an older
         * program (adopted pins) is shorter and told apart: the daemon
         * then asks /proc. */
        __u32 uid;
        __u32 task_flags;
};

#define INJECT_TASK_KTHREAD     1u
#define INJECT_EVENT_MIN_SIZE   __builtin_offsetof(struct inject_event, uid)
