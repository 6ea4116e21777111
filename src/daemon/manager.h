/* SPDX-License-Identifier: MIT */
#pragma once

/* The daemon's one owner of state: the injection table with its TTL timers,
 * owners and persistence under /run/injectd, and the path every request
 * takes (parse → scope → policy → limits → polkit → engine). The D-Bus and
 * Varlink front ends only translate to and from it. */

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "caller.h"
#include "engine.h"
#include "inject-error.h"
#include "polkit.h"
#include "request.h"
#include "varlink.h"

/* The unit tests build the core with their own state directory. */
#ifndef MANAGER_STATE_DIR
#define MANAGER_STATE_DIR "/run/injectd/injections"
#endif
#define MANAGER_MAX_ACTIVE_DEFAULT 256
#define MANAGER_RATE_PER_MINUTE_DEFAULT 120
#define MANAGER_FAULT_SIGNALS_PER_SEC 20

typedef struct Policy Policy;
typedef struct Manager Manager;
typedef struct Injection Injection;
typedef struct PendingRequest PendingRequest;
typedef struct BusSubscriber BusSubscriber;

typedef enum RemoveReason {
        REMOVE_CANCELLED,
        REMOVE_EXPIRED,
        REMOVE_EXHAUSTED,
        REMOVE_OWNER_GONE,
        REMOVE_DAEMON_ERROR,
        _REMOVE_REASON_MAX,
} RemoveReason;

const char *remove_reason_to_string(RemoveReason r);

struct Injection {
        Manager *manager;
        uint64_t id;
        char id_str[17];
        char object_path[96];

        uint32_t owner_uid;
        pid_t owner_pid;
        uint64_t owner_start;
        Transport transport;
        char *owner_bus_name;           /* D-Bus requester while it is connected */
        VarlinkConn *owner_conn;        /* Varlink requester while it is connected (not a ref) */
        bool detach;
        char *rule;
        char *scope_desc;
        char *polkit_how;

        InjectionInfo info;             /* last snapshot from the engine */
        uint64_t created_usec;          /* CLOCK_REALTIME, for display */
        uint64_t expires_usec;

        sd_event_source *timer;         /* CLOCK_BOOTTIME deadline */
        sd_event_source *owner_watch;   /* pidfd of the requester, after a restart */
        sd_bus_slot *name_watch;        /* NameOwnerChanged of the D-Bus requester */

        uint64_t rl_window;             /* D-Bus Fault signal rate limit */
        unsigned rl_count;
        unsigned rl_dropped;
};

typedef struct ManagerOptions {
        PolkitMode polkit_mode;
        bool keep_on_exit;
        const char *const *policy_dirs; /* NULL: the defaults */
        unsigned max_active;            /* all users together */
        unsigned rate_per_minute;       /* Inject calls per user */
        const char *pin_root;           /* NULL: ENGINE_PIN_ROOT */
        uint64_t site_cache_usec;       /* keep a site's program this long after its last injection; 0: off */
        unsigned site_cache_max;        /* ... and at most this many; 0: off */
} ManagerOptions;

struct Manager {
        sd_event *event;
        sd_bus *bus;
        VarlinkServer *varlink;
        Engine *engine;
        Policy *policy;
        PolkitContext *polkit;
        ManagerOptions options;

        Injection **injections;
        size_t n_injections;
        PendingRequest *pending;        /* requests waiting for polkit */

        struct ring_buffer *events;
        sd_event_source *events_source;

        struct Watcher *watchers;       /* Varlink Watch streams */
        BusSubscriber *bus_subscribers; /* Manager.Subscribe() callers */
        size_t n_bus_subscribers;

        struct RateEntry *rates;
        size_t n_rates;
        sd_event_source *sighup, *sigterm, *sigint;
        sd_event_source *site_cache_timer;      /* the next cached site's expiry */
};

int manager_new(const ManagerOptions *o, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

int manager_start(Manager *m);          /* bus, Varlink, adoption, events */
int manager_reload_policy(Manager *m);
void manager_stop(Manager *m);          /* disarm all unless keep_on_exit */
void manager_site_cache_schedule(Manager *m);

/* The request path. cb runs exactly once, perhaps before manager_inject()
 * returns, with inj set on success or err set on refusal. */
typedef void (*manager_inject_cb)(Manager *m, Injection *inj, const InjectError *err, void *userdata);
int manager_inject(Manager *m, const Caller *c, json_object *request, int cgroup_fd,
                   VarlinkConn *owner_conn, manager_inject_cb cb, void *userdata, PendingRequest **ret);
/* The requester went away before the answer: drop the request quietly. */
void pending_request_cancel(PendingRequest *p);

/* Cancel: the owner may; anyone else needs org.injectd.manage (async). */
typedef void (*manager_done_cb)(Manager *m, const InjectError *err, void *userdata);
int manager_cancel(Manager *m, const Caller *c, const char *id, bool interactive, manager_done_cb cb, void *userdata);
/* ReloadPolicy: root, or org.injectd.manage. */
int manager_reload_policy_as(Manager *m, const Caller *c, bool interactive, manager_done_cb cb, void *userdata);

Injection *manager_find(Manager *m, uint64_t id);
int manager_remove(Manager *m, Injection *inj, RemoveReason reason);
int manager_refresh(Manager *m, Injection *inj);

/* JSON views, the same for both front ends. */
json_object *injection_to_json(Injection *inj);
int manager_list_json(Manager *m, const Caller *c, bool all, json_object **ret, InjectError *err);
int manager_capabilities_json(Manager *m, const Caller *c, json_object **ret);
int manager_functions_json(Manager *m, const Caller *c, const char *glob, json_object **ret);
bool manager_may_see(Manager *m, const Caller *c, const Injection *inj);

/* The front ends' hooks. */
void manager_owner_disconnected(Manager *m, VarlinkConn *c);
int manager_add_watcher(Manager *m, VarlinkConn *c, const Caller *caller, json_object *ids);
void manager_remove_watcher(Manager *m, VarlinkConn *c);

/* Implemented by the front ends, called by the manager. */
void bus_injection_added(Manager *m, Injection *inj);
void bus_injection_removed(Manager *m, Injection *inj, RemoveReason reason);
void bus_injection_fault(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm);
int bus_start(Manager *m);
int varlink_api_start(Manager *m);
