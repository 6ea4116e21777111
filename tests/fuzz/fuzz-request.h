/* SPDX-License-Identifier: MIT */
#pragma once

/* request_from_json() and what it promises, for the fuzzers that reach it
 * (fuzz-request from Varlink's JSON, fuzz-bus-spec from D-Bus's a{sv}). */

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include "fuzz.h"
#include "request.h"

/* Returns whether the request was accepted. */
static inline bool fuzz_check_request(json_object *o) {
        InjectRequest req = INJECT_REQUEST_NULL;
        InjectError err = {};
        int r;

        r = request_from_json(o, &req, &err);
        if (r < 0) {
                FUZZ_ASSERT(r != -ENOMEM);
                /* Every refusal is explained to the requester. */
                FUZZ_ASSERT(err.name && err.message[0]);
                FUZZ_ASSERT(memchr(err.message, 0, sizeof(err.message)));
                /* ... and leaves nothing behind: req is untouched. */
                FUZZ_ASSERT(!req.function && req.cgroup_fd == -1);
                return false;
        }

        FUZZ_ASSERT(req.function && req.function[0] && strlen(req.function) < INJECT_FUNC_LEN);
        if (req.is_errno)
                FUZZ_ASSERT(req.retval >= -4095 && req.retval <= -1);
        else
                FUZZ_ASSERT(req.retval >= -4095 && req.retval <= 4095);
        FUZZ_ASSERT(req.duration_usec <= ENGINE_MAX_DURATION_USEC);
        FUZZ_ASSERT(req.scope >= 0 && req.scope < _REQUEST_SCOPE_MAX);
        FUZZ_ASSERT(request_scope_to_string(req.scope));
        FUZZ_ASSERT(!req.cgroup_path || req.scope == REQUEST_SCOPE_CGROUP);
        FUZZ_ASSERT(req.pid == 0 || req.scope == REQUEST_SCOPE_PROCESS);
        FUZZ_ASSERT(req.pid >= 0);
        FUZZ_ASSERT(!req.comm || (req.comm[0] && strlen(req.comm) < INJECT_COMM_LEN));
        FUZZ_ASSERT(req.n_callers <= INJECT_MAX_CALLERS);
        for (size_t i = 0; i < req.n_callers; i++)
                FUZZ_ASSERT(req.callers[i] && req.callers[i][0] && strlen(req.callers[i]) < INJECT_FUNC_LEN);
        FUZZ_ASSERT(req.every == 0 || req.every >= 1);
        FUZZ_ASSERT(req.probability_ppm <= INJECT_PPM);
        FUZZ_ASSERT(req.backend == BACKEND_AUTO || backend_to_string(req.backend));

        request_done(&req);
        FUZZ_ASSERT(req.cgroup_fd == -1 && !req.function);
        return true;
}
