/* SPDX-License-Identifier: MIT */
#pragma once

/* explore's discovery run: CMD runs once, with nothing failed, while
 * injectd counts the calls its process tree makes to the functions named
 * (Observe, docs/varlink-api.md, docs/dbus-api.md). */

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "transport.h"

typedef struct ObserveOutcome {
        json_object *observing;         /* the first reply: pid, attached, skipped */
        json_object *result;            /* the last: functions, ended */
        int status;                     /* CMD's wait status */
        bool hung;                      /* still running at the timeout: killed */
        char *error_name;               /* the daemon refused: its short error name ... */
        char *error_message;            /* ... and sentence */
} ObserveOutcome;

void observe_outcome_done(ObserveOutcome *o);

/* Runs cmd (its output to our stderr, its process group its own) under
 * observation of functions[0..n) for at most timeout µs, through t (busy
 * until this returns). Returns 0 with *ret filled
 * (a refusal too: then error_name is set and CMD never ran), or a
 * negative errno. Whatever CMD left running is killed before it returns.
 * prepare(userdata), when not NULL, runs in the child before it is held
 * (held_child_spawn_prepared()). */
int observe_command(Transport *t, char **cmd, const char *const *functions, size_t n, uint64_t timeout,
                    int (*prepare)(void *userdata), void *userdata, ObserveOutcome *ret);
