/* SPDX-License-Identifier: MIT */
#pragma once

/* Watch streams (varlink-watch.c). */

#include <json-c/json.h>

#include "manager.h"
#include "varlink-api.h"

/* ids: a JSON array of injection ids, or NULL for all the caller may see;
 * -EINVAL if it names none or a bad one. */
int varlink_watch_add(VarlinkApi *v, VarlinkConn *c, const Caller *caller, json_object *ids);
void varlink_watch_remove(VarlinkApi *v, VarlinkConn *c);
/* Sends event to the streams that follow inj. */
void varlink_watch_send(VarlinkApi *v, Injection *inj, json_object *event);
