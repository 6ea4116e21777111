/* SPDX-License-Identifier: MIT */
/* explore's --setup and --cleanup (explore-setup.h). */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "explore-setup.h"
#include "held-child.h"

int explore_shell(const char *what, const char *cmd) {
        int status;
        pid_t pid, p;

        fprintf(stderr, "explore: %s: running: %s\n", what, cmd);
        fflush(stderr);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* SIGINT and SIGTERM as they were at our start (explore
                 * catches them during its runs, not before). */
                if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                        _exit(127);
                execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
                fprintf(stderr, "explore: %s: cannot execute /bin/sh: %s\n", what, strerror(errno));
                _exit(127);
        }
        do
                p = waitpid(pid, &status, 0);
        while (p < 0 && errno == EINTR);
        if (p < 0)
                return -errno;
        return exit_code_from_status(status);
}

void explore_cleanup_run(const char **cmd) {
        int r;

        if (!*cmd)
                return;
        r = explore_shell("--cleanup", *cmd);
        if (r < 0)
                fprintf(stderr, "explore: --cleanup: cannot run it: %s\n", strerror(-r));
        else if (r != 0)
                fprintf(stderr, "explore: --cleanup: it failed (exit status %d)\n", r);
        *cmd = NULL;
}
