// SPDX-License-Identifier: GPL-2.0
/* The floor of the hot-path benchmark, and a sketch of the design that
 * would bring injectd down to it.
 *
 * floor_*: programs of each backend's type that do nothing. What a caller
 * pays with one of these attached is what the kernel charges for running
 * any program there (the kprobe's ftrace handler and perf glue, or the
 * trampoline), so the difference between injectd's program and this one is
 * what injectd's own code costs.
 *
 * tagged_*: what a caller outside every scope would pay if process scopes
 * were kept as a tag in BPF task-local storage (set on the scope's root and
 * copied to each child at fork) instead of found by walking the caller's
 * ancestry: the site check injectd does today, then one task-storage
 * lookup, which misses. docs/performance.md has the figures; nothing here
 * injects. */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>

/* The same licence as bpf/inject.bpf.c: a tracing program's type and
 * attach path, not its body, should differ from injectd's. */
char LICENSE[] SEC("license") = "GPL";

/* Nonzero: something is armed on the site (bench-floor sets it). */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, __u32);
} tagged_site SEC(".maps");

/* The scope tag of a task in some process scope: the injection's slot. */
struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, __u32);
} tagged_scope SEC(".maps");

SEC("kprobe")
int floor_kprobe(struct pt_regs *ctx)
{
        return 0;
}

/* Zero: run the function as if no program were attached. */
SEC("fmod_ret")
long floor_fmod_ret(__u64 *ctx)
{
        return 0;
}

/* -1 when the caller is tagged (never, here): injectd would then evaluate
 * the injection in that slot. */
static __always_inline long tagged_decide(void)
{
        __u32 zero = 0, *live, *slot;

        live = bpf_map_lookup_elem(&tagged_site, &zero);
        if (!live || !*live)
                return 0;
        slot = bpf_task_storage_get(&tagged_scope, bpf_get_current_task_btf(), 0, 0);
        if (!slot)
                return 0;
        return -1;
}

SEC("kprobe")
int tagged_kprobe(struct pt_regs *ctx)
{
        long r = tagged_decide();

        if (r)
                bpf_override_return(ctx, r);
        return 0;
}

SEC("fmod_ret")
long tagged_fmod_ret(__u64 *ctx)
{
        return tagged_decide();
}
