/* SPDX-License-Identifier: MIT */
#pragma once

/* JSON views, the same for both front ends (injection-json.c). */

#include <stdbool.h>

#include <json-c/json.h>

#include "caller.h"
#include "manager-types.h"

/* The two constructors return a new object, or NULL when out of memory, as
 * json-c's own do: hand them to json_add()/json_append()/JSON_PAIR_OBJECT(),
 * which report that NULL as -ENOMEM. */
json_object *injection_to_json(Injection *inj);
/* A fault event as Watch streams it: who failed, with what, and the stack. */
json_object *injection_fault_to_json(Injection *inj, const struct inject_event *ev, const char *comm);
int manager_list_json(Manager *m, const Caller *c, bool all, json_object **ret, InjectError *err);
int manager_functions_json(Manager *m, const Caller *c, const char *glob, json_object **ret);
bool manager_may_see(Manager *m, const Caller *c, const Injection *inj);
/* The caller's own: same uid, and not a privileged caller's unless the
 * caller is privileged too. */
bool injection_owned_by(const Injection *inj, const Caller *c);
