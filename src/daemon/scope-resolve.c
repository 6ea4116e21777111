/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scope-resolve.h"
#include "cleanup.h"
#include "scope.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static int process_owned_by(pid_t pid, uid_t uid) {
        uid_t u[4];
        int r;

        r = scope_process_status(pid, NULL, u);
        if (r < 0)
                return r;
        return u[0] == uid && u[1] == uid && u[2] == uid && u[3] == uid;
}

static int cgroup_only_uid_at(int dirfd, uid_t uid, uid_t *ret_other, int depth) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int fd, r;

        if (depth > 64)
                return -ELOOP;
        fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "re");
        if (!f) {
                close(fd);
                return -ENOMEM;
        }
        for (int pid; fscanf(f, "%d", &pid) == 1;) {
                uid_t u[4];

                r = scope_process_status(pid, NULL, u);
                if (r == -ENOENT)
                        continue;       /* exited meanwhile */
                if (r < 0)
                        return r;
                for (int i = 0; i < 4; i++)
                        if (u[i] != uid) {
                                *ret_other = u[i];
                                return 0;
                        }
        }

        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -ENOMEM;
        }
        while ((de = readdir(d))) {
                _cleanup_close_ int sub = -1;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        continue;
                r = cgroup_only_uid_at(sub, uid, ret_other, depth + 1);
                if (r <= 0)
                        return r;
        }
        return 1;
}

int cgroup_only_uid(const char *path, uid_t uid, uid_t *ret_other) {
        _cleanup_close_ int fd = -1;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return cgroup_only_uid_at(fd, uid, ret_other, 0);
}

static int resolve_own_cgroup(const Caller *c, ScopeResolution *s, InjectError *err) {
        _cleanup_free_ char *path = NULL;
        uid_t other = 0;
        int r;

        r = scope_cgroup_path_of_pid(c->pid, &path);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                        "Cannot find your cgroup (pid %d): %s", (int) c->pid, strerror(-r));
        r = scope_cgroup_from_path(path, &s->cgroup_id, &s->cgroup_level);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot open your cgroup '%s': %s",
                                        path, strerror(-r));
        snprintf(s->desc, sizeof(s->desc), "cgroup:%s", path + strlen(CGROUP_ROOT));
        if (s->desc[7] == 0)
                snprintf(s->desc, sizeof(s->desc), "cgroup:/");
        s->kind = INJECT_SCOPE_CGROUP;
        if (c->privileged)
                return 0;
        if (s->cgroup_level == 0)
                return inject_error_set(err, -EPERM, INJECT_ERROR_SCOPE_NOT_OWNED,
                                        "Your process is in the root cgroup, which holds every process on the "
                                        "machine; ask for scope \"process\" instead");
        r = cgroup_only_uid(path, c->uid, &other);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot read the processes of '%s': %s",
                                        path, strerror(-r));
        if (r == 0)
                return inject_error_set(err, -EPERM, INJECT_ERROR_SCOPE_NOT_OWNED,
                                        "Your cgroup '%s' also holds processes of another user (uid %u); ask for "
                                        "scope \"process\" instead", path + strlen(CGROUP_ROOT), (unsigned) other);
        return 0;
}

static int resolve_explicit_cgroup(const Caller *c, const InjectRequest *req, ScopeResolution *s, InjectError *err) {
        _cleanup_close_ int own_fd = -1;
        char link[64], target[PATH_MAX];
        struct stat st;
        ssize_t n;
        int fd = req->cgroup_fd, r;

        if (fd < 0) {
                /* The path is opened here, but what counts is who owns what
                 * was opened, checked on the fd: no race with a rename. */
                own_fd = open(req->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (own_fd < 0)
                        return inject_error_set(err, negative_errno(), INJECT_ERROR_BAD_SCOPE,
                                                "Cannot open cgroup '%s': %m", req->cgroup_path);
                fd = own_fd;
        }
        r = scope_cgroup_from_fd(fd, &s->cgroup_id, &s->cgroup_level);
        if (r == -EMEDIUMTYPE)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "The cgroup is not a cgroup2 directory");
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot use the cgroup: %s", strerror(-r));
        if (fstat(fd, &st) < 0)
                return negative_errno();
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        snprintf(s->desc, sizeof(s->desc), "cgroup:%.300s",
                 strncmp(target, CGROUP_ROOT, strlen(CGROUP_ROOT)) == 0 ? target + strlen(CGROUP_ROOT) : target);
        s->kind = INJECT_SCOPE_CGROUP;
        /* A delegated cgroup belongs to its user; anything else is foreign. */
        s->foreign = !c->privileged && (st.st_uid != c->uid || s->cgroup_level == 0);
        return 0;
}

int resolve_scope(const Caller *c, const InjectRequest *req, ScopeResolution *ret, InjectError *err) {
        ScopeResolution s = {};
        int r;

        switch (req->scope) {
        case REQUEST_SCOPE_OWN_CGROUP:
                r = resolve_own_cgroup(c, &s, err);
                break;
        case REQUEST_SCOPE_CGROUP:
                r = resolve_explicit_cgroup(c, req, &s, err);
                break;
        case REQUEST_SCOPE_PROCESS:
                s.kind = INJECT_SCOPE_PROCESS;
                s.pid = req->pid > 0 ? req->pid : c->pid;
                r = process_owned_by(s.pid, c->uid);
                if (r == -ENOENT)
                        r = inject_error_set(err, -ESRCH, INJECT_ERROR_BAD_SCOPE, "No process with pid %d",
                                             (int) s.pid);
                else if (r < 0)
                        r = inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot read process %d: %s",
                                             (int) s.pid, strerror(-r));
                else {
                        s.foreign = !c->privileged && r == 0;
                        snprintf(s.desc, sizeof(s.desc), "process:%d", (int) s.pid);
                        r = 0;
                }
                break;
        case REQUEST_SCOPE_GLOBAL:
                s.kind = INJECT_SCOPE_GLOBAL;
                s.foreign = !c->privileged;
                snprintf(s.desc, sizeof(s.desc), "global");
                r = 0;
                break;
        default:
                r = inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE, "Unknown scope");
        }
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}
