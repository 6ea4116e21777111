/* SPDX-License-Identifier: MIT */
#pragma once

/* What every file of the Varlink front end uses (varlink-util.c). */

#include "inject-error.h"
#include "varlink.h"

/* Replies with err as org.injectd.Injector.NAME (message: string);
 * InvalidArgument when err names none. */
int varlink_api_reply_error(VarlinkConn *c, const InjectError *err);
