/* SPDX-License-Identifier: MIT */
#pragma once

/* The allow-list: which users may make which kernel functions fail, with
 * which values, in which scopes, for how long. Rules come from JSON files
 * in policy.d directories (docs/policy.md); anything no rule allows is
 * denied. Loading never logs: what was refused or ignored comes back as a
 * list of problems, each a "file:line: reason" message for the daemon to
 * log and for ReloadPolicy to return. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cleanup.h"

#define POLICY_VENDOR_DIR "/usr/share/injectd/policy.d"
#define POLICY_ADMIN_DIR  "/etc/injectd/policy.d"

/* Rule names: 1..64 of [A-Za-z0-9._-], starting with a letter or digit. */
#define POLICY_RULE_NAME_MAX 64
/* Larger policy files are refused. */
#define POLICY_FILE_SIZE_MAX (UINT64_C(1024) * 1024)

/* A foreign target is a process, cgroup or block device that is not the
 * caller's own (scope-resolve.h, device-owner.h). Without a yes from
 * polkit, only a rule that names "foreign-process", "foreign-cgroup" or
 * "foreign-device" grants one (a device only if the rule's "devices" name
 * it); such a rule also grants the caller's own. "global" is always
 * foreign, and named as such. */
typedef enum PolicyScope {
        POLICY_SCOPE_CGROUP,
        POLICY_SCOPE_PROCESS,
        POLICY_SCOPE_GLOBAL,
        POLICY_SCOPE_FOREIGN_CGROUP,
        POLICY_SCOPE_FOREIGN_PROCESS,
        POLICY_SCOPE_DEVICE,            /* the caller's own block device: a loop device on its file */
        POLICY_SCOPE_FOREIGN_DEVICE,    /* another block device: only those the rule's "devices" name */
        _POLICY_SCOPE_MAX,
} PolicyScope;

const char *policy_scope_to_string(PolicyScope s);
int policy_scope_from_string(const char *s);    /* PolicyScope, or -EINVAL */

/* One rule as loaded. Read-only for users of the module. */
typedef struct PolicyRule {
        char *name;
        char *description;              /* NULL if none */
        char *file;                     /* the file that defined it last */
        unsigned line;                  /* line of the rule's '{' in file */
        bool enabled;                   /* false: kept for reports, never grants */
        /* "deny": true. Refuses its functions to its subjects (in its
         * cgroups), whatever any other rule allows; has no values, scopes
         * or limits. */
        bool deny;

        bool all_users;                 /* "users": ["*"] */
        uid_t *uids;                    /* names resolved at load; unknown names dropped */
        size_t n_uids;
        gid_t *gids;
        size_t n_gids;
        /* Patterns of the caller's cgroup (policy-cgroup.h); the rule
         * applies only to callers in a matching cgroup. None: anywhere. */
        char **cgroups;
        size_t n_cgroups;

        char **functions;               /* fnmatch() patterns */
        size_t n_functions;

        bool any_errno;                 /* "errors": ["*"] */
        int *errors;                    /* positive errno numbers */
        size_t n_errors;
        int64_t *retvals;
        size_t n_retvals;

        unsigned scopes;                /* bit (1 << PolicyScope) per allowed scope */
        uint64_t max_duration_usec;     /* > 0 if enabled */
        unsigned max_active;            /* >= 1 if enabled */
        bool kernel_log;                /* "kernel-log": may ask for kernel log records of its faults */
        char **devices;                 /* fnmatch() patterns of block device names that
                                         * "foreign-device" grants; none: no foreign device */
        size_t n_devices;
} PolicyRule;

typedef enum PolicyProblemLevel {
        POLICY_PROBLEM_WARNING,         /* something ignored, the file's rules are in use */
        POLICY_PROBLEM_ERROR,           /* a file or directory was refused: none of its rules are in use */
} PolicyProblemLevel;

typedef struct PolicyProblem {
        PolicyProblemLevel level;
        char *path;                     /* the file or directory concerned */
        unsigned line;                  /* 1-based; 0 when not about one line */
        char *message;                  /* "path:line: reason", or "path: reason" if line is 0 */
} PolicyProblem;

typedef struct Policy Policy;

Policy *policy_free(Policy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Policy *, policy_free);

/* The problems of the load that made p, in the order met. */
const PolicyProblem *policy_problems(const Policy *p, size_t *ret_n);
/* Whether some file or directory was refused. */
bool policy_has_errors(const Policy *p);

/* Every rule in effect order, disabled ones included. */
size_t policy_n_rules(const Policy *p);
const PolicyRule *policy_rule(const Policy *p, size_t i);  /* NULL if i is out of range */
const PolicyRule *policy_find_rule(const Policy *p, const char *name);

/* Who asks, and from where. groups are the supplementary groups.
 * user_name may be NULL; it is only used in messages (the uid is shown
 * otherwise). cgroup is the caller's cgroup as a path in the host's
 * cgroup2 hierarchy ("/system.slice/docker-1234.scope"), NULL if unknown:
 * then no rule with "cgroups" grants, and every deny rule with "cgroups"
 * refuses, as does a path that is not canonical. */
typedef struct PolicySubject {
        uid_t uid;
        gid_t gid;
        const gid_t *groups;
        size_t n_groups;
        const char *user_name;
        const char *cgroup;
} PolicySubject;

/* Whether an enabled rule r names this subject, by uid, primary gid,
 * supplementary gid, or "*", and, if r has "cgroups", by the subject's
 * cgroup. True for deny rules too. */
bool policy_rule_applies(const PolicyRule *r, const PolicySubject *s);

/* The enabled allow rules that apply to s, in effect order, as a new array
 * of pointers borrowed from p (free() the array only). *ret is NULL if
 * none. Deny rules are left out: they allow nothing. */
int policy_rules_for(const Policy *p, const PolicySubject *s, const PolicyRule ***ret, size_t *ret_n);

/* What is asked. The value is an errno when is_errno is set (the request
 * named an error, as -errno in retval) and retval lies in [-4095, -1]; then "errors" allows it, as does the same
 * number in "retvals". Otherwise retval is a plain return value, and only
 * "retvals" can allow it ("errors": ["*"] does not). duration_usec 0
 * means "none asked": the duration check passes and the caller takes the
 * granting rule's max_duration_usec. */
typedef struct PolicyRequest {
        const char *function;
        int64_t retval;
        bool is_errno;
        PolicyScope scope;
        uint64_t duration_usec;
        bool kernel_log;                /* asks for kernel log records of its faults */
        const char *device;             /* POLICY_SCOPE_FOREIGN_DEVICE: the disk's kernel name */
} PolicyRequest;

/* Why a request was denied, from the least to the most specific. */
typedef enum PolicyDenial {
        POLICY_DENIAL_NONE,             /* allowed */
        POLICY_DENIAL_USER,             /* no enabled rule names this user or its groups (from its cgroup) */
        POLICY_DENIAL_FUNCTION,         /* rules name the user, none this function; or a deny rule refuses it */
        POLICY_DENIAL_VALUE,            /* ... none allows this error or return value */
        POLICY_DENIAL_SCOPE,            /* ... none allows this scope */
        POLICY_DENIAL_DURATION,         /* ... none allows this long */
        POLICY_DENIAL_KERNEL_LOG,       /* ... none allows kernel log records */
        _POLICY_DENIAL_MAX,
} PolicyDenial;

/* Stable names the front ends map onto their error names. */
#define POLICY_ERROR_USER_NOT_IN_POLICY    "UserNotInPolicy"
#define POLICY_ERROR_FUNCTION_NOT_ALLOWED  "FunctionNotAllowed"
#define POLICY_ERROR_ERROR_NOT_ALLOWED     "ErrorNotAllowed"
#define POLICY_ERROR_SCOPE_NOT_ALLOWED     "ScopeNotAllowed"
#define POLICY_ERROR_DURATION_TOO_LONG     "DurationTooLong"
#define POLICY_ERROR_KERNEL_LOG_NOT_ALLOWED "KernelLogNotAllowed"

/* NULL for POLICY_DENIAL_NONE, else one of the POLICY_ERROR_* names. */
const char *policy_denial_to_error_name(PolicyDenial d);

typedef struct PolicyDecision {
        bool allowed;
        PolicyDenial denial;            /* POLICY_DENIAL_NONE iff allowed */
        const char *error_name;         /* NULL iff allowed; static */
        /* Allowed: the granting rule. Denied for value, scope or duration:
         * the rule that came closest. Empty otherwise. A copy, so the
         * decision outlives a policy reload. */
        char rule[POLICY_RULE_NAME_MAX + 1];
        /* The caller's cgroup counted: the rule named above has "cgroups",
         * or rules named the caller but none from its cgroup. The audit
         * trail then shows the cgroup. */
        bool by_cgroup;
        unsigned max_active;            /* the granting rule's limit; 0 if denied */
        /* Allowed: the granting rule's cap. Denied for duration: the
         * largest cap among the rules that allow everything else. */
        uint64_t max_duration_usec;
        char message[512];              /* a sentence for the requester */
} PolicyDecision;

/* An enabled deny rule that applies to s and matches the function refuses
 * r (POLICY_DENIAL_FUNCTION, naming it), wherever it stands. Otherwise
 * tries the enabled allow rules that apply to s in effect order; the first
 * that allows every aspect of r grants it. If none does, the denial is the
 * most specific one any rule reached (ties: the first such rule). Returns 0 and
 * writes *ret whether allowed or denied; -EINVAL if an argument is NULL,
 * the function name is empty or the scope is out of range. */
int policy_check(const Policy *p, const PolicySubject *s, const PolicyRequest *r, PolicyDecision *ret);

/* Whether some enabled allow rule lets s fail function (with some value,
 * in some scope) and no deny rule refuses it: for ListFunctions. */
bool policy_function_allowed(const Policy *p, const PolicySubject *s, const char *function);
