/* SPDX-License-Identifier: MIT */
/* Each explore run's directory, cgroup and mount namespace
 * (explore-sandbox.h). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "explore-sandbox.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
/* A cgroup killed empties within this (its processes' exit); past it the
 * kill is said to have failed rather than waited on forever. */
#define SANDBOX_KILL_WAIT_MSEC 10000

static int write_string(const char *path, const char *s) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        size_t n = strlen(s);

        if (fd < 0)
                return -errno;
        if (write(fd, s, n) != (ssize_t) n)
                return errno ? -errno : -EIO;
        return 0;
}

/* Our own cgroup (v2): "0::/path" of /proc/self/cgroup. */
static int own_cgroup(char **ret) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
        char line[PATH_MAX + 8];

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = 0;
                if (strncmp(line, "0::", 3) == 0) {
                        if (asprintf(ret, CGROUP_ROOT "%s", strcmp(line + 3, "/") == 0 ? "" : line + 3) < 0)
                                return -ENOMEM;
                        return 0;
                }
        }
        return -EOPNOTSUPP;     /* cgroup v1 only */
}

/* In a child: can it unshare the mount namespace, and move itself into
 * cgroup (NULL: not tried)? Bit 0: unshare failed; bit 1: the move did. */
static int probe(const char *cgroup, bool *ret_unshare, int *ret_move_errno) {
        int status = 0, pipefd[2], e = 0;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                e = errno;
                (void) close(pipefd[0]);
                (void) close(pipefd[1]);
                return -e;
        }
        if (pid == 0) {
                _cleanup_free_ char *procs = NULL;
                int ok = unshare(CLONE_NEWNS) == 0;

                if (cgroup) {
                        if (asprintf(&procs, "%s/cgroup.procs", cgroup) < 0)
                                e = ENOMEM;
                        else
                                e = -write_string(procs, "0");
                }
                (void) write(pipefd[1], &e, sizeof(e));
                _exit(ok ? 0 : 1);
        }
        (void) close(pipefd[1]);
        if (read(pipefd[0], &e, sizeof(e)) != sizeof(e))
                e = EIO;
        (void) close(pipefd[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        *ret_unshare = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        *ret_move_errno = e;
        return 0;
}

/* The cgroups of explores that are gone (a SIGKILLed injectctl could not
 * remove its own): each injectd-explore-PID under own whose PID is no
 * longer alive, with its runs' cgroups, once they are empty. A cgroup
 * with a process still in it is left as it is (rmdir refuses it): what a
 * killed explore's run started is not ours to kill. */
static void remove_stale(const char *own) {
        _cleanup_(closedirp) DIR *d = opendir(own);
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d))) {
                _cleanup_free_ char *group = NULL;
                _cleanup_(closedirp) DIR *runs = NULL;
                struct dirent *r;
                int pid, end = 0;

                if (e->d_type != DT_DIR || sscanf(e->d_name, "injectd-explore-%d%n", &pid, &end) != 1 ||
                    e->d_name[end] != '\0' || pid <= 0 || pid == (int) getpid())
                        continue;
                if (kill(pid, 0) == 0 || errno != ESRCH)
                        continue;
                if (asprintf(&group, "%s/%s", own, e->d_name) < 0)
                        return;
                runs = opendir(group);
                while (runs && (r = readdir(runs))) {
                        _cleanup_free_ char *child = NULL;

                        if (r->d_type == DT_DIR && r->d_name[0] != '.' && asprintf(&child, "%s/%s", group, r->d_name) >= 0)
                                (void) rmdir(child);
                }
                if (rmdir(group) == 0)
                        fprintf(stderr, "explore: removed %s, the cgroup of an explore that is gone.\n", group);
        }
}

int sandbox_init(Sandbox *s) {
        _cleanup_free_ char *own = NULL, *group = NULL, *probe_dir = NULL, *kill_path = NULL;
        const char *tmp = getenv("TMPDIR");
        int r, move_errno = 0;
        bool unshare_ok = false;

        *s = (Sandbox) {};
        if (!tmp || tmp[0] != '/')
                tmp = "/tmp";
        if (asprintf(&s->dir, "%s/injectd-explore-XXXXXX", tmp) < 0) {
                s->dir = NULL;
                return -ENOMEM;
        }
        if (!mkdtemp(s->dir)) {
                r = -errno;
                free(s->dir);
                s->dir = NULL;
                return r;
        }

        r = own_cgroup(&own);
        if (r >= 0)
                remove_stale(own);
        if (r >= 0 && asprintf(&group, "%s/injectd-explore-%d", own, (int) getpid()) < 0)
                r = -ENOMEM;
        if (r >= 0 && mkdir(group, 0755) < 0)
                r = -errno;
        if (r >= 0 && asprintf(&probe_dir, "%s/probe", group) < 0)
                r = -ENOMEM;
        if (r >= 0 && mkdir(probe_dir, 0755) < 0)
                r = -errno;
        if (r < 0) {
                if (asprintf(&s->cgroup_why, "cannot make a cgroup under %s: %s", own ?: "its own", strerror(-r)) < 0)
                        s->cgroup_why = NULL;
                if (group)
                        (void) rmdir(group);
                free(probe_dir);
                probe_dir = NULL;
        }
        r = probe(probe_dir, &unshare_ok, &move_errno);
        if (r < 0)
                return r;
        s->private_mounts = unshare_ok;
        if (probe_dir) {
                (void) rmdir(probe_dir);
                if (move_errno != 0) {
                        /* Moving a process needs the common ancestor's
                         * cgroup.procs writable: ours, here. */
                        if (asprintf(&s->cgroup_why, "cannot move a process from %s into a cgroup of its own: %s",
                                     own, strerror(move_errno)) < 0)
                                s->cgroup_why = NULL;
                        (void) rmdir(group);
                } else
                        s->cgroup = TAKE_PTR(group);
        }
        if (s->cgroup && asprintf(&kill_path, "%s/cgroup.kill", s->cgroup) >= 0)
                s->has_kill = access(kill_path, F_OK) == 0;
        return 0;
}

int sandbox_run_new(const Sandbox *s, uint64_t n, SandboxRun *ret) {
        SandboxRun r = { .sandbox = s, .n = n };

        if (asprintf(&r.dir, "%s/run%" PRIu64, s->dir, n) < 0)
                return -ENOMEM;
        if (mkdir(r.dir, 0700) < 0 && errno != EEXIST) {
                int e = errno;

                free(r.dir);
                return -e;
        }
        if (s->cgroup) {
                if (asprintf(&r.cgroup, "%s/run%" PRIu64, s->cgroup, n) < 0) {
                        r.cgroup = NULL;
                        sandbox_run_done(&r);
                        return -ENOMEM;
                }
                if (mkdir(r.cgroup, 0755) < 0 && errno != EEXIST) {
                        int e = errno;

                        free(r.cgroup);
                        r.cgroup = NULL;
                        sandbox_run_done(&r);
                        return -e;
                }
        }
        *ret = r;
        return 0;
}

int sandbox_run_prepare(void *userdata) {
        SandboxRun *r = userdata;
        const char *dir = r->dir;

        if (r->cgroup) {
                char procs[PATH_MAX];
                int e;

                snprintf(procs, sizeof(procs), "%s/cgroup.procs", r->cgroup);
                e = write_string(procs, "0");
                if (e < 0)
                        return e;
        }
        if (r->sandbox->private_mounts && r->sandbox->use_private_mounts) {
                /* Private propagation first: a mount of the run's must not
                 * reach the caller's namespace (systemd makes / shared). */
                if (unshare(CLONE_NEWNS) < 0)
                        return -errno;
                if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        return -errno;
                if (mount(r->dir, "/tmp", NULL, MS_BIND, NULL) < 0)
                        return -errno;
                /* Its directory is /tmp now: its path under the old /tmp
                 * may be hidden by the mount. */
                dir = "/tmp";
        }
        if (setenv("INJECTD_EXPLORE_RUN", dir, 1) < 0 || setenv("TMPDIR", dir, 1) < 0)
                return -errno;
        return 0;
}

static int cgroup_empty(const char *cgroup) {
        char path[PATH_MAX], buf[256];
        _cleanup_close_ int fd = -1;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/cgroup.events", cgroup);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (int waited = 0;; ) {
                struct pollfd p = { .fd = fd, .events = POLLPRI };

                if (lseek(fd, 0, SEEK_SET) < 0)
                        return -errno;
                n = read(fd, buf, sizeof(buf) - 1);
                if (n < 0)
                        return -errno;
                buf[n] = 0;
                if (strstr(buf, "populated 0"))
                        return 0;
                if (waited >= SANDBOX_KILL_WAIT_MSEC)
                        return -ETIMEDOUT;
                /* cgroup.events is modified (POLLPRI) when it empties. */
                (void) poll(&p, 1, 100);
                waited += 100;
        }
}

int sandbox_run_pids(const SandboxRun *r, pid_t **ret, size_t *ret_n) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ pid_t *v = NULL;
        char path[PATH_MAX];
        size_t n = 0;
        long pid;

        *ret = NULL;
        *ret_n = 0;
        if (!r->cgroup)
                return -ENOENT;
        snprintf(path, sizeof(path), "%s/cgroup.procs", r->cgroup);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fscanf(f, "%ld", &pid) == 1) {
                pid_t *w = realloc(v, (n + 1) * sizeof(*v));

                if (!w)
                        return -ENOMEM;
                v = w;
                v[n++] = (pid_t) pid;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

int sandbox_run_kill(SandboxRun *r) {
        char path[PATH_MAX];

        if (!r->cgroup)
                return -ENOENT;
        snprintf(path, sizeof(path), "%s/cgroup.kill", r->cgroup);
        if (!r->sandbox->has_kill || write_string(path, "1") < 0) {
                /* Before Linux 5.14: each pid, until none is left (a fork
                 * between the read and the kill is caught next time). */
                for (int round = 0; round < 100; round++) {
                        _cleanup_free_ pid_t *v = NULL;
                        size_t n = 0;

                        if (sandbox_run_pids(r, &v, &n) < 0 || n == 0)
                                break;
                        for (size_t i = 0; i < n; i++)
                                (void) kill(v[i], SIGKILL);
                        (void) usleep(10000);
                }
        }
        return cgroup_empty(r->cgroup);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        if (type == FTW_DP)
                (void) rmdir(path);
        else
                (void) unlink(path);
        return 0;
}

void sandbox_run_done(SandboxRun *r) {
        if (r->cgroup) {
                int e = sandbox_run_kill(r);

                if (e < 0 || rmdir(r->cgroup) < 0)
                        fprintf(stderr, "explore: run %" PRIu64 ": cannot remove its cgroup %s: %s\n", r->n, r->cgroup,
                                strerror(e < 0 ? -e : errno));
        }
        if (r->dir) {
                /* FTW_MOUNT: a file system the run left mounted here (with
                 * no private mount namespace) is not deleted through. */
                (void) nftw(r->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
                if (rmdir(r->dir) < 0 && errno != ENOENT)
                        fprintf(stderr, "explore: run %" PRIu64 ": cannot remove its directory %s: %s (left as it "
                                "is; a mount of the run's?)\n", r->n, r->dir, strerror(errno));
        }
        free(r->dir);
        free(r->cgroup);
        *r = (SandboxRun) {};
}

uint64_t sandbox_run_of_pid(const Sandbox *s, pid_t pid) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], line[PATH_MAX + 8];
        const char *mine, *p;
        uint64_t n = 0;

        if (!s->cgroup || pid <= 0)
                return 0;
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return 0;
        mine = s->cgroup + strlen(CGROUP_ROOT);
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = 0;
                if (strncmp(line, "0::", 3) != 0)
                        continue;
                p = line + 3;
                if (strncmp(p, mine, strlen(mine)) != 0 || strncmp(p + strlen(mine), "/run", 4) != 0)
                        return 0;
                if (sscanf(p + strlen(mine) + 4, "%" SCNu64, &n) != 1)
                        return 0;
                return n;
        }
        return 0;
}

void sandbox_done(Sandbox *s) {
        if (s->cgroup && rmdir(s->cgroup) < 0)
                fprintf(stderr, "explore: cannot remove the cgroup %s: %s\n", s->cgroup, strerror(errno));
        if (s->dir)
                (void) rmdir(s->dir);
        free(s->dir);
        free(s->cgroup);
        free(s->cgroup_why);
        *s = (Sandbox) {};
}
