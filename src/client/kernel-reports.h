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
        int pid;                /* the task it names ("by task sh/216", "PID: 216 Comm: sh", kmemleak's
                                 * "comm "sh", pid 216"); 0: none named */
        char *comm;             /* that task's name; NULL: none named */
        unsigned long long time_usec;   /* CLOCK_MONOTONIC: kmemleak's allocation time (when read, less its
                                         * "age"); 0: unknown (kmsg's are read as they come) */
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
/* One scan, then adds each leak reported to reports and clears them:
 * explore's scan after a batch of runs. The scan before it (the last
 * batch's) recorded the objects' checksums, so what was allocated before
 * that scan and is 5 s old is reported; what is younger waits for the
 * next. Returns the number added, or a negative errno. */
int kmemleak_scan_once(KernelReports *reports);
/* Scans twice, once the objects allocated before since_usec
 * (CLOCK_MONOTONIC: when the work of interest ended) are old enough
 * (kmemleak reports an object only once it is older than its 5 s minimum
 * age and unchanged between two scans), then adds each reported leak to
 * reports and clears them. Returns the number added, or a negative errno. */
int kmemleak_collect(unsigned long long since_usec, KernelReports *reports);

/* The task a report's text names, into r->pid and r->comm, and for
 * kmemleak's the allocation's time from its "age" (read_usec: when it was
 * read, CLOCK_MONOTONIC). Exposed for the unit test. Returns 0 or -ENOMEM. */
int kernel_report_parse_task(KernelReport *r, unsigned long long read_usec);

/* The signature of a report's text (exposed for the unit test). */
char *kernel_report_signature(const char *detector, const char *title, const char *text);
