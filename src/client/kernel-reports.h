/* SPDX-License-Identifier: MIT */
#pragma once

/* The kernel's own bug reports, as explore collects them after each run:
 * whole reports from /dev/kmsg (a KASAN report, a WARN, a BUG or oops, a
 * lockdep splat, a hung task, an RCU stall: a first line that kmsg.h
 * calls trouble, and every kernel line after it up to the next one), and
 * kmemleak's from /sys/kernel/debug/kmemleak. Each has a detector name and
 * a signature (the detector, its title without addresses and numbers, and
 * the top frames of its stack) by which findings are deduplicated. */

#include <stdbool.h>
#include <stddef.h>

#define KERNEL_REPORT_TEXT_MAX 8192     /* bytes of a report kept */
#define KERNEL_REPORT_FRAMES 3          /* frames in a signature */

typedef struct KernelReport {
        char *detector;         /* kasan, kmemleak, warning, lockdep, atomic-sleep, bug, oops, hung-task, stall, sanitizer */
        char *title;            /* its first line, as the kernel printed it */
        char *signature;
        char *text;             /* the report, lines joined by '\n' */
} KernelReport;

typedef struct KernelReports {
        KernelReport *v;
        size_t n;
} KernelReports;

void kernel_reports_done(KernelReports *r);

/* Reads every kernel record now available on the /dev/kmsg fd into
 * reports. Returns the number of reports added, or a negative errno. */
int kernel_reports_read_kmsg(int fd, KernelReports *reports);

/* kmemleak: whether it can be driven here (debugfs, root): 0, or why not. */
int kmemleak_available(void);
/* Forgets what it reported so far ("clear"), so that the next read shows
 * only leaks from now on. */
int kmemleak_clear(void);
/* Scans twice, once the objects allocated before since_usec
 * (CLOCK_MONOTONIC: when the work of interest ended) are old enough
 * (kmemleak reports an object only once it is older than its 5 s minimum
 * age and unchanged between two scans), then adds each reported leak to
 * reports and clears them. Returns the number added, or a negative errno. */
int kmemleak_collect(unsigned long long since_usec, KernelReports *reports);

/* The signature of a report's text (exposed for the unit test). */
char *kernel_report_signature(const char *detector, const char *title, const char *text);
