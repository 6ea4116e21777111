// SPDX-License-Identifier: GPL-2.0
/* Keeps process scopes as tags on tasks (struct inject_tag, inject.h), so
 * that a site finds the caller's process scope with one task-storage lookup
 * instead of walking the caller's ancestry on every call. The engine loads
 * this while some process-scope injection is armed:
 *
 *   inject_tag_fork  every new task, thread or process, starts with the
 *                    tags of what it descends from, copied from its parent
 *                    before it runs;
 *   inject_tag_sync  an iterator over every task, which the engine runs
 *                    after it adds a root to the roots map: it recomputes
 *                    each task's tags from its ancestry, so the walk that
 *                    used to run on every call of an injected function
 *                    runs once per task per arming.
 *
 * The two race only for a task forked while inject_tag_sync runs, and never
 * lose a tag (see inject_tag_fork); the engine runs inject_tag_sync until a
 * pass changes nothing. */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "inject.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the engine between open and load. */
const volatile __u64 ns_per_tick = 10000000;   /* NSEC_PER_SEC / USER_HZ */

/* The engine's: reused by every site program too. */
#include "task-tags.bpf.h"

/* tgid -> the live process-scope root of that pid, written by the engine. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, INJECT_MAX_ROOTS);
        __type(key, __u32);
        __type(value, struct inject_root);
} roots SEC(".maps");

/* A task descends from what its parent descends from: copy the parent's
 * tags. Only ever creates a child's tags, never overwrites them: if
 * inject_tag_sync reached the child first, it wrote what the child descends from
 * now, which a parent read a moment earlier may lack. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(inject_tag_fork, struct task_struct *parent, struct task_struct *child)
{
        struct task_struct *from = parent;
        struct inject_tag *t;

        /* CLONE_PARENT makes a sibling of the caller: it descends from the
         * caller's parent, not from the caller's own thread group. */
        if (child->tgid != parent->tgid && child->real_parent != parent)
                from = child->real_parent;
        t = bpf_task_storage_get(&task_tags, from, 0, 0);
        if (t)
                bpf_task_storage_get(&task_tags, child, t, BPF_LOCAL_STORAGE_GET_F_CREATE);
        return 0;
}

/* What a task should carry: the roots among its own thread group and its
 * ancestors, nearest first, as the walk the sites used to do found them. n
 * counts them all, and may exceed INJECT_MAX_TAGS: only the nearest ones
 * are kept. */
struct walk {
        __u64 task;     /* the struct task_struct * of the next step */
        __u32 n;
        __u32 pad;
        struct inject_tag want;
};

/* In a map, not on the stack: 6.1 verifies a bpf_loop() callback once,
 * with the caller's stack as it was at the call, so it would take n for
 * the constant 0 it starts as and prune the other branches; a map value is
 * unknown to it. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct walk);
} walk_scratch SEC(".maps");

/* One step up, as a bpf_loop() callback: the verifier checks it once,
 * where an unrolled 64-step walk that keeps a count blows its budget. */
static long walk_step(__u32 i, void *unused)
{
        struct task_struct *t;
        struct inject_root *r;
        struct walk *w;
        __u32 zero = 0, tgid;

        w = bpf_map_lookup_elem(&walk_scratch, &zero);
        if (!w || !w->task)
                return 1;
        t = (void *) w->task;
        tgid = BPF_CORE_READ(t, tgid);
        r = bpf_map_lookup_elem(&roots, &tgid);
        /* A recycled pid is not the process the scope named. */
        if (r && BPF_CORE_READ(t, group_leader, start_boottime) / ns_per_tick == r->start_ticks) {
                if (w->n < INJECT_MAX_TAGS)
                        w->want.tags[w->n] = r->tag;
                w->n++;
        }
        if (tgid <= 1)
                return 1;
        w->task = (__u64) BPF_CORE_READ(t, real_parent);
        return 0;
}

static __always_inline void mark(struct bpf_iter__task *ctx, char c)
{
        bpf_seq_write(ctx->meta->seq, &c, 1);
}

/* Writes one byte per task it changed ('w'), per task in more process
 * scopes than a tag holds ('o'), and per task it could not tag ('e'). */
SEC("iter/task")
int inject_tag_sync(struct bpf_iter__task *ctx)
{
        struct task_struct *task = ctx->task;
        struct inject_tag *cur;
        struct walk *w;
        __u32 zero = 0, n;
        int same = 1;

        w = bpf_map_lookup_elem(&walk_scratch, &zero);
        if (!task || !w)
                return 0;
        __builtin_memset(w, 0, sizeof(*w));
        w->task = (__u64) task;
        bpf_loop(INJECT_MAX_PROC_DEPTH, walk_step, NULL, 0);
        n = w->n;
        if (n > INJECT_MAX_TAGS)
                mark(ctx, 'o');

        cur = bpf_task_storage_get(&task_tags, task, 0, 0);
        if (!cur) {
                if (!n)
                        return 0;
                cur = bpf_task_storage_get(&task_tags, task, &w->want, BPF_LOCAL_STORAGE_GET_F_CREATE);
                if (cur) {
                        mark(ctx, 'w');
                        return 0;
                }
                /* inject_tag_fork created it in the meantime, from a parent that
                 * may not have had the new root yet: overwrite. */
                cur = bpf_task_storage_get(&task_tags, task, 0, 0);
                if (!cur) {
                        mark(ctx, 'e');
                        return 0;
                }
        }
        for (int i = 0; i < INJECT_MAX_TAGS; i++)
                if (cur->tags[i] != w->want.tags[i])
                        same = 0;
        if (same)
                return 0;
        if (!n)
                bpf_task_storage_delete(&task_tags, task);
        else
                for (int i = 0; i < INJECT_MAX_TAGS; i++)
                        cur->tags[i] = w->want.tags[i];
        mark(ctx, 'w');
        return 0;
}
