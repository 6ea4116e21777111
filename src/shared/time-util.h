/* SPDX-License-Identifier: MIT */
#pragma once

/* The one clock reader. Which clock is the caller's choice and says why:
 * CLOCK_REALTIME for what people read, CLOCK_MONOTONIC for client
 * timeouts, CLOCK_BOOTTIME for deadlines that must count suspend too (the
 * BPF program compares bpf_ktime_get_boot_ns()). */

#include <stdint.h>
#include <time.h>

#define USEC_PER_SEC UINT64_C(1000000)
#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_SEC UINT64_C(1000000000)

static inline uint64_t now_nsec(clockid_t clock) {
        struct timespec ts;

        (void) clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

static inline uint64_t now_usec(clockid_t clock) {
        return now_nsec(clock) / NSEC_PER_USEC;
}
