/* SPDX-License-Identifier: MIT */
/* The pid namespaces of a task, read in the kernel by bpf/task-ns.bpf.c:
 * the one file that includes its skeleton. The program is loaded on first
 * use and kept for the engine's life; nothing is pinned. */

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "engine.h"
#include "io-util.h"
#include "task-ns-record.h"
#include "task-ns.skel.h"

_Static_assert(ENGINE_PIDNS_LEVELS == TASK_NS_LEVELS, "engine.h and task-ns-record.h disagree");

DEFINE_TRIVIAL_CLEANUP_FUNC(struct task_ns_bpf *, task_ns_bpf__destroy);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct bpf_link *, bpf_link__destroy);

void engine_task_ns_free(Engine *e) {
        task_ns_bpf__destroy(e->task_ns);
        e->task_ns = NULL;
}

/* Loads once. A failure is kept and returned from then on: what made the
 * kernel refuse (lockdown, no BTF, no CAP_BPF) does not go away, and the
 * caller should not pay for a load that fails on every request. */
static int task_ns_load(Engine *e) {
        _cleanup_(task_ns_bpf__destroyp) struct task_ns_bpf *skel = NULL;
        int r;

        if (e->task_ns)
                return 0;
        if (e->task_ns_error < 0)
                return e->task_ns_error;
        skel = task_ns_bpf__open();
        if (!skel)
                return e->task_ns_error = negative_errno();
        skel->rodata->ns_per_tick = e->ns_per_tick;
        r = task_ns_bpf__load(skel);
        if (r < 0)
                return e->task_ns_error = r;
        e->task_ns = TAKE_PTR(skel);
        return 0;
}

int engine_task_pidns(Engine *e, pid_t pid, EngineTaskPidns *ret) {
        LIBBPF_OPTS(bpf_iter_attach_opts, opts);
        union bpf_iter_link_info linfo = {};
        _cleanup_(bpf_link__destroyp) struct bpf_link *link = NULL;
        _cleanup_close_ int fd = -1;
        struct task_ns_record rec;
        EngineTaskPidns t = {};
        size_t got = 0;
        ssize_t k;
        int r;

        if (pid <= 0)
                return -EINVAL;
        r = task_ns_load(e);
        if (r < 0)
                return r;

        /* One link per question, for this one task: the kernel then visits
         * this task only (Linux 6.1's parameterized task iterators; the pid
         * is read in the daemon's own pid namespace, the initial one). A
         * kernel without them refuses the link info (EINVAL): the caller
         * falls back as if the program had not loaded. */
        linfo.task.tid = (__u32) pid;
        opts.link_info = &linfo;
        opts.link_info_len = sizeof(linfo);
        link = bpf_program__attach_iter(e->task_ns->progs.task_ns_read, &opts);
        if (!link)
                return negative_errno();
        fd = bpf_iter_create(bpf_link__fd(link));
        if (fd < 0)
                return negative_errno();
        while (got < sizeof(rec)) {
                k = read_retry(fd, (char *) &rec + got, sizeof(rec) - got);
                if (k < 0)
                        return (int) k;
                if (k == 0)
                        break;
                got += (size_t) k;
        }
        /* Nothing: no task has that pid (6.1 finds only a thread group's
         * leader by it), or it is being reaped. */
        if (got == 0)
                return -ESRCH;
        if (got != sizeof(rec) || rec.level >= TASK_NS_LEVELS)
                return -EIO;
        /* Another task: a kernel from before 6.1 ignores the parameter and
         * shows every task. Then no answer of this program can be trusted;
         * say so for good, so that the caller falls back. */
        if (rec.pid != (__u32) pid) {
                e->task_ns_error = -EOPNOTSUPP;
                engine_task_ns_free(e);
                return -EOPNOTSUPP;
        }
        /* A thread's id (later kernels find threads too) is not a thread
         * group's. */
        if (rec.tgid != (__u32) pid)
                return -ESRCH;

        t.tgid = (pid_t) rec.tgid;
        t.start_ticks = rec.start_ticks;
        t.level = rec.level;
        for (unsigned i = 0; i <= rec.level; i++) {
                t.inum[i] = rec.inum[i];
                t.nr[i] = (pid_t) rec.nr[i];
        }
        *ret = t;
        return 0;
}
