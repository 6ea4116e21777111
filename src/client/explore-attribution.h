/* SPDX-License-Identifier: MIT */
#pragma once

/* Which of explore's runs a kernel report belongs to (docs/explore.md,
 * "Attribution"), so that no run waits for the detectors: each run keeps
 * its window (CLOCK_MONOTONIC, from its release to its end) and the pids
 * its tree can have had: from its root's pid to the kernel's last pid
 * allocated when it ended (/proc/loadavg's last field). Runs are made
 * one at a time, so these ranges never overlap: the kernel allocates pids
 * in increasing order, and a pid allocated within a run's window is its
 * tree's or a kernel thread's started meanwhile, which is then the run's
 * doing too (a mount's btrfs-transaction). A report naming a pid in a run's
 * range (and, with a time, within its window) is that run's "by pid"; one
 * naming no pid or another (a kworker, an RCU callback) goes "by time
 * window" to the run under way at its time, or the last one before it.
 *
 * With runs side by side (explore --jobs) the ranges overlap. Then, in
 * order: a run's root pid is exact; a pid that is alive names its run by
 * its cgroup (/proc/PID/cgroup, looked up by the caller: live_run); a pid
 * seen in a run's cgroup when it ended (RunWindow.pids) is that run's;
 * then the pid ranges, and a pid in the ranges of more than one run whose
 * windows overlap is "ambiguous": every candidate is named, none guessed.
 * Runs made one after another keep the method above (the latest range
 * first, for a pid reused after a wrap). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "explore-findings.h"
#include "kernel-reports.h"

typedef struct RunWindow {
        uint64_t run;                   /* 1-based, as in the report */
        char *function;
        uint64_t call;
        char *reproducer;
        json_object *stack;             /* a reference: the failed call's stack */
        json_object *reports;           /* a reference: the run's "reports" in the report */
        uint64_t start_usec, end_usec;  /* CLOCK_MONOTONIC */
        pid_t pid, last_pid;            /* its root; /proc/loadavg's last pid when it ended (0: unknown) */
        bool running;                   /* not ended yet: its window and pid range are open */
        pid_t *pids;                    /* its cgroup's pids when it ended (owned) */
        size_t n_pids;
} RunWindow;

#define ATTRIBUTION_CANDIDATES_MAX 16

typedef struct Attribution {
        const RunWindow *run;           /* the run it is tied to; when ambiguous, the first candidate */
        const char *how;                /* "pid", "ambiguous" or "time window" */
        uint64_t candidates[ATTRIBUTION_CANDIDATES_MAX];        /* when ambiguous: every candidate run */
        size_t n_candidates;
} Attribution;

typedef struct RunWindows {
        RunWindow *v;
        size_t n;
} RunWindows;

void run_windows_done(RunWindows *w);

/* Adds a copy of *r (strings and pids copied, references taken). 0 or
 * -ENOMEM. */
int run_windows_add(RunWindows *w, const RunWindow *r);
/* Run run ended: its window closes at end_usec, its pid range at
 * last_pid; pids: its cgroup's (copied); stack: the failed call's (a
 * reference taken). 0, -ENOENT or -ENOMEM. */
int run_windows_end(RunWindows *w, uint64_t run, uint64_t end_usec, pid_t last_pid, const pid_t *pids,
                    size_t n_pids, json_object *stack);

/* The run a report of the task pid belongs to (see above); live_run: the
 * run whose cgroup holds pid now (0: none, or unknown). False: none (it
 * came before the first run). */
bool run_windows_attribute_full(const RunWindows *w, int pid, uint64_t time_usec, uint64_t live_run,
                                Attribution *ret);

/* The run a report of the task pid (0: none named), at time_usec
 * (CLOCK_MONOTONIC; 0: unknown, taken as now, after the last run) belongs
 * to; *ret_how: "pid" or "time window". NULL: none (it came before the
 * first run: the discovery's, or another explore's). */
const RunWindow *run_windows_attribute(const RunWindows *w, int pid, uint64_t time_usec, const char **ret_how);

/* Each report of k from index from, attributed: a finding of its run
 * (Findings.attributed says how) and an entry of the run's "reports";
 * *ret_new counts the new findings, *ret_before the reports that came
 * before the first run (not findings). When print, each is said on stderr
 * as it is tied to its run (the reports read after a batch of runs). */
int run_windows_record(const RunWindows *w, const KernelReports *k, size_t from, bool print, Findings *f,
                       size_t *ret_new, size_t *ret_before);
/* The same, with live_run(pid, userdata) saying which run's cgroup holds
 * a pid now (0: none). */
int run_windows_record_live(const RunWindows *w, const KernelReports *k, size_t from, bool print,
                            uint64_t (*live_run)(pid_t pid, void *userdata), void *userdata, Findings *f,
                            size_t *ret_new, size_t *ret_before);
