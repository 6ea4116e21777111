// SPDX-License-Identifier: GPL-2.0
/* The injection program. Its kprobe copy is loaded and verified once for
 * the engine's lifetime and attached to every kprobe-backed function, each
 * attachment with its site's index as the attach cookie; an fmod_ret copy
 * is loaded per site (a trampoline program is verified against its
 * target's BTF, so it cannot be shared) with the index in site_index. Each
 * site's state is three inner maps of the outer maps below, at its index
 * (inject.h).
 *
 * Hot path, for a caller outside every scope: the cookie (a helper call
 * that reads one field of the running kprobe's context), one outer-array
 * lookup (inlined by the verifier: a bounds check and a load), and one
 * lookup in the site's info array (a helper call into array_map_lookup_elem:
 * the verifier cannot inline a lookup in an inner map it does not know).
 * Against the program per site this replaced, that is the cookie and the
 * outer lookup more, a few nanoseconds. Then, only for the scope kinds
 * present on the site, one task-storage lookup (which misses) and one hash
 * lookup per cgroup level in use, each behind one more inlined outer
 * lookup. Nothing here depends on how many injections are armed, on how
 * many sites there are, nor on how deep the caller sits in the process
 * tree. */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "inject.h"

/* bpf_override_return is GPL-only. */
char LICENSE[] SEC("license") = "GPL";

/* fmod_ret only, set by the engine between open and load: the site this
 * copy serves. The kprobe copy reads its site from the attach cookie. */
const volatile __u32 site_index = 0;

/* The per-site maps, as inner maps. The engine creates them (and these
 * outer maps, which every copy of the program reuses), so the sizes here
 * are only the templates' (inject.h: struct inject_site_info). A flat
 * array of sites x slots would cost every site the largest slot count,
 * up to 16384 slots of 264 bytes: 4.1 MiB a site. Sizes, not types: the
 * types would be forward declarations only in the object's BTF. */
struct inject_scopes_map {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, INJECT_MAX_SLOTS);
        __uint(key_size, sizeof(struct inject_scope_key));
        __uint(value_size, sizeof(struct inject_scope_val));
};

struct inject_slots_map {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_INNER_MAP);     /* sites may differ in their number of slots */
        __uint(max_entries, INJECT_MAX_SLOTS);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, sizeof(struct inject_slot));
};

struct inject_info_map {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, sizeof(struct inject_site_info));
};

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
        __uint(max_entries, INJECT_MAX_SITES);
        __type(key, __u32);
        __array(values, struct inject_scopes_map);
} site_scopes SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
        __uint(max_entries, INJECT_MAX_SITES);
        __type(key, __u32);
        __array(values, struct inject_slots_map);
} site_slots SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
        __uint(max_entries, INJECT_MAX_SITES);
        __type(key, __u32);
        __array(values, struct inject_info_map);
} site_infos SEC(".maps");

/* Shared by every site and by tags.bpf.c, which keeps it up to date: the
 * process-scope roots each task descends from (inject.h). */
#include "task-tags.bpf.h"

/* Shared by every site: the engine reuses one pinned ring buffer. */
struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, INJECT_EVENTS_SIZE);
} events SEC(".maps");

/* The kernel stack is too large for the 512-byte BPF stack next to the rest. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, __u64[INJECT_STACK_DEPTH]);
} stack_scratch SEC(".maps");

/* Verification cost shapes this file: the search for candidates runs in the
 * program itself, with loops whose exits converge to a few states, and the
 * per-injection decision is a global function, which the verifier checks
 * once, on its own, instead of once per path that reaches it. */

/* Whether x < y, unsigned, without a branch: the borrow out of x - y
 * (Hacker's Delight, "Comparison Predicates"). The verifier follows a
 * branch both ways and keeps the flag it sets exact (a later branch
 * decides on it), so a `found |= x < y` per frame forked the path at each
 * of the 32 frames: the caller filter was most of what the verifier did
 * for the whole program (38,000 of 46,000 instructions; docs/engine.md,
 * "Argument filters"). The barrier keeps the compiler from turning this
 * back into a comparison, which on BPF is a branch. */
static __always_inline __u64 less_than(__u64 x, __u64 y)
{
        __u64 d = x - y;

        asm volatile("" : "+r"(d));
        return ((~x & y) | (~(x ^ y) & d)) >> 63;
}

/* Whether every function the slot lists as a caller is on the kernel stack
 * captured into stack_scratch: INJECT_STACK_DEPTH entries, zero past the
 * captured frames. The loops do not depend on how many frames there were:
 * a data-dependent bound would make the verifier walk every (frame count,
 * iteration) pair. A global function, verified once on its own. */
__noinline int stack_has_callers(const struct inject_slot *slot)
{
        __u32 zero = 0, n_callers;
        const __u64 *ips;

        if (!slot)
                return 0;
        ips = bpf_map_lookup_elem(&stack_scratch, &zero);
        if (!ips)
                return 0;
        n_callers = slot->n_callers;
        /* Every listed function must be somewhere on the stack. */
        for (__u32 c = 0; c < INJECT_MAX_CALLERS; c++) {
                __u64 start, len, found = 0;

                if (c >= n_callers)
                        break;
                start = slot->callers[c].start;
                len = slot->callers[c].end - start;
                for (__u32 i = 0; i < INJECT_STACK_DEPTH; i++)
                        found |= less_than(ips[i] - start, len);
                if (!found)
                        return 0;
        }
        return 1;
}

static __always_inline int comm_matches(const struct inject_slot *slot)
{
        /* Zeroed: the helper does not pad after the NUL, and both sides
         * must compare equal byte for byte. */
        char comm[INJECT_COMM_LEN] = {};
        char diff = 0;

        if (bpf_get_current_comm(comm, sizeof(comm)) < 0)
                return 0;
        /* Without a branch per byte: one path for the verifier to walk. */
        for (int i = 0; i < INJECT_COMM_LEN; i++)
                diff |= comm[i] ^ slot->comm[i];
        return !diff;
}

/* creds_match(): only tasks running with nothing but the owner's own
 * credentials (creds.bpf.h). */
#include "creds.bpf.h"

/* in_task_context(): interrupt context is nobody's scope (in-task.bpf.h). */
#include "in-task.bpf.h"

/* The function's first two arguments. A kprobe's context is x86-64's
 * struct pt_regs (the program is built for x86 only), where they are di
 * and si; an fmod_ret program's is the arguments themselves, read as
 * scalars through the helper. */
#define PT_REGS_SI_INDEX 13
#define PT_REGS_DI_INDEX 14

static __always_inline void function_args(void *ctx, int kprobe, __u64 *a0, __u64 *a1)
{
        if (kprobe) {
                *a0 = ((const __u64 *) ctx)[PT_REGS_DI_INDEX];
                *a1 = ((const __u64 *) ctx)[PT_REGS_SI_INDEX];
                return;
        }
        if (bpf_get_func_arg(ctx, 0, a0) < 0)
                *a0 = 0;
        if (bpf_get_func_arg(ctx, 1, a1) < 0)
                *a1 = 0;
}

/* What evaluate() needs to know of the call, passed by pointer: a global
 * function takes at most five arguments. */
struct inject_call {
        __u64 now;
        __u64 a0, a1;           /* the function's first two arguments: read only when the site
                                 * has a guard, which says what they are */
        __u32 guard;            /* the site's, enum inject_guard */
        __u32 flags;            /* EVAL_* */
};

/* Whether a guard forbids failing this call: the kernel's own fault
 * injection (mm/failslab.c, mm/page_alloc.c) never fails a __GFP_NOFAIL
 * allocation, whose caller does not check for NULL or retries forever, nor
 * one from the bootstrap cache of slab caches. The guard is the site's
 * (its info), read only for a caller in scope. A guard that cannot tell
 * (the bootstrap cache pointer unreadable) forbids. */
static __always_inline int guard_holds(const struct inject_call *call, const struct inject_site_info *info)
{
        __u64 boot = 0, cache = info->guard_bootstrap_cache;

        if (call->guard == INJECT_GUARD_FAILSLAB) {
                if ((__u32) call->a1 & INJECT_GFP_NOFAIL)
                        return 1;
                if (!cache || bpf_probe_read_kernel(&boot, sizeof(boot), (const void *) cache) < 0)
                        return 1;
                return call->a0 == boot;
        }
        if (call->guard == INJECT_GUARD_FAIL_ALLOC_PAGE)
                return ((__u32) call->a0 & INJECT_GFP_NOFAIL) != 0;
        return 1;       /* a guard this program does not know: never fail */
}

/* Whether the slab cache's name is want (NUL-padded, at most
 * INJECT_CACHE_LEN - 2 characters). Both buffers are compared whole:
 * the helper does not pad after the NUL, and a longer name, read
 * truncated, differs from want at its last byte. Unreadable: no. */
static __always_inline int cache_name_is(const struct kmem_cache *cache, const char *want)
{
        char name[INJECT_CACHE_LEN] = {};
        const char *p = BPF_CORE_READ(cache, name);
        char diff = 0;

        if (!p || bpf_probe_read_kernel_str(name, sizeof(name), p) < 0)
                return 0;
        /* Without a branch per byte: one path for the verifier to walk. */
        for (int i = 0; i < INJECT_CACHE_LEN; i++)
                diff |= name[i] ^ want[i];
        return !diff;
}

/* Whether the call's arguments pass the injection's argument filters, as
 * mm/failslab.c and mm/page_alloc.c test their knobs. Where the arguments
 * cannot be read, or read wrong, the call passes through unfailed. A
 * global function, verified once on its own: inlined, each of its
 * outcomes would make the verifier walk the rest of evaluate() again. */
__noinline int args_match(const struct inject_slot *slot, const struct inject_call *call)
{
        const struct kmem_cache *cache = 0;
        __u32 filters, gfp, order = 0;

        if (!slot || !call)
                return 0;
        filters = slot->arg_filters;

        if (call->guard == INJECT_GUARD_FAILSLAB) {
                cache = (const void *) call->a0;
                gfp = (__u32) call->a1;
        } else if (call->guard == INJECT_GUARD_FAIL_ALLOC_PAGE) {
                gfp = (__u32) call->a0;
                order = (__u32) call->a1;
        } else
                return 0;       /* no argument filter applies here: the engine arms none */
        if ((filters & INJECT_FILTER_GFP_WAIT) && (gfp & INJECT_GFP_DIRECT_RECLAIM))
                return 0;
        if ((filters & INJECT_FILTER_GFP_HIGHMEM) && (gfp & INJECT_GFP_HIGHMEM))
                return 0;
        if ((filters & INJECT_FILTER_MIN_ORDER) && order < slot->min_order)
                return 0;
        if ((filters & INJECT_FILTER_MIN_SIZE) && (!cache || BPF_CORE_READ(cache, object_size) < slot->min_size))
                return 0;
        if ((filters & INJECT_FILTER_CACHE) && (!cache || !cache_name_is(cache, slot->cache)))
                return 0;
        return 1;
}

/* Called only for a call that is made to fail, so the stack walk costs
 * nothing on the hot path. */
static __always_inline void emit_event(void *ctx, const struct inject_site_info *info, __u64 inj_id, long retval,
                                       __u64 now)
{
        struct inject_event *e;
        struct task_struct *task;
        const struct cred *c;
        __u64 pid_tgid;
        __u32 uid;
        long n;

        e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
        if (!e)
                return;         /* reader too slow: the injected counter still counts it */
        pid_tgid = bpf_get_current_pid_tgid();
        e->time_ns = now;
        e->inj_id = inj_id;
        e->retval = retval;
        e->pid = (__u32) pid_tgid;
        e->tgid = pid_tgid >> 32;
        bpf_get_current_comm(e->comm, sizeof(e->comm));
        __builtin_memcpy(e->function, info->function, INJECT_FUNC_LEN);
        n = bpf_get_stack(ctx, e->stack, sizeof(e->stack), 0);
        e->n_stack = n > 0 ? n / sizeof(__u64) : 0;
        e->cpu = bpf_get_smp_processor_id();
        task = (void *) bpf_get_current_task();
        c = BPF_CORE_READ(task, cred);
        uid = BPF_CORE_READ(c, uid.val);
        if (BPF_CORE_READ(c, euid.val) != uid || BPF_CORE_READ(c, suid.val) != uid ||
            BPF_CORE_READ(c, fsuid.val) != uid)
                uid = INJECT_UID_ANY;
        e->uid = uid;
        e->task_flags = BPF_CORE_READ(task, flags) & 0x00200000 /* PF_KTHREAD */ ? INJECT_TASK_KTHREAD : 0;
        bpf_ringbuf_submit(e, 0);
}

/* Decides for one injection whose scope holds the caller. Returns 0 to let
 * the call through, or (retval << 1) | 1 to fail it: retval may itself be 0.
 * Counters are bumped with fetch-and-add and the trigger is a function of
 * this call's own match number, so "fail only the 3rd matching call" fails
 * exactly one call however many CPUs race. site: the site's index, idx:
 * the slot's in the site's slots map. call->flags: EVAL_HAVE_STACK, the
 * kernel stack has been captured into stack_scratch; EVAL_GUARDED, a guard
 * forbids failing this call (guard_holds()): it is counted, after the
 * filters, and never matched. */
#define EVAL_HAVE_STACK 1
#define EVAL_GUARDED    2

__noinline long evaluate(__u32 site, __u32 idx, __u64 inj_id, const struct inject_call *call)
{
        struct inject_slot *slot;
        void *slots;
        __u64 n, k, every;

        if (!call)
                return 0;
        slots = bpf_map_lookup_elem(&site_slots, &site);
        if (!slots)
                return 0;
        slot = bpf_map_lookup_elem(slots, &idx);
        if (!slot || !inj_id || slot->id != inj_id)
                return 0;
        if (call->now >= slot->deadline_ns)
                return 0;

        __sync_fetch_and_add(&slot->seen, 1);
        /* Seen but never matched: the skip shows in the counters. */
        if (slot->owner_uid != INJECT_UID_ANY && !creds_match(slot->owner_uid))
                return 0;
        /* A device's calls happen wherever the kernel does its I/O: in a
         * flusher kworker, in a completion's interrupt. The scope is the
         * device, not the task, so its faults fire there too (and the
         * daemon arms a device scope with no credential filter). */
        if (slot->scope_kind != INJECT_SCOPE_DEVICE && !in_task_context())
                return 0;
        if (slot->comm[0] && !comm_matches(slot))
                return 0;
        if (slot->n_callers && (!(call->flags & EVAL_HAVE_STACK) || !stack_has_callers(slot)))
                return 0;
        /* Only injections that filter by argument read them further. */
        if (slot->arg_filters && !args_match(slot, call))
                return 0;
        if (call->flags & EVAL_GUARDED) {
                __sync_fetch_and_add(&slot->guarded, 1);
                return 0;
        }

        /* Call n fails when n > after and (n - after) is a multiple of every:
         * after=2 fails the 3rd; every=3 fails the 3rd, 6th, 9th... */
        n = __sync_fetch_and_add(&slot->matched, 1) + 1;
        if (n <= slot->after)
                return 0;
        k = n - slot->after;
        every = slot->every ?: 1;
        if (k % every)
                return 0;
        if (slot->probability_ppm < INJECT_PPM &&
            bpf_get_prandom_u32() % INJECT_PPM >= slot->probability_ppm)
                return 0;
        if (slot->times && __sync_fetch_and_add(&slot->claims, 1) >= slot->times)
                return 0;

        __sync_fetch_and_add(&slot->injected, 1);
        return slot->retval * 2 + 1;
}

/* The nearest process-scope injection: the caller's own thread group or
 * its closest ancestor that has one. The tag lists the roots nearest first,
 * so the first one this site serves wins. A tag whose injections all ended
 * is in no scopes map, and a new injection never reuses it. */
__noinline int find_process_scope(__u32 site, const struct inject_tag *tag, struct inject_scope_val *out)
{
        struct inject_scope_key key = { .kind = INJECT_SCOPE_PROCESS };
        struct inject_scope_val *v;
        void *scopes;

        if (!tag || !out)
                return 0;
        scopes = bpf_map_lookup_elem(&site_scopes, &site);
        if (!scopes)
                return 0;
        for (int i = 0; i < INJECT_MAX_TAGS; i++) {
                key.id = tag->tags[i];
                if (!key.id)
                        return 0;
                v = bpf_map_lookup_elem(scopes, &key);
                if (v) {
                        *out = *v;
                        return 1;
                }
        }
        return 0;
}

/* The deepest cgroup-scope injection among the caller's cgroup ancestors,
 * looking only at the levels some injection sits at. */
__noinline int find_cgroup_scope(__u32 site, __u32 levels, struct inject_scope_val *out)
{
        struct inject_scope_key key = { .kind = INJECT_SCOPE_CGROUP };
        struct inject_scope_val *v = NULL;
        void *scopes;

        if (!out)
                return 0;
        scopes = bpf_map_lookup_elem(&site_scopes, &site);
        if (!scopes)
                return 0;
        for (int l = INJECT_MAX_CGROUP_LEVEL - 1; l >= 0; l--) {
                if (!(levels & (1u << l)))
                        continue;
                key.id = bpf_get_current_ancestor_cgroup_id(l);
                if (!key.id)
                        continue;
                v = bpf_map_lookup_elem(scopes, &key);
                if (v)
                        break;
        }
        /* Copied once, after the loop: the verifier walks the copy once
         * instead of once per level (the level is dead here, so the exits
         * converge). */
        if (!v)
                return 0;
        *out = *v;
        return 1;
}

/* The disk a call is about, by its diskseq (0: none, or unreadable). */
static __always_inline __u64 call_diskseq(const struct inject_site_info *info, __u64 a0)
{
        const struct bio *bio = (const void *) a0;

        if (info->device_arg != INJECT_DEVICE_ARG_BIO || !bio)
                return 0;
        return BPF_CORE_READ(bio, bi_bdev, bd_disk, diskseq);
}

/* The device-scope injection on the call's disk, if any. */
__noinline int find_device_scope(__u32 site, __u64 diskseq, struct inject_scope_val *out)
{
        struct inject_scope_key key = { .kind = INJECT_SCOPE_DEVICE, .id = diskseq };
        struct inject_scope_val *v;
        void *scopes;

        if (!out || !diskseq)
                return 0;
        scopes = bpf_map_lookup_elem(&site_scopes, &site);
        if (!scopes)
                return 0;
        v = bpf_map_lookup_elem(scopes, &key);
        if (!v)
                return 0;
        *out = *v;
        return 1;
}

/* Finds, per scope kind, the injection nearest to the caller, then lets the
 * first one whose filters and triggers fire decide. */
static __always_inline long decide(void *ctx, int kprobe)
{
        struct inject_scope_key gkey = { .kind = INJECT_SCOPE_GLOBAL };
        struct inject_scope_val pv = {}, cv = {}, dv = {}, gv = {}, *v;
        struct inject_call call = {};
        struct inject_site_info *info;
        struct inject_tag *tag;
        __u32 zero = 0;
        __u64 id = 0;
        void *m;
        __u32 site;
        long r = 0;

        /* The cookie is a u64; an index past the outer maps' end finds
         * nothing there. */
        site = kprobe ? (__u32) bpf_get_attach_cookie(ctx) : site_index;
        m = bpf_map_lookup_elem(&site_infos, &site);
        if (!m)
                return 0;
        info = bpf_map_lookup_elem(m, &zero);
        if (!info || !info->n_live)
                return 0;
        /* A task outside every process scope has no tag: one lookup that
         * misses, wherever the task sits in the process tree. */
        if (info->n_process) {
                tag = bpf_task_storage_get(&task_tags, bpf_get_current_task_btf(), 0, 0);
                if (tag)
                        find_process_scope(site, tag, &pv);
        }
        if (info->cgroup_levels)
                find_cgroup_scope(site, info->cgroup_levels, &cv);
        /* The arguments are read here for a device scope only: what a
         * caller outside every scope pays on such a site is one read of
         * the bio's disk and one hash lookup that misses. */
        if (info->n_device) {
                function_args(ctx, kprobe, &call.a0, &call.a1);
                find_device_scope(site, call_diskseq(info, call.a0), &dv);
        }
        if (info->n_global) {
                m = bpf_map_lookup_elem(&site_scopes, &site);
                v = m ? bpf_map_lookup_elem(m, &gkey) : NULL;
                if (v)
                        gv = *v;
        }
        if (!pv.inj_id && !cv.inj_id && !dv.inj_id && !gv.inj_id)
                return 0;

        /* Only callers in scope pay for the stack, and only on sites where
         * some injection filters by caller. */
        if (info->n_callers) {
                __u64 *ips = bpf_map_lookup_elem(&stack_scratch, &zero);

                if (ips) {
                        __builtin_memset(ips, 0, sizeof(__u64) * INJECT_STACK_DEPTH);
                        if (bpf_get_stack(ctx, ips, sizeof(__u64) * INJECT_STACK_DEPTH, 0) > 0)
                                call.flags |= EVAL_HAVE_STACK;
                }
        }

        /* Only callers in scope read the arguments, and only on sites
         * whose guard says what they are: guards and argument filters. */
        call.guard = info->guard;
        if (call.guard != INJECT_GUARD_NONE) {
                function_args(ctx, kprobe, &call.a0, &call.a1);
                if (guard_holds(&call, info))
                        call.flags |= EVAL_GUARDED;
        }
        call.now = bpf_ktime_get_boot_ns();
        if (pv.inj_id && (r = evaluate(site, pv.slot, pv.inj_id, &call)))
                id = pv.inj_id;
        else if (cv.inj_id && (r = evaluate(site, cv.slot, cv.inj_id, &call)))
                id = cv.inj_id;
        else if (dv.inj_id && (r = evaluate(site, dv.slot, dv.inj_id, &call)))
                id = dv.inj_id;
        else if (gv.inj_id && (r = evaluate(site, gv.slot, gv.inj_id, &call)))
                id = gv.inj_id;
        if (!id)
                return 0;
        emit_event(ctx, info, id, r >> 1, call.now);
        return r;
}

SEC("kprobe")
int inject_kprobe(struct pt_regs *ctx)
{
        long r = decide(ctx, 1);

        if (r)
                bpf_override_return(ctx, r >> 1);
        return 0;
}

/* Declared long: a nonzero R0 becomes the function's full 64-bit return
 * value, and syscall wrappers return long. Zero means "run the function",
 * which is why a fault that must return 0 needs the kprobe backend. */
SEC("fmod_ret")
long inject_fmod_ret(__u64 *ctx)
{
        return decide(ctx, 0) >> 1;
}
