/* SPDX-License-Identifier: MIT */
/* An explore under way (injectctl explore, cmd-explore.c): its plan's runs
 * made side by side (--jobs), each in its own sandbox (explore-sandbox.h),
 * the kernel's reports tied to their runs (explore-attribution.h), and the
 * report saved as it grows, so that --resume can go on from it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "explore-attribution.h"
#include "explore-findings.h"
#include "explore-plan.h"
#include "explore-sandbox.h"
#include "fault-run.h"
#include "kernel-reports.h"

/* What an explore has and writes: the report is made from it after the
 * discovery, after each run, and at the end. */
typedef struct Explore {
        char **cmd;
        size_t n_cmd;
        const char **functions;
        size_t n_functions, denied;
        json_object *observing, *reached, *base, *notes, *runs;  /* borrowed */
        Findings *findings;
        Plan *plan;
        const PlanOptions *plan_options;
        bool per_call, tty, kmemleak;
        uint64_t max_runs, timeout, started;
        int kmsg_fd;
        size_t n_before;                /* runs of the report resumed */
        FaultRunner *runner;
        const char *report_path;
        RunWindows *windows;            /* this explore's runs, to tie kernel reports to */
        uint64_t kmemleak_scanned;      /* CLOCK_MONOTONIC of the last scan */
        size_t n_reports_before;        /* reports that came before the first run */
        size_t jobs;                    /* runs side by side at most */
        uint64_t n_started;             /* runs started (numbered) */
        Sandbox *sandbox;               /* each run's directory, cgroup, mount namespace */
} Explore;

/* The whole report as it stands; stopped says why it ends ("running" while
 * it does not). NULL when out of memory. */
json_object *explore_report(const Explore *x, const char *stopped);

/* The report so far, in --report's file (atomically: write_json_report()),
 * so that --resume can continue from it whatever ends injectctl. 0 or an
 * exit code. */
int explore_save(const Explore *x, const char *stopped);

/* Ties the reports of k, from index from, to their runs and adds the
 * findings (explore-attribution.h); *ret_new: how many were new. */
int explore_record(Explore *x, const KernelReports *k, size_t from, bool print, size_t *ret_new);

/* kmemleak's leaks: one scan after a batch of runs, and at the end (final)
 * two, once the last run's objects are old enough. 0 or an exit code. */
int explore_kmemleak(Explore *x, bool final);

/* The plan's runs, up to x->jobs at once. 0, an exit code, or 130 after
 * SIGINT/SIGTERM. */
int explore_execute(Explore *x);
