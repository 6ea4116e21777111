/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* A whole decimal number, no sign, no trailing junk; -EINVAL otherwise,
 * ret untouched. */
int parse_u64(const char *s, uint64_t *ret);
