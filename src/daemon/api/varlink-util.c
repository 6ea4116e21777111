/* SPDX-License-Identifier: MIT */
/* What every file of the Varlink front end uses: errors in Varlink terms. */

#include <stdio.h>

#include "cleanup.h"
#include "json-build.h"
#include "json-util.h"
#include "varlink-api.h"
#include "varlink-util.h"

int varlink_api_reply_error(VarlinkConn *c, const InjectError *err) {
        /* varlink_error() borrows the parameters. */
        _cleanup_json_ json_object *p = NULL;
        char name[128];
        int r;

        r = json_build_object(&p, JSON_PAIR_STRING("message", err->message), JSON_BUILD_END);
        if (r < 0)
                return r;
        snprintf(name, sizeof(name), VARLINK_ERROR_PREFIX "%s", err->name ?: INJECT_ERROR_INVALID_ARGUMENT);
        return varlink_error(c, name, p);
}
