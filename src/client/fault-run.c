/* SPDX-License-Identifier: MIT */
/* One run of CMD with one injection armed for its process tree
 * (fault-run.h): what sweep and explore both do per run. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fault-run.h"
#include "held-child.h"
#include "cli.h"
#include "json-build.h"
#include "json-util.h"
#include "pidfd-util.h"
#include "spec-request.h"
#include "time-util.h"

#define FAULT_RUN_FALLBACK_POLL_USEC (10 * 1000)          /* only without pidfds: wait_child() */
#define FAULT_RUN_EVENT_WAIT_USEC (2 * USEC_PER_SEC)      /* for a fault or removal event to arrive */

static char *mfree_str(char *p) {
        free(p);
        return NULL;
}

volatile sig_atomic_t fault_run_got_signal;

static void on_signal(int sig) {
        fault_run_got_signal = sig;
}

void fault_run_catch_signals(struct sigaction *old_int, struct sigaction *old_term) {
        struct sigaction sa = { .sa_handler = on_signal };

        (void) sigaction(SIGINT, &sa, old_int);
        (void) sigaction(SIGTERM, &sa, old_term);
}

void fault_run_restore_signals(const struct sigaction *old_int, const struct sigaction *old_term) {
        (void) sigaction(SIGINT, old_int, NULL);
        (void) sigaction(SIGTERM, old_term, NULL);
}

void output_read(Output *o) {
        char buf[4096];
        ssize_t n = -1;  /* read() not called yet: the fd was closed already */

        while (o->fd >= 0 && (n = read(o->fd, buf, sizeof(buf))) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                o->fd = safe_close(o->fd);
                        return;
                }
                /* Keep the last FAULT_RUN_OUTPUT_TAIL bytes. */
                if ((size_t) n >= sizeof(o->tail)) {
                        memcpy(o->tail, buf + n - sizeof(o->tail), sizeof(o->tail));
                        o->len = sizeof(o->tail);
                        continue;
                }
                if (o->len + (size_t) n > sizeof(o->tail)) {
                        size_t drop = o->len + (size_t) n - sizeof(o->tail);

                        memmove(o->tail, o->tail + drop, o->len - drop);
                        o->len -= drop;
                }
                memcpy(o->tail + o->len, buf, (size_t) n);
                o->len += (size_t) n;
        }
        if (o->fd >= 0 && n == 0)
                o->fd = safe_close(o->fd);
}

/* CMD prints what it likes: keep it printable ASCII so that the report
 * is valid UTF-8 JSON whatever it wrote. */
json_object *output_json(const Output *o) {
        char s[FAULT_RUN_OUTPUT_TAIL + 1];

        for (size_t i = 0; i < o->len; i++) {
                unsigned char ch = (unsigned char) o->tail[i];

                s[i] = (ch == '\n' || ch == '\t' || (ch >= 0x20 && ch < 0x7f)) ? (char) ch : '?';
        }
        s[o->len] = 0;
        return json_object_new_string(s);
}

const char *signal_name(int sig, char *buf, size_t n) {
        const char *abbrev = sigabbrev_np(sig);

        if (abbrev)
                snprintf(buf, n, "SIG%s", abbrev);
        else
                snprintf(buf, n, "%d", sig);
        return buf;
}

const char *fault_run_result(const FaultRun *r, char *buf, size_t n) {
        if (r->hung)
                snprintf(buf, n, "hung");
        else if (r->signal)
                signal_name(r->signal, buf, n);
        else
                snprintf(buf, n, "exit %d", r->exit_status);
        return buf;
}

/* The injection's last document: from ListInjections while it is armed
 * (then cancelled), else from the watcher's removal event. */
static json_object *final_document(Transport *t, EventWatcher *w, const char *id) {
        _cleanup_json_ json_object *list = NULL;
        json_object *doc;
        int r;

        if (transport_list_injections(t, false, &list) >= 0 && (doc = injection_find(list, id))) {
                json_object_get(doc);
                r = transport_cancel(t, id);
                if (r >= 0 || (r == -EREMOTEIO && strcmp(transport_error_name(t), "NoSuchInjection") == 0))
                        return doc;
                json_object_put(doc);
                return NULL;
        }
        /* Exhausted (times=1): the removal event has the final counters;
         * it may trail the list, which came over another connection. */
        return event_watcher_wait_removed(w, id, FAULT_RUN_EVENT_WAIT_USEC);
}

static json_object *fault_stack(EventWatcher *w, const char *id) {
        _cleanup_json_ json_object *ev = event_watcher_wait_first_fault(w, id, FAULT_RUN_EVENT_WAIT_USEC);
        json_object *stack;

        /* No event in time, or a daemon that sends no stacks: none. */
        if (ev && json_get_array(ev, "stack", &stack) >= 0)
                return json_object_get(stack);
        return json_object_new_array();
}

/* Waits until one of the jobs' commands exits or passes its deadline
 * (CLOCK_MONOTONIC), reading their output, or SIGINT/SIGTERM. Every
 * wake-up is an event: a pidfd turns readable when its command exits, a
 * pipe when it writes, ppoll()'s timeout is the nearest deadline itself,
 * and the signals are blocked but in ppoll(), so one that comes between
 * the check of fault_run_got_signal and the wait still ends the wait.
 * Without pidfd_open() (kernels before 5.3) nothing tells of the exit of
 * a CMD that closed its output, so the wait is cut into
 * FAULT_RUN_FALLBACK_POLL_USEC slices there only. Returns the index of a
 * job that ended (its state FAULT_RUN_EXITED or FAULT_RUN_HUNG), -EINTR
 * on a signal, another -errno on failure. */
int fault_run_wait_any(FaultRunJob *const *jobs, size_t n) {
        struct pollfd fds[2 * FAULT_RUN_JOBS_MAX];
        sigset_t block, old_mask;
        int r;

        if (n == 0 || n > FAULT_RUN_JOBS_MAX)
                return -EINVAL;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        (void) sigprocmask(SIG_BLOCK, &block, &old_mask);
        for (;;) {
                uint64_t now, left = UINT64_MAX;
                bool fallback = false;
                struct timespec ts;

                r = -EAGAIN;
                now = now_usec(CLOCK_MONOTONIC);
                for (size_t i = 0; i < n && r == -EAGAIN; i++) {
                        FaultRunJob *j = jobs[i];
                        pid_t p = waitpid(j->child.pid, &j->status, WNOHANG);

                        if (p == j->child.pid) {
                                j->state = FAULT_RUN_EXITED;
                                r = (int) i;
                        } else if (p < 0 && errno != EINTR)
                                r = -errno;
                        else {
                                output_read(&j->out);
                                if (now >= j->deadline) {
                                        j->state = FAULT_RUN_HUNG;
                                        r = (int) i;
                                } else if (j->deadline - now < left)
                                        left = j->deadline - now;
                        }
                        fds[2 * i] = (struct pollfd) { .fd = j->pidfd, .events = POLLIN };
                        fds[2 * i + 1] = (struct pollfd) { .fd = j->out.fd, .events = POLLIN };
                        fallback = fallback || j->pidfd < 0;
                }
                if (r != -EAGAIN)
                        break;
                if (fault_run_got_signal) {
                        r = -EINTR;
                        break;
                }
                if (fallback && left > FAULT_RUN_FALLBACK_POLL_USEC)
                        left = FAULT_RUN_FALLBACK_POLL_USEC;
                ts = (struct timespec) { .tv_sec = (time_t) (left / USEC_PER_SEC),
                                         .tv_nsec = (long) (left % USEC_PER_SEC) * 1000L };
                (void) ppoll(fds, 2 * n, &ts, &old_mask);
        }
        (void) sigprocmask(SIG_SETMASK, &old_mask, NULL);
        return r;
}

/* The last pid the kernel allocated: /proc/loadavg's last field ("the
 * PID of the most recently created process", in our pid namespace; there
 * on every kernel, unlike ns_last_pid, which needs
 * CONFIG_CHECKPOINT_RESTORE). 0 when it cannot be read. */
static pid_t last_pid_now(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/loadavg", "re");
        long pid = 0;

        if (!f || fscanf(f, "%*s %*s %*s %*s %ld", &pid) != 1 || pid <= 0)
                return 0;
        return (pid_t) pid;
}

void fault_run_job_abort(FaultRunner *fr, FaultRunJob *j) {
        held_child_kill(&j->child, true);
        if (j->id)
                (void) transport_cancel(fr->t, j->id);
        j->id = mfree_str(j->id);
        j->out.fd = safe_close(j->out.fd);
        j->pidfd = safe_close(j->pidfd);
        j->state = FAULT_RUN_IDLE;
}

int fault_run_start(FaultRunner *fr, const FailSpec *spec, char **cmd, uint64_t n, int (*prepare)(void *userdata),
                    void *userdata, FaultRunJob *j, FaultRun *run) {
        Transport *t = fr->t;
        _cleanup_json_ json_object *req = NULL;
        FailSpec s = *spec;
        int pipefd[2], exec_errno = 0, r, ret = 0;

        *j = (FaultRunJob) { .child = HELD_CHILD_NULL, .out = { .fd = -1 }, .pidfd = -1, .run = run };
        *run = (FaultRun) { .n = n, .exit_status = -1, .kernel = json_object_new_array() };
        if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0)
                return report_error(NULL, -errno, "Cannot make a pipe");
        r = held_child_spawn_prepared(cmd, true, pipefd[1], prepare, userdata, &j->child);
        (void) close(pipefd[1]);
        j->out.fd = pipefd[0];
        if (r < 0) {
                j->out.fd = safe_close(j->out.fd);
                return report_error(NULL, r, "Cannot start the command");
        }

        s.has_after = true;
        s.after = n;
        s.times = 1;
        req = fail_spec_request(t, &s, j->child.pid, 0);
        if (!req) {
                ret = report_error(NULL, -ENOMEM, "Out of memory");
                goto kill;
        }
        r = transport_inject(t, req, &j->id, NULL, NULL);
        if (r == -EREMOTEIO && fr->refusal_is_result && fault_run_refusal_is_functions(transport_error_name(t))) {
                if (json_build_object(&run->refusal,
                                      JSON_PAIR_STRING("function", spec->function),
                                      JSON_PAIR_STRING("error", transport_error_name(t)),
                                      JSON_PAIR_STRING("message", transport_error_message(t)),
                                      JSON_BUILD_END) < 0)
                        ret = report_error(NULL, -ENOMEM, "Out of memory");
                goto kill;
        }
        if (r < 0) {
                fprintf(stderr, "injectctl: --fail '%s': ", spec->function);
                ret = report_inject_error(t, r, spec->function);
                goto kill;
        }

        /* The events' side channel, once: connecting before the first
         * Inject would start injectd by its socket rather than by the
         * transport the user chose; no fault comes before the release. */
        if (!fr->watcher_tried) {
                fr->watcher_tried = true;
                r = event_watcher_start(arg_varlink_path, NULL, &fr->watcher);
                if (r < 0)
                        fprintf(stderr, "injectctl: Cannot follow injectd's events on its Varlink socket (%s): "
                                "the report will have no kernel stacks.\n", strerror(-r));
        }

        j->pidfd = pidfd_open_pid(j->child.pid);
        run->start_usec = now_usec(CLOCK_MONOTONIC);
        run->pid = j->child.pid;
        r = held_child_release(&j->child, &exec_errno);
        /* The fault may be exec's own (explore fails every call it finds,
         * execve's too): then the failed exec is what the run did. */
        if (r >= 0 && exec_errno && fr->exec_failure_is_result)
                run->exec_failed = true;
        else if (r < 0 || exec_errno) {
                fprintf(stderr, "injectctl: Cannot execute '%s': %s\n", cmd[0], strerror(r < 0 ? -r : exec_errno));
                run->exec_failed = true;
                ret = 127;
                goto kill;
        }
        j->deadline = run->start_usec + fr->timeout;
        j->state = FAULT_RUN_RUNNING;
        return 0;

kill:
        fault_run_job_abort(fr, j);
        return ret;
}

int fault_run_finish(FaultRunner *fr, FaultRunJob *j) {
        _cleanup_json_ json_object *doc = NULL;
        _cleanup_free_ char *id = TAKE_PTR(j->id);
        FaultRun *run = j->run;
        EventWatcher *w = fr->watcher;

        run->hung = j->state == FAULT_RUN_HUNG;
        run->end_usec = now_usec(CLOCK_MONOTONIC);
        run->duration_usec = run->end_usec - run->start_usec;
        /* Before the kill: what the tree forked, it forked by now. */
        run->last_pid = last_pid_now();
        if (!run->hung) {
                if (WIFSIGNALED(j->status))
                        run->signal = WTERMSIG(j->status);
                else
                        run->exit_status = exit_code_from_status(j->status);
        }
        /* Whatever CMD left running (or all of it, when it hung) goes now;
         * what left its process group too goes with its cgroup (explore). */
        (void) kill(-j->child.pid, SIGKILL);
        if (run->hung)
                held_child_kill(&j->child, true);
        held_child_done(&j->child);
        output_read(&j->out);
        j->pidfd = safe_close(j->pidfd);
        j->state = FAULT_RUN_IDLE;

        doc = final_document(fr->t, w, id);
        if (doc) {
                (void) json_get_u64(doc, "calls_matched", 0, UINT64_MAX, &run->calls_matched);
                (void) json_get_u64(doc, "faults_injected", 0, UINT64_MAX, &run->faults_injected);
                (void) json_get_u64(doc, "calls_guarded", 0, UINT64_MAX, &run->calls_guarded);
                run->fired = run->faults_injected > 0;
        }
        run->stack = run->fired ? fault_stack(w, id) : json_object_new_array();
        event_watcher_forget(w, id);
        run->output = output_json(&j->out);
        j->out.fd = safe_close(j->out.fd);
        if (!doc) {
                fprintf(stderr, "injectctl: Cannot read the counters of injection %s\n", id);
                return EXIT_REFUSED;
        }
        return 0;
}

int fault_run_one(FaultRunner *fr, const FailSpec *spec, char **cmd, uint64_t n, FaultRun *run) {
        FaultRunJob j, *jobs[1] = { &j };
        int r;

        r = fault_run_start(fr, spec, cmd, n, NULL, NULL, &j, run);
        if (r != 0 || j.state != FAULT_RUN_RUNNING)
                return r;
        r = fault_run_wait_any(jobs, 1);
        if (r == -EINTR) {
                fault_run_job_abort(fr, &j);
                return 0;
        }
        if (r < 0) {
                fault_run_job_abort(fr, &j);
                return report_error(NULL, r, "Cannot wait for the command");
        }
        return fault_run_finish(fr, &j);
}

bool fault_run_refusal_is_functions(const char *error_name) {
        static const char *const functions[] = {
                "NotInjectable",        /* not on this kernel's list, or not under that name */
                "BadValue",             /* its type does not take the value */
                "BackendUnavailable",   /* no backend can serve it here */
                "KernelRefused",        /* its attach failed (fmod_ret on a file without ftrace: EBUSY) */
                "FunctionNotAllowed",   /* the policy does not let this caller fail it */
                "ErrorNotAllowed",      /* ... with that error */
        };

        for (size_t i = 0; error_name && i < sizeof(functions) / sizeof(functions[0]); i++)
                if (strcmp(error_name, functions[i]) == 0)
                        return true;
        return false;
}

void fault_run_clear(FaultRun *r) {
        json_object_put(r->stack);
        json_object_put(r->kernel);
        json_object_put(r->output);
        json_object_put(r->refusal);
        *r = (FaultRun) {};
}

void fault_runner_done(FaultRunner *fr) {
        fr->watcher = event_watcher_free(fr->watcher);
}
