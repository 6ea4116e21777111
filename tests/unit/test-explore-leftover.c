/* SPDX-License-Identifier: MIT */
/* explore's leftover detector on fake snapshots (explore-leftover.h): the
 * mountinfo parser (escapes, optional fields), and the diff: only what the
 * run added is a leftover; a loop device said held or not, autoclear; a
 * backing file under the run's directory or one of its own files, deleted
 * or not; a mount seen in both views said once; a mount ID reused for
 * another mount point is new; a new holder. */

#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "explore-leftover.h"
#include "test-util.h"

static const char *const mountinfo_before =
        "22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw\n"
        "23 22 0:22 / /proc rw,nosuid - proc proc rw\n"
        "24 22 0:23 / /tmp rw shared:2 master:1 - tmpfs tmpfs rw\n";

static void test_parse(void) {
        _cleanup_(leftover_snapshot_done) LeftoverSnapshot s = {};

        ASSERT_OK(leftover_parse_mountinfo(&s,
                                           "24 22 0:23 / /tmp rw shared:2 master:1 - tmpfs tmpfs rw\n"
                                           "not a line\n"
                                           "31 24 7:0 / /tmp/a\\040b rw - btrfs /dev/loop0 rw,space_cache=v2\n"
                                           "32 24 0:44 / /x rw - tmpfs\n", "self"));
        ASSERT_EQ(s.n_mounts, 3);
        ASSERT_EQ(s.mounts[0].id, 24);
        ASSERT_STREQ(s.mounts[0].target, "/tmp");
        ASSERT_STREQ(s.mounts[0].fstype, "tmpfs");
        ASSERT_STREQ(s.mounts[1].target, "/tmp/a b");
        ASSERT_STREQ(s.mounts[1].source, "/dev/loop0");
        ASSERT_STREQ(s.mounts[1].view, "self");
        ASSERT_STREQ(s.mounts[2].source, "none");
}

static const Leftover *find(const Leftovers *l, const char *kind, const char *in_title) {
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i].kind, kind) == 0 && strstr(l->v[i].title, in_title))
                        return &l->v[i];
        return NULL;
}

static void test_nothing_left(void) {
        _cleanup_(leftover_snapshot_done) LeftoverSnapshot before = {}, after = {};
        _cleanup_(leftovers_done) Leftovers l = {};

        ASSERT_OK(leftover_parse_mountinfo(&before, mountinfo_before, "self"));
        ASSERT_OK(leftover_add_loop(&before, "loop3", "/var/lib/x.img", false));
        ASSERT_OK(leftover_add_holder(&before, "sda", "dm-0"));
        ASSERT_OK(leftover_parse_mountinfo(&after, mountinfo_before, "self"));
        ASSERT_OK(leftover_add_loop(&after, "loop3", "/var/lib/x.img", false));
        ASSERT_OK(leftover_add_holder(&after, "sda", "dm-0"));
        ASSERT_RET(leftover_diff(&before, &after, NULL, &l), 0);
        ASSERT_EQ(l.n, 0);

        /* What was there before and went away is not the run's. */
        leftover_snapshot_done(&after);
        ASSERT_OK(leftover_parse_mountinfo(&after, "22 1 0:21 / / rw - overlay overlay rw\n", "self"));
        ASSERT_RET(leftover_diff(&before, &after, NULL, &l), 0);
}

static void test_left(void) {
        _cleanup_(leftover_snapshot_done) LeftoverSnapshot before = {}, after = {};
        _cleanup_(leftovers_done) Leftovers l = {};
        const char *files[] = { "/home/u/test.sh", "/home/u/own.img" };
        LeftoverRun run = { .dir = "/tmp/run-1/", .files = files, .n_files = 2 };
        const Leftover *x;

        ASSERT_OK(leftover_parse_mountinfo(&before, mountinfo_before, "self"));
        ASSERT_OK(leftover_add_loop(&before, "loop3", "/var/lib/x.img", false));

        ASSERT_OK(leftover_parse_mountinfo(&after, mountinfo_before, "self"));
        /* The same mounts seen from the initial namespace too; one new
         * mount in both views, said once, as in the initial one first. */
        ASSERT_OK(leftover_parse_mountinfo(&after, "22 1 0:21 / / rw - overlay overlay rw\n"
                                           "40 22 7:1 / /mnt/x rw - btrfs /dev/loop1 rw\n", "init"));
        ASSERT_OK(leftover_parse_mountinfo(&after, "40 24 7:1 / /mnt/x rw - btrfs /dev/loop1 rw\n", "self"));
        /* Mount ID 23 reused for another mount point. */
        ASSERT_OK(leftover_parse_mountinfo(&after, "23 24 0:50 / /tmp/run-1/m rw - tmpfs tmpfs rw\n", "self"));
        ASSERT_OK(leftover_add_loop(&after, "loop3", "/var/lib/x.img", false));
        /* loop1: held (the btrfs one), under the run's directory, deleted. */
        ASSERT_OK(leftover_add_loop(&after, "loop1", "/tmp/run-1/img (deleted)", true));
        after.loops[after.n_loops - 1].held = 1;
        /* loop2: the run's own file, attached, not held. */
        ASSERT_OK(leftover_add_loop(&after, "loop2", "/home/u/own.img", false));
        after.loops[after.n_loops - 1].held = 0;
        /* loop4: not probed, someone else's file. */
        ASSERT_OK(leftover_add_loop(&after, "loop4", "/srv/other.img", true));
        /* loop6: detached during the run and attached again to another
         * file: new. */
        ASSERT_OK(leftover_add_loop(&before, "loop6", "/srv/a.img", false));
        ASSERT_OK(leftover_add_loop(&after, "loop6", "/srv/b.img", false));
        ASSERT_OK(leftover_add_holder(&after, "loop2", "dm-3"));

        ASSERT_RET(leftover_diff(&before, &after, &run, &l), 7);
        ASSERT_NOT_NULL(find(&l, "loop", "/srv/b.img"));

        x = find(&l, "loop", "/dev/loop1");
        ASSERT_NOT_NULL(x);
        ASSERT_STREQ(x->signature, "leftover: a loop device left attached, held open");
        ASSERT_TRUE(strstr(x->title, "under the run's directory"));
        ASSERT_TRUE(strstr(x->title, "held open"));
        ASSERT_TRUE(strstr(x->text, "backing file: /tmp/run-1/img (deleted since)\n"));
        ASSERT_TRUE(strstr(x->text, "held open: yes"));

        x = find(&l, "loop", "/dev/loop2");
        ASSERT_NOT_NULL(x);
        ASSERT_STREQ(x->signature, "leftover: a loop device left attached");
        ASSERT_TRUE(strstr(x->title, "the run's own file"));
        ASSERT_TRUE(strstr(x->title, "not held open"));

        x = find(&l, "loop", "/dev/loop4");
        ASSERT_NOT_NULL(x);
        ASSERT_STREQ(x->signature, "leftover: a loop device left attached, autoclear set");
        ASSERT_NULL(strstr(x->title, "the run's"));
        ASSERT_TRUE(strstr(x->text, "held open: unknown"));

        x = find(&l, "mount", "/mnt/x");
        ASSERT_NOT_NULL(x);
        ASSERT_STREQ(x->signature, "leftover: a btrfs mount left");
        ASSERT_TRUE(strstr(x->text, "the initial mount namespace"));
        ASSERT_NULL(find(&l, "mount", "/proc"));

        x = find(&l, "mount", "/tmp/run-1/m");
        ASSERT_NOT_NULL(x);
        ASSERT_TRUE(strstr(x->title, "under the run's directory"));

        x = find(&l, "holder", "/dev/loop2");
        ASSERT_NOT_NULL(x);
        ASSERT_TRUE(strstr(x->title, "dm-3"));
}

/* A directory is not a prefix of a sibling's name: /tmp/run-1 is not
 * /tmp/run-10's. */
static void test_prefix(void) {
        _cleanup_(leftover_snapshot_done) LeftoverSnapshot before = {}, after = {};
        _cleanup_(leftovers_done) Leftovers l = {};
        LeftoverRun run = { .dir = "/tmp/run-1" };

        ASSERT_OK(leftover_add_loop(&after, "loop0", "/tmp/run-10/img", false));
        ASSERT_OK(leftover_add_loop(&after, "loop1", "/tmp/run-1/img", false));
        ASSERT_RET(leftover_diff(&before, &after, &run, &l), 2);
        ASSERT_NULL(strstr(find(&l, "loop", "loop0")->title, "the run's"));
        ASSERT_TRUE(strstr(find(&l, "loop", "loop1")->title, "under the run's directory"));
}

int main(void) {
        test_parse();
        test_nothing_left();
        test_left();
        test_prefix();
        return 0;
}
