/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* A whole decimal number, no sign, no trailing junk; -EINVAL otherwise,
 * ret untouched. */
int parse_u64(const char *s, uint64_t *ret);

/* An injection id as both APIs spell it: exactly 16 lower-case hex
 * digits, not all zero. */
bool injection_id_is_valid(const char *s);
int parse_injection_id(const char *s, uint64_t *ret);   /* -EINVAL, ret untouched */

/* A uid or gid in decimal; (uid_t) -1 means "no change" to the kernel and
 * is never a user: -ERANGE. */
int parse_uid(const char *s, uint32_t *ret);
