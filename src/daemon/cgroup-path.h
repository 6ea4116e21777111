/* SPDX-License-Identifier: MIT */
#pragma once

/* A cgroup path a caller gives is a path in the caller's mounts, seen
 * from its root: in a container (its own mount and cgroup namespaces,
 * cgroup2 mounted inside the cgroup namespace) "/sys/fs/cgroup/job" is
 * "job" below the container's cgroup, not the host's "/job". These turn
 * such a path into the daemon's path of the same cgroup, through the
 * caller's /proc/PID/mountinfo, which anyone may read and which shows
 * each mount's root as the reader (the daemon) sees it. */

#include <stdio.h>
#include <sys/types.h>

/* The host path (under cgroup_root, the daemon's cgroup2 mount) of path
 * as the process whose mountinfo is f sees it. path must be absolute,
 * without "." or ".." components, "//" or characters mountinfo escapes;
 * the mount it lies in (the one with the longest mount point that is a
 * prefix of it) must be cgroup2. -EINVAL for a path not so written,
 * -EMEDIUMTYPE if it is not in a cgroup2 mount, -EIO for a malformed
 * mountinfo, -ENOMEM. Symbolic links on the way are not followed (only
 * the caller could): a path through one lands in a mount that is not
 * cgroup2, or in none that matches, and is refused. */
int cgroup_path_translate_mountinfo(FILE *f, const char *path, const char *cgroup_root, char **ret);

/* Where the whole cgroup2 hierarchy (a cgroup2 mount of root "/") is
 * mounted in the mountinfo f: the last such mount point. -ENOENT if none. */
int cgroup_root_from_mountinfo(FILE *f, char **ret);

/* The same for process pid, from /proc/PID/mountinfo, into the daemon's
 * mount of the hierarchy (from /proc/self/mountinfo). */
int cgroup_path_translate(pid_t pid, const char *path, char **ret);
