/* SPDX-License-Identifier: MIT */
#pragma once

/* explore's findings: what the kernel's detectors (kernel-reports.h) and
 * CMD itself (a crash, a hang) said during runs that each failed one call,
 * deduplicated by signature. Each keeps the first run that found it: the
 * failed function and call number, the failed call's kernel stack, the
 * report, and a one-line reproducer. */

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

typedef struct Finding {
        char *signature;
        char *detector;
        char *title;
        char *report;
        char *function;         /* the failed function ... */
        uint64_t call;          /* ... and its call number (after=call) */
        char *reproducer;
        json_object *stack;     /* the failed call's kernel stack (array of strings) */
        uint64_t first_run;     /* 1-based */
        uint64_t n_runs;        /* runs that found it */
        char *attributed;       /* how the report was tied to its first run: "pid" (the task it names was
                                 * the run's), "time window" (it names none of the run's); NULL: the
                                 * command's own (a crash, a hang) */
        int pid;                /* the task the report names; 0: none */
        char *comm;
        json_object *candidates;        /* attributed "ambiguous": every run it may be of (numbers); else NULL */
} Finding;

typedef struct Findings {
        Finding *v;
        size_t n;
} Findings;

void findings_done(Findings *f);

/* Adds what a run found, or counts one more run for a finding of the same
 * signature. Returns 1 when new, 0 when known, or a negative errno. */
int findings_add(Findings *f, const char *signature, const char *detector, const char *title, const char *report,
                 const char *function, uint64_t call, const char *reproducer, json_object *stack, uint64_t run);

/* Says how the report of f->v[i] was tied to its run (Finding.attributed).
 * 0 or -ENOMEM. */
int finding_set_attribution(Findings *f, size_t i, const char *how, int pid, const char *comm);

/* The runs an "ambiguous" report may be of (a reference taken; NULL:
 * none). 0. */
int finding_set_candidates(Findings *f, size_t i, json_object *candidates);

/* A new array of finding objects, or NULL when out of memory. */
json_object *findings_json(const Findings *f);

/* "injectctl run --fail FUNC[:ERR],after=N,times=1 -- CMD...", CMD quoted
 * for a POSIX shell; error NULL: the default value of the function's type. */
char *explore_reproducer(const char *function, const char *error, uint64_t call, char *const *cmd);
