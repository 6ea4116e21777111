/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "caller.h"
#include "cleanup.h"
#include "log.h"
#include "process-info.h"
#include "scope.h"

static const char *const transport_table[_TRANSPORT_MAX] = {
        [TRANSPORT_BUS] = "dbus",
        [TRANSPORT_VARLINK] = "varlink",
};

const char *transport_to_string(Transport t) {
        return t >= 0 && t < _TRANSPORT_MAX ? transport_table[t] : NULL;
}

void caller_done(Caller *c) {
        free(c->user_name);
        free(c->groups);
        free(c->bus_name);
        free(c->cgroup);
        memset(c, 0, sizeof(*c));
}

/* Group membership for policy comes from the user database, not from the
 * process: a process cannot add itself to a group it is not in. */
static int fill_user(Caller *c) {
        struct passwd *pw = getpwuid(c->uid);
        int n = 32;

        if (!pw)
                return 0;
        c->user_name = strdup(pw->pw_name);
        if (!c->user_name)
                return -ENOMEM;
        for (;;) {
                gid_t *g = realloc(c->groups, n * sizeof(gid_t));
                int m = n;

                if (!g)
                        return -ENOMEM;
                c->groups = g;
                if (getgrouplist(pw->pw_name, pw->pw_gid, c->groups, &m) >= 0) {
                        c->n_groups = m;
                        return 0;
                }
                if (m <= n || m > 65536)
                        return -E2BIG;
                n = m;
        }
}

/* Privileged means able to do it oneself: CAP_SYS_ADMIN, or CAP_BPF and
 * CAP_PERFMON, effective in the initial user namespace, from the initial
 * pid namespace. uid 0 alone is not that: root in a container without a
 * user namespace has neither. What is read here belongs to the process
 * behind pid now, so it counts only if that is still the process the
 * kernel vouched for: the same euid as the socket's credentials, the same
 * start time before and after. Anything unclear makes an ordinary caller. */
static int caller_privileged(uid_t uid, pid_t pid, uint64_t start_ticks, bool *ret) {
        bool userns = false, pidns = false;
        uint64_t start;
        ProcStatus st;
        pid_t tgid;
        int r;

        *ret = false;
        if (pid <= 0)
                return 0;
        r = proc_status_read(pid, &st);
        if (r < 0)
                return r;
        if (st.uids[1] != uid)
                return 0;
        if (!proc_privilege_from(st.cap_eff, true, true))
                return 0;               /* no need to look further */
        r = proc_same_namespaces(pid, &st, &userns, &pidns);
        if (r < 0)
                return r;
        r = scope_process(pid, &tgid, &start);
        if (r < 0)
                return r;
        if (start != start_ticks)
                return 0;
        *ret = proc_privilege_from(st.cap_eff, userns, pidns);
        return 0;
}

/* The cgroup of pid, if pid is still the process that started at
 * start_ticks: read between two looks at the start time, so that a
 * recycled pid cannot lend the caller another process's cgroup. The path
 * is the host's: /proc/PID/cgroup is written relative to the reader's
 * cgroup namespace, and the daemon's is the initial one. */
static int caller_cgroup(pid_t pid, uint64_t start_ticks, char **ret) {
        _cleanup_free_ char *path = NULL;
        uint64_t start;
        pid_t tgid;
        char *s;
        int r;

        r = scope_cgroup_path_of_pid(pid, &path);
        if (r < 0)
                return r;
        r = scope_process(pid, &tgid, &start);
        if (r < 0)
                return r;
        if (start != start_ticks)
                return -ESRCH;
        if (strncmp(path, "/sys/fs/cgroup", strlen("/sys/fs/cgroup")) != 0)
                return -EIO;
        s = strdup(path[strlen("/sys/fs/cgroup")] ? path + strlen("/sys/fs/cgroup") : "/");
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int caller_from_ucred(uid_t uid, gid_t gid, pid_t pid, Caller *ret) {
        Caller c = { .transport = TRANSPORT_VARLINK, .uid = uid, .gid = gid, .pid = pid };
        pid_t tgid;
        int r;

        if (pid > 0) {
                r = scope_process(pid, &tgid, &c.start_ticks);
                if (r < 0)
                        return r;
                r = caller_privileged(uid, pid, c.start_ticks, &c.privileged);
                if (r < 0)
                        log_debug_errno(r, "Cannot tell whether pid %d is privileged, taking it as not: %m",
                                        (int) pid);
                r = caller_cgroup(pid, c.start_ticks, &c.cgroup);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_debug_errno(r, "Cannot read the cgroup of pid %d, no cgroup rule grants it: %m",
                                        (int) pid);
        }
        r = fill_user(&c);
        if (r < 0) {
                caller_done(&c);
                return r;
        }
        *ret = c;
        return 0;
}

int caller_from_bus(sd_bus_message *m, Caller *ret) {
        sd_bus_creds *creds = NULL;
        const char *name = NULL;
        uid_t uid;
        gid_t gid = (gid_t) -1;
        pid_t pid;
        Caller c;
        int r;

        /* Only what the bus driver vouches for: no augmenting from /proc. */
        r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID | SD_BUS_CREDS_UNIQUE_NAME, &creds);
        if (r < 0)
                return r;
        if (sd_bus_creds_get_augmented_mask(creds) & (SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID)) {
                sd_bus_creds_unref(creds);
                return -EPERM;
        }
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r >= 0)
                r = sd_bus_creds_get_pid(creds, &pid);
        if (r >= 0)
                r = sd_bus_creds_get_unique_name(creds, &name);
        if (r >= 0)
                (void) sd_bus_creds_get_egid(creds, &gid);
        if (r < 0) {
                sd_bus_creds_unref(creds);
                return r;
        }
        r = caller_from_ucred(uid, gid, pid, &c);
        if (r >= 0) {
                c.transport = TRANSPORT_BUS;
                c.bus_name = strdup(name);
                if (!c.bus_name) {
                        caller_done(&c);
                        r = -ENOMEM;
                }
        }
        sd_bus_creds_unref(creds);
        if (r < 0)
                return r;
        *ret = c;
        return 0;
}

int caller_copy(const Caller *from, Caller *to) {
        Caller c = *from;

        c.user_name = from->user_name ? strdup(from->user_name) : NULL;
        c.bus_name = from->bus_name ? strdup(from->bus_name) : NULL;
        c.cgroup = from->cgroup ? strdup(from->cgroup) : NULL;
        c.groups = from->n_groups ? malloc(from->n_groups * sizeof(gid_t)) : NULL;
        if ((from->user_name && !c.user_name) || (from->bus_name && !c.bus_name) || (from->cgroup && !c.cgroup) ||
            (from->n_groups && !c.groups)) {
                caller_done(&c);
                return -ENOMEM;
        }
        if (c.groups)
                memcpy(c.groups, from->groups, from->n_groups * sizeof(gid_t));
        *to = c;
        return 0;
}

bool caller_in_group(const Caller *c, gid_t gid) {
        if (c->gid == gid)
                return true;
        for (int i = 0; i < c->n_groups; i++)
                if (c->groups[i] == gid)
                        return true;
        return false;
}
