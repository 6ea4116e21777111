/* SPDX-License-Identifier: MIT */
#pragma once

/* Loading a policy from its directories (policy-load.c). */

#include <sys/types.h>

#include "policy.h"

/* Loads every "*.json" file (names starting with '.' excepted) of each
 * directory in dirs (NULL-terminated; later ones take precedence), files in
 * strcmp() order within a directory. The daemon passes POLICY_VENDOR_DIR,
 * POLICY_ADMIN_DIR and owner_uid 0; tests pass temporary directories and
 * getuid(). A directory that does not exist is skipped silently. A file is
 * used only if it (after following symlinks) is a regular file owned by
 * owner_uid and writable by neither group nor others, and a directory
 * only if it passes the same test; a refused or malformed file contributes
 * no rule, which is reported in the problem list, and the rest still load.
 * Returns 0 and a policy, possibly empty, even if there are problems;
 * -EINVAL for bad arguments, -ENOMEM. */
int policy_load(const char *const *dirs, uid_t owner_uid, Policy **ret);
