/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "cleanup.h"
#include "scope.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
#define FILEID_KERNFS 0xfe

static int is_cgroup2(int fd) {
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return negative_errno();
        return sfs.f_type == CGROUP2_SUPER_MAGIC;
}

/* A cgroup2 directory's file handle: kernfs hands out the 64-bit cgroup
 * id as the handle, which both naming the cgroup and reopening it use. */
typedef union CgroupHandle {
        struct file_handle fh;
        char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
} CgroupHandle;

static int cgroup_handle(int fd, CgroupHandle *ret) {
        int mnt_id, r;

        r = is_cgroup2(fd);
        if (r < 0)
                return r;
        if (r == 0)
                return -EMEDIUMTYPE;
        ret->fh.handle_bytes = sizeof(uint64_t);
        if (name_to_handle_at(fd, "", &ret->fh, &mnt_id, AT_EMPTY_PATH) < 0)
                return negative_errno();
        return 0;
}

int scope_cgroup_from_fd(int fd, uint64_t *ret_id, uint32_t *ret_level) {
        CgroupHandle h;
        _cleanup_close_ int cur = -1;
        uint64_t id;
        uint32_t level = 0;
        int r;

        r = cgroup_handle(fd, &h);
        if (r < 0)
                return r;
        memcpy(&id, h.fh.f_handle, sizeof(id));

        /* Count the steps up to the hierarchy's root: that is the level
         * bpf_get_current_ancestor_cgroup_id() takes. */
        cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        for (;;) {
                _cleanup_close_ int parent = -1;
                struct stat a, b;

                parent = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (parent < 0)
                        return negative_errno();
                if (fstat(cur, &a) < 0 || fstat(parent, &b) < 0)
                        return negative_errno();
                r = is_cgroup2(parent);
                if (r < 0)
                        return r;
                if (r == 0 || (a.st_dev == b.st_dev && a.st_ino == b.st_ino))
                        break;
                level++;
                closep(&cur);
                cur = TAKE_FD(parent);
                if (level > 1024)
                        return -ELOOP;
        }

        *ret_id = id;
        *ret_level = level;
        return 0;
}

int scope_cgroup_from_path(const char *path, uint64_t *ret_id, uint32_t *ret_level) {
        _cleanup_close_ int fd = -1;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return scope_cgroup_from_fd(fd, ret_id, ret_level);
}

int scope_cgroup_path_of_pid(pid_t pid, char **ret_path) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        char p[64];
        size_t cap = 0;

        if (pid > 0)
                snprintf(p, sizeof(p), "/proc/%d/cgroup", (int) pid);
        else
                snprintf(p, sizeof(p), "/proc/self/cgroup");
        f = fopen(p, "re");
        if (!f)
                return negative_errno();
        while (getline(&line, &cap, f) > 0) {
                /* The unified hierarchy's line is "0::/path". */
                if (strncmp(line, "0::", 3) == 0) {
                        char *path;

                        line[strcspn(line, "\n")] = 0;
                        if (asprintf(&path, CGROUP_ROOT "%s", strcmp(line + 3, "/") == 0 ? "" : line + 3) < 0)
                                return -ENOMEM;
                        *ret_path = path;
                        return 0;
                }
        }
        return -ENOMEDIUM;
}

static int read_stat_start(pid_t pid, uint64_t *ret) {
        _cleanup_fclose_ FILE *f = NULL;
        char p[64], buf[2048], *s;
        unsigned long long start;
        size_t n;

        snprintf(p, sizeof(p), "/proc/%d/stat", (int) pid);
        f = fopen(p, "re");
        if (!f)
                return negative_errno();
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = 0;
        /* comm may hold spaces and parentheses: fields resume after the last ')'. */
        s = strrchr(buf, ')');
        if (!s)
                return -EIO;
        /* Field 3 (state) is first after ')'; starttime is field 22. */
        if (sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                   &start) != 1)
                return -EIO;
        *ret = start;
        return 0;
}

int scope_process_status(pid_t pid, pid_t *ret_tgid, uid_t ret_uids[4]) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        bool have_tgid = !ret_tgid, have_uids = !ret_uids;
        uid_t u[4];
        char p[64];
        size_t cap = 0;
        int t;

        snprintf(p, sizeof(p), "/proc/%d/status", (int) pid);
        f = fopen(p, "re");
        if (!f)
                return negative_errno();
        while ((!have_tgid || !have_uids) && getline(&line, &cap, f) > 0) {
                if (ret_tgid && sscanf(line, "Tgid: %d", &t) == 1) {
                        *ret_tgid = t;
                        have_tgid = true;
                } else if (ret_uids && sscanf(line, "Uid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4) {
                        memcpy(ret_uids, u, sizeof(u));
                        have_uids = true;
                }
        }
        return have_tgid && have_uids ? 0 : -EIO;
}

int scope_process(pid_t pid, pid_t *ret_tgid, uint64_t *ret_start_ticks) {
        uint64_t start = 0;
        pid_t tgid = 0;
        int r;

        if (pid <= 0)
                return -EINVAL;
        r = scope_process_status(pid, &tgid, NULL);
        if (r < 0)
                return r;
        r = read_stat_start(tgid, &start);
        if (r < 0)
                return r;
        *ret_tgid = tgid;
        *ret_start_ticks = start;
        return 0;
}

int scope_process_alive(pid_t tgid, uint64_t start_ticks) {
        uint64_t now;
        int r;

        r = read_stat_start(tgid, &now);
        if (r == -ENOENT || r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        return now == start_ticks;
}

int scope_cgroup_reopen(int fd) {
        CgroupHandle h;
        _cleanup_close_ int mnt = -1;
        int r;

        r = cgroup_handle(fd, &h);
        if (r < 0)
                return r;
        mnt = open(CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (mnt < 0)
                return negative_errno();
        r = open_by_handle_at(mnt, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return r < 0 ? negative_errno() : r;
}

int scope_cgroup_alive(uint64_t cgroup_id) {
        union {
                struct file_handle fh;
                char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
        } h = { .fh.handle_bytes = sizeof(uint64_t), .fh.handle_type = FILEID_KERNFS };
        _cleanup_close_ int mnt = -1, fd = -1;

        mnt = open(CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (mnt < 0)
                return negative_errno();
        memcpy(h.fh.f_handle, &cgroup_id, sizeof(cgroup_id));
        fd = open_by_handle_at(mnt, &h.fh, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
                return 1;
        if (errno == ESTALE || errno == ENOENT)
                return 0;
        return negative_errno();
}
