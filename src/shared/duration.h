/* SPDX-License-Identifier: MIT */
#pragma once

/* Durations as people write them ("30s", "1h 30min", "1.5s"), kept in
 * microseconds, the unit of CLOCK_MONOTONIC arithmetic and of sd-event. */

#include <stddef.h>
#include <stdint.h>

#include "time-util.h"

#define USEC_PER_MSEC  UINT64_C(1000)
#define USEC_PER_MINUTE (UINT64_C(60) * USEC_PER_SEC)
#define USEC_PER_HOUR  (UINT64_C(60) * USEC_PER_MINUTE)
#define USEC_PER_DAY   (UINT64_C(24) * USEC_PER_HOUR)
#define USEC_PER_WEEK  (UINT64_C(7) * USEC_PER_DAY)

/* Parses one or more "<number>[.<fraction>] <unit>" components, optionally
 * separated by white space, and adds them up: "1h30m", "1h 30min", "1.5s".
 * A lone number without unit means seconds ("90"). Units: us usec, ms msec,
 * s sec second seconds, m min minute minutes, h hr hour hours, d day days,
 * w week weeks. Fractions finer than a microsecond are truncated.
 * Zero is a valid result; whether it is acceptable is the caller's call.
 * Returns 0, -ERANGE for negative values or overflow, -EINVAL for empty
 * input, unknown units or anything else that is not a duration. */
int parse_duration(const char *s, uint64_t *ret_usec);

/* Enough for the longest result, UINT64_MAX µs
 * ("30500568w 6d 8h 1min 49s 551ms 615us", 36 characters), with room
 * to spare. */
#define FORMAT_DURATION_MAX 64

/* Formats usec as its non-zero components, largest first, separated by
 * spaces: "1h 30min", "5min", "1s 500ms", "0". The result is exact, so
 * parse_duration() gives back the same value. Returns buf, or NULL if
 * n is too small (use FORMAT_DURATION_MAX). */
char *format_duration(char *buf, size_t n, uint64_t usec);

/* For log and printf arguments: the buffer lives until the end of the
 * enclosing block. */
#define FORMAT_DURATION(usec) \
        format_duration((char[FORMAT_DURATION_MAX]) {}, FORMAT_DURATION_MAX, (usec))
