/* SPDX-License-Identifier: MIT */
#pragma once

/* One run of CMD with one injection armed for its process tree, before
 * its first instruction: spawned held (held-child.h), the injection armed
 * on its pid, released, waited for within a timeout, its output's tail
 * kept, then the injection's final counters and the failed call's kernel
 * stack. What sweep and explore both do for each of their runs. */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "event-watcher.h"
#include "held-child.h"
#include "spec.h"
#include "transport.h"

#define FAULT_RUN_OUTPUT_TAIL 2048                      /* bytes of CMD's output kept per run */

/* SIGINT or SIGTERM caught while fault_run_catch_signals() is in force:
 * a run under way stops, its processes killed and injection cancelled. */
extern volatile sig_atomic_t fault_run_got_signal;
void fault_run_catch_signals(struct sigaction *old_int, struct sigaction *old_term);
void fault_run_restore_signals(const struct sigaction *old_int, const struct sigaction *old_term);

typedef struct Output {
        int fd;                 /* read end; -1 when closed */
        char tail[FAULT_RUN_OUTPUT_TAIL];
        size_t len;
} Output;

/* Reads what is available of o->fd into its tail, closing it at EOF. */
void output_read(Output *o);
/* The tail, made printable ASCII (so a report stays valid UTF-8 JSON);
 * NULL when out of memory. */
json_object *output_json(const Output *o);

/* "SIGSEGV", or the number for a signal without a name. */
const char *signal_name(int sig, char *buf, size_t n);

typedef struct FaultRunner {
        Transport *t;
        uint64_t timeout;               /* a run that lasts longer is hung and killed */
        EventWatcher *watcher;          /* fault events, for the failed call's stack; started at the first run */
        bool watcher_tried;
        bool exec_failure_is_result;    /* CMD failing to exec is a run's result (its exit status 127),
                                         * not the end of the runs */
        bool refusal_is_result;         /* injectd refusing the function (fault_run_refusal_is_functions())
                                         * is a run's result (FaultRun.refusal), not the end of the runs */
} FaultRunner;

/* Stops its watcher. */
void fault_runner_done(FaultRunner *fr);

typedef struct FaultRun {
        uint64_t n;             /* the call failed: after=n, times=1 */
        bool fired;
        uint64_t calls_matched;
        uint64_t faults_injected;       /* 1 when fired: times=1 */
        uint64_t calls_guarded;         /* calls a guard kept from failing: no run is spent on them */
        int exit_status;        /* -1: killed by a signal, or hung */
        int signal;
        bool hung;
        bool exec_failed;
        uint64_t duration_usec;
        uint64_t start_usec, end_usec;  /* CLOCK_MONOTONIC: released, and ended (or killed) */
        pid_t pid;              /* its root */
        pid_t last_pid;         /* the kernel's last pid allocated when it ended (/proc/loadavg; 0: unknown):
                                 * its tree's pids were allocated from pid to it (explore-attribution.h) */
        json_object *stack;     /* array of "symbol+0xoff", innermost first */
        json_object *kernel;    /* array of {kind, message}: the caller's to fill */
        json_object *output;
        json_object *refusal;   /* {function, error, message}: injectd would not fail the function, nothing ran */
} FaultRun;

/* Runs cmd with the (n+1)-th call matching spec failed (after=n,
 * times=1). Returns 0 and fills *run, or an exit code (> 0) after printing
 * why the runs cannot go on; after SIGINT/SIGTERM (fault_run_got_signal)
 * it returns 0 with a partial run. */
int fault_run_one(FaultRunner *fr, const FailSpec *spec, char **cmd, uint64_t n, FaultRun *run);
void fault_run_clear(FaultRun *r);

/* The same in steps, for runs side by side (explore --jobs). */
#define FAULT_RUN_JOBS_MAX 64
typedef enum FaultRunState {
        FAULT_RUN_IDLE,         /* not started, refused, or finished */
        FAULT_RUN_RUNNING,
        FAULT_RUN_EXITED,       /* its root exited: fault_run_finish() */
        FAULT_RUN_HUNG,         /* its deadline passed: fault_run_finish() kills it */
} FaultRunState;

typedef struct FaultRunJob {
        HeldChild child;
        Output out;
        int pidfd;
        char *id;               /* the injection's */
        FaultRun *run;
        uint64_t deadline;
        int status;
        FaultRunState state;
} FaultRunJob;

/* Spawns cmd (prepare(userdata), when not NULL, called in the child before
 * it is held: held_child_spawn_prepared()), arms the injection on its pid
 * and releases it: j->state is FAULT_RUN_RUNNING. Or 0 with j->state
 * FAULT_RUN_IDLE and run->refusal set (injectd refused the function), or
 * an exit code (> 0) after saying why. */
int fault_run_start(FaultRunner *fr, const FailSpec *spec, char **cmd, uint64_t n, int (*prepare)(void *userdata),
                    void *userdata, FaultRunJob *j, FaultRun *run);
/* The index of a job (of n <= FAULT_RUN_JOBS_MAX running ones) that exited
 * or passed its deadline; -EINTR after SIGINT/SIGTERM; another -errno. */
int fault_run_wait_any(FaultRunJob *const *jobs, size_t n);
/* Fills its run: how it ended, kills its process group, reads the
 * injection's counters and the failed call's stack. 0 or an exit code. */
int fault_run_finish(FaultRunner *fr, FaultRunJob *j);
/* Kills it and cancels its injection; its run is not filled in. */
void fault_run_job_abort(FaultRunner *fr, FaultRunJob *j);

/* Whether a refusal of an injection by injectd (its error's short name,
 * such as "NotInjectable") is about the function alone: explore skips that
 * function and goes on. Others (policy, polkit, limits, a kernel that
 * cannot inject) would refuse every run: they end the runs. */
bool fault_run_refusal_is_functions(const char *error_name);

/* How the command ended: "hung", "SIGSEGV" or "exit N". */
const char *fault_run_result(const FaultRun *r, char *buf, size_t n);
