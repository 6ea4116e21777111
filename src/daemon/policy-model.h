/* SPDX-License-Identifier: MIT */
#pragma once

/* The policy model as the parts of the policy module see it, and nobody
 * else: policy-model.c (the Policy object, its rules and problems), used
 * by policy-parse.c (one file's rules), policy-eval.c (decisions) and
 * policy-load.c (directories and files). Calls run down that list
 * (tools/check-layers.py). */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "policy.h"

struct Policy {
        PolicyRule **rules;             /* in effect order */
        size_t n_rules;
        PolicyProblem *problems;
        size_t n_problems;
        bool has_errors;
};

PolicyRule *policy_rule_free(PolicyRule *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolicyRule *, policy_rule_free)

/* The index of the rule called name in p->rules, or -1. */
ssize_t policy_rule_index(const Policy *p, const char *name);

/* Appends a problem "path:line: reason" (or "path: reason" if line is 0). */
int policy_add_problemv(Policy *p, PolicyProblemLevel level, const char *path, unsigned line,
                        const char *fmt, va_list ap);
_printf_(5, 6)
int policy_add_problem(Policy *p, PolicyProblemLevel level, const char *path, unsigned line,
                       const char *fmt, ...);

/* Drops the problems recorded after the first n, e.g. the warnings of a
 * file that ended up refused. */
void policy_truncate_problems(Policy *p, size_t n);
