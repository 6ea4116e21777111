/* SPDX-License-Identifier: MIT */
#pragma once

/* The Varlink front end: org.injectd.Injector on /run/injectd (or the
 * socket systemd passes). It keeps everything Varlink: the connections
 * that own injections and the Watch streams; the core hears nothing of it
 * but its ManagerListener and OwnerTracker.
 *
 * This header holds the front end's shared types only. Its files, each
 * with its own header, call one another down this list, never up it
 * (tools/check-layers.py): varlink-util (errors in Varlink terms),
 * varlink-watch (Watch streams), varlink-observe (Observe calls) and
 * varlink-manager (the methods, the listener, varlink_api_new()). */

#include "manager.h"
#include "varlink.h"

#define VARLINK_API_INTERFACE "org.injectd.Injector"
/* InjectError names become org.injectd.Injector.<Name>. */
#define VARLINK_ERROR_PREFIX VARLINK_API_INTERFACE "."

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
