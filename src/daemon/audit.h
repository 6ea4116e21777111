/* SPDX-License-Identifier: MIT */
#pragma once

/* The audit trail: one structured journal entry per request, decision, arm,
 * fire summary and removal, with who asked and what (INJECTD_* fields). On
 * stderr, the same fields follow the message as key=value. */

#include <stdint.h>

#include "caller.h"

typedef struct AuditRecord {
        const char *event;      /* request, decision, armed, fired, removed, refused */
        const Caller *caller;
        uint64_t id;            /* 0: none yet */
        const char *function;
        const int64_t *value;   /* NULL: none */
        const char *scope;
        const char *result;     /* allowed, denied, error... */
        const char *rule;       /* the policy rule that decided */
        const char *polkit;     /* how polkit decided */
        const char *reason;     /* removal reason, or the refusal's error name */
        const uint32_t *owner_uid;      /* for events without a caller; NULL: none */
        const char *cgroup;     /* decisions: the caller's cgroup, for rules by cgroup */
} AuditRecord;

void audit_log(int level, const AuditRecord *a, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
