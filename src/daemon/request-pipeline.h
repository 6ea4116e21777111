/* SPDX-License-Identifier: MIT */
#pragma once

/* The path every Inject request takes (parse → scope → policy → limits →
 * polkit → engine), and the requests still under way on it. */

#include <json-c/json.h>

#include "caller.h"
#include "manager-types.h"

/* The request path. cb runs exactly once, perhaps before manager_inject()
 * returns, with inj set on success or err set on refusal. owner is the
 * front end's handle on the requester, opaque to the core: it goes back to
 * the front end's OwnerTracker and to manager_requester_gone(); may be NULL.
 * fds[0..n_fds) are the file descriptors the call brought, borrowed: the
 * request's "cgroup_fd" and "pidfd" name them by index, and what it uses
 * is duplicated before manager_inject() returns. */
int manager_inject(Manager *m, const Caller *c, json_object *request, const int *fds, size_t n_fds,
                   void *owner, manager_inject_cb cb, void *userdata, PendingRequest **ret);
/* The daemon is stopping: every request still waiting for polkit is
 * refused (InjectionUnavailable). From the event loop's exit, before the
 * bus connection closes (sd-bus closes it on the loop's exit). */
void manager_requests_abort(Manager *m);
/* The requester went away before the answer: drop the request quietly. */
void pending_request_cancel(PendingRequest *p);
/* The requester behind owner has left: its requests still waiting for polkit
 * are answered with an error (the answer goes nowhere; the front end lets go
 * of them in their callbacks), unless they detach. */
void manager_requester_gone(Manager *m, void *owner);

/* Drops every request still waiting for polkit, unanswered (the manager
 * is going away). */
void pending_requests_free(Manager *m);
