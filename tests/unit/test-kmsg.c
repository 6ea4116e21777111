/* SPDX-License-Identifier: MIT */
/* sweep's reading of the kernel log: which /dev/kmsg records are kernel
 * trouble, that user-space records can't pass for it, and that draining
 * takes record by record until nothing is left. */

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kmsg.h"
#include "test-util.h"

static const char *kind_of(const char *record) {
        return kmsg_record_trouble(record, strlen(record), NULL, NULL);
}

static void test_kinds(void) {
        const char *msg = NULL;
        size_t len = 0;
        const char *rec = "4,1052,81331224,-;WARNING: CPU: 1 PID: 212 at mm/slub.c:123 kmem_cache_alloc+0x1f/0x40\n"
                          " SUBSYSTEM=mm\n";

        ASSERT_STREQ(kmsg_record_trouble(rec, strlen(rec), &msg, &len), "warning");
        /* The message alone: no prefix, no continuation lines. */
        ASSERT_EQ(len, strlen("WARNING: CPU: 1 PID: 212 at mm/slub.c:123 kmem_cache_alloc+0x1f/0x40"));
        ASSERT_TRUE(strncmp(msg, "WARNING: CPU: 1", 15) == 0);

        ASSERT_STREQ(kind_of("1,7,100,-;BUG: kernel NULL pointer dereference, address: 0000000000000008\n"), "bug");
        ASSERT_STREQ(kind_of("0,8,100,-;kernel BUG at fs/btrfs/disk-io.c:3400!\n"), "bug");
        ASSERT_STREQ(kind_of("4,9,100,-;Oops: 0002 [#1] PREEMPT SMP NOPTI\n"), "oops");
        ASSERT_STREQ(kind_of("4,9,100,-;general protection fault, probably for non-canonical address\n"), "oops");
        ASSERT_STREQ(kind_of("3,10,100,-;INFO: task mount:123 blocked for more than 120 seconds.\n"), "hung-task");
        ASSERT_STREQ(kind_of("3,11,100,-;UBSAN: shift-out-of-bounds in fs/foo.c:12:3\n"), "sanitizer");
        ASSERT_STREQ(kind_of("6,12,100,-;list_add corruption. prev->next should be next\n"), "bug");
        ASSERT_STREQ(kind_of("0,13,100,-;watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [x:1]\n"), "stall");
        /* A record whose prefix carries more fields (caller id). */
        ASSERT_STREQ(kind_of("4,14,100,-,caller=T212;WARNING: at foo\n"), "warning");
}

static void test_not_trouble(void) {
        /* Ordinary kernel messages. */
        ASSERT_NULL(kind_of("6,1,100,-;BTRFS: device fsid 1234 devid 1 transid 6 /dev/loop0\n"));
        ASSERT_NULL(kind_of("3,2,100,-;BTRFS error (device loop0): open_ctree failed\n"));
        ASSERT_NULL(kind_of("4,3,100,-;a message that mentions WARNING: later on\n"));
        /* User space writing to /dev/kmsg gets facility LOG_USER (or any
         * other but 0): it must not fake a kernel warning. */
        ASSERT_NULL(kind_of("12,4,100,-;WARNING: CPU: 0 PID: 1 at fake.c:1\n"));
        ASSERT_NULL(kind_of("11,5,100,-;BUG: not really\n"));
        /* Malformed records. */
        ASSERT_NULL(kind_of("WARNING: no prefix\n"));
        ASSERT_NULL(kind_of("x,1,2,-;WARNING: bad priority\n"));
        ASSERT_NULL(kind_of(""));
        ASSERT_NULL(kmsg_record_trouble(NULL, 0, NULL, NULL));
        /* Not NUL-terminated: nothing read past size. */
        ASSERT_NULL(kmsg_record_trouble("4,1,1,-;WARN", 12, NULL, NULL));
}

static int n_seen;
static char last_kind[32];

static void on_trouble(const char *kind, const char *message, size_t len, void *userdata) {
        n_seen++;
        snprintf(last_kind, sizeof(last_kind), "%s", kind);
        (void) message;
        (void) len;
        (void) userdata;
}

/* /dev/kmsg gives one record per read(); a SEQPACKET socket keeps the
 * same boundaries. */
static void test_drain(void) {
        const char *records[] = {
                "6,1,100,-;eth0: link up\n",
                "4,2,100,-;WARNING: CPU: 0 PID: 9 at x.c:1 f+0x1/0x2\n",
                "12,3,100,-;WARNING: from user space\n",
                "3,4,100,-;INFO: task a:1 blocked for more than 122 seconds.\n",
        };
        int sv[2];

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) < 0) {
                printf("skip: no SEQPACKET sockets: %s\n", strerror(errno));
                exit(EXIT_TEST_SKIP);
        }
        for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++)
                ASSERT_EQ(write(sv[1], records[i], strlen(records[i])), (ssize_t) strlen(records[i]));
        ASSERT_EQ(kmsg_drain(sv[0], on_trouble, NULL), 2);
        ASSERT_EQ(n_seen, 2);
        ASSERT_STREQ(last_kind, "hung-task");
        /* Drained: nothing more, and no error. */
        ASSERT_EQ(kmsg_drain(sv[0], on_trouble, NULL), 0);
        close(sv[0]);
        close(sv[1]);
}

int main(void) {
        test_kinds();
        test_not_trouble();
        test_drain();
        return 0;
}
