/* SPDX-License-Identifier: MIT */
/* injectctl explore: run every error path a command reaches, and let the
 * kernel's own detectors judge (docs/explore.md).
 *
 *   1. discovery: CMD runs once with nothing failed while injectd counts,
 *      for its process tree only, its calls to the injectable functions
 *      the policy lets the caller fail (observe-call.h);
 *   2. a plan (explore-plan.h): runs per distinct kernel stack of each
 *      function reached (its first and last call from that stack, or
 *      --depth K spread over them), or per call (--per call); kept only
 *      through --through functions; system-call entries last or left
 *      out; every stack's first call before any's second, round-robin
 *      across functions, at most --max-runs, printed first;
 *   3. runs: each fails exactly one call (fault-run.h), then the kernel's
 *      reports logged meanwhile are read (kernel-reports.h: /dev/kmsg, and
 *      kmemleak scanned after the run), with CMD's own crash or hang
 *      and what its tree left behind (explore-leftover.h);
 *   4. findings, deduplicated by signature, each with a reproducer
 *      (explore-findings.h); --report FILE writes it all as JSON. */

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "errno-name.h"
#include "explore-findings.h"
#include "explore-html.h"
#include "explore-plan.h"
#include "explore-print.h"
#include "explore.h"
#include "explore-sandbox.h"
#include "explore-setup.h"
#include "fault-run.h"
#include "held-child.h"
#include "cli.h"
#include "cmd-explore.h"
#include "json-build.h"
#include "json-util.h"
#include "kernel-reports.h"
#include "kmsg.h"
#include "observe-call.h"
#include "time-util.h"

#define EXPLORE_MAX_RUNS_DEFAULT 100
#define EXPLORE_TIMEOUT_DEFAULT (60 * USEC_PER_SEC)
#define EXPLORE_FUNCTIONS_MAX 4096      /* the daemon's OBSERVE_FUNCTIONS_MAX */

/* The injectable functions matching the globs that policy lets us fail,
 * each once, in *ret (borrowed from *ret_list, which holds them all). */
static int choose_functions(Transport *t, char **globs, size_t n_globs, bool lsm, json_object **ret_list,
                            const char ***ret, size_t *ret_n, size_t *ret_denied) {
        _cleanup_json_ json_object *all = NULL;
        _cleanup_free_ const char **v = NULL;
        size_t n = 0, denied = 0;
        int r;

        r = transport_list_functions(t, NULL, &all);
        if (r < 0)
                return report_error(t, r, "Cannot list the injectable functions");
        v = calloc(json_object_array_length(all) + 1, sizeof(*v));
        if (!v)
                return report_error(NULL, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < json_object_array_length(all); i++) {
                json_object *f = json_object_array_get_idx(all, i);
                const char *name = NULL, *type = NULL;
                bool allowed = false, match = n_globs == 0;

                if (json_get_string(f, "name", &name) < 0 || json_object_object_get(f, "module"))
                        continue;
                /* LSM hooks only when asked: hundreds more functions,
                 * which a command reaches on every file it opens. */
                if (!lsm && json_get_string(f, "type", &type) >= 0 && strcmp(type, "LSM") == 0)
                        continue;
                for (size_t g = 0; g < n_globs && !match; g++)
                        match = fnmatch(globs[g], name, 0) == 0;
                if (!match)
                        continue;
                (void) json_get_bool(f, "allowed", &allowed);
                if (!allowed) {
                        denied++;
                        continue;
                }
                if (n < EXPLORE_FUNCTIONS_MAX)
                        v[n++] = name;
        }
        *ret_list = TAKE_PTR(all);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        *ret_denied = denied;
        return 0;
}


/* An earlier explore's report, to resume: it must be of the same
 * command. Its findings go into *findings, its runs into runs; the rest
 * (its discovery) stays in *ret. Returns 0 or an exit code. */
static int resume_load(const char *path, char **cmd, size_t n_cmd, json_object **ret, Findings *findings,
                       json_object *runs) {
        _cleanup_json_ json_object *o = json_object_from_file(path), *want = NULL;
        json_object *a = NULL, *reached = NULL;
        int r;

        if (!o) {
                fprintf(stderr, "injectctl: --resume: cannot read an explore report from '%s': %s\n", path,
                        json_util_get_last_err() ?: "unknown error");
                return EXIT_REFUSED;
        }
        want = json_new_strv((const char *const *) cmd, n_cmd);
        if (!want)
                return report_error(NULL, -ENOMEM, "Out of memory");
        if (json_get_array(o, "command", &a) < 0 || !json_object_equal(a, want) ||
            json_get_array(o, "reached", &reached) < 0 || json_get_array(o, "runs", &a) < 0) {
                fprintf(stderr, "injectctl: --resume: '%s' is not the report of an explore of this command\n", path);
                return EXIT_REFUSED;
        }
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                r = json_append(runs, json_object_get(json_object_array_get_idx(a, i)));
                if (r < 0)
                        return report_error(NULL, r, "Cannot resume");
        }
        a = NULL;
        (void) json_get_array(o, "findings", &a);
        for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                json_object *f = json_object_array_get_idx(a, i), *stack = NULL;
                const char *keys[] = { "signature", "detector", "title", "report", "function", "reproducer" };
                const char *v[6] = {};
                uint64_t call = 0, first = 0, n = 1;

                for (size_t k = 0; k < 6; k++)
                        if (json_get_string(f, keys[k], &v[k]) < 0) {
                                fprintf(stderr, "injectctl: --resume: finding %zu of '%s' has no '%s'\n", i + 1,
                                        path, keys[k]);
                                return EXIT_REFUSED;
                        }
                (void) json_get_u64(f, "call", 0, UINT64_MAX, &call);
                (void) json_get_u64(f, "first_run", 0, UINT64_MAX, &first);
                (void) json_get_u64(f, "runs", 1, UINT64_MAX, &n);
                (void) json_get_array(f, "stack", &stack);
                r = findings_add(findings, v[0], v[1], v[2], v[3], v[4], call, v[5], stack, first);
                if (r < 0)
                        return report_error(NULL, r, "Cannot resume");
                if (r > 0) {
                        const char *how = NULL, *comm = NULL;
                        int64_t pid = 0;

                        findings->v[findings->n - 1].n_runs = n;
                        (void) json_get_string(f, "attributed", &how);
                        (void) json_get_string(f, "comm", &comm);
                        (void) json_get_i64(f, "pid", 0, INT32_MAX, &pid);
                        if (finding_set_attribution(findings, findings->n - 1, how, (int) pid, comm) < 0)
                                return report_error(NULL, -ENOMEM, "Cannot resume");
                }
        }
        *ret = TAKE_PTR(o);
        return 0;
}

enum {
        ARG_FUNCTIONS = ARG_COMMAND_BASE,
        ARG_MAX_RUNS,
        ARG_TIMEOUT,
        ARG_REPORT,
        ARG_PER,
        ARG_HTML,
        ARG_RESUME,
        ARG_LSM,
        ARG_SETUP,
        ARG_CLEANUP,
        ARG_DEPTH,
        ARG_THROUGH,
        ARG_NO_SYSCALLS,
        ARG_JOBS,
};

int cmd_explore(int argc, char **argv) {
        static const struct option options[] = {
                { "functions", required_argument, NULL, ARG_FUNCTIONS },
                { "max-runs",  required_argument, NULL, ARG_MAX_RUNS },
                { "timeout",   required_argument, NULL, ARG_TIMEOUT },
                { "report",    required_argument, NULL, ARG_REPORT },
                { "per",       required_argument, NULL, ARG_PER },
                { "html",      required_argument, NULL, ARG_HTML },
                { "resume",    required_argument, NULL, ARG_RESUME },
                { "lsm",       no_argument,       NULL, ARG_LSM },
                { "setup",     required_argument, NULL, ARG_SETUP },
                { "cleanup",   required_argument, NULL, ARG_CLEANUP },
                { "depth",     required_argument, NULL, ARG_DEPTH },
                { "through",   required_argument, NULL, ARG_THROUGH },
                { "no-syscalls", no_argument,     NULL, ARG_NO_SYSCALLS },
                { "jobs",      required_argument, NULL, ARG_JOBS },
                GLOBAL_OPTIONS
        };
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_(fault_runner_done) FaultRunner runner = {};
        _cleanup_(observe_outcome_done) ObserveOutcome disc = {};
        _cleanup_(findings_done) Findings findings = {};
        _cleanup_(kernel_reports_done) KernelReports baseline = {};
        _cleanup_(plan_done) Plan plan = {};
        _cleanup_(run_windows_done) RunWindows windows = {};
        _cleanup_json_ json_object *list = NULL, *runs = NULL, *report = NULL, *notes = NULL, *base = NULL;
        _cleanup_free_ const char **functions = NULL;
        _cleanup_free_ char **globs = NULL, **through = NULL;
        PlanOptions po = {};
        bool depth_set = false;
        _cleanup_close_ int kmsg_fd = -1;
        const char *report_path = NULL, *html_path = NULL, *resume_path = NULL, *stopped = "done";
        const char *setup = NULL, *cleanup_arg = NULL;
        /* Declared after what the report needs, so that it runs first
         * on return, whatever ends explore once --setup ran. */
        _cleanup_(explore_cleanup_run) const char *cleanup = NULL;
        _cleanup_json_ json_object *resumed = NULL, *resumed_observing = NULL;
        json_object *refused_before = NULL;
        size_t n_refused_before = 0;
        Explore x;
        size_t n_before = 0, n_skipped_done = 0;
        json_object *reached = NULL;
        uint64_t max_runs = EXPLORE_MAX_RUNS_DEFAULT, timeout = EXPLORE_TIMEOUT_DEFAULT, jobs = 0;
        _cleanup_(sandbox_done) Sandbox sandbox = {};
        SandboxRun box0 = SANDBOX_RUN_NULL;
        size_t n_globs = 0, n_functions = 0, denied = 0;
        struct sigaction old_int, old_term;
        bool per_call = false, lsm = false, tty, kmemleak;
        int c, r, ret = 0;

        globs = calloc((size_t) argc + 1, sizeof(*globs));
        through = calloc((size_t) argc + 1, sizeof(*through));
        if (!globs || !through)
                return report_error(NULL, -ENOMEM, "Out of memory");
        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0)
                switch (c) {
                case ARG_FUNCTIONS:
                        if (!*optarg)
                                return usage_error("--functions needs a glob, such as 'btrfs_*'");
                        globs[n_globs++] = optarg;
                        break;
                case ARG_MAX_RUNS:
                        ret = parse_count_arg("--max-runs", optarg, 0, &max_runs);
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
                case ARG_PER:
                        if (strcmp(optarg, "call") == 0)
                                per_call = true;
                        else if (strcmp(optarg, "stack") == 0)
                                per_call = false;
                        else
                                return usage_error("--per takes 'stack' or 'call', not '%s'", optarg);
                        break;
                case ARG_HTML:
                        if (!*optarg)
                                return usage_error("--html needs a file name");
                        html_path = optarg;
                        break;
                case ARG_LSM:
                        lsm = true;
                        break;
                case ARG_SETUP:
                        if (!*optarg)
                                return usage_error("--setup needs a shell command");
                        setup = optarg;
                        break;
                case ARG_CLEANUP:
                        if (!*optarg)
                                return usage_error("--cleanup needs a shell command");
                        cleanup_arg = optarg;
                        break;
                case ARG_DEPTH:
                        ret = parse_count_arg("--depth", optarg, 1, &po.depth);
                        if (ret != 0)
                                return ret;
                        if (po.depth > PLAN_DEPTH_MAX)
                                return usage_error("--depth takes at most %d calls per stack, not %s", PLAN_DEPTH_MAX,
                                                   optarg);
                        depth_set = true;
                        break;
                case ARG_THROUGH:
                        if (!*optarg)
                                return usage_error("--through needs a glob of the functions a stack must pass "
                                                   "through, such as 'ext4_*'");
                        through[po.n_through++] = optarg;
                        break;
                case ARG_NO_SYSCALLS:
                        po.no_syscalls = true;
                        break;
                case ARG_JOBS:
                        ret = parse_count_arg("--jobs", optarg, 1, &jobs);
                        if (ret != 0)
                                return ret;
                        if (jobs > FAULT_RUN_JOBS_MAX)
                                return usage_error("--jobs: at most %d runs side by side", FAULT_RUN_JOBS_MAX);
                        break;
                case ARG_RESUME:
                        if (!*optarg)
                                return usage_error("--resume needs the report file of an earlier explore");
                        resume_path = optarg;
                        break;
                default:
                        ret = handle_global_option(c, optarg, argv);
                        if (ret >= 0)
                                return ret;
                }
        if (optind < 1 || strcmp(argv[optind - 1], "--") != 0)
                return usage_error("explore needs '--' before the command");
        if (optind >= argc)
                return usage_error("explore needs a command after '--'");
        /* Calls have no stack in the per-call plan: nothing to choose by. */
        if (per_call && (depth_set || po.n_through > 0 || po.no_syscalls))
                return usage_error("--%s chooses among a stack's calls or stacks: it needs the per-stack plan, "
                                   "not --per call", depth_set ? "depth" : po.n_through ? "through" : "no-syscalls");
        po.per_call = per_call;
        po.max_runs = max_runs;
        po.through = through;
        tty = isatty(STDERR_FILENO) && !arg_json;
        /* A resumed explore goes on saving its progress where it was. */
        if (resume_path && !report_path)
                report_path = resume_path;

        r = connect_daemon(&t);
        if (r < 0)
                return -r;
        runner.t = t;
        runner.timeout = timeout;
        runner.exec_failure_is_result = true;
        runner.refusal_is_result = true;
        notes = json_object_new_array();
        runs = json_object_new_array();
        if (!notes || !runs)
                return report_error(NULL, -ENOMEM, "Out of memory");

        r = choose_functions(t, globs, n_globs, lsm, &list, &functions, &n_functions, &denied);
        if (r != 0)
                return r;
        if (n_functions == 0) {
                fprintf(stderr, "injectctl: No injectable function %s%s lets you fail: nothing to explore%s.\n",
                        n_globs ? "matching --functions that " : "that ", "the policy",
                        lsm ? "" : " (the LSM hooks are observed only with --lsm)");
                return EXIT_REFUSED;
        }

        /* --setup, once, before the discovery: nothing is armed for it. */
        cleanup = cleanup_arg;
        if (setup) {
                r = explore_shell("--setup", setup);
                if (r != 0) {
                        if (r < 0)
                                fprintf(stderr, "injectctl: --setup: cannot run it: %s\n", strerror(-r));
                        else
                                fprintf(stderr, "injectctl: --setup failed (exit status %d): nothing explored.\n", r);
                        return EXIT_REFUSED;
                }
        }

        /* The detectors this caller can read; what is withheld is said. */
        r = kmsg_open(&kmsg_fd);
        if (r < 0) {
                fprintf(stderr, "explore: The kernel log is withheld from you (/dev/kmsg: %s; root, or "
                        "kernel.dmesg_restrict=0, may read it): KASAN, WARN, BUG, oops, lockdep, hung-task and "
                        "stall reports will not be seen, only the command's own crashes and hangs.\n", strerror(-r));
                (void) json_append_string(notes, "kernel log withheld: /dev/kmsg not readable");
        }
        r = kmemleak_available();
        kmemleak = r >= 0;
        if (!kmemleak) {
                fprintf(stderr, "explore: kmemleak is not available here (/sys/kernel/debug/kmemleak: %s; it "
                        "needs CONFIG_DEBUG_KMEMLEAK and root): leaks will not be seen.\n", strerror(-r));
                (void) json_append_string(notes, "kmemleak not available");
        } else
                (void) kmemleak_clear();

        /* Each run's directory, cgroup and mount namespace
         * (explore-sandbox.h); --jobs N needs the cgroups. */
        if (jobs == 0) {
                long cpus = sysconf(_SC_NPROCESSORS_ONLN);

                jobs = cpus > 0 ? (uint64_t) cpus : 1;
                if (jobs > FAULT_RUN_JOBS_MAX)
                        jobs = FAULT_RUN_JOBS_MAX;
        }
        r = sandbox_init(&sandbox);
        if (r < 0)
                return report_error(NULL, r, "Cannot make explore's directory for its runs");
        if (jobs > 1 && !sandbox.cgroup) {
                fprintf(stderr, "explore: --jobs %" PRIu64 ": no cgroup of its own can be made for each run (%s; "
                        "root, or a delegated cgroup such as a systemd user service's, can): the runs go one at a "
                        "time (--jobs 1).\n", jobs, sandbox.cgroup_why ?: "unknown");
                (void) json_append_string(notes, "runs one at a time: no cgroup can be made for each run");
                jobs = 1;
        }
        sandbox.use_private_mounts = jobs > 1 && sandbox.private_mounts;
        if (jobs > 1 && !sandbox.private_mounts) {
                fprintf(stderr, "explore: no private mount namespace for the runs (unshare: not permitted): each "
                        "run's $TMPDIR and $INJECTD_EXPLORE_RUN are its own directory, but /tmp, mounts and loop "
                        "devices are shared by the runs side by side.\n");
                (void) json_append_string(notes, "no private mount namespace per run: /tmp and mounts shared");
        }
        if (setup && sandbox.use_private_mounts)
                fprintf(stderr, "explore: each run has its own /tmp: what --setup left in /tmp is not seen by the "
                        "runs (leave what they share elsewhere, /var/tmp say).\n");
        /* A script in /tmp is where people keep one: the runs, in a /tmp
         * of their own, would not find it, and the discovery reach nothing. */
        for (int i = optind; sandbox.use_private_mounts && i < argc; i++)
                if (strncmp(argv[i], "/tmp/", 5) == 0 && access(argv[i], F_OK) == 0) {
                        fprintf(stderr, "explore: %s is in /tmp, but each run has a /tmp of its own, empty: the runs "
                                "will not see it (put it elsewhere, /var/tmp say, or use --jobs 1).\n", argv[i]);
                        (void) json_append_string(notes, "the command names a file in /tmp, which its runs do not see");
                }
        if (jobs > 1)
                fprintf(stderr, "explore: up to %" PRIu64 " runs side by side, each in its own cgroup%s.\n", jobs,
                        sandbox.use_private_mounts ? " and mount namespace, with its own /tmp" : "");

        /* 1. Discovery, unless an earlier explore of the same command made it. */
        if (resume_path) {
                r = resume_load(resume_path, argv + optind, (size_t) (argc - optind), &resumed, &findings, runs);
                if (r != 0)
                        return r;
                (void) json_get_array(resumed, "reached", &reached);
                (void) json_get_object(resumed, "observing", &resumed_observing);
                resumed_observing = json_object_get(resumed_observing);
                (void) json_get_array(resumed, "discovery_kernel_reports", &base);
                base = json_object_get(base);
                n_before = json_object_array_length(runs);
                fprintf(stderr, "explore: resuming '%s': its discovery, %zu run%s and %zu finding%s.\n", resume_path,
                        n_before, n_before == 1 ? "" : "s", findings.n, findings.n == 1 ? "" : "s");
                explore_print_reached(reached, resumed_observing, n_functions, denied);
        } else {
        if (kmsg_fd >= 0)
                (void) kmsg_drain_kernel(kmsg_fd, NULL, NULL);
        fprintf(stderr, "explore: discovery: running the command once, observing %zu functions...\n", n_functions);
        /* In the runs' surroundings (run 0's), with nothing failed. */
        r = sandbox_run_new(&sandbox, 0, &box0);
        if (r < 0)
                return report_error(NULL, r, "Cannot make the discovery's directory and cgroup");
        r = observe_command(t, argv + optind, functions, n_functions, timeout, sandbox_run_prepare, &box0, &disc);
        sandbox_run_done(&box0);
        if (r < 0)
                return report_error(t, r, "Cannot run the discovery (Observe)");
        if (disc.error_name) {
                fprintf(stderr, "injectctl: %s: %s\n", disc.error_name, disc.error_message ?: "");
                return EXIT_REFUSED;
        }
        if (!disc.result || json_get_array(disc.result, "functions", &reached) < 0)
                return report_error(NULL, -EBADMSG, "The observation ended without its counts");
        if (kmsg_fd >= 0)
                (void) kernel_reports_read_kmsg(kmsg_fd, &baseline);
        base = json_object_new_array();
        for (size_t i = 0; base && i < baseline.n; i++)
                (void) json_append_string(base, baseline.v[i].title);
        if (baseline.n > 0)
                fprintf(stderr, "explore: the discovery run, with nothing failed, logged %zu kernel report%s "
                        "(the first: %s); they are no error path's and are not findings.\n", baseline.n,
                        baseline.n == 1 ? "" : "s", baseline.v[0].title);
        explore_print_reached(reached, disc.observing, n_functions, denied);
        if (disc.hung) {
                const char *ended = NULL;

                /* Stopped: root called Stop() on the D-Bus session. */
                (void) json_get_string(disc.result, "ended", &ended);
                fprintf(stderr, "explore: the discovery run did not end %s: it was killed, and the counts cover "
                        "what it did until then.\n",
                        ended && strcmp(ended, "stopped") == 0 ? "before the observation was stopped" :
                                                                 "within --timeout");
        }
        }

        /* 2. The plan. */
        if (resumed) {
                (void) json_get_array(resumed, "refused", &refused_before);
                n_refused_before = refused_before ? json_object_array_length(refused_before) : 0;
        }
        r = plan_build(reached, list, &po, runs, refused_before, &plan, &n_skipped_done);
        if (r < 0)
                return report_error(NULL, r, "Cannot make the plan");
        for (size_t i = 0; i < n_refused_before; i++)
                if (json_append(plan.refused, json_object_get(json_object_array_get_idx(refused_before, i))) < 0)
                        return report_error(NULL, -ENOMEM, "Out of memory");
        if (n_skipped_done)
                fprintf(stderr, "explore: %zu of the plan's runs were done before%s: not run again.\n", n_skipped_done,
                        n_refused_before ? ", or are of a function injectd refused before" : "");
        explore_print_plan(&plan, &po);

        x = (Explore) {
                .cmd = argv + optind, .n_cmd = (size_t) (argc - optind),
                .functions = functions, .n_functions = n_functions, .denied = denied,
                .observing = resumed ? resumed_observing : disc.observing, .reached = reached, .base = base,
                .notes = notes, .runs = runs, .findings = &findings, .plan = &plan, .plan_options = &po,
                .per_call = per_call, .tty = tty, .kmemleak = kmemleak,
                .max_runs = max_runs, .timeout = timeout, .kmsg_fd = kmsg_fd,
                .n_before = n_before, .runner = &runner, .report_path = report_path,
                .windows = &windows, .kmemleak_scanned = now_usec(CLOCK_MONOTONIC),
                .jobs = (size_t) jobs, .sandbox = &sandbox,
        };
        /* Saved before the first run: a kill during it still leaves the
         * discovery to resume from. */
        ret = explore_save(&x, "running");
        if (ret != 0)
                return ret;

        /* 3. The runs. */
        fault_run_catch_signals(&old_int, &old_term);
        x.started = now_usec(CLOCK_MONOTONIC);
        r = explore_execute(&x);
        /* The leaks of the runs since the last batch's scan; not after
         * Ctrl-C, which wants explore to stop now. */
        if (r == 0 && !fault_run_got_signal) {
                r = explore_kmemleak(&x, true);
                if (r == 0 && x.kmsg_fd >= 0) {
                        _cleanup_(kernel_reports_done) KernelReports k = {};
                        size_t n_new = 0;

                        if (kernel_reports_read_kmsg(x.kmsg_fd, &k) > 0 &&
                            explore_record(&x, &k, 0, !arg_json, &n_new) < 0)
                                r = report_error(NULL, -ENOMEM, "Cannot record the kernel's reports");
                }
        }
        fault_run_restore_signals(&old_int, &old_term);
        if (fault_run_got_signal)
                stopped = "interrupted";
        else if (r != 0) {
                ret = r < 0 ? report_error(NULL, r, "Cannot run the plan") : r;
                stopped = "error";
        }

        /* 4. Findings and the report. */
        report = explore_report(&x, stopped);
        if (!report)
                return report_error(NULL, -ENOMEM, "Cannot build the report");
        if (report_path && write_json_report(report_path, report) < 0 && ret == 0)
                ret = EXIT_REFUSED;
        if (html_path && (r = explore_write_html(html_path, report)) < 0) {
                fprintf(stderr, "injectctl: Cannot write the HTML report to '%s': %s\n", html_path, strerror(-r));
                if (ret == 0)
                        ret = EXIT_REFUSED;
        }
        if (arg_json)
                print_json(report, false);
        else
                explore_print_findings(&findings);
        if (json_object_array_length(plan.refused) > n_refused_before)
                fprintf(stderr, "explore: injectd refused to fail %zu function%s (in the report's 'refused'); "
                        "their %zu run%s skipped.\n", json_object_array_length(plan.refused) - n_refused_before,
                        json_object_array_length(plan.refused) - n_refused_before == 1 ? "" : "s",
                        plan.n_skipped, plan.n_skipped == 1 ? " was" : "s were");
        fprintf(stderr, "explore: %zu run%s of %zu planned%s; %zu finding%s.\n", plan.n_made,
                plan.n_made == 1 ? "" : "s", plan.n,
                strcmp(stopped, "interrupted") == 0 ? ", interrupted" : strcmp(stopped, "error") == 0 ? ", stopped by an error" : "",
                findings.n, findings.n == 1 ? "" : "s");

        if (ret != 0)
                return ret;
        if (fault_run_got_signal)
                return 130;
        return findings.n > 0 ? EXIT_REFUSED : 0;
}
