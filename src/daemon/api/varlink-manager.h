/* SPDX-License-Identifier: MIT */
#pragma once

/* The Varlink front end as injectd.c starts it (varlink-manager.c): the
 * server, org.injectd.Injector's methods, and the listener of the core. */

#include "cleanup.h"
#include "manager.h"
#include "varlink-api.h"

/* Creates the server and listens. */
int varlink_api_new(Manager *m, VarlinkApi **ret);
VarlinkApi *varlink_api_free(VarlinkApi *v);
DEFINE_TRIVIAL_CLEANUP_FUNC(VarlinkApi *, varlink_api_free);
