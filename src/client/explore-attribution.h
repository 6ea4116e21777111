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
 * window" to the run under way at its time, or the last one before it. */

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
} RunWindow;

typedef struct RunWindows {
        RunWindow *v;
        size_t n;
} RunWindows;

void run_windows_done(RunWindows *w);

/* Adds a copy of *r (strings copied, references taken). 0 or -ENOMEM. */
int run_windows_add(RunWindows *w, const RunWindow *r);

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
