/* SPDX-License-Identifier: MIT */
/* injectctl sweep: systematic error-path exploration. Run N fails only
 * the (N+1)-th matching call of CMD's process tree; the sweep goes on
 * until a run no longer reaches that call, and reports what each run did
 * to CMD and to the kernel. */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "event-watcher.h"
#include "fault-run.h"
#include "cli.h"
#include "cmd-sweep.h"
#include "json-build.h"
#include "json-util.h"
#include "kmsg.h"
#include "time-util.h"

#define SWEEP_MAX_DEFAULT 1000
#define SWEEP_TIMEOUT_DEFAULT (30 * USEC_PER_SEC)
#define SWEEP_STACK_SHOWN 3                         /* callers in the table */

static bool run_has_problem(const FaultRun *r) {
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

/* A new object, or NULL when out of memory. */
static json_object *run_json(const FaultRun *r) {
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

static void print_row(const FaultRun *r) {
        char result[32], kernel[32], callers[256];
        size_t n_kernel = json_object_array_length(r->kernel);

        fault_run_result(r, result, sizeof(result));
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
        _cleanup_(fault_runner_done) FaultRunner runner = {};
        _cleanup_(fail_spec_freep) FailSpec *spec = NULL;
        _cleanup_json_ json_object *report = NULL, *runs = NULL, *problems = NULL;
        _cleanup_close_ int kmsg_fd = -1;
        const char *report_path = NULL, *stopped = "max", *spec_text = NULL;
        uint64_t max = SWEEP_MAX_DEFAULT, timeout = SWEEP_TIMEOUT_DEFAULT, n, n_fired = 0;
        struct sigaction old_int, old_term;
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
                        /* A sweep counts CMD's own calls; a device's I/O is
                         * anyone's, and written back when the kernel likes. */
                        if (spec->device)
                                return usage_error("sweep --fail '%s': device= is run's; a sweep fails the "
                                                   "calls of CMD's process tree", optarg);
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
        runner.t = t;
        runner.timeout = timeout;
        r = kmsg_open(&kmsg_fd);
        if (r < 0)
                fprintf(stderr, "injectctl: Cannot read the kernel log (/dev/kmsg: %s): kernel warnings, BUGs "
                        "and hung tasks will not be detected. Run as root, or set kernel.dmesg_restrict=0.\n",
                        strerror(-r));

        runs = json_object_new_array();
        problems = json_object_new_array();
        if (!runs || !problems)
                return report_error(NULL, -ENOMEM, "Out of memory");

        fault_run_catch_signals(&old_int, &old_term);
        if (!arg_json)
                print_header();
        ret = 0;
        for (n = 0; n < max; n++) {
                FaultRun run;

                progress(tty, n);
                r = fault_run_one(&runner, spec, argv + optind, n, &run);
                if (r == 0 && kmsg_fd >= 0)
                        (void) kmsg_drain(kmsg_fd, on_kernel_trouble, run.kernel);
                progress(tty, UINT64_MAX);
                if (fault_run_got_signal) {
                        fault_run_clear(&run);
                        stopped = "interrupted";
                        break;
                }
                if (r != 0) {
                        fault_run_clear(&run);
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
                        fault_run_clear(&run);
                        ret = report_error(NULL, r, "Cannot record the run");
                        stopped = "error";
                        break;
                }
                if (run.fired)
                        n_fired++;
                /* Call n+1 was not reached: no later call will be either. */
                if (!run.fired) {
                        stopped = run.calls_matched <= n ? "not-reached" : "not-fired";
                        fault_run_clear(&run);
                        break;
                }
                fault_run_clear(&run);
        }
        fault_run_restore_signals(&old_int, &old_term);


        r = json_build_object(&report,
                              JSON_PAIR_OBJECT("command", json_new_strv((const char *const *) argv + optind,
                                                                        (size_t) (argc - optind))),
                              JSON_PAIR_STRING("spec", spec_text),
                              JSON_PAIR_STRING("function", spec->function),
                              JSON_PAIR_U64("max", max),
                              JSON_PAIR_U64("timeout_usec", timeout),
                              JSON_PAIR_BOOL("kernel_log_checked", kmsg_fd >= 0),
                              JSON_PAIR_BOOL("stacks", runner.watcher != NULL),
                              JSON_PAIR_STRING("stopped", stopped),
                              JSON_PAIR_REF("runs", runs),
                              JSON_PAIR_REF("problems", problems),
                              JSON_BUILD_END);
        if (r < 0)
                return report_error(NULL, r, "Cannot build the report");

        if (report_path && write_json_report(report_path, report) < 0 && ret == 0)
                ret = EXIT_REFUSED;
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
        if (fault_run_got_signal)
                return 130;
        return json_object_array_length(problems) > 0 ? EXIT_REFUSED : 0;
}
