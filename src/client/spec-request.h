/* SPDX-License-Identifier: MIT */
#pragma once

/* Turns a --fail SPEC into an Inject request scoped to one process tree
 * (run, sweep), or to the block device its device= names (run). */

#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "spec.h"
#include "transport.h"

/* A new request object, or NULL when out of memory. Without :ERROR in the
 * SPEC the value fits the function's type (asked from t): ENOMEM, or 1
 * for TRUE and 0 for NULL functions. duration 0: the policy's default.
 * pid is the process tree's unless the SPEC names a device. */
json_object *fail_spec_request(Transport *t, const FailSpec *spec, pid_t pid, uint64_t duration);

/* Adds the argument filters' keys to an Inject request. */
int arg_filter_args_to_json(const ArgFilterArgs *a, json_object *req);
