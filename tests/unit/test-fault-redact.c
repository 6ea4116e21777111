/* SPDX-License-Identifier: MIT */
/* Which tasks a device scope's fault events may show (fault-redact.h): the
 * owner's own, kernel threads; nobody else's, and nothing that cannot be
 * told (gone, or started after the fault). On this process and the host's
 * kthreadd; the daemon's use is vm-device-scope's (bob's read of alice's
 * device is not shown to her). */

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "fault-redact.h"
#include "test-util.h"

static uint64_t boottime_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static void test_rule(void) {
        FaultTask mine = { .known = true, .uids = { 1000, 1000, 1000, 1000 } };
        FaultTask setuid = { .known = true, .uids = { 1000, 0, 0, 0 } };
        FaultTask kthread = { .known = true, .kthread = true };
        FaultTask gone = { .known = false, .uids = { 1000, 1000, 1000, 1000 } };

        ASSERT_TRUE(fault_task_visible_to(1000, &mine));
        ASSERT_FALSE(fault_task_visible_to(1001, &mine));
        ASSERT_FALSE(fault_task_visible_to(0, &mine));          /* container root sees no user's task */
        ASSERT_FALSE(fault_task_visible_to(1000, &setuid));     /* a setuid program she ran */
        ASSERT_TRUE(fault_task_visible_to(1000, &kthread));
        ASSERT_FALSE(fault_task_visible_to(1000, &gone));
}

static void test_read(void) {
        FaultTask t;

        fault_task_read(NULL, getpid(), boottime_ns(), &t);
        ASSERT_TRUE(t.known);
        ASSERT_FALSE(t.kthread);
        ASSERT_EQ((long) t.uids[1], (long) geteuid());
        ASSERT_TRUE(fault_task_visible_to(geteuid(), &t));
        ASSERT_FALSE(fault_task_visible_to(geteuid() + 1, &t));
        /* A fault before this process started was someone else's. */
        fault_task_read(NULL, getpid(), 0, &t);
        ASSERT_FALSE(t.known);
        fault_task_read(NULL, 0, boottime_ns(), &t);
        ASSERT_FALSE(t.known);
        /* kthreadd, where this /proc shows it (not in a pid namespace). */
        fault_task_read(NULL, 2, boottime_ns(), &t);
        if (t.known)
                ASSERT_TRUE(t.kthread);
        else
                printf("  no kthreadd in this /proc\n");
}

int main(void) {
        TEST_RUN(test_rule);
        TEST_RUN(test_read);
        return 0;
}
