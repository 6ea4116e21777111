/* SPDX-License-Identifier: MIT */
#pragma once

/* Who is asking, as the kernel says: the bus driver's SO_PEERCRED-backed
 * credentials for D-Bus callers, SO_PEERCRED for Varlink callers, plus the
 * process start time so a recycled pid is never mistaken for the caller.
 * Nothing here comes from data the client sent. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

typedef enum Transport {
        TRANSPORT_BUS,
        TRANSPORT_VARLINK,
        _TRANSPORT_MAX,
} Transport;

const char *transport_to_string(Transport t);

typedef struct Caller {
        Transport transport;
        uid_t uid;
        gid_t gid;
        pid_t pid;
        uint64_t start_ticks;   /* clock ticks since boot, /proc/PID/stat field 22 */
        char *user_name;        /* NULL if the uid has no passwd entry */
        gid_t *groups;          /* the user's groups from NSS (getgrouplist) */
        int n_groups;
        char *bus_name;         /* TRANSPORT_BUS: the unique name */
        /* The process's cgroup in the host's cgroup2 hierarchy, as the
         * daemon (in the initial cgroup namespace) reads /proc/PID/cgroup:
         * "/system.slice/docker-1234.scope". NULL if it could not be read
         * for the very process the kernel vouched for. For the policy's
         * "cgroups" rules and the audit trail. */
        char *cgroup;
        /* May do it without us: no policy, no uid filter, sees everything.
         * Decided once, in caller_from_ucred(); every check reads this,
         * never the uid. */
        bool privileged;
} Caller;

int caller_from_bus(sd_bus_message *m, Caller *ret);
int caller_from_ucred(uid_t uid, gid_t gid, pid_t pid, Caller *ret);
void caller_done(Caller *c);
int caller_copy(const Caller *from, Caller *to);

bool caller_in_group(const Caller *c, gid_t gid);
