/* SPDX-License-Identifier: MIT */
/* What explore prints for people, on stderr (explore-print.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "explore-findings.h"
#include "explore-plan.h"
#include "fault-run.h"

/* The plan, one line per run, and what its options left out. */
void explore_print_plan(const Plan *p, const PlanOptions *o);

/* "done of total" on a terminal (on), rewritten in place; done ==
 * SIZE_MAX clears it. */
void explore_print_progress(bool on, size_t done, size_t total, uint64_t started);

/* One run's line, with the detectors that reported on it. */
void explore_print_run(const FaultRun *r, const PlanItem *item, uint64_t n, size_t total, json_object *reports);

/* Every finding, with its reproducer. */
void explore_print_findings(const Findings *f);

/* The functions the discovery saw called, and how often. */
void explore_print_reached(json_object *reached, json_object *observing, size_t n_asked, size_t denied);
