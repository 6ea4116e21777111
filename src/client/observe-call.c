/* SPDX-License-Identifier: MIT */
/* explore's discovery run (observe-call.h). CMD is held before exec until
 * injectd's first reply says the observation is on, so that its first
 * call is counted; injectd ends the observation when CMD exits. Over
 * either transport (transport_observe()). */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "held-child.h"
#include "json-build.h"
#include "json-util.h"
#include "observe-call.h"
#include "pidfd-util.h"
#include "transport.h"

void observe_outcome_done(ObserveOutcome *o) {
        json_object_put(o->observing);
        json_object_put(o->result);
        free(o->error_name);
        free(o->error_message);
        *o = (ObserveOutcome) {};
}

typedef struct Call {
        HeldChild *child;
        ObserveOutcome *out;
        int exec_errno;
} Call;

static int on_observing(json_object *observing, void *userdata) {
        Call *call = userdata;

        call->out->observing = json_object_get(observing);
        /* On: let CMD exec. A failed exec ends the root, which ends the
         * observation. */
        if (held_child_release(call->child, &call->exec_errno) < 0 && !call->exec_errno)
                call->exec_errno = EIO;
        return 0;
}

int observe_command(Transport *t, char **cmd, const char *const *functions, size_t n, uint64_t timeout,
                    int (*prepare)(void *userdata), void *userdata, ObserveOutcome *ret) {
        _cleanup_json_ json_object *request = NULL;
        HeldChild child = HELD_CHILD_NULL;
        ObserveOutcome out = {};
        Call call = { .child = &child, .out = &out };
        int r;

        r = held_child_spawn_prepared(cmd, true, STDERR_FILENO, prepare, userdata, &child);
        if (r < 0)
                return r;
        /* The transport sends the pid as a pidfd. */
        r = json_build_object(&request,
                              JSON_PAIR_OBJECT("functions", json_new_strv(functions, n)),
                              JSON_PAIR_I64("pid", child.pid),
                              JSON_PAIR_U64("duration_usec", timeout),
                              JSON_BUILD_END);
        if (r < 0)
                goto fail;
        r = transport_observe(t, request, on_observing, &call, &out.result);
        if (r == -EREMOTEIO) {
                /* Refused (CMD never ran), or the counts could not be read. */
                out.error_name = strdup(transport_error_name(t) ?: "");
                out.error_message = strdup(transport_error_message(t) ?: "");
                if (!out.error_name || !out.error_message) {
                        r = -ENOMEM;
                        goto fail;
                }
                held_child_kill(&child, true);
                *ret = out;
                return 0;
        }
        if (r < 0)
                goto fail;
        if (call.exec_errno) {
                r = -call.exec_errno;
                goto fail;
        }
        /* The root exited (or the time is up): reap it, and the rest of
         * its group goes with it. */
        if (waitpid(child.pid, &out.status, WNOHANG) != child.pid) {
                out.hung = true;
                held_child_kill(&child, true);
        } else
                (void) kill(-child.pid, SIGKILL);
        held_child_done(&child);
        *ret = out;
        return 0;

fail:
        held_child_kill(&child, true);
        observe_outcome_done(&out);
        return r;
}
