// SPDX-License-Identifier: GPL-2.0
/* The observe program (observe.h): attached with one kprobe.multi link to
 * every function of an observation, it counts the calls the observed
 * process tree makes, per function and per distinct kernel stack, and fails
 * nothing. The tree is a process-scope root's tag (inject.h, struct
 * inject_tag), kept on its tasks by tags.bpf.c as for injections; a caller
 * outside it pays one task-storage lookup that misses. A task of the tree
 * counts only while it runs with nothing but the observer's credentials,
 * the check an injection of hers makes (creds.bpf.h): a setuid,
 * setgid or file-capability program she starts leaves what she observes.
 *
 * The maps' sizes here are templates: the engine sets them to the request
 * (the functions attached, the stack budget) before the load, so that an
 * observation costs the daemon's memory what it asked for, not the most
 * any could. */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "inject.h"
#include "observe.h"
#include "in-task.bpf.h"
#include "creds.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the engine between open and load: the observed root's tag, and
 * the observer's uid (INJECT_UID_ANY: a privileged observer, no
 * credential filter, as for a privileged caller's injection). */
const volatile __u64 observe_tag = 0;
const volatile __u32 observe_uid = INJECT_UID_ANY;

/* The engine's: the map the tagging programs keep. */
#include "task-tags.bpf.h"

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, OBSERVE_MAX_FUNCTIONS);
        __type(key, __u64);
        __type(value, struct observe_count);
} counts SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_STACK_TRACE);
        __uint(max_entries, OBSERVE_MAX_STACKS);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, OBSERVE_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, OBSERVE_MAX_PAIRS);
        __type(key, struct observe_pair_key);
        __type(value, struct observe_pair);
} pairs SEC(".maps");

static __always_inline int observed(void)
{
        struct inject_tag *tag = bpf_task_storage_get(&task_tags, bpf_get_current_task_btf(), 0, 0);

        if (!tag)
                return 0;
        for (int i = 0; i < INJECT_MAX_TAGS; i++) {
                if (!tag->tags[i])
                        return 0;
                if (tag->tags[i] == observe_tag)
                        return 1;
        }
        return 0;
}

/* Keeps n, the function's call number of the stack's call k, when k is a
 * multiple of the stride (observe.h). Two CPUs calling from one stack at
 * once may race here: a sample may be lost or misplaced, never out of
 * bounds; the plan then fails a neighbouring call of the stack. */
static __always_inline void record_sample(struct observe_pair *p, __u64 k, __u64 n)
{
        __u32 shift = p->shift;
        __u64 idx;

        if (shift >= 63 || (k & ((1ULL << shift) - 1)))
                return;
        idx = k >> shift;
        if (idx >= OBSERVE_SAMPLES) {
                /* Full: keep the even samples, double the stride. */
#pragma unroll
                for (int i = 0; i < OBSERVE_SAMPLES / 2; i++)
                        p->samples[i] = p->samples[2 * i];
                p->n_samples = OBSERVE_SAMPLES / 2;
                p->shift = ++shift;
                if (k & ((1ULL << shift) - 1))
                        return;
                idx = k >> shift;
                if (idx >= OBSERVE_SAMPLES)
                        return;
        }
        p->samples[idx] = n;
        if (idx + 1 > p->n_samples)
                p->n_samples = idx + 1;
}

SEC("kprobe.multi")
int observe_call(struct pt_regs *ctx)
{
        struct observe_count zero = {}, *c;
        struct observe_pair_key key = {};
        struct observe_pair first = {}, *p;
        __u64 ip, n, k;

        if (!observed() || !in_task_context())
                return 0;
        if (observe_uid != INJECT_UID_ANY && !creds_match(observe_uid))
                return 0;
        ip = bpf_get_func_ip(ctx);
        c = bpf_map_lookup_elem(&counts, &ip);
        if (!c) {
                (void) bpf_map_update_elem(&counts, &ip, &zero, BPF_NOEXIST);
                c = bpf_map_lookup_elem(&counts, &ip);
                if (!c)
                        return 0;
        }
        n = __sync_fetch_and_add(&c->calls, 1);

        key.ip = ip;
        key.stack_id = bpf_get_stackid(ctx, &stacks, 0);
        if (key.stack_id < 0) {
                __sync_fetch_and_add(&c->stack_errors, 1);
                return 0;
        }
        p = bpf_map_lookup_elem(&pairs, &key);
        if (!p) {
                first.first_call = n;
                (void) bpf_map_update_elem(&pairs, &key, &first, BPF_NOEXIST);
                p = bpf_map_lookup_elem(&pairs, &key);
                if (!p) {
                        __sync_fetch_and_add(&c->stack_errors, 1);
                        return 0;
                }
        }
        k = __sync_fetch_and_add(&p->calls, 1);
        p->last_call = n;
        record_sample(p, k, n);
        return 0;
}
