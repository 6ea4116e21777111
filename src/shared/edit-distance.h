/* SPDX-License-Identifier: MIT */
#pragma once

/* Near-miss detection for "did you mean ...?" hints. */

#include <stddef.h>

/* Strings longer than this are never near misses; the bound keeps the
 * work on the stack. */
#define EDIT_DISTANCE_MAX_LEN 64

/* The Levenshtein distance between a and b, ASCII case-insensitive, or
 * SIZE_MAX when either is longer than EDIT_DISTANCE_MAX_LEN. */
size_t edit_distance(const char *a, const char *b);
