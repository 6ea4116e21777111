/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/capability.h>

#include "cleanup.h"
#include "io-util.h"
#include "log.h"
#include "process-info.h"
#include "scope.h"

typedef int (*status_parser)(const char *value, void *dest);

static int parse_pid(const char *v, void *dest) {
        char *end;
        long l;

        errno = 0;
        l = strtol(v, &end, 10);
        if (errno != 0 || end == v || l < 0 || l > INT32_MAX)
                return -EIO;
        *(pid_t *) dest = (pid_t) l;
        return 0;
}

static int parse_uids(const char *v, void *dest) {
        uid_t *u = dest;

        return sscanf(v, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4 ? 0 : -EIO;
}

static int parse_caps(const char *v, void *dest) {
        unsigned long long c;
        char *end;

        errno = 0;
        c = strtoull(v, &end, 16);
        if (errno != 0 || end == v)
                return -EIO;
        *(uint64_t *) dest = c;
        return 0;
}

static int parse_nspid(const char *v, void *dest) {
        ProcStatus *st = (ProcStatus *) ((char *) dest - offsetof(ProcStatus, nspid));
        unsigned n = 0;

        for (const char *p = v;;) {
                char *end;
                long l;

                while (*p == ' ' || *p == '\t')
                        p++;
                if (*p == 0 || *p == '\n')
                        break;
                if (n >= PROC_NS_LEVEL_MAX)
                        return -E2BIG;
                errno = 0;
                l = strtol(p, &end, 10);
                if (errno != 0 || end == p || l <= 0 || l > INT32_MAX)
                        return -EIO;
                st->nspid[n++] = (pid_t) l;
                p = end;
        }
        if (n == 0)
                return -EIO;
        st->n_nspid = n;
        return 0;
}

static const struct {
        const char *key;
        status_parser parse;
        size_t offset;
} status_table[] = {
        { "Tgid",   parse_pid,   offsetof(ProcStatus, tgid) },
        { "PPid",   parse_pid,   offsetof(ProcStatus, ppid) },
        { "Uid",    parse_uids,  offsetof(ProcStatus, uids) },
        { "CapEff", parse_caps,  offsetof(ProcStatus, cap_eff) },
        { "NSpid",  parse_nspid, offsetof(ProcStatus, nspid) },
};

int proc_status_parse(FILE *f, ProcStatus *ret) {
        _cleanup_free_ char *line = NULL;
        ProcStatus st = {};
        unsigned seen = 0;
        size_t cap = 0;
        int r;

        while (getline(&line, &cap, f) > 0) {
                char *colon = strchr(line, ':');

                if (!colon)
                        continue;
                *colon = 0;
                for (size_t i = 0; i < ELEMENTSOF(status_table); i++) {
                        if (strcmp(line, status_table[i].key) != 0)
                                continue;
                        if (seen & (1u << i))
                                return -EIO;    /* a key twice: not a status file */
                        r = status_table[i].parse(colon + 1, (char *) &st + status_table[i].offset);
                        if (r < 0)
                                return r;
                        seen |= 1u << i;
                }
        }
        if (seen != (1u << ELEMENTSOF(status_table)) - 1)
                return -EIO;
        *ret = st;
        return 0;
}

int proc_status_read(pid_t pid, ProcStatus *ret) {
        _cleanup_fclose_ FILE *f = NULL;
        char p[64];

        if (pid <= 0)
                return -EINVAL;
        snprintf(p, sizeof(p), "/proc/%d/status", (int) pid);
        f = fopen(p, "re");
        if (!f)
                return negative_errno();
        return proc_status_parse(f, ret);
}

bool proc_privilege_from(uint64_t cap_eff, bool init_userns, bool init_pidns) {
        const uint64_t admin = UINT64_C(1) << CAP_SYS_ADMIN;
        const uint64_t bpf = (UINT64_C(1) << CAP_BPF) | (UINT64_C(1) << CAP_PERFMON);

        if (!init_userns || !init_pidns)
                return false;
        return (cap_eff & admin) == admin || (cap_eff & bpf) == bpf;
}

/* 1 same, 0 different, -EACCES (or another error) if the link is closed. */
static int same_ns_link(pid_t pid, const char *ns) {
        struct stat mine, theirs;
        char p[64];

        snprintf(p, sizeof(p), "/proc/self/ns/%s", ns);
        if (stat(p, &mine) < 0)
                return negative_errno();
        snprintf(p, sizeof(p), "/proc/%d/ns/%s", (int) pid, ns);
        if (stat(p, &theirs) < 0)
                return negative_errno();
        return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

/* 1 if pid's map file reads as the daemon's own. */
static int same_map(pid_t pid, const char *map) {
        char mine[512], theirs[512], p[64];
        int r;

        snprintf(p, sizeof(p), "/proc/self/%s", map);
        r = read_small_file(p, mine, sizeof(mine));
        if (r < 0)
                return r;
        snprintf(p, sizeof(p), "/proc/%d/%s", (int) pid, map);
        r = read_small_file(p, theirs, sizeof(theirs));
        if (r < 0)
                return r;
        return strcmp(mine, theirs) == 0;
}

int proc_same_namespaces(pid_t pid, const ProcStatus *st, bool *ret_userns, bool *ret_pidns) {
        ProcStatus self;
        int u, p, r;

        u = same_ns_link(pid, "user");
        if (u == -EACCES || u == -EPERM) {
                u = same_map(pid, "uid_map");
                if (u > 0)
                        u = same_map(pid, "gid_map");
        }
        if (u < 0)
                return u;

        p = same_ns_link(pid, "pid");
        if (p == -EACCES || p == -EPERM) {
                r = proc_status_read(getpid(), &self);
                if (r < 0)
                        return r;
                p = self.n_nspid == 1 && st->n_nspid == 1;
        }
        if (p < 0)
                return p;
        *ret_userns = u > 0;
        *ret_pidns = p > 0;
        return 0;
}

int proc_dump_owner(pid_t pid, uid_t *ret) {
        struct stat s;
        char p[64];

        snprintf(p, sizeof(p), "/proc/%d/stat", (int) pid);
        if (stat(p, &s) < 0)
                return negative_errno();
        *ret = s.st_uid;
        return 0;
}

int proc_ns_anchor(pid_t pid, unsigned level, pid_t *ret_pid, uint64_t *ret_start) {
        pid_t cur = pid, tgid;
        uint64_t cur_start;
        int r;

        r = scope_process(cur, &tgid, &cur_start);
        if (r < 0)
                return r;
        cur = tgid;
        for (unsigned i = 0; i < PROC_ANCESTRY_MAX; i++) {
                ProcStatus st, parent;
                uint64_t parent_start;

                r = proc_status_read(cur, &st);
                if (r < 0)
                        return r;
                if (st.n_nspid < level + 1)
                        return -EINVAL;
                if (st.ppid <= 0)
                        break;
                r = proc_status_read(st.ppid, &parent);
                if (r == -ENOENT)
                        return -EAGAIN;         /* reparented meanwhile */
                if (r < 0)
                        return r;
                if (parent.n_nspid < level + 1)
                        break;
                r = scope_process(st.ppid, &tgid, &parent_start);
                if (r < 0)
                        return r == -ENOENT ? -EAGAIN : r;
                if (parent_start > cur_start)
                        return -EAGAIN;         /* not the parent: a reused pid */
                cur = st.ppid;
                cur_start = parent_start;
                if (i + 1 == PROC_ANCESTRY_MAX)
                        return -ELOOP;
        }
        *ret_pid = cur;
        *ret_start = cur_start;
        return 0;
}

/* Once, at the first process whose namespace the engine cannot read: from
 * then on namespaces are told apart by ancestry, and what that costs. */
static void log_by_ancestry(int error) {
        static bool logged = false;

        if (logged)
                return;
        logged = true;
        log_warning_errno(error, "Cannot read pid namespaces with BPF (bpf/task-ns.bpf.c): %m; telling them apart "
                          "by the parent chain instead, which counts a process that entered a namespace with "
                          "setns() (docker exec, nsenter) as outside it");
}

/* The engine's reading of pid's namespaces, if pid still is the process
 * that had start when st was read: the start time brackets st (read
 * after start, before this), and st's NSpid must be the pids the kernel
 * holds. 1 read, 0 pid changed hands, -ENOENT gone, other negative errno:
 * the engine cannot read it. */
static int pidns_read(Engine *e, pid_t pid, uint64_t start, const ProcStatus *st, EngineTaskPidns *ret) {
        EngineTaskPidns t;
        int r;

        r = engine_task_pidns(e, pid, &t);
        if (r == -ESRCH)
                return -ENOENT;
        if (r < 0)
                return r;
        if ((start != 0 && t.start_ticks != start) || t.level + 1 != st->n_nspid)
                return 0;
        for (unsigned i = 0; i <= t.level; i++)
                if (t.nr[i] != st->nspid[i])
                        return 0;
        *ret = t;
        return 1;
}

int proc_ns_ref(Engine *e, pid_t pid, uint64_t start, const ProcStatus *st, ProcNsRef *ret) {
        ProcNsRef ref = { .level = st->n_nspid - 1 };
        EngineTaskPidns t;
        int r;

        if (ref.level == 0) {
                *ret = ref;
                return 0;
        }
        if (e) {
                r = pidns_read(e, pid, start, st, &t);
                if (r == 0)
                        return -ESRCH;          /* not the process it was */
                if (r > 0) {
                        ref.engine = e;
                        ref.inum = t.inum[ref.level];
                        *ret = ref;
                        return 0;
                }
                if (r == -ENOENT)
                        return r;
                log_by_ancestry(r);
        }
        r = proc_ns_anchor(pid, ref.level, &ref.anchor, &ref.anchor_start);
        if (r < 0)
                return r;
        *ret = ref;
        return 0;
}

int proc_ns_contains(const ProcNsRef *ref, pid_t pid, uint64_t start, const ProcStatus *st) {
        EngineTaskPidns t;
        pid_t anchor;
        uint64_t anchor_start;
        int r;

        if (ref->level == 0)
                return 1;
        if (st->n_nspid < ref->level + 1)
                return 0;
        if (ref->inum != 0) {
                /* A task's namespace at ref's level is ref's namespace
                 * exactly when it is in it or below it. */
                r = pidns_read(ref->engine, pid, start, st, &t);
                if (r <= 0)
                        return r;
                return t.inum[ref->level] == ref->inum;
        }
        r = proc_ns_anchor(pid, ref->level, &anchor, &anchor_start);
        if (r == -EAGAIN || r == -ELOOP)
                return 0;
        if (r < 0)
                return r;
        return anchor == ref->anchor && anchor_start == ref->anchor_start;
}

int proc_ns_translate(const ProcNsRef *ref, pid_t nr, pid_t *ret) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        if (ref->level == 0) {
                *ret = nr;
                return 0;
        }
        d = opendir("/proc");
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                ProcStatus st;
                pid_t pid;

                if (parse_pid(de->d_name, &pid) < 0 || pid == 0)
                        continue;
                r = proc_status_read(pid, &st);
                if (r < 0 || st.n_nspid < ref->level + 1 || st.nspid[ref->level] != nr)
                        continue;
                r = proc_ns_contains(ref, pid, 0, &st);
                if (r < 0)
                        return r;
                if (r > 0) {
                        *ret = pid;
                        return 0;
                }
        }
        return -ESRCH;
}
