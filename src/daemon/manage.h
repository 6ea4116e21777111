/* SPDX-License-Identifier: MIT */
#pragma once

/* The Cancel and ReloadPolicy calls waiting for polkit (manage.c); the
 * methods themselves are the front ends' and are declared in manager.h. */

#include "manager.h"

/* The requester behind owner has left: its calls still waiting for polkit
 * are answered with an error (the answer goes nowhere) and their checks
 * cancelled. */
void manage_checks_requester_gone(Manager *m, void *owner);
/* The daemon is stopping: every call still waiting is answered
 * (InjectionUnavailable), before the front ends close. */
void manage_checks_abort(Manager *m);
/* The manager is going away: dropped unanswered. */
void manage_checks_free(Manager *m);
