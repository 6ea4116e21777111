/* SPDX-License-Identifier: MIT */
/* explore's discovery run (observe-call.h). CMD is held before exec until
 * injectd's first reply says the observation is on, so that its first
 * call is counted; injectd sends the last reply when CMD exits. */

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
#include "varlink.h"

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

static int on_reply(VarlinkClient *c, json_object *params, const char *error, bool continues, void *userdata) {
        Call *call = userdata;
        json_object *o;
        const char *msg = NULL;

        if (error) {
                const char *dot = strrchr(error, '.');

                (void) json_get_string(params, "message", &msg);
                call->out->error_name = strdup(dot ? dot + 1 : error);
                call->out->error_message = strdup(msg ?: "");
                return 0;
        }
        if (json_get_object(params, "observing", &o) >= 0 && !call->out->observing) {
                call->out->observing = json_object_get(o);
                /* On: let CMD exec. A failed exec ends the root, which
                 * ends the observation. */
                if (held_child_release(call->child, &call->exec_errno) < 0 && !call->exec_errno)
                        call->exec_errno = EIO;
                return 0;
        }
        if (!continues)
                call->out->result = json_object_get(params);
        return 0;
}

int observe_command(const char *varlink_path, char **cmd, const char *const *functions, size_t n, uint64_t timeout,
                    ObserveOutcome *ret) {
        _cleanup_(varlink_client_freep) VarlinkClient *client = NULL;
        _cleanup_json_ json_object *params = NULL;
        _cleanup_close_ int pidfd = -1;
        HeldChild child = HELD_CHILD_NULL;
        ObserveOutcome out = {};
        Call call = { .child = &child, .out = &out };
        int idx, r;

        r = varlink_client_connect(varlink_path ?: INJECTD_VARLINK_ADDRESS, &client);
        if (r < 0)
                return r;
        /* The last reply comes when CMD exits, or at the daemon's timeout. */
        varlink_client_set_timeout(client, VARLINK_TIMEOUT_INFINITY);
        r = held_child_spawn(cmd, true, STDERR_FILENO, &child);
        if (r < 0)
                return r;
        pidfd = pidfd_open_pid(child.pid);
        if (pidfd < 0) {
                r = pidfd;
                goto fail;
        }
        idx = varlink_client_push_fd(client, pidfd);
        if (idx < 0) {
                r = idx;
                goto fail;
        }
        r = json_build_object(&params,
                              JSON_PAIR_OBJECT("functions", json_new_strv(functions, n)),
                              JSON_PAIR_I64("pidfd", idx),
                              JSON_PAIR_U64("duration_usec", timeout),
                              JSON_BUILD_END);
        if (r < 0)
                goto fail;
        r = varlink_client_call_more(client, "org.injectd.Injector.Observe", params, on_reply, &call);
        if (r < 0)
                goto fail;
        if (!out.observing) {
                /* Refused: CMD never ran. */
                held_child_kill(&child, true);
                *ret = out;
                return 0;
        }
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
