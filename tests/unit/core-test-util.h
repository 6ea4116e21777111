/* SPDX-License-Identifier: MIT */
#pragma once

/* What the unit tests of the daemon's core share: users and their
 * processes, policy directories, a manager on the fakes, driving its event
 * loop until something happens, and the audit trail captured from stderr. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "caller.h"
#include "manager.h"

/* Picks the test's users and starts a process of the first one. As root,
 * the processes run as an unused uid; otherwise as the test's own uid. */
void core_test_init(void);
uid_t test_uid(void);           /* the requester, not root */
uid_t other_uid(void);          /* another user, not root */
pid_t own_pid(void);            /* a process of test_uid() alive for the whole test */
pid_t spawn_owned(void);        /* a new process of test_uid() */
void kill_owned(pid_t pid);     /* kills and reaps it */
void spawned(pid_t pid);        /* a child of the test's own, killed at exit if still alive */
void kill_children(void);       /* kills and reaps all of them (at exit too) */

/* A Varlink caller (no bus name) with this uid and pid. */
Caller caller_of(uid_t uid, pid_t pid);

/* A policy.d with one file holding text, trusted by the core under test. */
char *policy_dir_new(const char *text);
void policy_dir_free(char *dir);

/* manager_new(), the fake front end (fake-frontend.h) and manager_start()
 * without a bus, with the policy in dir. */
Manager *manager_setup(const char *dir, ManagerOptions o);

typedef struct InjectResult {
        unsigned n_calls;       /* how often the callback ran: must be at most 1 */
        uint64_t id;            /* armed */
        InjectError err;        /* refused */
} InjectResult;

/* manager_inject() with the request written as JSON (the cgroup fd none);
 * owner is the fake front end's handle on the requester (fake-frontend.h). */
void inject_json(Manager *m, const Caller *c, const char *json, void *owner, InjectResult *res,
                 PendingRequest **ret);
/* inject_json(), then the loop until the answer; asserts it was armed. */
uint64_t inject_ok(Manager *m, const Caller *c, const char *json);
/* The same, asserting the refusal's error name. */
void inject_refused(Manager *m, const Caller *c, const char *json, const char *error_name);

typedef struct DoneResult {
        unsigned n_calls;
        InjectError err;
} DoneResult;
void on_done(Manager *m, const InjectError *err, void *userdata);

/* Runs the event loop until *flag is non-zero. Fails, naming what, if that
 * takes more than a minute: far more than any event the tests wait for
 * needs (milliseconds), so only a hang trips it. */
void run_until(Manager *m, const unsigned *flag, const char *what);
/* Runs the loop until nothing is ready to run. */
void run_idle(Manager *m);

/* The audit trail: everything the core logs between the two calls. */
void audit_capture_start(void);
char *audit_capture_end(void);  /* free() it */
/* Asserts that the text has a line with all these "key=value" words. */
void assert_audit_line(const char *text, const char *const *words);
