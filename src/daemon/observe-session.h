/* SPDX-License-Identifier: MIT */
#pragma once

/* Observe sessions: the daemon's side of the engine's observe mode
 * (src/engine/engine-observe.h), for `injectctl explore`'s discovery run.
 * A caller observes a process tree of their own (root: any), on the
 * functions policy lets them fail (root: any), until the tree's root
 * exits, the session's time is up, or the caller goes; then the counts
 * are its result. Each counts toward its user's share and the daemon's
 * (authorize_observe()), and only calls made with the caller's own
 * credentials are counted, as only those could be failed. The front ends decide how the caller waits (Varlink: a
 * call with "more", whose last reply is the result, varlink-observe.c;
 * D-Bus: a session object whose Ended signal is, bus-observe.c). */

#include <stddef.h>

#include <json-c/json.h>

#include "caller.h"
#include "inject-error.h"
#include "manager.h"

#define OBSERVE_DURATION_DEFAULT_USEC (UINT64_C(10) * 60 * 1000000)
#define OBSERVE_DURATION_MAX_USEC (UINT64_C(24) * 3600 * 1000000)
#define OBSERVE_FUNCTIONS_MAX 4096

typedef struct ObserveSession ObserveSession;

/* result: {"functions": [{function, calls, stacks: [{first_call, last_call, calls, sample_stride, samples, frames}],
 * stack_errors}], "ended": "exited"|"timeout"|"stopped"}, borrowed; NULL with err
 * set when the counts could not be read. The session is freed after. */
typedef void (*observe_done_cb)(ObserveSession *s, json_object *result, const InjectError *err, void *userdata);

/* started: polkit answered (org.injectd.observe). With started set, the
 * first reply's document {"pid", "attached", "skipped": [{function,
 * reason}]}, borrowed, and done is called once, later; with err set, the
 * session was refused (polkit, or the start failed) and is freed after. */
typedef void (*observe_started_cb)(ObserveSession *s, json_object *started, const InjectError *err, void *userdata);

/* params: {functions: [string], pid?: int, pidfd?: int (index into fds),
 * duration_usec?: int}. The process defaults to the caller. Checks the
 * request and the shares at once (an error: refused, nothing to free);
 * then *ret is a session waiting for polkit, and started is called once,
 * later, from the event loop. Freeing it before then cancels the check. */
int observe_session_start(Manager *m, const Caller *c, json_object *params, const int *fds, size_t n_fds,
                          bool interactive, observe_started_cb started, observe_done_cb done, void *userdata,
                          ObserveSession **ret, InjectError *err);
/* Ends it now, as if its time were up but with "ended": "stopped": done
 * is called (before this returns) and the session freed. Nothing, while
 * polkit decides. */
void observe_session_stop(ObserveSession *s);
/* Sessions running: of uid's unprivileged callers, or of everyone (any_uid). */
unsigned observe_session_count(Manager *m, uid_t uid, bool any_uid);
/* Ends it without calling done (its caller left). */
ObserveSession *observe_session_free(ObserveSession *s);
