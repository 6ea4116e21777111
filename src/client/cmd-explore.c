/* SPDX-License-Identifier: MIT */
/* injectctl explore: run every error path a command reaches, and let the
 * kernel's own detectors judge (docs/explore.md).
 *
 *   1. discovery: CMD runs once with nothing failed while injectd counts,
 *      for its process tree only, its calls to the injectable functions
 *      the policy lets the caller fail (observe-call.h);
 *   2. a plan: one run per distinct kernel stack of each function reached
 *      (its first call from that stack), or per call (--per call), taken
 *      round-robin across functions, at most --max-runs, printed first;
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
#include "explore-attribution.h"
#include "errno-name.h"
#include "explore-findings.h"
#include "explore-html.h"
#include "explore-leftover.h"
#include "explore-plan.h"
#include "explore-setup.h"
#include "fault-run.h"
#include "held-child.h"
#include "injectctl.h"
#include "json-build.h"
#include "json-util.h"
#include "kernel-reports.h"
#include "kmsg.h"
#include "observe-call.h"
#include "time-util.h"

#define EXPLORE_MAX_RUNS_DEFAULT 100
#define EXPLORE_TIMEOUT_DEFAULT (60 * USEC_PER_SEC)
#define EXPLORE_FUNCTIONS_MAX 4096      /* the daemon's OBSERVE_FUNCTIONS_MAX */
#define EXPLORE_REACHED_SHOWN 20        /* functions listed after discovery */
/* kmemleak is scanned after the run that ends this long after its last
 * scan, not after each run: a scan of the debug kernel's memory takes
 * seconds, and its reports are tied to their runs by pid and time
 * (explore-attribution.h), not by when they are read. */
#define EXPLORE_KMEMLEAK_BATCH_USEC (30 * USEC_PER_SEC)

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

static void print_plan(const Plan *p, bool per_call, uint64_t max_runs) {
        fprintf(stderr, "explore: plan: %zu run%s, one per %s", p->n, p->n == 1 ? "" : "s",
                per_call ? "call" : "distinct kernel stack of each function (its first call from it)");
        if (p->n_total > p->n)
                fprintf(stderr, "; %zu more left out by --max-runs=%" PRIu64, p->n_total - p->n, max_runs);
        fputs(".\n", stderr);
        if (p->n == 0)
                return;
        fprintf(stderr, "%6s  %-40s  %8s  %s\n", "RUN", "FUNCTION", "CALL", "STACK");
        for (size_t i = 0; i < p->n; i++) {
                char st[48] = "-";

                if (p->v[i].stack)
                        snprintf(st, sizeof(st), "%" PRIu64 "/%" PRIu64, p->v[i].stack, p->v[i].n_stacks);
                fprintf(stderr, "%6zu  %-40s  %8" PRIu64 "  %s\n", i + 1, p->v[i].function, p->v[i].call, st);
        }
}

static void progress(bool on, size_t done, size_t total, uint64_t started) {
        char eta[64] = "?";
        int width = 30, filled;

        if (!on)
                return;
        if (done == SIZE_MAX) {
                fputs("\r\033[K", stderr);
                fflush(stderr);
                return;
        }
        if (done > 0)
                format_left(eta, sizeof(eta), (now_usec(CLOCK_MONOTONIC) - started) / done * (total - done));
        filled = total ? (int) (done * (size_t) width / total) : width;
        fprintf(stderr, "\r\033[Kexplore: [%.*s%*s] %zu/%zu, ETA %s", filled, "==============================",
                width - filled, "", done, total, done ? eta : "?");
        fflush(stderr);
}

/* CMD's own crash or hang, as a report of the "command" detector: the
 * failed function is its signature's frame. */
static int add_command_report(const FaultRun *run, const PlanItem *item, KernelReports *k) {
        char title[128], sig[256], name[32];
        KernelReport *v, *x;

        if (!run->hung && !run->signal)
                return 0;
        if (run->hung)
                snprintf(title, sizeof(title), "the command hung (killed at the timeout)");
        else
                snprintf(title, sizeof(title), "the command died of %s", signal_name(run->signal, name, sizeof(name)));
        snprintf(sig, sizeof(sig), "command: %s @ %s", title, item->function);
        v = realloc(k->v, (k->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        k->v = v;
        x = &v[k->n++];
        *x = (KernelReport) { .detector = strdup("command"), .title = strdup(title), .signature = strdup(sig),
                              .text = strdup(title) };
        return x->detector && x->title && x->signature && x->text ? 0 : -ENOMEM;
}

/* What the run's tree left behind (explore-leftover.h), compared with
 * before, as reports of the "leftover" detector. The run's files: its
 * directory ($INJECTD_EXPLORE_RUN) and the command's arguments that are
 * absolute paths. */
static int add_leftover_reports(const LeftoverSnapshot *before, const PlanItem *item, char **cmd,
                                KernelReports *k) {
        _cleanup_(leftovers_done) Leftovers left = {};
        _cleanup_free_ const char **files = NULL;
        size_t n_files = 0;
        int r;

        for (size_t i = 0; cmd[i]; i++)
                n_files++;
        files = calloc(n_files + 1, sizeof(*files));
        if (!files)
                return -ENOMEM;
        n_files = 0;
        for (size_t i = 0; cmd[i]; i++)
                if (cmd[i][0] == '/')
                        files[n_files++] = cmd[i];
        r = leftover_check(before, &(LeftoverRun) { .dir = getenv("INJECTD_EXPLORE_RUN"), .files = files,
                                                    .n_files = n_files }, &left);
        for (size_t i = 0; r >= 0 && i < left.n; i++) {
                KernelReport *v = realloc(k->v, (k->n + 1) * sizeof(*v)), *x;
                char *sig = NULL;

                if (!v || asprintf(&sig, "%s @ %s", left.v[i].signature, item->function) < 0) {
                        if (v)
                                k->v = v;
                        return -ENOMEM;
                }
                k->v = v;
                x = &v[k->n++];
                *x = (KernelReport) { .detector = strdup("leftover"), .title = TAKE_PTR(left.v[i].title),
                                      .signature = sig, .text = TAKE_PTR(left.v[i].text) };
                if (!x->detector)
                        return -ENOMEM;
        }
        return r < 0 ? r : 0;
}

static json_object *run_json(const FaultRun *r, const PlanItem *item, uint64_t n, json_object *reports) {
        json_object *o = NULL;
        char sig[32];

        if (!r->stack || !r->output)
                return NULL;
        if (json_build_object(&o,
                              JSON_PAIR_U64("run", n),
                              JSON_PAIR_STRING("function", item->function),
                              JSON_PAIR_U64("call", item->call),
                              JSON_PAIR_IF(item->stack, JSON_PAIR_U64("stack", item->stack)),
                              JSON_PAIR_BOOL("fired", r->fired),
                              JSON_PAIR_U64("calls_matched", r->calls_matched),
                              JSON_PAIR_BOOL("exec_failed", r->exec_failed),
                              JSON_PAIR_IF(r->exit_status >= 0, JSON_PAIR_I64("exit_status", r->exit_status)),
                              JSON_PAIR_IF(r->exit_status < 0, JSON_PAIR_NULL("exit_status")),
                              JSON_PAIR_STRING("signal", r->signal ? signal_name(r->signal, sig, sizeof(sig)) : NULL),
                              JSON_PAIR_BOOL("hung", r->hung),
                              JSON_PAIR_U64("duration_usec", r->duration_usec),
                              JSON_PAIR_U64("start_usec", r->start_usec),
                              JSON_PAIR_U64("end_usec", r->end_usec),
                              JSON_PAIR_I64("pid", r->pid),
                              JSON_PAIR_IF(r->last_pid > 0, JSON_PAIR_I64("last_pid", r->last_pid)),
                              JSON_PAIR_REF("stack", r->stack),
                              JSON_PAIR_REF("reports", reports),
                              JSON_PAIR_REF("output", r->output),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

static void print_run(const FaultRun *r, const PlanItem *item, uint64_t n, size_t total, json_object *reports) {
        char result[32];

        fprintf(stderr, "explore: run %" PRIu64 "/%zu: %s call %" PRIu64 ": %s, %s%s", n, total, item->function,
                item->call, r->fired ? "failed" : "not reached", fault_run_result(r, result, sizeof(result)),
                r->exec_failed ? " (the command could not be executed)" : "");
        for (size_t i = 0; i < json_object_array_length(reports); i++)
                fprintf(stderr, "%s%s", i ? ", " : "; kernel: ",
                        json_object_get_string(json_object_object_get(json_object_array_get_idx(reports, i), "detector")));
        fputc('\n', stderr);
}

static void print_findings(const Findings *f) {
        if (f->n == 0) {
                printf("No findings.\n");
                return;
        }
        printf("%zu finding%s:\n", f->n, f->n == 1 ? "" : "s");
        for (size_t i = 0; i < f->n; i++) {
                const Finding *x = &f->v[i];

                printf("\n%zu. [%s] %s\n", i + 1, x->detector, x->title);
                printf("   failed: %s, call %" PRIu64 " (run %" PRIu64 "; found in %" PRIu64 " run%s)\n", x->function,
                       x->call, x->first_run, x->n_runs, x->n_runs == 1 ? "" : "s");
                if (x->attributed && strcmp(x->attributed, "pid") == 0)
                        printf("   by the run's own task: %s, pid %d\n", x->comm ?: "?", x->pid);
                else if (x->attributed)
                        printf("   by time window: the report names %s%s%s, no task of the run's; it came while "
                               "the run was under way or after it\n", x->comm ? "the task " : "no task",
                               x->comm ?: "", x->comm ? "" : "");
                printf("   reproduce: %s\n", x->reproducer);
                if (json_object_array_length(x->stack) > 0) {
                        printf("   failed call's stack:\n");
                        for (size_t k = 0; k < json_object_array_length(x->stack) && k < 8; k++)
                                printf("     %s\n", json_object_get_string(json_object_array_get_idx(x->stack, k)));
                }
                printf("   report:\n");
                for (const char *p = x->report; p && *p;) {
                        const char *nl = strchr(p, '\n');
                        int len = nl ? (int) (nl - p) : (int) strlen(p);

                        printf("     %.*s\n", len, p);
                        p = nl ? nl + 1 : NULL;
                }
        }
}

static void print_reached(json_object *reached, json_object *observing, size_t n_asked, size_t denied) {
        json_object *skipped = NULL;
        uint64_t attached = 0, calls = 0, stacks = 0;
        size_t n = json_object_array_length(reached);

        (void) json_get_u64(observing, "attached", 0, UINT64_MAX, &attached);
        (void) json_get_array(observing, "skipped", &skipped);
        for (size_t i = 0; i < n; i++) {
                json_object *f = json_object_array_get_idx(reached, i), *s = NULL;
                uint64_t c = 0;

                (void) json_get_u64(f, "calls", 0, UINT64_MAX, &c);
                calls += c;
                if (json_get_array(f, "stacks", &s) >= 0)
                        stacks += json_object_array_length(s);
        }
        fprintf(stderr, "explore: discovery: the command reached %zu of the %" PRIu64 " functions observed "
                "(%" PRIu64 " calls, from %" PRIu64 " distinct kernel stacks)", n, attached, calls, stacks);
        if (skipped && json_object_array_length(skipped) > 0)
                fprintf(stderr, "; %zu of the %zu asked for could not be observed (see the report)",
                        json_object_array_length(skipped), n_asked);
        if (denied)
                fprintf(stderr, "; %zu matching functions left out: the policy does not let you fail them", denied);
        fputs(".\n", stderr);
        for (size_t i = 0; i < n && i < EXPLORE_REACHED_SHOWN; i++) {
                json_object *f = json_object_array_get_idx(reached, i), *s = NULL;
                const char *name = NULL;
                uint64_t c = 0;

                (void) json_get_string(f, "function", &name);
                (void) json_get_u64(f, "calls", 0, UINT64_MAX, &c);
                (void) json_get_array(f, "stacks", &s);
                fprintf(stderr, "  %-40s %8" PRIu64 " call%s, %zu stack%s\n", name ?: "?", c, c == 1 ? " " : "s",
                        s ? json_object_array_length(s) : 0, s && json_object_array_length(s) == 1 ? "" : "s");
        }
        if (n > EXPLORE_REACHED_SHOWN)
                fprintf(stderr, "  ... and %zu more\n", n - EXPLORE_REACHED_SHOWN);
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

/* What an explore has and writes: the report is made from it after the
 * discovery, after each run, and at the end. */
typedef struct Explore {
        char **cmd;
        size_t n_cmd;
        const char **functions;
        size_t n_functions, denied;
        json_object *observing, *reached, *base, *notes, *runs;  /* borrowed */
        Findings *findings;
        Plan *plan;
        bool per_call, tty, kmemleak;
        uint64_t max_runs, timeout, started;
        int kmsg_fd;
        size_t n_before;                /* runs of the report resumed */
        FaultRunner *runner;
        const char *report_path;
        RunWindows *windows;            /* this explore's runs, to tie kernel reports to */
        uint64_t kmemleak_scanned;      /* CLOCK_MONOTONIC of the last scan */
        size_t n_reports_before;        /* reports that came before the first run */
} Explore;

static json_object *explore_report(const Explore *x, const char *stopped) {
        json_object *report = NULL;

        if (json_build_object(&report,
                              JSON_PAIR_OBJECT("command", json_new_strv((const char *const *) x->cmd, x->n_cmd)),
                              JSON_PAIR_OBJECT("functions_asked", json_new_strv(x->functions, x->n_functions)),
                              JSON_PAIR_U64("functions_denied", x->denied),
                              JSON_PAIR_REF("observing", x->observing),
                              JSON_PAIR_REF("reached", x->reached),
                              JSON_PAIR_REF("discovery_kernel_reports", x->base),
                              JSON_PAIR_STRING("plan_per", x->per_call ? "call" : "stack"),
                              JSON_PAIR_U64("plan_runs", x->plan->n),
                              JSON_PAIR_U64("plan_left_out", x->plan->n_total - x->plan->n),
                              JSON_PAIR_U64("plan_skipped", x->plan->n_skipped),
                              JSON_PAIR_U64("max_runs", x->max_runs),
                              JSON_PAIR_U64("timeout_usec", x->timeout),
                              JSON_PAIR_BOOL("kernel_log_checked", x->kmsg_fd >= 0),
                              JSON_PAIR_BOOL("kmemleak_checked", x->kmemleak),
                              JSON_PAIR_REF("notes", x->notes),
                              JSON_PAIR_STRING("stopped", stopped),
                              JSON_PAIR_REF("refused", x->plan->refused),
                              JSON_PAIR_OBJECT("findings", findings_json(x->findings)),
                              JSON_PAIR_REF("runs", x->runs),
                              JSON_BUILD_END) < 0)
                return NULL;
        return report;
}

/* The report so far, in --report's file (atomically: see
 * write_json_report()), so that --resume can continue from it whatever
 * ends injectctl. */
static int explore_save(const Explore *x, const char *stopped) {
        _cleanup_json_ json_object *report = NULL;

        if (!x->report_path)
                return 0;
        report = explore_report(x, stopped);
        if (!report)
                return report_error(NULL, -ENOMEM, "Cannot build the report");
        return write_json_report(x->report_path, report) < 0 ? EXIT_REFUSED : 0;
}

/* Ties the reports of k from index from to their runs (explore-attribution.h). */
static int explore_record(Explore *x, const KernelReports *k, size_t from, bool print, size_t *ret_new) {
        size_t before = 0;
        int r;

        r = run_windows_record(x->windows, k, from, print, x->findings, ret_new, &before);
        if (before > 0)
                fprintf(stderr, "explore: %zu kernel report%s from before the first run (the discovery's, or "
                        "not this explore's): not findings.\n", before, before == 1 ? "" : "s");
        x->n_reports_before += before;
        return r;
}

/* kmemleak's leaks: after a batch of runs one scan, and at the end (final)
 * two, once the last run's objects are old enough. */
static int explore_kmemleak(Explore *x, bool final) {
        _cleanup_(kernel_reports_done) KernelReports k = {};
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        size_t n_new = 0;
        int r;

        if (!x->kmemleak || x->windows->n == 0)
                return 0;
        if (!final && now < x->kmemleak_scanned + EXPLORE_KMEMLEAK_BATCH_USEC)
                return 0;
        if (final)
                fprintf(stderr, "explore: kmemleak: the last scan, once the last run's objects are 5 s old...\n");
        r = final ? kmemleak_collect(x->windows->v[x->windows->n - 1].end_usec, &k) : kmemleak_scan_once(&k);
        x->kmemleak_scanned = now_usec(CLOCK_MONOTONIC);
        if (r < 0) {
                fprintf(stderr, "explore: Cannot scan for leaks: %s\n", strerror(-r));
                return 0;
        }
        r = explore_record(x, &k, 0, !arg_json, &n_new);
        return r < 0 ? report_error(NULL, r, "Cannot record kmemleak's reports") : 0;
}

/* One run of the plan (PlanRunFn): no wait for the detectors; what the
 * kernel log says is read after it, kmemleak after a batch of runs, each
 * report tied to its run by pid or time. */
static int explore_run(const PlanItem *item, size_t i, void *userdata, json_object **ret_refusal) {
        Explore *x = userdata;
        _cleanup_(kernel_reports_done) KernelReports k = {}, own = {};
        _cleanup_(fail_spec_freep) FailSpec *spec = NULL;
        _cleanup_(leftover_snapshot_done) LeftoverSnapshot before = {};
        _cleanup_free_ char *repro = NULL;
        _cleanup_json_ json_object *run_reports = json_object_new_array();
        uint64_t n = x->n_before + x->plan->n_made + 1;
        size_t n_new = 0;
        FaultRun run;
        int r;

        spec = calloc(1, sizeof(*spec));
        repro = explore_reproducer(item->function, item->error, item->call, x->cmd);
        if (!spec || !repro || !run_reports || !(spec->function = strdup(item->function)))
                return report_error(NULL, -ENOMEM, "Out of memory");
        if (item->error)
                (void) errno_from_name(item->error, &spec->error);

        /* What the kernel logged before this run, of earlier runs (a
         * kworker's report late), is read and tied to them first. */
        if (x->kmsg_fd >= 0 && (r = kernel_reports_read_kmsg(x->kmsg_fd, &k)) > 0 &&
            (r = explore_record(x, &k, 0, !arg_json, &n_new)) < 0)
                return report_error(NULL, r, "Cannot record the kernel's reports");
        kernel_reports_done(&k);

        r = leftover_snapshot(&before);
        if (r < 0)
                return report_error(NULL, r, "Cannot look at loop devices and mounts before the run");
        progress(x->tty, i, x->plan->n, x->started);
        r = fault_run_one(x->runner, spec, x->cmd, item->call, &run);
        progress(x->tty, SIZE_MAX, 0, 0);
        if (r != 0 || fault_run_got_signal) {
                /* Interrupted: the run is not recorded, and a resume makes it again. */
                fault_run_clear(&run);
                return r ?: 130;
        }
        if (run.refusal) {
                fprintf(stderr, "explore: run %zu/%zu: %s: injectd cannot fail it (%s: %s): its runs are skipped.\n",
                        i + 1, x->plan->n, item->function,
                        json_object_get_string(json_object_object_get(run.refusal, "error")),
                        json_object_get_string(json_object_object_get(run.refusal, "message")));
                *ret_refusal = TAKE_PTR(run.refusal);
                fault_run_clear(&run);
                return explore_save(x, "running");
        }
        r = run_windows_add(x->windows, &(RunWindow) {
                .run = n, .function = (char *) item->function, .call = item->call, .reproducer = repro,
                .stack = run.stack, .reports = run_reports,
                .start_usec = run.start_usec, .end_usec = run.end_usec, .pid = run.pid, .last_pid = run.last_pid,
        });
        if (r >= 0 && x->kmsg_fd >= 0 && kernel_reports_read_kmsg(x->kmsg_fd, &k) < 0)
                fprintf(stderr, "explore: Cannot read the kernel log after run %zu\n", i + 1);
        /* CMD's own crash or hang is this run's, whatever its pid, and
         * so is what its tree left behind. */
        if (r >= 0)
                r = add_command_report(&run, item, &own);
        if (r >= 0)
                r = add_leftover_reports(&before, item, x->cmd, &own);
        for (size_t c = 0; r >= 0 && c < own.n; c++) {
                json_object *o = NULL;

                r = findings_add(x->findings, own.v[c].signature, own.v[c].detector, own.v[c].title, own.v[c].text,
                                 item->function, item->call, repro, run.stack, n);
                if (r >= 0)
                        r = json_build_object(&o,
                                              JSON_PAIR_STRING("detector", own.v[c].detector),
                                              JSON_PAIR_STRING("title", own.v[c].title),
                                              JSON_PAIR_STRING("signature", own.v[c].signature),
                                              JSON_BUILD_END);
                if (r >= 0)
                        r = json_append(run_reports, o);
        }
        if (r >= 0)
                r = explore_record(x, &k, 0, false, &n_new);
        if (r >= 0)
                r = json_append(x->runs, run_json(&run, item, n, run_reports));
        if (r < 0) {
                fault_run_clear(&run);
                return report_error(NULL, r, "Cannot record the run");
        }
        if (!arg_json)
                print_run(&run, item, i + 1, x->plan->n, run_reports);
        fault_run_clear(&run);
        r = explore_kmemleak(x, false);
        if (r != 0)
                return r;
        return explore_save(x, "running");
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
        _cleanup_free_ char **globs = NULL;
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
        uint64_t max_runs = EXPLORE_MAX_RUNS_DEFAULT, timeout = EXPLORE_TIMEOUT_DEFAULT;
        size_t n_globs = 0, n_functions = 0, denied = 0;
        struct sigaction old_int, old_term;
        bool per_call = false, lsm = false, tty, kmemleak;
        int c, r, ret = 0;

        globs = calloc((size_t) argc + 1, sizeof(*globs));
        if (!globs)
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
                print_reached(reached, resumed_observing, n_functions, denied);
        } else {
        if (kmsg_fd >= 0)
                (void) kmsg_drain_kernel(kmsg_fd, NULL, NULL);
        fprintf(stderr, "explore: discovery: running the command once, observing %zu functions...\n", n_functions);
        r = observe_command(t, argv + optind, functions, n_functions, timeout, &disc);
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
        print_reached(reached, disc.observing, n_functions, denied);
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
        r = plan_build(reached, list, per_call, max_runs, runs, refused_before, &plan, &n_skipped_done);
        if (r < 0)
                return report_error(NULL, r, "Cannot make the plan");
        for (size_t i = 0; i < n_refused_before; i++)
                if (json_append(plan.refused, json_object_get(json_object_array_get_idx(refused_before, i))) < 0)
                        return report_error(NULL, -ENOMEM, "Out of memory");
        if (n_skipped_done)
                fprintf(stderr, "explore: %zu of the plan's runs were done before%s: not run again.\n", n_skipped_done,
                        n_refused_before ? ", or are of a function injectd refused before" : "");
        print_plan(&plan, per_call, max_runs);

        x = (Explore) {
                .cmd = argv + optind, .n_cmd = (size_t) (argc - optind),
                .functions = functions, .n_functions = n_functions, .denied = denied,
                .observing = resumed ? resumed_observing : disc.observing, .reached = reached, .base = base,
                .notes = notes, .runs = runs, .findings = &findings, .plan = &plan,
                .per_call = per_call, .tty = tty, .kmemleak = kmemleak,
                .max_runs = max_runs, .timeout = timeout, .kmsg_fd = kmsg_fd,
                .n_before = n_before, .runner = &runner, .report_path = report_path,
                .windows = &windows, .kmemleak_scanned = now_usec(CLOCK_MONOTONIC),
        };
        /* Saved before the first run: a kill during it still leaves the
         * discovery to resume from. */
        ret = explore_save(&x, "running");
        if (ret != 0)
                return ret;

        /* 3. The runs. */
        fault_run_catch_signals(&old_int, &old_term);
        x.started = now_usec(CLOCK_MONOTONIC);
        r = plan_execute(&plan, explore_run, &x);
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
                print_findings(&findings);
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
