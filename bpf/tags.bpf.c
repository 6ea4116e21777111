// SPDX-License-Identifier: GPL-2.0
/* Keeps process scopes as tags on tasks (struct inject_tag, inject.h), so
 * that a site finds the caller's process scope with one task-storage lookup
 * instead of walking the caller's ancestry on every call. The engine loads
 * this while some process-scope injection is armed:
 *
 *   inject_tag_fork  every new task, thread or process, starts with the
 *                    tags of what it descends from, copied from its parent
 *                    before it runs;
 *   inject_tag_subtree  an iterator the engine runs for one process at a
 *                    time, walking down from a root it adds to the roots
 *                    map (scope-tags.c): it recomputes each thread's tags
 *                    from its ancestry and lists its children, so the walk
 *                    that used to run on every call of an injected function
 *                    runs once per task of the root's subtree per arming;
 *   inject_tag_sync  the same recomputation as an iterator over every task
 *                    on the machine: the engine's fallback when it cannot
 *                    walk the subtree (a kernel before 6.1), run until a
 *                    pass changes nothing.
 *
 * The fork program and the iterators race only for a task forked while they
 * run, and never lose a tag (see inject_tag_fork and inject_tag_subtree). */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "inject.h"
#include "tags.h"

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

/* Recomputes task's tags from its ancestry, with w as scratch; returns
 * what it did (INJECT_TAG_*, tags.h). */
static __always_inline __u32 tag_task(struct task_struct *task, struct walk *w)
{
        struct inject_tag *cur;
        __u32 n, flags = 0;
        int same = 1;

        __builtin_memset(w, 0, sizeof(*w));
        w->task = (__u64) task;
        bpf_loop(INJECT_MAX_PROC_DEPTH, walk_step, NULL, 0);
        n = w->n;
        if (n > INJECT_MAX_TAGS)
                flags |= INJECT_TAG_OVER;

        cur = bpf_task_storage_get(&task_tags, task, 0, 0);
        if (!cur) {
                if (!n)
                        return flags;
                cur = bpf_task_storage_get(&task_tags, task, &w->want, BPF_LOCAL_STORAGE_GET_F_CREATE);
                if (cur)
                        return flags | INJECT_TAG_CHANGED;
                /* inject_tag_fork created it in the meantime, from a parent that
                 * may not have had the new root yet: overwrite. */
                cur = bpf_task_storage_get(&task_tags, task, 0, 0);
                if (!cur)
                        return flags | INJECT_TAG_FAILED;
        }
        for (int i = 0; i < INJECT_MAX_TAGS; i++)
                if (cur->tags[i] != w->want.tags[i])
                        same = 0;
        if (same)
                return flags;
        if (!n)
                bpf_task_storage_delete(&task_tags, task);
        else
                for (int i = 0; i < INJECT_MAX_TAGS; i++)
                        cur->tags[i] = w->want.tags[i];
        return flags | INJECT_TAG_CHANGED;
}

static __always_inline void mark(struct bpf_iter__task *ctx, char c)
{
        bpf_seq_write(ctx->meta->seq, &c, 1);
}

/* Writes one byte per task it visits ('.'), per task it changed ('w'), per
 * task in more process scopes than a tag holds ('o'), and per task it could
 * not tag ('e'). The engine's fallback: it visits every task on the
 * machine. */
SEC("iter/task")
int inject_tag_sync(struct bpf_iter__task *ctx)
{
        struct task_struct *task = ctx->task;
        struct walk *w;
        __u32 zero = 0, flags;

        w = bpf_map_lookup_elem(&walk_scratch, &zero);
        if (!task || !w)
                return 0;
        flags = tag_task(task, w);
        mark(ctx, '.');
        if (flags & INJECT_TAG_OVER)
                mark(ctx, 'o');
        if (flags & INJECT_TAG_CHANGED)
                mark(ctx, 'w');
        if (flags & INJECT_TAG_FAILED)
                mark(ctx, 'e');
        return 0;
}

/* The fields of the process tree, not in vmlinux-min.h: a flavor of
 * task_struct (CO-RE matches it to the kernel's by the name before ___). A
 * list_head's layout never changes. */
struct inject_list_head {
        struct inject_list_head *next, *prev;
};

struct task_struct___tree {
        struct inject_list_head children;       /* of the processes whose real_parent it is */
        struct inject_list_head sibling;        /* its link in its real_parent's children */
} __attribute__((preserve_access_index));

/* Where the walk of one thread's children stands, and the records read
 * since they were last written; in a map for the reason walk_scratch is. */
struct kids {
        __u64 head;             /* the address of the thread's children list */
        __u64 next;             /* the list_head of the next child, or head */
        __u64 parent;           /* the thread */
        __u32 n;                /* records in recs */
        __u32 done;
        __u32 lost;
        __u32 fence;            /* only exchanged: see inject_tag_subtree */
        struct inject_tag_rec recs[INJECT_TAG_KID_BATCH];
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct kids);
} kids_scratch SEC(".maps");

/* One child, as a bpf_loop() callback. The children list is the kernel's,
 * guarded by tasklist_lock, which a BPF program cannot take: it is read
 * here as it stands, under the RCU read lock the iterator holds (so a task
 * reached through it stays memory, even if it is being released). A child
 * whose real_parent is not the thread any more, or a link that leads back
 * to itself (list_del_init() of an exiting child), means the list changed
 * under the walk: the walk stops and says so, and the engine walks again. */
static long kid_step(__u32 i, void *unused)
{
        struct task_struct *child;
        struct kids *k;
        __u32 zero = 0, n;
        __u64 next;

        k = bpf_map_lookup_elem(&kids_scratch, &zero);
        if (!k)
                return 1;
        if (k->next == k->head) {
                k->done = 1;
                return 1;
        }
        n = k->n;
        if (n >= INJECT_TAG_KID_BATCH)
                return 1;
        child = (void *) (k->next - bpf_core_field_offset(struct task_struct___tree, sibling));
        if ((__u64) BPF_CORE_READ(child, real_parent) != k->parent) {
                k->lost = k->done = 1;
                return 1;
        }
        k->recs[n].kind = INJECT_TAG_REC_CHILD;
        k->recs[n].flags = 0;
        k->recs[n].id = BPF_CORE_READ(child, pid);
        k->recs[n].tgid = BPF_CORE_READ(child, tgid);
        k->recs[n].parent = 0;
        k->recs[n].pad = 0;
        k->n = n + 1;
        next = (__u64) BPF_CORE_READ((struct task_struct___tree *) child, sibling.next);
        if (next == k->next) {
                k->lost = k->done = 1;
                return 1;
        }
        k->next = next;
        return 0;
}

/* For the engine's walk of a root's subtree, one process at a time (an
 * iterator link with bpf_iter_link_info.task.pid, Linux 6.1, shows the
 * threads of one process): tags each thread, then writes its children,
 * which the engine walks next (struct inject_tag_rec, tags.h).
 *
 * The tagging happens before the read of the thread's children, with a
 * full memory barrier between them (a BPF atomic exchange, which always
 * fetches, is fully ordered):
 * a child the read misses was linked into the list after it, and
 * inject_tag_fork reads the thread's tags for it after that link, under
 * tasklist_lock and other locks, so it copies the tags written here. */
SEC("iter/task")
int inject_tag_subtree(struct bpf_iter__task *ctx)
{
        struct task_struct *task = ctx->task;
        struct inject_tag_rec rec = {};
        struct walk *w;
        struct kids *k;
        __u32 zero = 0, n;

        w = bpf_map_lookup_elem(&walk_scratch, &zero);
        k = bpf_map_lookup_elem(&kids_scratch, &zero);
        if (!task || !w || !k)
                return 0;
        rec.kind = INJECT_TAG_REC_TASK;
        rec.flags = tag_task(task, w);
        rec.id = task->pid;
        rec.tgid = task->tgid;
        rec.parent = BPF_CORE_READ(task, real_parent, tgid);
        __sync_lock_test_and_set(&k->fence, 1);
        bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));

        k->head = (__u64) task + bpf_core_field_offset(struct task_struct___tree, children);
        k->next = (__u64) BPF_CORE_READ((struct task_struct___tree *) task, children.next);
        k->parent = (__u64) task;
        k->done = k->lost = 0;
        for (int round = 0; round < INJECT_TAG_KID_ROUNDS; round++) {
                k->n = 0;
                bpf_loop(INJECT_TAG_KID_BATCH, kid_step, NULL, 0);
                n = k->n;
                /* Two comparisons the compiler must not fuse into one
                 * (n - 1 <= 63), whose bound the verifier cannot carry
                 * back to n. */
                if (n >= 1) {
                        barrier_var(n);
                        if (n <= INJECT_TAG_KID_BATCH)
                                bpf_seq_write(ctx->meta->seq, k->recs, n * sizeof(k->recs[0]));
                }
                if (k->done)
                        break;
        }
        if (!k->done || k->lost) {
                rec.kind = INJECT_TAG_REC_LOST;
                rec.flags = 0;
                bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
        }
        return 0;
}
