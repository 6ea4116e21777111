/* SPDX-License-Identifier: MIT */
#pragma once

/* Translation between errno names ("ENOMEM") and numbers, for the command
 * line, the policy and the wire protocols. The names come from glibc, so
 * there is no table here to fall out of date. */

/* The range the kernel's error-injection list accepts for ERRNO functions,
 * and the range of errno values in general (MAX_ERRNO). */
#define ERRNO_MAX 4095

/* Parses "ENOMEM", "enomem", "12" or "-12" into a positive errno (12).
 * Numbers must lie in 1..ERRNO_MAX; names must be known to glibc (the
 * aliases EWOULDBLOCK, EDEADLOCK and ENOTSUP are accepted too).
 * Returns 0, or -EINVAL for anything else. */
int errno_from_name(const char *s, int *ret);

/* Returns the canonical name of err or -err ("ENOMEM" for 12 and -12), or
 * NULL if glibc knows no name for it. The string is static. */
const char *errno_to_name(int err);

/* Finds the known errno name closest to s (case-insensitive edit distance),
 * for "did you mean ENOENT?" hints. Returns the distance (>= 0) and the
 * static name in *ret_name, or -ENOENT if nothing is close enough to be
 * a plausible typo, -EINVAL if s is NULL or empty. */
int errno_suggest(const char *s, const char **ret_name);
