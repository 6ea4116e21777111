/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "pidfd-util.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif

int pidfd_open_pid(pid_t pid) {
        int fd;

        if (pid <= 0)
                return -EINVAL;
        /* pidfd_open() sets close-on-exec itself. */
        fd = (int) syscall(__NR_pidfd_open, pid, 0);
        return fd < 0 ? negative_errno() : fd;
}

int pidfd_is_alive(int fd) {
        if (syscall(__NR_pidfd_send_signal, fd, 0, NULL, 0) == 0)
                return 1;
        /* EPERM: there, but not ours to signal. */
        if (errno == EPERM)
                return 1;
        if (errno == ESRCH)
                return 0;
        return negative_errno();
}

/* Whether fd is a pidfd: what /proc/self/fd says it is, as anon_inode
 * (before Linux 6.9) or pidfs (since). */
static int fd_is_pidfd(int fd) {
        char p[64], target[64];
        ssize_t n;

        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        n = readlink(p, target, sizeof(target) - 1);
        if (n < 0)
                return negative_errno();
        target[n] = 0;
        return strcmp(target, "anon_inode:[pidfd]") == 0 || strncmp(target, "pidfd:", 6) == 0;
}

int pidfd_get_pid(int fd, pid_t *ret) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        char p[64];
        int r;

        if (fd < 0)
                return -EBADF;
        r = fd_is_pidfd(fd);
        if (r < 0)
                return r == -ENOENT ? -EBADF : r;
        if (r == 0)
                return -EBADF;

        snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
        f = fopen(p, "re");
        if (!f)
                return errno == ENOENT ? -EBADF : negative_errno();
        while (getline(&line, &cap, f) > 0) {
                char *end;
                long l;

                if (strncmp(line, "Pid:", 4) != 0)
                        continue;
                errno = 0;
                l = strtol(line + 4, &end, 10);
                if (errno != 0 || end == line + 4)
                        return -EIO;
                /* -1: exited; 0: in no pid namespace we see. */
                if (l <= 0)
                        return -ESRCH;
                *ret = (pid_t) l;
                return 0;
        }
        return -EIO;
}
