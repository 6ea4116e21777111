/* SPDX-License-Identifier: MIT */
/* Varlink Watch streams: one reply with "continues" per injected fault and
 * per added or removed injection the watcher may see (its own user's; root:
 * all), optionally only for the ids it named. A stream ends with its
 * connection. */

#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "json-build.h"
#include "json-util.h"
#include "log.h"
#include "parse-util.h"
#include "varlink-watch.h"

struct VarlinkWatcher {
        VarlinkWatcher *next;
        VarlinkConn *conn;
        Caller caller;
        bool all;               /* may see every injection (root) */
        uint64_t ids[64];
        size_t n_ids;
};

int varlink_watch_add(VarlinkApi *v, VarlinkConn *c, const Caller *caller, json_object *ids) {
        VarlinkWatcher *w;
        size_t n = ids ? json_object_array_length(ids) : 0;
        int r;

        /* Asking for ids and naming none valid must not widen to "all". */
        if (ids && (n == 0 || n > ELEMENTSOF(w->ids)))
                return -EINVAL;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (parse_injection_id(json_object_get_string(json_object_array_get_idx(ids, i)), &w->ids[w->n_ids++]) < 0) {
                        free(w);
                        return -EINVAL;
                }
        r = caller_copy(caller, &w->caller);
        if (r < 0) {
                free(w);
                return r;
        }
        w->conn = varlink_conn_ref(c);
        w->all = caller->privileged;      /* a privileged caller sees every injection's events */
        w->next = v->watchers;
        v->watchers = w;
        return 0;
}

void varlink_watch_remove(VarlinkApi *v, VarlinkConn *c) {
        for (VarlinkWatcher **pp = &v->watchers; *pp;) {
                VarlinkWatcher *w = *pp;

                if (!c || w->conn == c) {
                        *pp = w->next;
                        varlink_conn_unref(w->conn);
                        caller_done(&w->caller);
                        free(w);
                } else
                        pp = &w->next;
        }
}

void varlink_watch_send(VarlinkApi *v, Injection *inj, json_object *event) {
        _cleanup_(json_object_putp) json_object *p = NULL;
        int r;

        if (!v->watchers || !event)
                return;
        r = json_build_object(&p, JSON_PAIR_REF("event", event), JSON_BUILD_END);
        if (r < 0) {
                log_error_errno(r, "Failed to build a watch notification of injection %s, watchers miss it: %m",
                                inj->id_str);
                return;
        }
        for (VarlinkWatcher *w = v->watchers; w; w = w->next) {
                bool want = w->n_ids == 0;

                if (!w->all && !injection_owned_by(inj, &w->caller))
                        continue;
                for (size_t i = 0; i < w->n_ids; i++)
                        if (w->ids[i] == inj->id)
                                want = true;
                if (want)
                        (void) varlink_notify(w->conn, p);
        }
}
