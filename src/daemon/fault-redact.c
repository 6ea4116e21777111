/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fault-redact.h"
#include "process-info.h"

#define PF_KTHREAD_FLAG 0x00200000u     /* include/linux/sched.h PF_KTHREAD */

bool fault_task_visible_to(uid_t owner_uid, const FaultTask *t) {
        if (!t->known)
                return false;           /* deny by default: nothing to tell whose it was */
        if (t->kthread)
                return true;
        for (size_t i = 0; i < 4; i++)
                if (t->uids[i] != owner_uid)
                        return false;
        return true;
}

/* flags (field 9) and starttime (field 22) of /proc/PID/stat, counted
 * after the comm, which may hold spaces and parentheses. */
static int read_stat(const char *proc_root, pid_t pid, unsigned long *ret_flags, unsigned long long *ret_start) {
        char path[64], buf[1024], *p;
        size_t n;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%d/stat", proc_root, (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        p = strrchr(buf, ')');
        if (!p)
                return -EIO;
        /* After ") ": state(3) ppid pgrp session tty_nr tpgid flags(9) ...
         * minflt cminflt majflt cmajflt utime stime cutime cstime priority
         * nice num_threads itrealvalue starttime(22). */
        if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                   ret_flags, ret_start) != 2)
                return -EIO;
        return 0;
}

void fault_task_read(const char *proc_root, pid_t pid, uint64_t event_ns, FaultTask *t) {
        unsigned long flags;
        unsigned long long start;
        long hz = sysconf(_SC_CLK_TCK);
        char path[64];
        ProcStatus st;
        FILE *f;

        *t = (FaultTask) {};
        proc_root = proc_root ?: "/proc";
        if (pid <= 0 || hz <= 0 || read_stat(proc_root, pid, &flags, &start) < 0)
                return;
        /* Started after the fault: the pid was reused, this is someone
         * else. (Ticks are coarse: a task started in the fault's own tick
         * passes, which takes a pid reused within that tick.) */
        if (start * (1000000000ULL / (unsigned long long) hz) > event_ns)
                return;
        if (flags & PF_KTHREAD_FLAG) {
                t->kthread = t->known = true;
                return;
        }
        snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int) pid);
        f = fopen(path, "re");
        if (!f)
                return;
        if (proc_status_parse(f, &st) >= 0) {
                memcpy(t->uids, st.uids, sizeof(t->uids));
                t->known = true;
        }
        fclose(f);
}

void fault_task_from_event(const struct inject_event *ev, FaultTask *t) {
        *t = (FaultTask) {
                .known = true,
                .kthread = ev->task_flags & INJECT_TASK_KTHREAD,
                .uids = { ev->uid, ev->uid, ev->uid, ev->uid },   /* INJECT_UID_ANY: mixed, nobody's own */
        };
}

bool fault_event_redact(const Injection *inj, struct inject_event *ev, bool has_task) {
        FaultTask t;

        if (inj->info.slot.scope_kind != INJECT_SCOPE_DEVICE || inj->owner_privileged)
                return false;
        /* The task as the BPF program saw it at the fault; from /proc
         * only for an older program's record, where a task gone since
         * is not shown (/proc has no pid 0 either). */
        if (has_task)
                fault_task_from_event(ev, &t);
        else
                fault_task_read(NULL, (pid_t) ev->pid, ev->time_ns, &t);
        if (fault_task_visible_to(inj->owner_uid, &t))
                return false;
        ev->pid = ev->tgid = 0;
        memset(ev->comm, 0, sizeof(ev->comm));
        ev->n_stack = 0;
        return true;
}
