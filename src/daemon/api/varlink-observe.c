/* SPDX-License-Identifier: MIT */
/* Varlink Observe (observe-session.h): a call with "more". The first reply
 * says what is observed; the last one, when the observed tree's root exits
 * or the time is up, carries the counts. polkit is asked first
 * (org.injectd.observe): the first reply waits for it. Closing the
 * connection ends the observation, or drops the request polkit decides. */

#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "json-build.h"
#include "json-util.h"
#include "log.h"
#include "observe-session.h"
#include "varlink-observe.h"
#include "varlink-util.h"

struct VarlinkObserve {
        VarlinkObserve *next;
        VarlinkApi *api;
        VarlinkConn *conn;      /* a reference, until the session ends */
        ObserveSession *session;
};

static void forget(VarlinkApi *v, VarlinkObserve *o) {
        for (VarlinkObserve **pp = &v->observes; *pp; pp = &(*pp)->next)
                if (*pp == o) {
                        *pp = o->next;
                        break;
                }
        varlink_conn_set_keep_idle(o->conn, false);
        varlink_conn_unref(o->conn);
        free(o);
}

static void on_done(ObserveSession *s, json_object *result, const InjectError *err, void *userdata) {
        VarlinkObserve *o = userdata;
        VarlinkConn *c = o->conn;

        if (result)
                (void) varlink_reply(c, result);
        else
                (void) varlink_api_reply_error(c, err);
        /* The session frees itself after this. */
        o->session = NULL;
        forget(o->api, o);
}

static void on_started(ObserveSession *s, json_object *started, const InjectError *err, void *userdata) {
        _cleanup_json_ json_object *reply = NULL;
        VarlinkObserve *o = userdata;
        VarlinkConn *c = o->conn;
        int r;

        if (err) {
                (void) varlink_api_reply_error(c, err);
                /* The session frees itself after this. */
                o->session = NULL;
                forget(o->api, o);
                return;
        }
        r = json_build_object(&reply, JSON_PAIR_OBJECT("observing", json_object_get(started)), JSON_BUILD_END);
        if (r >= 0)
                r = varlink_notify(c, reply);
        if (r < 0)
                log_warning_errno(r, "Cannot send the first Observe reply: %m");
}

int varlink_observe_start(VarlinkApi *v, VarlinkConn *c, const Caller *caller, json_object *params,
                          const int *fds, size_t n_fds, InjectError *err) {
        VarlinkObserve *o;
        int r;

        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        o->api = v;
        /* No interactive authentication: the call has no key for it. */
        r = observe_session_start(v->manager, caller, params, fds, n_fds, false, on_started, on_done, o,
                                  &o->session, err);
        if (r < 0) {
                free(o);
                return r;
        }
        o->conn = varlink_conn_ref(c);
        o->next = v->observes;
        v->observes = o;
        /* An observation, or a request waiting for polkit, waits on its
         * connection, which is busy, not idle. The first reply comes from
         * on_started(). */
        varlink_conn_set_keep_idle(c, true);
        return 0;
}

void varlink_observe_remove(VarlinkApi *v, VarlinkConn *c) {
        VarlinkObserve *o, *next;

        for (o = v->observes; o; o = next) {
                next = o->next;
                if (c && o->conn != c)
                        continue;
                observe_session_free(o->session);
                forget(v, o);
        }
}
