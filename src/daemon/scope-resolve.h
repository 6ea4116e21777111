/* SPDX-License-Identifier: MIT */
#pragma once

/* Turns a request's scope into what the engine needs, and decides whether
 * it reaches beyond the caller's own processes (then it needs
 * org.injectd.inject-global). Root is exempt from ownership checks. */

#include <stdbool.h>
#include <stdint.h>

#include "caller.h"
#include "inject-error.h"
#include "inject.h"
#include "request.h"

typedef struct ScopeResolution {
        enum inject_scope_kind kind;
        uint64_t cgroup_id;
        uint32_t cgroup_level;
        pid_t pid;
        bool foreign;           /* global, another user's process, a cgroup not the caller's own */
        char desc[320];         /* "cgroup:/user.slice/...", "process:1234", "global" */
} ScopeResolution;

int resolve_scope(const Caller *c, const InjectRequest *req, ScopeResolution *ret, InjectError *err);

/* Every process in the cgroup at path (and below) runs as uid: 1 yes, 0 no
 * (ret_other gets one other uid), negative errno on failure. */
int cgroup_only_uid(const char *path, uid_t uid, uid_t *ret_other);
