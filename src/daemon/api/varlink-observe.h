/* SPDX-License-Identifier: MIT */
#pragma once

/* Observe calls (varlink-observe.c). */

#include <stddef.h>

#include <json-c/json.h>

#include "inject-error.h"
#include "manager.h"
#include "varlink-api.h"

/* Starts one for c and sends its first reply; a refusal is left in err
 * for the caller to send. */
int varlink_observe_start(VarlinkApi *v, VarlinkConn *c, const Caller *caller, json_object *params,
                          const int *fds, size_t n_fds, InjectError *err);
/* Ends c's (all with c NULL), without a last reply. */
void varlink_observe_remove(VarlinkApi *v, VarlinkConn *c);
