/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"
#include "policy-check.h"
#include "policy-load.h"

void policy_verdict_done(PolicyVerdict *v) {
        free(v->rule);
        *v = (PolicyVerdict) {};
}

int policy_glue_load(const char *const *dirs, Policy **ret) {
        static const char *const defaults[] = { POLICY_VENDOR_DIR, POLICY_ADMIN_DIR, NULL };
        const PolicyProblem *problems;
        Policy *p = NULL;
        size_t n;
        int r;

        r = policy_load(dirs ?: defaults, POLICY_OWNER_UID, &p);
        if (r < 0)
                return r;
        problems = policy_problems(p, &n);
        for (size_t i = 0; i < n; i++)
                if (problems[i].level == POLICY_PROBLEM_ERROR)
                        log_error("Policy: %s (refused: none of its rules are in use)", problems[i].message);
                else
                        log_warning("Policy: %s, ignoring", problems[i].message);
        log_info("Policy: %zu rule(s) loaded.", policy_n_rules(p));
        *ret = p;
        return 0;
}

void policy_glue_free(Policy *p) {
        policy_free(p);
}

static PolicySubject subject_of(const Caller *c) {
        return (PolicySubject) {
                .uid = c->uid,
                .gid = c->gid,
                .groups = c->groups,
                .n_groups = (size_t) c->n_groups,
                .user_name = c->user_name,
                .cgroup = c->cgroup,
        };
}

static PolicyScope policy_scope_of(enum inject_scope_kind k, bool foreign) {
        if (k == INJECT_SCOPE_GLOBAL)
                return POLICY_SCOPE_GLOBAL;
        if (k == INJECT_SCOPE_PROCESS)
                return foreign ? POLICY_SCOPE_FOREIGN_PROCESS : POLICY_SCOPE_PROCESS;
        if (k == INJECT_SCOPE_DEVICE)
                return foreign ? POLICY_SCOPE_FOREIGN_DEVICE : POLICY_SCOPE_DEVICE;
        return foreign ? POLICY_SCOPE_FOREIGN_CGROUP : POLICY_SCOPE_CGROUP;
}

int policy_glue_check(const Policy *p, const Caller *c, const InjectRequest *req, enum inject_scope_kind kind,
                      bool foreign, PolicyVerdict *ret, InjectError *err) {
        PolicySubject s = subject_of(c);
        PolicyDecision d;
        int r;

        if (c->privileged) {
                *ret = (PolicyVerdict) { .rule = strdup("root"), .max_duration_usec = ROOT_DEFAULT_DURATION_USEC };
                return ret->rule ? 0 : -ENOMEM;
        }
        if (!p)
                return inject_error_set(err, -EACCES, POLICY_ERROR_USER_NOT_IN_POLICY,
                                        "No policy is loaded: only root may inject");
        r = policy_check(p, &s, &(PolicyRequest) {
                                 .function = req->function,
                                 .retval = req->retval,
                                 .is_errno = req->is_errno,
                                 .scope = policy_scope_of(kind, foreign),
                                 .duration_usec = req->duration_usec,
                                 .kernel_log = req->kernel_log > 0,
                                 .device = req->device,
                         }, &d);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_NOT_ALLOWED, "The policy check failed: %s",
                                        strerror(-r));
        if (!d.allowed)
                return inject_error_set(err, -EACCES, d.error_name ?: INJECT_ERROR_NOT_ALLOWED, "%s", d.message);
        *ret = (PolicyVerdict) {
                .rule = strdup(d.rule),
                .max_duration_usec = d.max_duration_usec,
                .max_active = d.max_active,
                .by_cgroup = d.by_cgroup,
        };
        return ret->rule ? 0 : -ENOMEM;
}

bool policy_glue_function_allowed(const Policy *p, const Caller *c, const char *function) {
        PolicySubject s = subject_of(c);

        return p && policy_function_allowed(p, &s, function);
}
