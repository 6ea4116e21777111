/* SPDX-License-Identifier: MIT */
#pragma once

/* A command forked at once but held before exec, so that its pid can be
 * the scope of injections armed before its first instruction (run,
 * sweep). */

#include <stdbool.h>
#include <sys/types.h>

typedef struct HeldChild {
        pid_t pid;
        int go_fd;              /* a byte here lets the child exec */
        int err_fd;             /* execvp()'s errno comes back here; closed by a successful exec */
} HeldChild;

#define HELD_CHILD_NULL ((HeldChild) { .pid = 0, .go_fd = -1, .err_fd = -1 })

/* Forks argv[0] (PATH searched). With own_group, the child leads a
 * process group of its own, so the whole tree can be killed, and is
 * killed (SIGKILL) when its parent dies. output_fd
 * >= 0 becomes its stdout and stderr; -1 leaves ours. */
int held_child_spawn(char *const *argv, bool own_group, int output_fd, HeldChild *ret);
/* The same, with prepare(userdata) called in the child before it is held
 * (explore's per-run cgroup, mount namespace and environment): its
 * negative errno is returned by held_child_release() as exec's would be. */
int held_child_spawn_prepared(char *const *argv, bool own_group, int output_fd, int (*prepare)(void *userdata),
                              void *userdata, HeldChild *ret);

/* Lets it exec. *ret_exec_errno: 0, or why execvp() failed. */
int held_child_release(HeldChild *c, int *ret_exec_errno);

/* SIGKILLs it (with own_group: its group) and reaps it, if not reaped. */
void held_child_kill(HeldChild *c, bool group);

/* Marks it reaped and closes the pipes. */
void held_child_done(HeldChild *c);

/* A shell-like exit code from a wait status: the exit status, 128+N for
 * signal N. */
int exit_code_from_status(int status);
