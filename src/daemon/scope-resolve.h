/* SPDX-License-Identifier: MIT */
#pragma once

/* Turns a request's scope into what the engine needs, and decides whether
 * it reaches beyond the caller's own processes (then it is "foreign" and
 * needs org.injectd.inject-global from polkit, or a policy rule that names
 * foreign targets). A privileged caller is exempt from ownership checks.
 *
 * A process is the caller's own when all its uids are the caller's, its
 * /proc directory is the caller's (so it is dumpable: not a setuid program
 * or one that made itself non-dumpable) and it lives in the caller's pid
 * namespace or below it. A pid number from a caller in a nested pid
 * namespace means the process with that number there; a pidfd means its
 * process wherever the caller is. A cgroup is the
 * caller's own when its directory is, it is not the root, and every task
 * in its subtree is the caller's by uid and pid namespace: the cheap checks
 * first, then a walk bounded by CGROUP_WALK_*. */

#include <stdbool.h>
#include <stdint.h>

#include "caller.h"
#include "engine.h"
#include "inject-error.h"
#include "inject.h"
#include "request.h"
#include "scope-device.h"

typedef struct ScopeResolution {
        enum inject_scope_kind kind;
        uint64_t cgroup_id;
        uint32_t cgroup_level;
        pid_t pid;
        uint64_t start_ticks;   /* process: its start time when it was checked, which arming must see */
        uint64_t diskseq;       /* device: the disk as it was attached when it was checked */
        char device[BLOCK_NAME_MAX];    /* device: the disk's kernel name */
        bool foreign;           /* global, another user's process, a cgroup not the caller's own */
        char desc[320];         /* "cgroup:/user.slice/...", "process:1234", "device:loop3", "global" */
        char why[160];          /* foreign: why, for a refusal's message ("" if nothing to add) */
} ScopeResolution;

/* e reads which pid namespace a process is in (engine_task_pidns()); NULL,
 * or an engine whose program cannot load, and the parent chain tells
 * (process-info.h). */
int resolve_scope(Engine *e, const Caller *c, const InjectRequest *req, ScopeResolution *ret, InjectError *err);

/* How far the walk of a cgroup's subtree goes before it gives up and
 * counts the cgroup as not the caller's. */
#define CGROUP_WALK_MAX_DIRS 1024
#define CGROUP_WALK_MAX_TASKS 16384
#define CGROUP_WALK_MAX_DEPTH 64

/* Every process in the cgroup at path (and below) runs as uid: 1 yes, 0 no
 * (ret_other gets one other uid), negative errno on failure. */
int cgroup_only_uid(const char *path, uid_t uid, uid_t *ret_other);
