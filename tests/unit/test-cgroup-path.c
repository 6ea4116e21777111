/* SPDX-License-Identifier: MIT */
/* cgroup-path.c: a caller's cgroup path, turned into the daemon's through
 * the caller's mountinfo (as the daemon, in the initial cgroup namespace,
 * reads it). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-path.h"
#include "test-util.h"

/* The host, and a container whose cgroup2 is mounted inside its cgroup
 * namespace: the daemon sees that mount's root as the container's cgroup. */
static const char host[] =
        "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
        "23 22 0:22 / /sys rw,nosuid shared:2 - sysfs sysfs rw\n"
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw\n"
        "31 23 0:27 / /sys/fs/bpf rw shared:10 - bpf bpf rw\n";

static const char container[] =
        "600 500 0:60 / / rw,relatime - overlay overlay rw\n"
        "601 600 0:61 / /sys ro,nosuid - sysfs sysfs ro\n"
        "602 601 0:26 /user.slice/user-1000.slice/libpod-abc.scope /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw\n"
        "603 600 0:62 / /tmp rw - tmpfs tmpfs rw\n"
        /* A cgroup2 mount hidden under a later one on the same point. */
        "604 600 0:26 / /mnt/cg rw - cgroup2 cgroup2 rw\n"
        "605 600 0:63 / /mnt/cg rw - tmpfs tmpfs rw\n";

static int translate(const char *mountinfo, const char *path, char **ret) {
        FILE *f = fmemopen((void *) mountinfo, strlen(mountinfo), "r");
        int r;

        ASSERT_NOT_NULL(f);
        r = cgroup_path_translate_mountinfo(f, path, "/sys/fs/cgroup", ret);
        fclose(f);
        return r;
}

static void expect(const char *mountinfo, const char *path, const char *want) {
        char *out = NULL;

        ASSERT_OK(translate(mountinfo, path, &out));
        ASSERT_STREQ(out, want);
        free(out);
}

static void expect_refused(const char *mountinfo, const char *path, int want) {
        char *out = NULL;

        ASSERT_EQ(translate(mountinfo, path, &out), want);
        ASSERT_NULL(out);
}

int main(void) {
        /* On the host, a path is itself. */
        expect(host, "/sys/fs/cgroup/user.slice/job", "/sys/fs/cgroup/user.slice/job");
        expect(host, "/sys/fs/cgroup", "/sys/fs/cgroup");
        expect(host, "/sys/fs/cgroup/", "/sys/fs/cgroup/");

        /* In the container, below its own cgroup, never the host's "/job". */
        expect(container, "/sys/fs/cgroup/job", "/sys/fs/cgroup/user.slice/user-1000.slice/libpod-abc.scope/job");
        expect(container, "/sys/fs/cgroup", "/sys/fs/cgroup/user.slice/user-1000.slice/libpod-abc.scope");

        /* Not in a cgroup2 mount: elsewhere, beside the mount point, or
         * under a mount that hides one. */
        expect_refused(host, "/tmp/x", -EMEDIUMTYPE);
        expect_refused(host, "/sys/fs/cgroupx/job", -EMEDIUMTYPE);
        expect_refused(container, "/mnt/cg/job", -EMEDIUMTYPE);
        expect_refused("", "/sys/fs/cgroup/job", -EMEDIUMTYPE);

        /* Paths that could climb out, or that mountinfo would escape. */
        expect_refused(container, "/sys/fs/cgroup/../../../job", -EINVAL);
        expect_refused(container, "/sys/fs/cgroup/./job", -EINVAL);
        expect_refused(container, "/sys/fs/cgroup//job", -EINVAL);
        expect_refused(container, "sys/fs/cgroup/job", -EINVAL);
        expect_refused(container, "/sys/fs/cgroup/a b", -EINVAL);
        expect_refused(container, "/sys/fs/cgroup/a\\040b", -EINVAL);

        /* Where the daemon finds the whole hierarchy. */
        {
                FILE *f = fmemopen((void *) container, strlen(container), "r");
                char *root = NULL;

                ASSERT_OK(cgroup_root_from_mountinfo(f, &root));
                ASSERT_STREQ(root, "/mnt/cg");  /* the one of root "/" */
                free(root);
                fclose(f);
                f = fmemopen((void *) host, strlen(host), "r");
                ASSERT_OK(cgroup_root_from_mountinfo(f, &root));
                ASSERT_STREQ(root, "/sys/fs/cgroup");
                free(root);
                fclose(f);
        }

        /* Not a mountinfo. */
        expect_refused("garbage\n", "/sys/fs/cgroup/job", -EIO);
        return 0;
}
