/* SPDX-License-Identifier: MIT */
/* explore's reading of the kernel's reports: whole reports grouped from
 * /dev/kmsg records, their detector, signatures that ignore what changes
 * between runs (addresses, offsets, pids) and the reporting machinery's
 * own frames, user-space records never counted; findings deduplicated by
 * signature; reproducers quoted for the shell. */

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "explore-attribution.h"
#include "explore-findings.h"
#include "kernel-reports.h"
#include "test-util.h"
#include "time-util.h"

static int feed(const char *const *records, size_t n, KernelReports *k) {
        int sv[2], r;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) < 0) {
                printf("skip: no SEQPACKET sockets: %s\n", strerror(errno));
                exit(EXIT_TEST_SKIP);
        }
        for (size_t i = 0; i < n; i++)
                ASSERT_EQ(write(sv[1], records[i], strlen(records[i])), (ssize_t) strlen(records[i]));
        r = kernel_reports_read_kmsg(sv[0], k);
        close(sv[0]);
        close(sv[1]);
        return r;
}

/* A KASAN report as 6.1 prints it, one record per line, in two runs with
 * different addresses and pids: one signature. */
static void test_kasan(void) {
        const char *run1[] = {
                "6,1,100,-;injectd_test: scenario 2\n",
                "3,2,100,-;==================================================================\n",
                "3,3,100,-;BUG: KASAN: use-after-free in tm_write+0x2a1/0x3b0\n",
                "3,4,100,-;Write of size 4 at addr ffff888006b3c1d0 by task sh/214\n",
                "4,5,100,-;CPU: 1 PID: 214 Comm: sh Not tainted 6.1.192 #1\n",
                "4,6,100,-;Call Trace:\n",
                "4,7,100,-; <TASK>\n",
                "4,8,100,-; dump_stack_lvl+0x5b/0x77\n",
                "4,9,100,-; print_report+0x17f/0x47b\n",
                "4,10,100,-; ? tm_write+0x2a1/0x3b0\n",
                "4,11,100,-; kasan_report+0xbb/0xf0\n",
                "4,12,100,-; tm_write+0x2a1/0x3b0\n",
                "4,13,100,-; vfs_write+0x1c4/0x6e0\n",
                "4,14,100,-; ksys_write+0xc9/0x170\n",
                "4,15,100,-; do_syscall_64+0x3b/0x90\n",
                "12,16,100,-;a user-space line in the middle\n",
        };
        const char *run2[] = {
                "3,2,100,-;BUG: KASAN: use-after-free in tm_write+0x2a1/0x3b0\n",
                "3,4,100,-;Write of size 4 at addr ffff888006d41008 by task sh/377\n",
                "4,6,100,-;Call Trace:\n",
                "4,8,100,-; dump_stack_lvl+0x5b/0x77\n",
                "4,12,100,-; tm_write+0x2a1/0x3b0\n",
                "4,13,100,-; vfs_write+0x1c4/0x6e0\n",
                "4,14,100,-; ksys_write+0xc9/0x170\n",
        };
        KernelReports a = {}, b = {};

        ASSERT_EQ(feed(run1, sizeof(run1) / sizeof(run1[0]), &a), 1);
        ASSERT_EQ(a.n, 1u);
        ASSERT_STREQ(a.v[0].detector, "kasan");
        ASSERT_STREQ(a.v[0].title, "BUG: KASAN: use-after-free in tm_write+0x2a1/0x3b0");
        ASSERT_STREQ(a.v[0].signature, "kasan: BUG: KASAN: use-after-free in tm_write @ tm_write < vfs_write < ksys_write");
        ASSERT_TRUE(strstr(a.v[0].text, "Write of size 4") != NULL);
        ASSERT_TRUE(strstr(a.v[0].text, "user-space") == NULL);
        ASSERT_EQ(feed(run2, sizeof(run2) / sizeof(run2[0]), &b), 1);
        ASSERT_STREQ(a.v[0].signature, b.v[0].signature);
        kernel_reports_done(&a);
        kernel_reports_done(&b);
}

static void test_detectors(void) {
        const char *recs[] = {
                "4,1,100,-;WARNING: CPU: 0 PID: 99 at drivers/misc/injectd_test.c:88 tm_write+0x1f/0x40\n",
                "4,2,100,-;Call Trace:\n",
                "4,3,100,-; tm_write+0x1f/0x40\n",
                "4,4,100,-;WARNING: possible circular locking dependency detected\n",
                "3,5,100,-;BUG: sleeping function called from invalid context at mm/slab.h:723\n",
                "3,6,100,-;INFO: task mount:123 blocked for more than 120 seconds.\n",
        };
        KernelReports k = {};

        ASSERT_EQ(feed(recs, sizeof(recs) / sizeof(recs[0]), &k), 4);
        ASSERT_STREQ(k.v[0].detector, "warning");
        /* The line of source stays, the pid does not. */
        ASSERT_STREQ(k.v[0].signature, "warning: WARNING: CPU: N PID: N at drivers/misc/injectd_test.c:88 tm_write @ tm_write");
        ASSERT_STREQ(k.v[1].detector, "lockdep");
        ASSERT_STREQ(k.v[2].detector, "atomic-sleep");
        ASSERT_STREQ(k.v[3].detector, "hung-task");
        kernel_reports_done(&k);
}

static void test_kmemleak_signature(void) {
        _cleanup_free_ char *s = kernel_report_signature(
                "kmemleak", "unreferenced object 0xffff888004a1b2c0 (size 64):",
                "unreferenced object 0xffff888004a1b2c0 (size 64):\n"
                "  comm \"sh\", pid 214, jiffies 4294901234 (age 6.100s)\n"
                "  backtrace:\n"
                "    [<ffffffff81234567>] __kmalloc+0x4b/0x150\n"
                "    [<ffffffff81abcdef>] tm_write+0x9c/0x3b0\n"
                "    [<ffffffff81300000>] vfs_write+0x1c4/0x6e0\n");

        ASSERT_STREQ(s, "kmemleak: unreferenced object X (size N): @ tm_write < vfs_write");
}

/* The task each detector names: the run it is tied to (explore-attribution.h). */
static void test_task(void) {
        KernelReport leak = { .text = (char *) "unreferenced object 0xffff888004a1b2c0 (size 64):\n"
                                               "  comm \"sh\", pid 214, jiffies 4294901234 (age 6.100s)\n" };
        KernelReport kasan = { .text = (char *) "BUG: KASAN: use-after-free in tm_write+0x1/0x2\n"
                                                "Write of size 8 at addr ffff888004a1b2c0 by task sh/216\n"
                                                "\n"
                                                "CPU: 0 PID: 216 Comm: sh Not tainted 6.1.0 #1\n" };
        KernelReport warn = { .text = (char *) "WARNING: CPU: 1 PID: 88 at drivers/misc/injectd_test.c:88 tm_write\n"
                                               "CPU: 1 PID: 88 Comm: kworker/1:2 Tainted: G W\n" };
        KernelReport sleep = { .text = (char *) "BUG: sleeping function called from invalid context at x.c:1\n"
                                                "in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 301, name: mount\n" };
        KernelReport kasan_only = { .text = (char *) "BUG: KASAN: slab-out-of-bounds in f+0x1/0x2\n"
                                                     "Read of size 1 at addr ffff8880 by task my prog/77\n" };
        KernelReport none = { .text = (char *) "rcu: INFO: rcu_sched detected stalls on CPUs/tasks:\n" };

        ASSERT_EQ(kernel_report_parse_task(&leak, 10 * USEC_PER_SEC), 0);
        ASSERT_EQ(leak.pid, 214);
        ASSERT_STREQ(leak.comm, "sh");
        ASSERT_EQ(leak.time_usec, 10 * USEC_PER_SEC - 6100 * 1000ULL);
        ASSERT_EQ(kernel_report_parse_task(&kasan, 0), 0);
        ASSERT_EQ(kasan.pid, 216);
        ASSERT_STREQ(kasan.comm, "sh");
        ASSERT_EQ(kasan.time_usec, 0u);
        ASSERT_EQ(kernel_report_parse_task(&warn, 0), 0);
        ASSERT_EQ(warn.pid, 88);
        ASSERT_STREQ(warn.comm, "kworker/1:2");
        ASSERT_EQ(kernel_report_parse_task(&sleep, 0), 0);
        ASSERT_EQ(sleep.pid, 301);
        ASSERT_STREQ(sleep.comm, "mount");
        ASSERT_EQ(kernel_report_parse_task(&kasan_only, 0), 0);
        ASSERT_EQ(kasan_only.pid, 77);
        ASSERT_STREQ(kasan_only.comm, "my prog");
        ASSERT_EQ(kernel_report_parse_task(&none, 0), 0);
        ASSERT_EQ(none.pid, 0);
        ASSERT_TRUE(!none.comm);
        free(leak.comm);
        free(kasan.comm);
        free(warn.comm);
        free(sleep.comm);
        free(kasan_only.comm);
}

static void test_attribution(void) {
        _cleanup_(run_windows_done) RunWindows w = {};
        const char *how = NULL;

        /* Run 1: pids 100-120, 1 s to 2 s; run 2: pids 130-140, 3 s to 4 s. */
        ASSERT_EQ(run_windows_add(&w, &(RunWindow) { .run = 1, .function = (char *) "f", .reproducer = (char *) "r",
                                                     .start_usec = 1 * USEC_PER_SEC, .end_usec = 2 * USEC_PER_SEC,
                                                     .pid = 100, .last_pid = 120 }), 0);
        ASSERT_EQ(run_windows_add(&w, &(RunWindow) { .run = 2, .function = (char *) "f", .reproducer = (char *) "r",
                                                     .start_usec = 3 * USEC_PER_SEC, .end_usec = 4 * USEC_PER_SEC,
                                                     .pid = 130, .last_pid = 140 }), 0);
        /* Read after run 2, a leak of run 1's tree, by its pid and time. */
        ASSERT_EQ(run_windows_attribute(&w, 110, 1500 * 1000, &how)->run, 1u);
        ASSERT_STREQ(how, "pid");
        /* The kernel log's, without a time: by pid alone. */
        ASSERT_EQ(run_windows_attribute(&w, 100, 0, &how)->run, 1u);
        ASSERT_STREQ(how, "pid");
        /* A kworker's (pid 5): by time, the run under way or the last before. */
        ASSERT_EQ(run_windows_attribute(&w, 5, 3500 * 1000, &how)->run, 2u);
        ASSERT_STREQ(how, "time window");
        ASSERT_EQ(run_windows_attribute(&w, 5, 2400 * 1000, &how)->run, 1u);
        ASSERT_STREQ(how, "time window");
        ASSERT_EQ(run_windows_attribute(&w, 0, 0, &how)->run, 2u);
        ASSERT_STREQ(how, "time window");
        /* A pid of run 1's range long after it (reused after a wrap): not run 1's by pid. */
        ASSERT_EQ(run_windows_attribute(&w, 110, 30 * USEC_PER_SEC, &how)->run, 2u);
        ASSERT_STREQ(how, "time window");
        /* Before the first run: the discovery's. */
        ASSERT_TRUE(!run_windows_attribute(&w, 50, 100 * 1000, &how));
        /* A range that wraps at pid_max. */
        w.v[1].last_pid = 20;
        ASSERT_EQ(run_windows_attribute(&w, 10, 3500 * 1000, &how)->run, 2u);
        ASSERT_STREQ(how, "pid");
}

/* Runs side by side (explore --jobs): their pid ranges overlap. Run 1:
 * root 100, 1 s to 5 s, last pid 150; run 2: root 105, 2 s to 4 s, last
 * pid 140 (it ended first, and was added first); run 3 started after
 * both ended, one at a time again. */
static void test_attribution_overlap(void) {
        _cleanup_(run_windows_done) RunWindows w = {};
        _cleanup_(findings_done) Findings f = {};
        _cleanup_(kernel_reports_done) KernelReports k = {};
        const pid_t seen[] = { 133 };
        Attribution a;
        size_t n_new = 0, before = 0;

        ASSERT_EQ(run_windows_add(&w, &(RunWindow) { .run = 1, .function = (char *) "f1", .reproducer = (char *) "r1",
                                                     .start_usec = 1 * USEC_PER_SEC, .pid = 100, .running = true }), 0);
        ASSERT_EQ(run_windows_add(&w, &(RunWindow) { .run = 2, .function = (char *) "f2", .reproducer = (char *) "r2",
                                                     .start_usec = 2 * USEC_PER_SEC, .pid = 105, .running = true }), 0);
        /* While both are under way: a root is exact, another pid of both
         * open ranges is ambiguous, one below run 2's root is run 1's. */
        ASSERT_TRUE(run_windows_attribute_full(&w, 105, 0, 0, &a));
        ASSERT_EQ(a.run->run, 2u);
        ASSERT_STREQ(a.how, "pid");
        ASSERT_EQ(a.n_candidates, 0u);
        ASSERT_TRUE(run_windows_attribute_full(&w, 120, 0, 0, &a));
        ASSERT_STREQ(a.how, "ambiguous");
        ASSERT_EQ(a.n_candidates, 2u);
        ASSERT_EQ(a.candidates[0], 1u);
        ASSERT_EQ(a.candidates[1], 2u);
        ASSERT_EQ(a.run->run, 1u);
        ASSERT_TRUE(run_windows_attribute_full(&w, 102, 0, 0, &a));
        ASSERT_EQ(a.run->run, 1u);
        ASSERT_STREQ(a.how, "pid");
        /* Alive, its cgroup says run 2. */
        ASSERT_TRUE(run_windows_attribute_full(&w, 120, 0, 2, &a));
        ASSERT_EQ(a.run->run, 2u);
        ASSERT_STREQ(a.how, "pid");
        ASSERT_EQ(a.n_candidates, 0u);

        /* Run 2 ends first (pid 133 was in its cgroup then), then run 1. */
        ASSERT_EQ(run_windows_end(&w, 2, 4 * USEC_PER_SEC, 140, seen, 1, NULL), 0);
        ASSERT_EQ(run_windows_end(&w, 1, 5 * USEC_PER_SEC, 150, NULL, 0, NULL), 0);
        ASSERT_EQ(run_windows_end(&w, 9, 5 * USEC_PER_SEC, 150, NULL, 0, NULL), -ENOENT);
        /* Run 1's root, read after both ended: run 1's, although run 2's
         * range (105-140) does not hold it and run 1 was added first;
         * run 2's root is run 2's, although run 1's range holds it (the
         * old method, latest range first, gave it to neither reliably). */
        ASSERT_TRUE(run_windows_attribute_full(&w, 100, 3 * USEC_PER_SEC, 0, &a));
        ASSERT_EQ(a.run->run, 1u);
        ASSERT_TRUE(run_windows_attribute_full(&w, 105, 3 * USEC_PER_SEC, 0, &a));
        ASSERT_EQ(a.run->run, 2u);
        ASSERT_STREQ(a.how, "pid");
        /* Seen in run 2's cgroup at its end. */
        ASSERT_TRUE(run_windows_attribute_full(&w, 133, 3 * USEC_PER_SEC, 0, &a));
        ASSERT_EQ(a.run->run, 2u);
        ASSERT_STREQ(a.how, "pid");
        /* Seen nowhere, in both ranges: both named, none guessed. */
        ASSERT_TRUE(run_windows_attribute_full(&w, 120, 3 * USEC_PER_SEC, 0, &a));
        ASSERT_STREQ(a.how, "ambiguous");
        ASSERT_EQ(a.n_candidates, 2u);
        ASSERT_EQ(a.candidates[0], 1u);
        ASSERT_EQ(a.candidates[1], 2u);
        /* In run 1's range only (141-150): run 1's. */
        ASSERT_TRUE(run_windows_attribute_full(&w, 145, 3 * USEC_PER_SEC, 0, &a));
        ASSERT_EQ(a.run->run, 1u);
        ASSERT_STREQ(a.how, "pid");
        ASSERT_EQ(a.n_candidates, 0u);

        /* Run 3, one at a time after them: pid 160 to 170. A pid reused
         * from an earlier range after a wrap is the latest run's when
         * the runs did not overlap (jobs=1's rule). */
        ASSERT_EQ(run_windows_add(&w, &(RunWindow) { .run = 3, .function = (char *) "f3", .reproducer = (char *) "r3",
                                                     .start_usec = 30 * USEC_PER_SEC, .end_usec = 31 * USEC_PER_SEC,
                                                     .pid = 160, .last_pid = 125 }), 0);
        ASSERT_TRUE(run_windows_attribute_full(&w, 120, 0, 0, &a));
        ASSERT_EQ(a.run->run, 3u);
        ASSERT_STREQ(a.how, "pid");
        ASSERT_EQ(a.n_candidates, 0u);

        /* Recorded: the ambiguous finding names both runs, in the report too. */
        k.v = calloc(2, sizeof(*k.v));
        ASSERT_TRUE(k.v);
        k.n = 2;
        k.v[0] = (KernelReport) { .detector = strdup("kasan"), .title = strdup("BUG: KASAN: x"),
                                  .signature = strdup("kasan: x"), .text = strdup("t"), .pid = 120,
                                  .comm = strdup("sh"), .time_usec = 3 * USEC_PER_SEC };
        k.v[1] = (KernelReport) { .detector = strdup("kmemleak"), .title = strdup("leak"),
                                  .signature = strdup("kmemleak: y"), .text = strdup("t"), .pid = 105,
                                  .comm = strdup("sh"), .time_usec = 3 * USEC_PER_SEC };
        w.v[0].reports = json_object_new_array();
        w.v[1].reports = json_object_new_array();
        w.v[2].reports = json_object_new_array();
        ASSERT_EQ(run_windows_record(&w, &k, 0, false, &f, &n_new, &before), 0);
        ASSERT_EQ(n_new, 2u);
        ASSERT_STREQ(f.v[0].attributed, "ambiguous");
        ASSERT_TRUE(f.v[0].candidates);
        ASSERT_STREQ(json_object_to_json_string(f.v[0].candidates), "[ 1, 2 ]");
        ASSERT_EQ(f.v[0].first_run, 1u);
        ASSERT_STREQ(f.v[1].attributed, "pid");
        ASSERT_EQ(f.v[1].first_run, 2u);
        ASSERT_STREQ(f.v[1].function, "f2");
        ASSERT_TRUE(!f.v[1].candidates);
        ASSERT_EQ(json_object_array_length(w.v[1].reports), 1u);
}

static void test_findings(void) {
        _cleanup_(findings_done) Findings f = {};
        _cleanup_free_ char *repro = NULL;
        char *cmd[] = { "sh", "-c", "echo 1 > /dev/injectd_test", "it's", NULL };

        repro = explore_reproducer("injectd_test_alloc_step", "ENOMEM", 3, cmd);
        ASSERT_STREQ(repro, "injectctl run --fail injectd_test_alloc_step:ENOMEM,after=3,times=1 -- "
                            "sh -c 'echo 1 > /dev/injectd_test' 'it'\\''s'");
        free(repro);
        repro = explore_reproducer("should_fail_alloc_page", NULL, 0, cmd + 3);
        ASSERT_STREQ(repro, "injectctl run --fail should_fail_alloc_page,after=0,times=1 -- 'it'\\''s'");

        ASSERT_EQ(findings_add(&f, "sig-a", "kasan", "t", "r", "f1", 0, "x", NULL, 1), 1);
        ASSERT_EQ(findings_add(&f, "sig-a", "kasan", "t", "r", "f2", 5, "y", NULL, 2), 0);
        ASSERT_EQ(findings_add(&f, "sig-b", "warning", "t", "r", "f2", 5, "y", NULL, 2), 1);
        ASSERT_EQ(f.n, 2u);
        ASSERT_EQ(f.v[0].n_runs, 2u);
        ASSERT_STREQ(f.v[0].function, "f1");    /* the first run that found it */
}

int main(void) {
        test_kasan();
        test_detectors();
        test_kmemleak_signature();
        test_task();
        test_attribution();
        test_attribution_overlap();
        test_findings();
        return 0;
}
