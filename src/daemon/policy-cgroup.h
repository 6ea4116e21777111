/* SPDX-License-Identifier: MIT */
#pragma once

/* Patterns of the caller's cgroup, for the "cgroups" key of a policy rule
 * (docs/policy.md, "Rules by cgroup"). A pattern is an absolute path in
 * the host's cgroup2 hierarchy, as /proc/PID/cgroup shows it to the daemon,
 * matched component by component: in a component, '*' matches any run of
 * characters and '?' any one, never a '/'; a component "**" matches any
 * number of whole components, none included. Nothing else is special: no
 * [...] classes (refused, to keep one meaning), no escapes ('\' is a plain
 * character, as in systemd's "\x2d"). Matching is anchored at both ends.
 *
 * '*' does not cross '/' so that "/system.slice/docker-*.scope" names
 * Docker's scopes and not "/system.slice/docker-x.scope/../../user.slice"
 * or a cgroup some user made below one; a rule that means "and below" says
 * so with a last component "**". */

#include <stdbool.h>

/* Longest pattern, and most components in a pattern or a matched path: a
 * deeper cgroup matches no pattern (and is caught by every deny rule that
 * names cgroups). */
#define POLICY_CGROUP_PATTERN_MAX 4095
#define POLICY_CGROUP_DEPTH_MAX 256

/* NULL if p is a valid pattern, else why not. */
const char *policy_cgroup_pattern_invalid(const char *p);

/* Whether path is a cgroup path as the kernel writes one: "/" or
 * "/a/b" with no empty, "." or ".." component, no control character, at
 * most POLICY_CGROUP_DEPTH_MAX components. /proc/PID/cgroup shows ".."
 * for a cgroup outside the reader's cgroup namespace; such a path names
 * nothing we can match. */
bool policy_cgroup_path_is_canonical(const char *path);

/* Whether the valid pattern matches path; false for a path that is not
 * canonical. */
bool policy_cgroup_match(const char *pattern, const char *path);
