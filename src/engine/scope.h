/* SPDX-License-Identifier: MIT */
#pragma once

/* Turning what a user names (a cgroup directory, a pid) into what the BPF
 * program compares (a cgroup id and level, a tgid and start time), and
 * telling whether that target still exists. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* fd is an open cgroup2 directory. Level 0 is the hierarchy's root, as
 * far as ".." leads from fd: through the mount fd was opened in, which in
 * a cgroup namespace's mount ends at the namespace's root. Reopen such an
 * fd with scope_cgroup_reopen() first. */
int scope_cgroup_from_fd(int fd, uint64_t *ret_id, uint32_t *ret_level);

/* The cgroup directory fd names, opened anew through the hierarchy's
 * root at CGROUP_ROOT (open_by_handle_at(), CAP_DAC_READ_SEARCH), so that
 * ".." and /proc/self/fd/N lead where they do for the daemon, whatever
 * mount the fd came from. The new fd, or negative errno. */
int scope_cgroup_reopen(int fd);
int scope_cgroup_from_path(const char *path, uint64_t *ret_id, uint32_t *ret_level);

/* The cgroup the calling process (or pid, if > 0) belongs to, as a path
 * below the cgroup2 mount. */
int scope_cgroup_path_of_pid(pid_t pid, char **ret_path);

/* Resolves a pid (or tid) to its thread group and the group leader's start
 * time in clock ticks since boot (field 22 of /proc/PID/stat). */
int scope_process(pid_t pid, pid_t *ret_tgid, uint64_t *ret_start_ticks);

/* From /proc/PID/status: the thread group, and the real, effective, saved
 * and filesystem uids. Either output may be NULL. */
int scope_process_status(pid_t pid, pid_t *ret_tgid, uid_t ret_uids[4]);

/* 1 if the target still exists, 0 if gone, negative errno if unknown. */
int scope_cgroup_alive(uint64_t cgroup_id);
int scope_process_alive(pid_t tgid, uint64_t start_ticks);
