/* SPDX-License-Identifier: MIT */

/* The policy model: the Policy object, its rules and its problems.
 * Loading is policy-load.c's, reading one file's rules policy-parse.c's. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "json-util.h"
#include "policy-model.h"
#include "strv.h"

static const char *const policy_scope_table[_POLICY_SCOPE_MAX] = {
        [POLICY_SCOPE_CGROUP]  = "cgroup",
        [POLICY_SCOPE_PROCESS] = "process",
        [POLICY_SCOPE_GLOBAL]  = "global",
        [POLICY_SCOPE_FOREIGN_CGROUP]  = "foreign-cgroup",
        [POLICY_SCOPE_FOREIGN_PROCESS] = "foreign-process",
        [POLICY_SCOPE_DEVICE]          = "device",
        [POLICY_SCOPE_FOREIGN_DEVICE]  = "foreign-device",
};

const char *policy_scope_to_string(PolicyScope s) {
        if ((unsigned) s >= _POLICY_SCOPE_MAX)
                return NULL;
        return policy_scope_table[s];
}

int policy_scope_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (int i = 0; i < _POLICY_SCOPE_MAX; i++)
                if (strcmp(policy_scope_table[i], s) == 0)
                        return i;
        return -EINVAL;
}

PolicyRule *policy_rule_free(PolicyRule *r) {
        if (!r)
                return NULL;

        free(r->name);
        free(r->description);
        free(r->file);
        free(r->uids);
        free(r->gids);
        for (size_t i = 0; i < r->n_cgroups; i++)
                free(r->cgroups[i]);
        free(r->cgroups);
        for (size_t i = 0; i < r->n_functions; i++)
                free(r->functions[i]);
        free(r->functions);
        for (size_t i = 0; i < r->n_devices; i++)
                free(r->devices[i]);
        free(r->devices);
        free(r->errors);
        free(r->retvals);
        free(r);
        return NULL;
}

static void policy_problem_done(PolicyProblem *pr) {
        free(pr->path);
        free(pr->message);
        *pr = (PolicyProblem) {};
}

Policy *policy_free(Policy *p) {
        if (!p)
                return NULL;

        for (size_t i = 0; i < p->n_rules; i++)
                policy_rule_free(p->rules[i]);
        free(p->rules);
        for (size_t i = 0; i < p->n_problems; i++)
                policy_problem_done(&p->problems[i]);
        free(p->problems);
        free(p);
        return NULL;
}

int policy_add_problemv(Policy *p, PolicyProblemLevel level, const char *path, unsigned line,
                               const char *fmt, va_list ap) {
        _cleanup_free_ char *reason = NULL, *message = NULL, *path_copy = NULL;
        PolicyProblem *a;
        int k;

        if (vasprintf(&reason, fmt, ap) < 0) {
                reason = NULL;
                return -ENOMEM;
        }

        if (line > 0)
                k = asprintf(&message, "%s:%u: %s", path, line, reason);
        else
                k = asprintf(&message, "%s: %s", path, reason);
        if (k < 0) {
                message = NULL;
                return -ENOMEM;
        }

        path_copy = strdup(path);
        if (!path_copy)
                return -ENOMEM;

        a = reallocarray(p->problems, p->n_problems + 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        p->problems = a;

        p->problems[p->n_problems++] = (PolicyProblem) {
                .level = level,
                .path = TAKE_PTR(path_copy),
                .line = line,
                .message = TAKE_PTR(message),
        };
        if (level == POLICY_PROBLEM_ERROR)
                p->has_errors = true;
        return 0;
}

int policy_add_problem(Policy *p, PolicyProblemLevel level, const char *path, unsigned line,
                              const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = policy_add_problemv(p, level, path, line, fmt, ap);
        va_end(ap);
        return r;
}

void policy_truncate_problems(Policy *p, size_t n) {
        while (p->n_problems > n)
                policy_problem_done(&p->problems[--p->n_problems]);
}

const PolicyProblem *policy_problems(const Policy *p, size_t *ret_n) {
        if (!p) {
                if (ret_n)
                        *ret_n = 0;
                return NULL;
        }
        if (ret_n)
                *ret_n = p->n_problems;
        return p->problems;
}

bool policy_has_errors(const Policy *p) {
        return p && p->has_errors;
}

size_t policy_n_rules(const Policy *p) {
        return p ? p->n_rules : 0;
}

const PolicyRule *policy_rule(const Policy *p, size_t i) {
        if (!p || i >= p->n_rules)
                return NULL;
        return p->rules[i];
}

ssize_t policy_rule_index(const Policy *p, const char *name) {
        for (size_t i = 0; i < p->n_rules; i++)
                if (strcmp(p->rules[i]->name, name) == 0)
                        return (ssize_t) i;
        return -1;
}

const PolicyRule *policy_find_rule(const Policy *p, const char *name) {
        ssize_t i;

        if (!p || !name)
                return NULL;
        i = policy_rule_index(p, name);
        return i < 0 ? NULL : p->rules[i];
}
