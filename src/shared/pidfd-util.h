/* SPDX-License-Identifier: MIT */
#pragma once

/* pidfds: a process named by a file descriptor, which means the same
 * process in every pid namespace and never another one once it exited.
 * Through syscall(), so that nothing depends on the C library's
 * wrappers. */

#include <sys/types.h>

/* pidfd_open(2), close-on-exec: the fd, or -errno. */
int pidfd_open_pid(pid_t pid);

/* Whether the process behind a pidfd is still there (not reaped): 1, 0,
 * or -errno (-EBADF: not a pidfd). */
int pidfd_is_alive(int fd);

/* The pid, in the pid namespace of this process's /proc, of the process
 * behind fd, from /proc/self/fdinfo (the kernel's "Pid:" line). -EBADF if
 * fd is not a pidfd, -ESRCH if its process has exited (or has no pid
 * here). */
int pidfd_get_pid(int fd, pid_t *ret);
