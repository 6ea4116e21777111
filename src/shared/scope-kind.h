/* SPDX-License-Identifier: MIT */
#pragma once

/* The words that name a scope on every interface: the Inject request's
 * "scope", the policy's "scopes", the client's requests, the documents
 * that describe an injection. One table, so that they cannot drift apart;
 * each layer maps its own enum (the request's, the policy's, the BPF
 * program's inject_scope_kind) onto this one. */

typedef enum ScopeKind {
        SCOPE_KIND_CGROUP,              /* a cgroup and its subtree */
        SCOPE_KIND_PROCESS,             /* a process and its descendants */
        SCOPE_KIND_GLOBAL,              /* every caller */
        SCOPE_KIND_DEVICE,              /* a block device's calls, in any context */
        _SCOPE_KIND_MAX,
} ScopeKind;

/* The words for a refusal, in the table's order (a unit test checks). */
#define SCOPE_KIND_CHOICES "\"cgroup\", \"process\", \"global\" or \"device\""

const char *scope_kind_to_string(ScopeKind k);  /* NULL if out of range */
int scope_kind_from_string(const char *s);      /* a ScopeKind, or -EINVAL */
