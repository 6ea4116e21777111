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
#include "cgroup-path.h"
#include "cleanup.h"
#include "device-owner.h"
#include "pidfd-util.h"
#include "process-info.h"
#include "scope.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

/* What makes a task the caller's, and how much of a subtree may be read. */
typedef struct TaskCheck {
        uid_t uid;
        const ProcNsRef *ns;            /* the caller's pid namespace */
        unsigned dirs, tasks;           /* read so far */
        uid_t other;                    /* a uid not the caller's, when one was met */
        pid_t other_pid;                /* a task outside ns, when one was met */
        bool exhausted;                 /* gave up: too large */
} TaskCheck;

/* pid 1, kthreadd and the kernel threads (its children) are nobody's own,
 * not even an unprivileged uid 0's. */
static bool task_is_system(pid_t pid, const ProcStatus *st) {
        return pid == 1 || pid == 2 || st->ppid == 2;
}

/* 1: pid's uids all are check->uid and it is in check->ns or below;
 * 0: not; -ENOENT: gone. A task costs two small /proc reads and, for a
 * caller in a nested pid namespace, one run of the engine's iterator over
 * this task alone (engine_task_pidns()), so a walk costs at most
 * CGROUP_WALK_MAX_TASKS of those, however many tasks the machine runs. */
static int task_is_callers(TaskCheck *check, pid_t pid) {
        ProcStatus st;
        uint64_t start = 0;
        pid_t tgid;
        int r;

        /* The start time first: proc_ns_contains() then knows that what
         * it reads is of the process whose uids are read here. */
        if (check->ns->level > 0) {
                r = scope_process(pid, &tgid, &start);
                if (r < 0)
                        return r;
        }
        r = proc_status_read(pid, &st);
        if (r < 0)
                return r;
        if (task_is_system(pid, &st)) {
                check->other_pid = pid;
                return 0;
        }
        for (int i = 0; i < 4; i++)
                if (st.uids[i] != check->uid) {
                        check->other = st.uids[i];
                        return 0;
                }
        r = proc_ns_contains(check->ns, pid, start, &st);
        if (r == 0)
                check->other_pid = pid;
        return r;
}

static int cgroup_tasks_callers_at(TaskCheck *check, int dirfd, int depth) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int fd, r;

        if (depth > CGROUP_WALK_MAX_DEPTH || ++check->dirs > CGROUP_WALK_MAX_DIRS) {
                check->exhausted = true;
                return 0;
        }
        fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "re");
        if (!f) {
                close(fd);
                return -ENOMEM;
        }
        for (int pid; fscanf(f, "%d", &pid) == 1;) {
                if (++check->tasks > CGROUP_WALK_MAX_TASKS) {
                        check->exhausted = true;
                        return 0;
                }
                r = task_is_callers(check, pid);
                if (r == -ENOENT)
                        continue;       /* exited meanwhile */
                if (r <= 0)
                        return r;
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
                r = cgroup_tasks_callers_at(check, sub, depth + 1);
                if (r <= 0)
                        return r;
        }
        return 1;
}

static int cgroup_tasks_callers(TaskCheck *check, int fd) {
        _cleanup_close_ int dup = -1;

        /* The walk moves through its own descriptors: fd stays where it is. */
        dup = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dup < 0)
                return negative_errno();
        return cgroup_tasks_callers_at(check, dup, 0);
}

int cgroup_only_uid(const char *path, uid_t uid, uid_t *ret_other) {
        static const ProcNsRef everywhere = {};
        TaskCheck check = { .uid = uid, .ns = &everywhere };
        _cleanup_close_ int fd = -1;
        int r;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = cgroup_tasks_callers(&check, fd);
        if (r == 0 && check.exhausted)
                return -E2BIG;
        if (r == 0)
                *ret_other = check.other;
        return r;
}

/* The caller's pid namespace, as proc_ns_contains() compares it: read by
 * the engine (e) if it can, else by ancestry. The caller's start time,
 * taken when it was let in, makes sure the process read is the caller. */
static int caller_ns(Engine *e, const Caller *c, ProcNsRef *ret) {
        ProcStatus st;
        int r;

        r = proc_status_read(c->pid, &st);
        if (r < 0)
                return r;
        return proc_ns_ref(e, c->pid, c->start_ticks, &st, ret);
}

/* Why a task set is not the caller's, for the refusal's message. */
static void describe_not_callers(const TaskCheck *check, char *buf, size_t n) {
        if (check->exhausted)
                snprintf(buf, n, "more than %u cgroups or %u processes to check", CGROUP_WALK_MAX_DIRS,
                         CGROUP_WALK_MAX_TASKS);
        else if (check->other_pid > 0)
                snprintf(buf, n, "process %d, which is not yours (the system's, or outside your pid namespace)",
                         (int) check->other_pid);
        else
                snprintf(buf, n, "processes of another user (uid %u)", (unsigned) check->other);
}

static int resolve_own_cgroup(Engine *e, const Caller *c, ScopeResolution *s, InjectError *err) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        ProcNsRef ns = {};
        TaskCheck check = { .uid = c->uid, .ns = &ns };
        char why[128];
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
        r = caller_ns(e, c, &ns);
        if (r >= 0) {
                fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = fd < 0 ? negative_errno() : cgroup_tasks_callers(&check, fd);
        }
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot read the processes of '%s': %s",
                                        path, strerror(-r));
        if (r == 0) {
                describe_not_callers(&check, why, sizeof(why));
                return inject_error_set(err, -EPERM, INJECT_ERROR_SCOPE_NOT_OWNED,
                                        "Your cgroup '%s' also holds %s; ask for scope \"process\" instead",
                                        path + strlen(CGROUP_ROOT), why);
        }
        return 0;
}

static int resolve_explicit_cgroup(Engine *e, const Caller *c, const InjectRequest *req, ScopeResolution *s,
                                   InjectError *err) {
        _cleanup_free_ char *host_path = NULL;
        _cleanup_close_ int own_fd = -1, reopened = -1;
        ProcNsRef ns = {};
        TaskCheck check = { .uid = c->uid, .ns = &ns };
        char link[64], target[PATH_MAX];
        struct stat st;
        ssize_t n;
        int fd = req->cgroup_fd, r;

        if (fd < 0) {
                /* A path is the caller's: it means what it means in the
                 * caller's mounts, seen from its root. In a container
                 * (cgroup2 mounted inside its cgroup namespace)
                 * "/sys/fs/cgroup/job" is "job" below the container's
                 * cgroup; opened here as it stands it would be the host's
                 * "/job". cgroup-path.c translates it through the caller's
                 * mountinfo, and refuses what it cannot translate soundly:
                 * such a caller passes the directory as an fd instead. */
                if (c->pid <= 0)
                        return inject_error_set(err, -ESRCH, INJECT_ERROR_BAD_SCOPE,
                                                "A cgroup path needs to know the caller's process; pass the cgroup "
                                                "as a file descriptor ('cgroup_fd')");
                r = cgroup_path_translate(c->pid, req->cgroup_path, &host_path);
                if (r == -EINVAL)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                                "The cgroup path '%s' must be absolute, without '.', '..', '//' or "
                                                "blanks; or pass the cgroup as a file descriptor ('cgroup_fd')",
                                                req->cgroup_path);
                if (r == -EMEDIUMTYPE)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                                "'%s' is not in a cgroup2 mount as you see it (or goes through a "
                                                "symbolic link); pass the cgroup as a file descriptor ('cgroup_fd')",
                                                req->cgroup_path);
                if (r < 0)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                                "Cannot tell what '%s' means to you: %s; pass the cgroup as a file "
                                                "descriptor ('cgroup_fd')", req->cgroup_path, strerror(-r));
                /* The path is opened here, but what counts is who owns what
                 * was opened, checked on the fd: no race with a rename. */
                own_fd = open(host_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (own_fd < 0)
                        return inject_error_set(err, negative_errno(), INJECT_ERROR_BAD_SCOPE,
                                                "Cannot open cgroup '%s': %m", req->cgroup_path);
                fd = own_fd;
        }
        /* An fd from a container's mount of its cgroup namespace leads
         * (by "..", by its /proc/self/fd link) only as far as the
         * namespace's root: its level and name would be counted from
         * there. Reopened through the daemon's mount, they are the
         * hierarchy's. Without CAP_DAC_READ_SEARCH (unit tests), or on a
         * machine whose cgroup2 is not at CGROUP_ROOT, the fd is used as
         * it came. */
        reopened = scope_cgroup_reopen(fd);
        if (reopened == -EMEDIUMTYPE)
                return inject_error_set(err, reopened, INJECT_ERROR_BAD_SCOPE,
                                        "The cgroup is not a cgroup2 directory");
        if (reopened >= 0)
                fd = reopened;
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
        if (strcmp(s->desc, "cgroup:") == 0)
                snprintf(s->desc, sizeof(s->desc), "cgroup:/");
        s->kind = INJECT_SCOPE_CGROUP;
        if (c->privileged)
                return 0;
        /* A delegated cgroup belongs to its user, if it holds nobody
         * else's tasks; anything else is foreign. Cheap checks first. */
        s->foreign = st.st_uid != c->uid || s->cgroup_level == 0;
        if (s->foreign)
                return 0;
        r = caller_ns(e, c, &ns);
        if (r >= 0)
                r = cgroup_tasks_callers(&check, fd);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot read the processes of '%s': %s",
                                        s->desc + strlen("cgroup:"), strerror(-r));
        s->foreign = r == 0;
        return 0;
}

/* Whether the process pid is the caller's own: its uids, its /proc files
 * (which root owns when it is not dumpable), its pid namespace.
 * The cheap reads first; 1 yes, 0 no (why says why), negative errno. */
static int process_is_callers(const Caller *c, const ProcNsRef *ns, pid_t pid, uint64_t start, char *why,
                              size_t n) {
        ProcStatus st;
        uid_t owner;
        int r;

        r = proc_status_read(pid, &st);
        if (r < 0)
                return r;
        if (task_is_system(pid, &st)) {
                snprintf(why, n, "it is the system's (init or a kernel thread)");
                return 0;
        }
        for (int i = 0; i < 4; i++)
                if (st.uids[i] != c->uid) {
                        snprintf(why, n, "it runs as uid %u, not as you (uid %u)", (unsigned) st.uids[i],
                                 (unsigned) c->uid);
                        return 0;
                }
        r = proc_dump_owner(pid, &owner);
        if (r < 0)
                return r;
        if (owner != c->uid) {
                snprintf(why, n, "it is not dumpable (setuid, or it made itself so)");
                return 0;
        }
        r = proc_ns_contains(ns, pid, start, &st);
        if (r == 0)
                snprintf(why, n, "it is outside your pid namespace");
        return r;
}

/* The process of a pidfd, as a pid here. The daemon's /proc is in the
 * initial pid namespace, so fdinfo's "Pid:" names it whatever namespace
 * the caller is in. */
static int pidfd_resolve(const InjectRequest *req, pid_t *ret, InjectError *err) {
        int r;

        r = pidfd_get_pid(req->pidfd, ret);
        if (r == -EBADF)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                        "'pidfd' is not a pidfd (one from pidfd_open(2) or clone(CLONE_PIDFD))");
        if (r == -ESRCH)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "The process of 'pidfd' has exited");
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot read 'pidfd': %s", strerror(-r));
        return 0;
}

static int resolve_process(Engine *e, const Caller *c, const InjectRequest *req, ScopeResolution *s,
                           InjectError *err) {
        ProcNsRef ns = {};
        pid_t pid = c->pid, tgid;
        int mine = 0, r;

        s->kind = INJECT_SCOPE_PROCESS;
        r = caller_ns(e, c, &ns);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot read your process %d: %s",
                                        (int) c->pid, strerror(-r));
        if (req->pidfd >= 0) {
                r = pidfd_resolve(req, &pid, err);
                if (r < 0)
                        return r;
        } else if (req->pid > 0) {
                /* A number from a nested pid namespace means what it means there. */
                r = proc_ns_translate(&ns, req->pid, &pid);
                if (r == -ESRCH)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                                "No process with pid %d in your pid namespace", (int) req->pid);
                if (r < 0)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot look up pid %d: %s",
                                                (int) req->pid, strerror(-r));
        }
        s->pid = pid;
        snprintf(s->desc, sizeof(s->desc), "process:%d", (int) pid);
        /* The start time first: the checks below read pid after it, and
         * whoever reads pid again with this start time (the namespace's
         * reader here, the engine when it arms) knows that pid has not
         * changed hands since. */
        r = scope_process(pid, &tgid, &s->start_ticks);
        if (r >= 0)
                r = mine = process_is_callers(c, &ns, pid, s->start_ticks, s->why, sizeof(s->why));
        if (r == -ENOENT)
                return inject_error_set(err, -ESRCH, INJECT_ERROR_BAD_SCOPE, "No process with pid %d",
                                        (int) (req->pid > 0 ? req->pid : pid));
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot read process %d: %s",
                                        (int) pid, strerror(-r));
        /* What was read above was read by pid. Still alive now, the pidfd's
         * process has had that pid all along, so it was this process that
         * was read; the start time it had then, checked again when the
         * engine arms (request-pipeline.c), covers the time until then. */
        if (req->pidfd >= 0) {
                r = pidfd_is_alive(req->pidfd);
                if (r == 0)
                        return inject_error_set(err, -ESRCH, INJECT_ERROR_BAD_SCOPE,
                                                "The process of 'pidfd' exited while it was checked");
                if (r < 0)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot signal 'pidfd': %s",
                                                strerror(-r));
        }
        s->foreign = !c->privileged && mine == 0;
        if (!s->foreign)
                s->why[0] = 0;
        return 0;
}

/* A block device: the whole disk as attached now, the caller's own when
 * device_owned_by() says so, by the backing file the caller sent and
 * never by a uid: a uid-0 caller without privilege proves it like anyone
 * (device-owner.h). The function must be one whose arguments
 * name a device: said here, before anything else is looked at. */
static int resolve_device(const Caller *c, const InjectRequest *req, ScopeResolution *s, InjectError *err) {
        BlockDisk d = {};
        int r, mine;

        if (device_arg_for(req->function) == INJECT_DEVICE_ARG_NONE)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE,
                                        "'%s' takes no device scope: its arguments name no block device (device "
                                        "scopes apply to %s)", req->function, device_scope_functions);
        r = scope_device_lookup(NULL, req->device, &d);
        if (r == -EINVAL)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                        "'%s' is not a block device name: give its kernel name (\"loop3\", as in "
                                        "/sys/block), /dev/NAME or MAJOR:MINOR", req->device);
        if (r == -ENOENT && scope_device_is_netdev(NULL, req->device))
                return inject_error_set(err, -EOPNOTSUPP, INJECT_ERROR_BAD_SCOPE,
                                        "'%s' is a network device: device scopes are block devices only (no "
                                        "function a network device scope could use is supported yet)",
                                        req->device);
        if (r == -ENOENT)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "No block device '%s'", req->device);
        if (r == -EISDIR)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                        "'%s' is a partition: a device scope is a whole disk (%s)", req->device,
                                        d.name[0] ? d.name : "its disk");
        if (r == -ENOMEDIUM)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE,
                                        "Block device '%s' has nothing attached (or this kernel gives disks no "
                                        "diskseq to name them by)", req->device);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot look up block device '%s': %s",
                                        req->device, strerror(-r));
        s->kind = INJECT_SCOPE_DEVICE;
        s->diskseq = d.diskseq;
        snprintf(s->device, sizeof(s->device), "%s", d.name);
        snprintf(s->desc, sizeof(s->desc), "device:%s", d.name);
        if (c->privileged)
                return 0;
        r = mine = device_owned_by(&d, req->backing_fd, NULL, NULL, s->why, sizeof(s->why));
        if (r == -ESTALE)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "%s; ask again", s->why);
        if (r < 0 && d.loop)
                return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "Cannot tell whose %s is: %s", d.name,
                                        s->why);
        s->foreign = mine <= 0;
        if (!s->foreign)
                s->why[0] = 0;
        return 0;
}

int resolve_scope(Engine *e, const Caller *c, const InjectRequest *req, ScopeResolution *ret, InjectError *err) {
        ScopeResolution s = {};
        int r;

        switch (req->scope) {
        case REQUEST_SCOPE_OWN_CGROUP:
                r = resolve_own_cgroup(e, c, &s, err);
                break;
        case REQUEST_SCOPE_CGROUP:
                r = resolve_explicit_cgroup(e, c, req, &s, err);
                break;
        case REQUEST_SCOPE_PROCESS:
                r = resolve_process(e, c, req, &s, err);
                break;
        case REQUEST_SCOPE_DEVICE:
                r = resolve_device(c, req, &s, err);
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
