/* SPDX-License-Identifier: MIT */
#pragma once

/* The Varlink front end: org.injectd.Injector on /run/injectd (or the
 * socket systemd passes). It keeps everything Varlink: the connections
 * that own injections and the Watch streams; the core hears nothing of it
 * but its ManagerListener and OwnerTracker. */

#include "manager.h"
#include "varlink.h"

typedef struct VarlinkWatcher VarlinkWatcher;
typedef struct VarlinkOwned VarlinkOwned;
typedef struct VarlinkObserve VarlinkObserve;

typedef struct VarlinkApi {
        Manager *manager;
        VarlinkServer *server;
        ManagerListener listener;
        OwnerTracker tracker;
        VarlinkWatcher *watchers;       /* Watch streams */
        VarlinkOwned *owned;            /* injections whose requester is still connected */
        VarlinkObserve *observes;       /* Observe calls under way (varlink-observe.c) */
        bool stopping;                  /* being freed: disconnections are not the requesters' doing */
        uint64_t refused_logged_usec;   /* when a refused peer was last logged (CLOCK_MONOTONIC) */
        unsigned n_refused_unlogged;    /* refused since, not logged */
} VarlinkApi;

/* Creates the server and listens. */
int varlink_api_new(Manager *m, VarlinkApi **ret);
VarlinkApi *varlink_api_free(VarlinkApi *v);
DEFINE_TRIVIAL_CLEANUP_FUNC(VarlinkApi *, varlink_api_free);

/* Watch streams (varlink-watch.c). ids: a JSON array of injection ids, or
 * NULL for all the caller may see; -EINVAL if it names none or a bad one. */
int varlink_watch_add(VarlinkApi *v, VarlinkConn *c, const Caller *caller, json_object *ids);
void varlink_watch_remove(VarlinkApi *v, VarlinkConn *c);
/* Sends event to the streams that follow inj. */
void varlink_watch_send(VarlinkApi *v, Injection *inj, json_object *event);

/* Observe calls (varlink-observe.c): starts one for c and sends its first
 * reply; a refusal is left in err for the caller to send. */
int varlink_observe_start(VarlinkApi *v, VarlinkConn *c, const Caller *caller, json_object *params,
                          const int *fds, size_t n_fds, InjectError *err);
/* Replies with err as org.injectd.Injector.NAME (message: string);
 * InvalidArgument when err names none. */
int varlink_api_reply_error(VarlinkConn *c, const InjectError *err);
/* Ends c's (all with c NULL), without a last reply. */
void varlink_observe_remove(VarlinkApi *v, VarlinkConn *c);
