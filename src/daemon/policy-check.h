/* SPDX-License-Identifier: MIT */
#pragma once

/* The daemon's use of the policy module: loading with the problems logged,
 * and checking a request from a Caller, with root exempt (root could load
 * BPF itself; the audit trail still records it). */

#include <stdbool.h>
#include <stdint.h>

#include "caller.h"
#include "inject-error.h"
#include "inject.h"
#include "policy.h"
#include "request.h"

/* Who must own the policy files: root. The unit tests build the core with
 * their own uid here, so that files they write are trusted. */
#ifndef POLICY_OWNER_UID
#define POLICY_OWNER_UID 0
#endif

#define ROOT_DEFAULT_DURATION_USEC (UINT64_C(3600) * 1000000)

typedef struct PolicyVerdict {
        char *rule;
        uint64_t max_duration_usec;
        unsigned max_active;
        bool by_cgroup;         /* the rule has "cgroups": the caller's cgroup counted */
} PolicyVerdict;

void policy_verdict_done(PolicyVerdict *v);

/* dirs NULL: the vendor, then the admin directory. */
int policy_glue_load(const char *const *dirs, Policy **ret);
void policy_glue_free(Policy *p);

/* foreign: the target is not the caller's, and only a rule that names
 * such targets ("foreign-process", "foreign-cgroup") may grant it. */
int policy_glue_check(const Policy *p, const Caller *c, const InjectRequest *req, enum inject_scope_kind kind,
                      bool foreign, PolicyVerdict *ret, InjectError *err);
bool policy_glue_function_allowed(const Policy *p, const Caller *c, const char *function);
