/* SPDX-License-Identifier: MIT */
#pragma once

/* Cancel and ReloadPolicy (manage.c), which the front ends reach through
 * manager.h, and their calls waiting for polkit. */

#include "manager-types.h"

/* The requester behind owner has left: its calls still waiting for polkit
 * are answered with an error (the answer goes nowhere) and their checks
 * cancelled. */
void manage_checks_requester_gone(Manager *m, void *owner);
/* The daemon is stopping: every call still waiting is answered
 * (InjectionUnavailable), before the front ends close. */
void manage_checks_abort(Manager *m);
/* The manager is going away: dropped unanswered. */
void manage_checks_free(Manager *m);

/* Cancel: the owner may; anyone else needs org.injectd.manage (async).
 * owner: the front end's handle on the requester, as for manager_inject():
 * when manager_requester_gone() names it, a call still waiting for polkit
 * is answered with an error and its check cancelled. May be NULL. */
int manager_cancel(Manager *m, const Caller *c, const char *id, bool interactive, void *owner, manager_done_cb cb,
                   void *userdata);
/* ReloadPolicy: root, or org.injectd.manage. */
int manager_reload_policy_as(Manager *m, const Caller *c, bool interactive, void *owner, manager_done_cb cb,
                             void *userdata);
/* SIGHUP's and ReloadPolicy's: reads the policy again, keeping the previous
 * one if the new one does not load. */
int manager_reload_policy(Manager *m);
