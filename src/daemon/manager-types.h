/* SPDX-License-Identifier: MIT */
#pragma once

/* The core's shared types: the Manager, an Injection of its table, how
 * injections end, and what the front ends register (ManagerListener,
 * OwnerTracker). Only types and constants, so that every file of the core
 * can include it without reaching the functions of the files above it;
 * the front ends include manager.h, which includes this. */

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "caller.h"
#include "engine.h"
#include "inject-error.h"
#include "polkit.h"

/* The unit tests build the core with their own state directory. */
#ifndef MANAGER_STATE_DIR
#define MANAGER_STATE_DIR "/run/injectd/injections"
#endif
#define MANAGER_MAX_ACTIVE_DEFAULT 256
/* Processes of a process scope's tree tagged per turn of the event loop
 * (request-pipeline.c): a step is this many visits, each a BPF link, an
 * iterator and a read, so that whatever else waits is served after one
 * step at most. See docs/security.md for what a step took, measured. */
#define MANAGER_ARM_STEP_PROCESSES 32
/* A busy loop still steps each walk this often (request-pipeline.c): 5,000
 * processes are 157 steps, under 2 s of nudges when nothing is ever idle. */
#define MANAGER_ARM_NUDGE_USEC (10 * 1000)
/* Of MANAGER_MAX_ACTIVE_DEFAULT, kept for privileged callers: users
 * together cannot take the last ones. */
#define MANAGER_RESERVED_ACTIVE_DEFAULT 16
#define MANAGER_RATE_PER_MINUTE_DEFAULT 120
/* Fault events passed on per injection per second (the rest are counted
 * as suppressed), and read from the ring buffer per event loop turn. */
#define MANAGER_EVENT_RATE_DEFAULT 100
#define MANAGER_EVENTS_PER_TURN 256
/* D-Bus Subscribe()s of one unprivileged user, and of everyone. */
#define MANAGER_SUBSCRIPTIONS_PER_USER_DEFAULT 16
#define MANAGER_SUBSCRIPTIONS_MAX 256
/* Observe sessions (observe-session.h): each loads a program with
 * preallocated maps charged to the daemon's memory cgroup, so their number
 * is what bounds that memory (docs/security.md, "Observe's share"). Of
 * the total, the last MANAGER_OBSERVE_RESERVED are for privileged callers,
 * as with --reserved-active. */
#define MANAGER_MAX_OBSERVE_DEFAULT 16
#define MANAGER_MAX_OBSERVE_PER_USER_DEFAULT 4
#define MANAGER_MAX_OBSERVE_LIMIT 1024
#define MANAGER_OBSERVE_RESERVED 2

typedef struct Policy Policy;
typedef struct Manager Manager;
typedef struct Injection Injection;
typedef struct PendingRequest PendingRequest;
typedef struct ManageCheck ManageCheck;
typedef struct ObserveSession ObserveSession;
typedef struct KmsgRate KmsgRate;

typedef enum RemoveReason {
        REMOVE_CANCELLED,
        REMOVE_EXPIRED,
        REMOVE_EXHAUSTED,
        REMOVE_OWNER_GONE,
        REMOVE_DAEMON_ERROR,
        _REMOVE_REASON_MAX,
} RemoveReason;

struct Injection {
        Manager *manager;
        uint64_t id;
        char id_str[17];

        /* Who asked, as data; how to reach them is their front end's business. */
        uint32_t owner_uid;
        /* Armed by a privileged caller. An unprivileged caller with the same
         * uid (root in a container) does not own it: it neither sees nor
         * cancels host root's injections. */
        bool owner_privileged;
        pid_t owner_pid;
        uint64_t owner_start;
        Transport transport;
        bool detach;
        char *rule;
        char *scope_desc;
        char *polkit_how;

        InjectionInfo info;             /* last snapshot from the engine */
        uint64_t created_usec;          /* CLOCK_REALTIME, for display */
        uint64_t expires_usec;

        /* Fault events: the rate limit's token bucket, and how many it
         * dropped (events_suppressed in the JSON and on the bus). */
        uint64_t events_tokens_usec;    /* CLOCK_MONOTONIC at which the bucket was full */
        uint64_t events_suppressed;

        /* Kernel log records of its faults (fault-kmsg.c): 0 none, 1 the
         * record, 2 with the stack. Their rate limit is its owner's, shared
         * by all of the uid's injections (Manager.kmsg_rates). */
        unsigned kernel_log;
        uint64_t kmsg_faults;           /* fault events seen */

        sd_event_source *timer;         /* CLOCK_BOOTTIME deadline */
        sd_event_source *owner_watch;   /* pidfd of the requester, when no front end follows it */
};

/* What happens to injections, published to the front ends the way the
 * client's TransportOps hides its transports: the core does not know who
 * listens. Every listener hears of every injection and decides itself who
 * may see what. A NULL member is skipped. */
typedef struct ManagerListener {
        void (*added)(Manager *m, Injection *inj, void *userdata);
        /* inj still holds its final counters; it is freed after the call. */
        void (*removed)(Manager *m, Injection *inj, RemoveReason reason, void *userdata);
        /* One injected fault; comm is the task's name made printable ASCII. */
        void (*fault)(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm, void *userdata);
        void *userdata;
} ManagerListener;

/* An injection ends with its requester unless it asked to detach. The front
 * end a request came through knows how to follow its requester (a bus
 * name, a connection); the core asks it, by the request's transport. */
typedef struct OwnerTracker {
        /* Asked after polkit, before arming a request that did not detach:
         * has its requester left meanwhile? owner is the handle the front
         * end passed to manager_inject(). NULL: it cannot tell. */
        bool (*gone)(Manager *m, const Caller *c, void *owner, void *userdata);
        /* inj was armed for c (owner as above) or, after a restart, adopted
         * (c as recorded, owner NULL). Keep what the front end needs about
         * its requester and, unless inj->detach, follow it and call
         * manager_owner_gone() when it leaves. Returns 1 if it follows the
         * requester, 0 if it cannot (the core then watches the process),
         * -ESRCH if the requester has left already. */
        int (*track)(Manager *m, Injection *inj, const Caller *c, void *owner, void *userdata);
        void *userdata;
} OwnerTracker;

typedef struct ManagerOptions {
        PolkitMode polkit_mode;
        bool keep_on_exit;
        const char *const *policy_dirs; /* NULL: the defaults */
        unsigned max_active;            /* all users together */
        unsigned reserved_active;       /* of max_active, for privileged callers only */
        unsigned rate_per_minute;       /* Inject calls per user */
        const char *pin_root;           /* NULL: ENGINE_PIN_ROOT */
        uint64_t site_linger_usec;      /* keep an emptied site attached this long; 0: detach at once */
        uint64_t site_cache_usec;       /* keep a site's program this long after its last injection; 0: off */
        unsigned site_cache_max;        /* ... and at most this many; 0: off */
        uint32_t max_per_function;      /* injections per function and backend (engine_set_max_per_function()) */
        unsigned event_rate;            /* fault events per injection per second; 0: all */
        unsigned max_observe;           /* Observe sessions of everyone together; 0: the default */
        unsigned max_observe_per_user;  /* ... and of one unprivileged uid */

        /* Read by the front ends, which enforce them. */
        unsigned connections_max;       /* Varlink, everyone together; 0: the default */
        unsigned connections_per_user;  /* Varlink, one unprivileged uid; 0: the default */
        unsigned connections_reserved;  /* Varlink, of connections_max, for privileged peers */
        uint64_t idle_usec;             /* Varlink: close idle connections; 0: never */
        unsigned subscriptions_per_user; /* D-Bus Subscribe()s of one unprivileged uid */
} ManagerOptions;

struct Manager {
        sd_event *event;
        Engine *engine;
        Policy *policy;
        PolkitContext *polkit;
        ManagerOptions options;

        Injection **injections;
        size_t n_injections;
        PendingRequest *pending;        /* requests waiting for polkit, or arming (a process scope's walk) */
        sd_event_source *arm_stepper;   /* walks the arms under way, a step per turn of the loop */
        sd_event_source *arm_nudge;     /* ... and a step every MANAGER_ARM_NUDGE_USEC when the loop is busy */
        ManageCheck *manage_checks;     /* Cancel and ReloadPolicy calls waiting for polkit (manage.c) */

        struct ring_buffer *events;
        sd_event_source *events_source;
        unsigned events_this_turn;      /* read in this turn of the loop, see fault-events.c */

        const ManagerListener **listeners;
        size_t n_listeners;
        const OwnerTracker *trackers[_TRANSPORT_MAX];

        struct RateEntry *rates;
        size_t n_rates;
        KmsgRate *kmsg_rates;           /* kernel-log records' rate, per uid (fault-kmsg.c) */
        size_t n_kmsg_rates;
        ObserveSession *observe_sessions;       /* every front end's, for the shares (authorize.c) */
        sd_event_source *sighup, *sigterm, *sigint;
        sd_event_source *exit_source;   /* refuses the requests still waiting, before the bus closes */
        sd_event_source *site_cache_timer;      /* the next cached site's expiry (site-cache-timer.c) */
};

/* The answers to the front ends' calls (manager.h): cb runs exactly once. */
typedef void (*manager_inject_cb)(Manager *m, Injection *inj, const InjectError *err, void *userdata);
typedef void (*manager_done_cb)(Manager *m, const InjectError *err, void *userdata);
