/* SPDX-License-Identifier: MIT */
#pragma once

/* explore's plan (docs/explore.md): from the discovery's counts, one run
 * per distinct kernel stack of each function reached (its first call from
 * that stack) or per call, taken round-robin across functions so that
 * --max-runs cuts depth, not breadth; without the runs an earlier explore
 * made (--resume) or the functions injectd refused it. Then its execution:
 * a function whose injection injectd refuses (it cannot serve it) is
 * recorded with why and its other runs are skipped, and the plan goes on. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

typedef struct PlanItem {
        const char *function;           /* borrowed from the discovery result */
        const char *error;              /* NULL: the type's default value */
        uint64_t call;                  /* after=call */
        uint64_t stack;                 /* 1-based index of its stack; 0: by call number */
        uint64_t n_stacks;
        bool skipped;                   /* its function was refused by an earlier run's injection */
} PlanItem;

typedef struct Plan {
        PlanItem *v;
        size_t n;
        size_t n_total;                 /* before --max-runs */
        size_t n_made;                  /* runs made by plan_execute() */
        size_t n_skipped;               /* runs skipped: their function refused */
        json_object *refused;           /* [{function, error, message}], these runs' own */
} Plan;

void plan_done(Plan *p);

/* The plan from reached (the discovery's "functions": [{function, calls,
 * stacks: [{first_call}]}]); list: the injectable functions
 * ([{name, type}]), for each one's failure value. Left out and counted in
 * *ret_done: what done (an earlier report's runs: [{function, call}]) ran
 * already; and every run of a function in refused ([{function}], an earlier
 * report's). */
int plan_build(json_object *reached, json_object *list, bool per_call, uint64_t max_runs, json_object *done,
               json_object *refused, Plan *ret, size_t *ret_done);

/* One run of the plan: 0 when it was made, or when injectd refused to fail
 * item's function (*ret_refusal set: {function, error, message};
 * fault_run_refusal_is_functions() says which refusals these are); an exit
 * code (> 0) ends the plan. */
typedef int (*PlanRunFn)(const PlanItem *item, size_t index, void *userdata, json_object **ret_refusal);

/* Runs each item in turn with fn, skipping those of a function refused
 * before. Returns 0, fn's exit code, or a negative errno. */
int plan_execute(Plan *p, PlanRunFn fn, void *userdata);
