/* SPDX-License-Identifier: MIT */
#pragma once

/* explore's plan (docs/explore.md): from the discovery's counts, runs
 * per distinct kernel stack of each function reached -- its first and last
 * call, or --depth K calls spread over the stack's calls -- or one per
 * call; the stacks kept only if they pass through a --through function;
 * system-call entries after the kernel-internal stacks, or left out. The
 * runs are taken so that --max-runs cuts depth, not breadth: the first
 * call of every stack before the second of any, round-robin across
 * functions; without the runs an earlier explore made (--resume) or the
 * functions injectd refused it. Then its execution: a function whose
 * injection injectd refuses (it cannot serve it) is recorded with why and
 * its other runs are skipped, and the plan goes on. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define PLAN_DEPTH_DEFAULT 2        /* a stack's first and last call */
#define PLAN_DEPTH_MAX 64

typedef struct PlanOptions {
        bool per_call;                  /* --per call: every call, no stacks */
        uint64_t depth;                 /* --depth: calls per stack (0: PLAN_DEPTH_DEFAULT) */
        char **through;                 /* --through globs; a stack is kept if a frame matches one */
        size_t n_through;
        bool no_syscalls;               /* leave system-call entries out (else: last) */
        uint64_t max_runs;
} PlanOptions;

typedef struct PlanItem {
        const char *function;           /* borrowed from the discovery result */
        const char *error;              /* NULL: the type's default value */
        uint64_t call;                  /* after=call: the function's call number */
        uint64_t stack;                 /* 1-based index of its stack; 0: by call number */
        uint64_t n_stacks;
        uint64_t stack_call;            /* which of the stack's calls (0: its first) */
        uint64_t stack_calls;           /* how many calls the stack made */
        bool syscall;                   /* the stack is a system call's entry */
        bool skipped;                   /* its function was refused by an earlier run's injection */
} PlanItem;

typedef struct Plan {
        PlanItem *v;
        size_t n;
        size_t n_total;                 /* before --max-runs */
        size_t n_made;                  /* runs made */
        size_t n_skipped;               /* runs skipped: their function refused */
        json_object *refused;           /* [{function, error, message}], these runs' own */
        uint64_t depth;                 /* calls per stack used (0: per call) */
        size_t n_stacks;                /* stacks in the discovery */
        size_t n_through_dropped;       /* stacks left out: through no --through function */
        size_t *through_hits;           /* per --through glob, the stacks it kept */
        size_t n_through;
        size_t n_syscalls;              /* system-call entry stacks kept ... */
        bool syscalls_dropped;          /* ... and left out (--no-syscalls), not moved last */
} Plan;

void plan_done(Plan *p);

/* The plan from reached (the discovery's "functions": [{function, calls,
 * stacks: [{first_call, last_call, calls, sample_stride, samples,
 * frames}]}]; a stack with first_call alone, of an older daemon, gives its
 * first call only); list: the injectable functions ([{name, type}]), for
 * each one's failure value. Left out and counted in *ret_done: what done
 * (an earlier report's runs: [{function, call}]) ran already; and every
 * run of a function in refused ([{function}], an earlier report's). */
int plan_build(json_object *reached, json_object *list, const PlanOptions *o, json_object *done,
               json_object *refused, Plan *ret, size_t *ret_done);

/* Whether a stack (frames: its function names, innermost first; function:
 * the function it called) is a system call's entry: the function is a
 * system call, or every frame below it is the syscall entry's. */
bool plan_stack_is_syscall(const char *function, json_object *frames);

/* The function's call numbers for stack s's calls to fail at depth
 * (stack-local indices in stack_calls), at most depth of each; returns
 * how many, deduplicated. */
size_t plan_stack_picks(json_object *s, uint64_t depth, uint64_t *calls, uint64_t *stack_calls);

/* injectd refused to fail item i's function (refusal, taken: {function,
 * error, message}; fault_run_refusal_is_functions() says which refusals
 * these are): item i and every later item of that function are skipped,
 * and the refusal is kept in p->refused. Returns 0 or -ENOMEM. */
int plan_refuse(Plan *p, size_t i, json_object *refusal);
