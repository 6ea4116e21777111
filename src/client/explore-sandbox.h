/* SPDX-License-Identifier: MIT */
#pragma once

/* Each explore run's own place (docs/explore.md, "Runs side by side"):
 *   - a directory, $TMPDIR/injectd-explore-XXXXXX/runN, named by
 *     $INJECTD_EXPLORE_RUN and removed after the run;
 *   - when runs go side by side and the caller may unshare(CLONE_NEWNS)
 *     (Sandbox.use_private_mounts), a private mount namespace
 *     (propagation private) with that directory bind-mounted on /tmp: its
 *     mounts and /tmp are its own, and $INJECTD_EXPLORE_RUN is /tmp;
 *     otherwise only $TMPDIR points at the directory;
 *   - when explore may write a cgroup (the one it runs in, delegated or
 *     root's), a cgroup of its own under injectd-explore-PID beside
 *     explore: the whole run is killed by it (cgroup.kill, or each pid of
 *     cgroup.procs on kernels without it), and a live pid says its run.
 * Everything is set up in the child before it is held (held-child.h), so
 * that the injection armed on its pid sees none of it. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct Sandbox {
        char *dir;              /* $TMPDIR/injectd-explore-XXXXXX */
        char *cgroup;           /* /sys/fs/cgroup/<explore's>/injectd-explore-PID; NULL: none writable */
        char *cgroup_why;       /* why there is none */
        bool private_mounts;    /* unshare(CLONE_NEWNS) works for us */
        bool use_private_mounts;        /* and runs go side by side: the caller's to set */
        bool has_kill;          /* cgroup.kill (Linux 5.14) */
} Sandbox;

typedef struct SandboxRun {
        const Sandbox *sandbox;
        uint64_t n;
        char *dir;              /* sandbox->dir/runN */
        char *cgroup;           /* sandbox->cgroup/runN, or NULL */
} SandboxRun;

#define SANDBOX_RUN_NULL ((SandboxRun) {})

/* Makes the directory, and the cgroup when one may be written (else
 * s->cgroup_why says why not); probes unshare(CLONE_NEWNS) in a child. */
int sandbox_init(Sandbox *s);
/* Kills what is left, removes the cgroup and directory. */
void sandbox_done(Sandbox *s);

/* Run n's directory and cgroup. */
int sandbox_run_new(const Sandbox *s, uint64_t n, SandboxRun *ret);
/* In the child, before it is held (held_child_spawn_prepared()'s
 * prepare, userdata a SandboxRun *): joins the cgroup, unshares the mount
 * namespace and mounts /tmp, sets INJECTD_EXPLORE_RUN and TMPDIR. */
int sandbox_run_prepare(void *userdata);
/* Kills every process of the run's cgroup and waits until it is empty.
 * 0, or -ENOENT without a cgroup. */
int sandbox_run_kill(SandboxRun *r);
/* The pids in the run's cgroup now (a snapshot, for attribution). */
int sandbox_run_pids(const SandboxRun *r, pid_t **ret, size_t *ret_n);
/* Kills, removes the cgroup and the directory (not crossing a mount left
 * on it: that is said, not deleted through). */
void sandbox_run_done(SandboxRun *r);

/* Which run's cgroup pid is in now (/proc/PID/cgroup): its n, 0 when
 * none of this sandbox's (or the pid is gone). */
uint64_t sandbox_run_of_pid(const Sandbox *s, pid_t pid);
