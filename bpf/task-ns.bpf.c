// SPDX-License-Identifier: GPL-2.0
/* Reads a task's pid namespaces, for the daemon's question "is this process
 * in the caller's pid namespace or below it?". /proc/PID/ns/pid answers it
 * only for whoever may ptrace the process (and the daemon has no
 * CAP_SYS_PTRACE); telling namespaces apart by the parent chain fails for
 * a process that entered one with setns() (docker exec, nsenter), whose
 * parent is outside. The kernel knows each task's namespaces: struct pid
 * holds, for every level from the initial namespace down to the task's
 * own, the namespace and the task's number in it.
 *
 * An iterator over tasks, which the engine runs for one task at a time
 * (bpf_iter_link_info.task.tid, Linux 6.1): it writes one struct
 * task_ns_record for each task it is shown. */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "task-ns-record.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the engine between open and load. */
const volatile __u64 ns_per_tick = 10000000;   /* NSEC_PER_SEC / USER_HZ */

/* One record, in a map: it is too large for the 512-byte stack with the
 * rest. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct task_ns_record);
} scratch SEC(".maps");

SEC("iter/task")
int task_ns_read(struct bpf_iter__task *ctx)
{
        struct task_struct *task = ctx->task;
        struct task_ns_record *rec;
        struct pid *pid;
        __u32 zero = 0, level;

        rec = bpf_map_lookup_elem(&scratch, &zero);
        if (!task || !rec)
                return 0;
        __builtin_memset(rec, 0, sizeof(*rec));
        /* NULL once the task has been released (it is dying): nothing to
         * say about it, as /proc says nothing about a reaped process. */
        pid = BPF_CORE_READ(task, thread_pid);
        if (!pid)
                return 0;
        level = BPF_CORE_READ(pid, level);
        if (level >= TASK_NS_LEVELS)
                return 0;
        rec->pid = BPF_CORE_READ(task, pid);
        rec->tgid = BPF_CORE_READ(task, tgid);
        rec->level = level;
        rec->start_ticks = BPF_CORE_READ(task, group_leader, start_boottime) / ns_per_tick;
        for (__u32 i = 0; i < TASK_NS_LEVELS; i++) {
                struct upid *up;

                if (i > level)
                        break;
                /* numbers[] is a flexible array: no CO-RE index for a
                 * variable i, so the element's address is computed from
                 * the relocated offset and size. */
                up = (void *) pid + bpf_core_field_offset(struct pid, numbers) +
                     i * bpf_core_type_size(struct upid);
                rec->nr[i] = BPF_CORE_READ(up, nr);
                rec->inum[i] = BPF_CORE_READ(up, ns, ns.inum);
        }
        bpf_seq_write(ctx->meta->seq, rec, sizeof(*rec));
        return 0;
}
