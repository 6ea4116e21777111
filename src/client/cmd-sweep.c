/* SPDX-License-Identifier: MIT */
/* injectctl sweep: systematic error-path exploration. Run N fails only
 * the (N+1)-th matching call of CMD's process tree; the sweep goes on
 * until a run no longer reaches that call, and reports what each run did
 * to CMD and to the kernel. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "event-watcher.h"
#include "held-child.h"
#include "injectctl.h"
#include "json-build.h"
#include "json-util.h"
#include "kmsg.h"
#include "pidfd-util.h"
#include "spec-request.h"
#include "time-util.h"

#define SWEEP_MAX_DEFAULT 1000
#define SWEEP_TIMEOUT_DEFAULT (30 * USEC_PER_SEC)
#define SWEEP_FALLBACK_POLL_USEC (10 * 1000)          /* only without pidfds: wait_child() */
#define SWEEP_EVENT_WAIT_USEC (2 * USEC_PER_SEC)   /* for a fault or removal event to arrive */
#define SWEEP_OUTPUT_TAIL 2048                      /* bytes of CMD's output kept per run */
#define SWEEP_STACK_SHOWN 3                         /* callers in the table */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig) {
        got_signal = sig;
}

typedef struct Output {
        int fd;                 /* read end; -1 when closed */
        char tail[SWEEP_OUTPUT_TAIL];
        size_t len;
} Output;

static void output_read(Output *o) {
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
                /* Keep the last SWEEP_OUTPUT_TAIL bytes. */
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
static json_object *output_json(const Output *o) {
        char s[SWEEP_OUTPUT_TAIL + 1];

        for (size_t i = 0; i < o->len; i++) {
                unsigned char ch = (unsigned char) o->tail[i];

                s[i] = (ch == '\n' || ch == '\t' || (ch >= 0x20 && ch < 0x7f)) ? (char) ch : '?';
        }
        s[o->len] = 0;
        return json_object_new_string(s);
}

typedef struct Run {
        uint64_t n;
        bool fired;
        uint64_t calls_matched;
        uint64_t faults_injected;       /* 1 when fired: times=1 */
        uint64_t calls_guarded;         /* calls a guard kept from failing: no run is spent on them */
        int exit_status;        /* -1: killed by a signal, or hung */
        int signal;
        bool hung;
        bool exec_failed;
        uint64_t duration_usec;
        json_object *stack;     /* array of "symbol+0xoff", innermost first */
        json_object *kernel;    /* array of {kind, message} */
        json_object *output;
} Run;

static bool run_has_problem(const Run *r) {
        return r->hung || r->signal || json_object_array_length(r->kernel) > 0;
}

static void on_kernel_trouble(const char *kind, const char *message, size_t len, void *userdata) {
        json_object *a = userdata, *o = NULL;

        /* Out of memory, the report misses this message: say so. */
        if (json_build_object(&o,
                              JSON_PAIR_STRING("kind", kind),
                              JSON_PAIR_STRING_LEN("message", message, len),
                              JSON_BUILD_END) < 0 ||
            json_append(a, o) < 0)
                (void) report_error(NULL, -ENOMEM, "Cannot record a kernel log message");
}

static const char *signal_name(int sig, char *buf, size_t n) {
        const char *abbrev = sigabbrev_np(sig);

        if (abbrev)
                snprintf(buf, n, "SIG%s", abbrev);
        else
                snprintf(buf, n, "%d", sig);
        return buf;
}

/* A new object, or NULL when out of memory. */
static json_object *run_json(const Run *r) {
        json_object *o = NULL;
        char sig[32];

        /* A run that parts of could not be recorded (out of memory) is
         * not reported as if they were empty. */
        if (!r->stack || !r->kernel || !r->output)
                return NULL;
        if (json_build_object(&o,
                              JSON_PAIR_U64("n", r->n),
                              JSON_PAIR_BOOL("fired", r->fired),
                              JSON_PAIR_U64("calls_matched", r->calls_matched),
                              JSON_PAIR_U64("faults_injected", r->faults_injected),
                              JSON_PAIR_U64("calls_guarded", r->calls_guarded),
                              JSON_PAIR_IF(r->exit_status >= 0, JSON_PAIR_I64("exit_status", r->exit_status)),
                              JSON_PAIR_IF(r->exit_status < 0, JSON_PAIR_NULL("exit_status")),
                              JSON_PAIR_STRING("signal", r->signal ? signal_name(r->signal, sig, sizeof(sig)) : NULL),
                              JSON_PAIR_BOOL("hung", r->hung),
                              JSON_PAIR_U64("duration_usec", r->duration_usec),
                              JSON_PAIR_REF("stack", r->stack),
                              JSON_PAIR_REF("kernel_log", r->kernel),
                              JSON_PAIR_BOOL("problem", run_has_problem(r)),
                              JSON_PAIR_REF("output", r->output),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

/* "__do_sys_eventfd2 < __x64_sys_eventfd2 < do_syscall_64": who called the
 * failed function, without offsets. */
static void format_callers(json_object *stack, char *buf, size_t n) {
        size_t len = json_object_array_length(stack), used = 0;

        buf[0] = 0;
        for (size_t i = 1; i < len && i <= SWEEP_STACK_SHOWN && used < n; i++) {
                const char *frame = json_object_get_string(json_object_array_get_idx(stack, i));
                size_t name_len = strcspn(frame, "+ ");
                int k = snprintf(buf + used, n - used, "%s%.*s", i > 1 ? " < " : "", (int) name_len, frame);

                if (k < 0)
                        break;
                used += (size_t) k;
        }
        if (!buf[0])
                snprintf(buf, n, "-");
}

static void print_header(void) {
        printf("%6s  %-5s  %-9s  %-10s  %s\n", "N", "FIRED", "RESULT", "KERNEL", "INJECTED FROM");
}

static void print_row(const Run *r) {
        char result[32], kernel[32], callers[256], sig[32];
        size_t n_kernel = json_object_array_length(r->kernel);

        if (r->hung)
                snprintf(result, sizeof(result), "hung");
        else if (r->signal)
                snprintf(result, sizeof(result), "%s", signal_name(r->signal, sig, sizeof(sig)));
        else
                snprintf(result, sizeof(result), "exit %d", r->exit_status);
        if (n_kernel == 0)
                snprintf(kernel, sizeof(kernel), "-");
        else
                snprintf(kernel, sizeof(kernel), "%s%s",
                         json_object_get_string(json_object_object_get(json_object_array_get_idx(r->kernel, 0), "kind")),
                         n_kernel > 1 ? "+" : "");
        format_callers(r->stack, callers, sizeof(callers));
        printf("%6" PRIu64 "  %-5s  %-9s  %-10s  %s\n", r->n, r->fired ? "yes" : "no", result, kernel, callers);
        fflush(stdout);
}

static void progress(bool on, uint64_t n) {
        if (!on)
                return;
        if (n == UINT64_MAX)
                fputs("\r\033[K", stderr);
        else
                fprintf(stderr, "\r\033[Ksweep: run %" PRIu64 ", failing matching call %" PRIu64 "...", n + 1, n + 1);
        fflush(stderr);
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
        return event_watcher_wait_removed(w, id, SWEEP_EVENT_WAIT_USEC);
}

static json_object *fault_stack(EventWatcher *w, const char *id) {
        _cleanup_json_ json_object *ev = event_watcher_wait_first_fault(w, id, SWEEP_EVENT_WAIT_USEC);
        json_object *stack;

        /* No event in time, or a daemon that sends no stacks: none. */
        if (ev && json_get_array(ev, "stack", &stack) >= 0)
                return json_object_get(stack);
        return json_object_new_array();
}

/* Waits for CMD's exit, reading its output, until deadline
 * (CLOCK_MONOTONIC) or SIGINT/SIGTERM. Every wake-up is an event: the
 * pidfd turns readable when CMD exits, the pipe when it writes, ppoll()'s
 * timeout is the deadline itself, and the signals are blocked but in
 * ppoll(), so one that comes between the check of got_signal and the
 * wait still ends the wait. Without pidfd_open() (kernels before 5.3)
 * nothing tells of the exit of a CMD that closed its output, so the wait
 * is cut into SWEEP_FALLBACK_POLL_USEC slices there only. Returns 1 when
 * CMD exited (*status), 0 when the deadline passed, -EINTR on a signal,
 * another -errno on failure. */
static int wait_child(pid_t pid, Output *out, uint64_t deadline, int *status) {
        _cleanup_close_ int pidfd = pidfd_open_pid(pid);
        sigset_t block, old_mask;
        int r;

        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        (void) sigprocmask(SIG_BLOCK, &block, &old_mask);
        for (;;) {
                struct pollfd fds[2] = {
                        { .fd = pidfd, .events = POLLIN },
                        { .fd = out->fd, .events = POLLIN },
                };
                pid_t p = waitpid(pid, status, WNOHANG);
                uint64_t now, left;
                struct timespec ts;

                if (p == pid) {
                        r = 1;
                        break;
                }
                if (p < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                output_read(out);
                if (got_signal) {
                        r = -EINTR;
                        break;
                }
                now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline) {
                        r = 0;
                        break;
                }
                left = deadline - now;
                if (pidfd < 0 && left > SWEEP_FALLBACK_POLL_USEC)
                        left = SWEEP_FALLBACK_POLL_USEC;
                ts = (struct timespec) { .tv_sec = (time_t) (left / USEC_PER_SEC),
                                         .tv_nsec = (long) (left % USEC_PER_SEC) * 1000L };
                (void) ppoll(fds, 2, &ts, &old_mask);
        }
        (void) sigprocmask(SIG_SETMASK, &old_mask, NULL);
        return r;
}

/* One run with call n+1 failing. Returns 0 and fills *run, or an exit
 * code (> 0) after printing why the sweep cannot go on. */
static int sweep_one(Transport *t, EventWatcher **watcher, int kmsg_fd, const FailSpec *spec, char **cmd,
                     uint64_t n, uint64_t timeout, Run *run) {
        _cleanup_free_ char *id = NULL;
        _cleanup_json_ json_object *req = NULL, *doc = NULL;
        EventWatcher *w;
        HeldChild child = HELD_CHILD_NULL;
        Output out = { .fd = -1 };
        FailSpec s = *spec;
        uint64_t start, deadline;
        int pipefd[2], status = 0, exec_errno = 0, r, ret = 0;

        *run = (Run) { .n = n, .exit_status = -1, .kernel = json_object_new_array() };
        if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0)
                return report_error(NULL, -errno, "Cannot make a pipe");
        r = held_child_spawn(cmd, true, pipefd[1], &child);
        (void) close(pipefd[1]);
        out.fd = pipefd[0];
        if (r < 0) {
                (void) safe_close(out.fd);
                return report_error(NULL, r, "Cannot start the command");
        }

        s.has_after = true;
        s.after = n;
        s.times = 1;
        req = fail_spec_request(t, &s, child.pid, 0);
        if (!req) {
                ret = report_error(NULL, -ENOMEM, "Out of memory");
                goto kill;
        }
        r = transport_inject(t, req, &id, NULL, NULL);
        if (r < 0) {
                fprintf(stderr, "injectctl: --fail '%s': ", spec->function);
                ret = report_inject_error(t, r, spec->function);
                goto kill;
        }

        /* The events' side channel, once: connecting before the first
         * Inject would start injectd by its socket rather than by the
         * transport the user chose; no fault comes before the release. */
        if (n == 0) {
                r = event_watcher_start(arg_varlink_path, NULL, watcher);
                if (r < 0)
                        fprintf(stderr, "injectctl: Cannot follow injectd's events on its Varlink socket (%s): "
                                "the report will have no kernel stacks.\n", strerror(-r));
        }
        w = *watcher;

        start = now_usec(CLOCK_MONOTONIC);
        r = held_child_release(&child, &exec_errno);
        if (r < 0 || exec_errno) {
                fprintf(stderr, "injectctl: Cannot execute '%s': %s\n", cmd[0], strerror(r < 0 ? -r : exec_errno));
                run->exec_failed = true;
                ret = 127;
                goto kill;
        }
        deadline = start + timeout;
        r = wait_child(child.pid, &out, deadline, &status);
        if (r == -EINTR)
                goto kill;
        if (r < 0) {
                ret = report_error(NULL, r, "Cannot wait for the command");
                goto kill;
        }
        run->hung = r == 0;
        run->duration_usec = now_usec(CLOCK_MONOTONIC) - start;
        if (!run->hung) {
                if (WIFSIGNALED(status))
                        run->signal = WTERMSIG(status);
                else
                        run->exit_status = exit_code_from_status(status);
        }
        /* Whatever CMD left running (or all of it, when it hung) goes now. */
        (void) kill(-child.pid, SIGKILL);
        if (run->hung)
                held_child_kill(&child, true);
        held_child_done(&child);
        output_read(&out);

        doc = final_document(t, w, id);
        if (doc) {
                (void) json_get_u64(doc, "calls_matched", 0, UINT64_MAX, &run->calls_matched);
                (void) json_get_u64(doc, "faults_injected", 0, UINT64_MAX, &run->faults_injected);
                (void) json_get_u64(doc, "calls_guarded", 0, UINT64_MAX, &run->calls_guarded);
                run->fired = run->faults_injected > 0;
        }
        run->stack = run->fired ? fault_stack(w, id) : json_object_new_array();
        event_watcher_forget(w, id);
        if (kmsg_fd >= 0)
                (void) kmsg_drain(kmsg_fd, on_kernel_trouble, run->kernel);
        run->output = output_json(&out);
        (void) safe_close(out.fd);
        if (!doc) {
                fprintf(stderr, "injectctl: Cannot read the counters of injection %s\n", id);
                return EXIT_REFUSED;
        }
        return 0;

kill:
        held_child_kill(&child, true);
        if (id)
                (void) transport_cancel(t, id);
        (void) safe_close(out.fd);
        return ret;
}

static void run_clear(Run *r) {
        json_object_put(r->stack);
        json_object_put(r->kernel);
        json_object_put(r->output);
        *r = (Run) {};
}

enum {
        ARG_FAIL = ARG_COMMAND_BASE,
        ARG_MAX,
        ARG_TIMEOUT,
        ARG_REPORT,
};

int cmd_sweep(int argc, char **argv) {
        static const struct option options[] = {
                { "fail",    required_argument, NULL, ARG_FAIL },
                { "max",     required_argument, NULL, ARG_MAX },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "report",  required_argument, NULL, ARG_REPORT },
                GLOBAL_OPTIONS
        };
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_(event_watcher_freep) EventWatcher *w = NULL;
        _cleanup_(fail_spec_freep) FailSpec *spec = NULL;
        _cleanup_json_ json_object *report = NULL, *runs = NULL, *problems = NULL;
        _cleanup_close_ int kmsg_fd = -1;
        const char *report_path = NULL, *stopped = "max", *spec_text = NULL;
        uint64_t max = SWEEP_MAX_DEFAULT, timeout = SWEEP_TIMEOUT_DEFAULT, n, n_fired = 0;
        struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
        bool tty = isatty(STDERR_FILENO) && !arg_json;
        int c, r, ret;

        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0)
                switch (c) {
                case ARG_FAIL: {
                        _cleanup_free_ char *msg = NULL;

                        if (spec)
                                return usage_error("sweep takes one --fail SPEC");
                        r = fail_spec_parse(optarg, &spec, &msg);
                        if (r == -EINVAL)
                                return usage_error("%s", msg);
                        if (r < 0)
                                return report_error(NULL, r, "Cannot parse --fail");
                        if (spec->has_after || spec->every || spec->times || spec->probability > 0)
                                return usage_error("sweep --fail '%s': after=, every=, times= and probability= "
                                                   "are the sweep's to set; give FUNCTION[:ERROR][,caller=FUNC]...",
                                                   optarg);
                        spec_text = optarg;
                        break;
                }
                case ARG_MAX:
                        ret = parse_count_arg("--max", optarg, 1, &max);
                        if (ret != 0)
                                return ret;
                        break;
                case ARG_TIMEOUT:
                        ret = parse_duration_arg("--timeout", optarg, &timeout);
                        if (ret != 0)
                                return ret;
                        break;
                case ARG_REPORT:
                        if (!*optarg)
                                return usage_error("--report needs a file name");
                        report_path = optarg;
                        break;
                default:
                        ret = handle_global_option(c, optarg, argv);
                        if (ret >= 0)
                                return ret;
                }
        if (!spec)
                return usage_error("sweep needs a --fail SPEC");
        if (optind < 1 || strcmp(argv[optind - 1], "--") != 0)
                return usage_error("sweep needs '--' before the command");
        if (optind >= argc)
                return usage_error("sweep needs a command after '--'");
        tty = isatty(STDERR_FILENO) && !arg_json;

        r = connect_daemon(&t);
        if (r < 0)
                return -r;
        r = kmsg_open(&kmsg_fd);
        if (r < 0)
                fprintf(stderr, "injectctl: Cannot read the kernel log (/dev/kmsg: %s): kernel warnings, BUGs "
                        "and hung tasks will not be detected. Run as root, or set kernel.dmesg_restrict=0.\n",
                        strerror(-r));

        runs = json_object_new_array();
        problems = json_object_new_array();
        if (!runs || !problems)
                return report_error(NULL, -ENOMEM, "Out of memory");

        (void) sigaction(SIGINT, &sa, &old_int);
        (void) sigaction(SIGTERM, &sa, &old_term);
        if (!arg_json)
                print_header();
        ret = 0;
        for (n = 0; n < max; n++) {
                Run run;

                progress(tty, n);
                r = sweep_one(t, &w, kmsg_fd, spec, argv + optind, n, timeout, &run);
                progress(tty, UINT64_MAX);
                if (got_signal) {
                        run_clear(&run);
                        stopped = "interrupted";
                        break;
                }
                if (r != 0) {
                        run_clear(&run);
                        ret = r;
                        stopped = "error";
                        break;
                }
                if (!arg_json)
                        print_row(&run);
                r = json_append(runs, run_json(&run));
                if (r >= 0 && run_has_problem(&run))
                        r = json_append(problems, json_object_new_uint64(n));
                if (r < 0) {
                        run_clear(&run);
                        ret = report_error(NULL, r, "Cannot record the run");
                        stopped = "error";
                        break;
                }
                if (run.fired)
                        n_fired++;
                /* Call n+1 was not reached: no later call will be either. */
                if (!run.fired) {
                        stopped = run.calls_matched <= n ? "not-reached" : "not-fired";
                        run_clear(&run);
                        break;
                }
                run_clear(&run);
        }
        (void) sigaction(SIGINT, &old_int, NULL);
        (void) sigaction(SIGTERM, &old_term, NULL);

        r = json_build_object(&report,
                              JSON_PAIR_OBJECT("command", json_new_strv((const char *const *) argv + optind,
                                                                        (size_t) (argc - optind))),
                              JSON_PAIR_STRING("spec", spec_text),
                              JSON_PAIR_STRING("function", spec->function),
                              JSON_PAIR_U64("max", max),
                              JSON_PAIR_U64("timeout_usec", timeout),
                              JSON_PAIR_BOOL("kernel_log_checked", kmsg_fd >= 0),
                              JSON_PAIR_BOOL("stacks", w != NULL),
                              JSON_PAIR_STRING("stopped", stopped),
                              JSON_PAIR_REF("runs", runs),
                              JSON_PAIR_REF("problems", problems),
                              JSON_BUILD_END);
        if (r < 0)
                return report_error(NULL, r, "Cannot build the report");

        if (report_path && json_object_to_file_ext(report_path, report,
                                                   JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) < 0) {
                fprintf(stderr, "injectctl: Cannot write the report to '%s': %s\n", report_path, strerror(errno));
                if (ret == 0)
                        ret = EXIT_REFUSED;
        }
        if (arg_json)
                print_json(report, false);
        else {
                fprintf(stderr, "sweep: %zu run%s, the fault fired in %" PRIu64 "; ", json_object_array_length(runs),
                        json_object_array_length(runs) == 1 ? "" : "s", n_fired);
                if (strcmp(stopped, "not-reached") == 0)
                        fprintf(stderr, "the last run did not reach the call it was to fail.\n");
                else if (strcmp(stopped, "not-fired") == 0)
                        fprintf(stderr, "the last run reached the call but the fault did not fire.\n");
                else if (strcmp(stopped, "max") == 0)
                        fprintf(stderr, "stopped at --max=%" PRIu64 ".\n", max);
                else
                        fprintf(stderr, "%s.\n", strcmp(stopped, "interrupted") == 0 ? "interrupted" : "stopped by an error");
                if (json_object_array_length(problems) > 0) {
                        fprintf(stderr, "sweep: trouble in run%s", json_object_array_length(problems) == 1 ? "" : "s");
                        for (size_t i = 0; i < json_object_array_length(problems); i++)
                                fprintf(stderr, " %s", json_object_get_string(json_object_array_get_idx(problems, i)));
                        fprintf(stderr, " (see above%s).\n", report_path ? " and the report" : "");
                }
        }

        if (ret != 0)
                return ret;
        if (got_signal)
                return 130;
        return json_object_array_length(problems) > 0 ? EXIT_REFUSED : 0;
}
