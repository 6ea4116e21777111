/* SPDX-License-Identifier: MIT */
/* Fork now, exec later (held-child.h). */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "held-child.h"

int held_child_spawn(char *const *argv, bool own_group, int output_fd, HeldChild *ret) {
        return held_child_spawn_prepared(argv, own_group, output_fd, NULL, NULL, ret);
}

int held_child_spawn_prepared(char *const *argv, bool own_group, int output_fd, int (*prepare)(void *userdata),
                              void *userdata, HeldChild *ret) {
        int go[2], err[2];
        pid_t pid, parent = getpid();

        if (pipe2(go, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(err, O_CLOEXEC) < 0) {
                int e = errno;

                (void) close(go[0]);
                (void) close(go[1]);
                return -e;
        }
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                int e = errno;

                (void) close(go[0]);
                (void) close(go[1]);
                (void) close(err[0]);
                (void) close(err[1]);
                return -e;
        }
        if (pid == 0) {
                char byte;
                int e;

                (void) close(go[1]);
                (void) close(err[0]);
                /* A tree of ours to kill: when injectctl is killed
                 * outright (SIGKILL), with no chance to kill it, its root
                 * dies too rather than run on unwatched. (What the root
                 * started already runs to its end.) */
                if (own_group) {
                        (void) setpgid(0, 0);
                        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                                _exit(127);
                }
                if (output_fd >= 0 && (dup2(output_fd, STDOUT_FILENO) < 0 || dup2(output_fd, STDERR_FILENO) < 0))
                        _exit(127);
                /* Before the hold: nothing armed on our pid sees it. A
                 * failure is told as exec's would be, after the release. */
                e = prepare ? -prepare(userdata) : 0;
                if (read(go[0], &byte, 1) != 1)
                        _exit(127);     /* the parent gave up */
                if (e <= 0) {
                        (void) execvp(argv[0], argv);
                        e = errno;
                }
                (void) write(err[1], &e, sizeof(e));
                _exit(127);
        }
        /* Both sides set the group, so that it exists whichever runs first. */
        if (own_group)
                (void) setpgid(pid, pid);
        (void) close(go[0]);
        (void) close(err[1]);
        *ret = (HeldChild) { .pid = pid, .go_fd = go[1], .err_fd = err[0] };
        return 0;
}

int held_child_release(HeldChild *c, int *ret_exec_errno) {
        int e = 0;

        if (write(c->go_fd, "g", 1) != 1)
                return -errno;
        c->go_fd = safe_close(c->go_fd);
        if (read(c->err_fd, &e, sizeof(e)) != sizeof(e))
                e = 0;
        c->err_fd = safe_close(c->err_fd);
        *ret_exec_errno = e;
        return 0;
}

void held_child_kill(HeldChild *c, bool group) {
        if (c->pid <= 0)
                return;
        (void) kill(group ? -c->pid : c->pid, SIGKILL);
        (void) kill(c->pid, SIGKILL);
        while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        held_child_done(c);
}

void held_child_done(HeldChild *c) {
        c->pid = 0;
        c->go_fd = safe_close(c->go_fd);
        c->err_fd = safe_close(c->err_fd);
}

int exit_code_from_status(int status) {
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return 1;
}
