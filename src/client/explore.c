/* SPDX-License-Identifier: MIT */
/* explore's runs and its report (explore.h). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errno-name.h"
#include "explore.h"
#include "explore-leftover.h"
#include "explore-print.h"
#include "cli.h"
#include "json-build.h"
#include "json-util.h"
#include "time-util.h"

/* kmemleak is scanned after the run that ends this long after its last
 * scan, not after each run: a scan of the debug kernel's memory takes
 * seconds, and its reports are tied to their runs by pid and time
 * (explore-attribution.h), not by when they are read. */
#define EXPLORE_KMEMLEAK_BATCH_USEC (30 * USEC_PER_SEC)

/* The plan's choices, for the report. */
static json_object *explore_plan_json(const Plan *p, const PlanOptions *o) {
        json_object *v = NULL, *through = json_object_new_array();

        for (size_t g = 0; through && g < p->n_through; g++) {
                json_object *x = NULL;

                if (json_build_object(&x, JSON_PAIR_STRING("glob", o->through[g]),
                                      JSON_PAIR_U64("stacks", p->through_hits[g]), JSON_BUILD_END) < 0 ||
                    json_append(through, x) < 0) {
                        json_object_put(through);
                        return NULL;
                }
        }
        if (json_build_object(&v,
                              JSON_PAIR_STRING("per", o->per_call ? "call" : "stack"),
                              JSON_PAIR_U64("depth", p->depth),
                              JSON_PAIR_U64("stacks", p->n_stacks),
                              JSON_PAIR_OBJECT("through", through),
                              JSON_PAIR_U64("through_dropped", p->n_through_dropped),
                              JSON_PAIR_U64("syscall_entries", p->n_syscalls),
                              JSON_PAIR_STRING("syscall_entries_were", o->per_call ? NULL :
                                               p->syscalls_dropped ? "left out" : "moved last"),
                              JSON_PAIR_U64("runs", p->n),
                              JSON_PAIR_U64("left_out_by_max_runs", p->n_total - p->n),
                              JSON_BUILD_END) < 0)
                return NULL;
        return v;
}


/* The plan's runs, for the report: which call of which stack each fails. */
static json_object *explore_plan_items_json(const Plan *p) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < p->n; i++) {
                const PlanItem *x = &p->v[i];
                json_object *o = NULL;

                if (json_build_object(&o,
                                      JSON_PAIR_STRING("function", x->function),
                                      JSON_PAIR_U64("call", x->call),
                                      JSON_PAIR_IF(x->stack, JSON_PAIR_U64("stack", x->stack)),
                                      JSON_PAIR_IF(x->stack_calls, JSON_PAIR_U64("stack_call", x->stack_call)),
                                      JSON_PAIR_IF(x->stack_calls, JSON_PAIR_U64("stack_calls", x->stack_calls)),
                                      JSON_PAIR_BOOL("syscall_entry", x->syscall),
                                      JSON_BUILD_END) < 0 ||
                    json_append(a, o) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

static json_object *explore_run_json(const FaultRun *r, const PlanItem *item, uint64_t n, json_object *reports) {
        json_object *o = NULL;
        char sig[32];

        if (!r->stack || !r->output)
                return NULL;
        if (json_build_object(&o,
                              JSON_PAIR_U64("run", n),
                              JSON_PAIR_STRING("function", item->function),
                              JSON_PAIR_U64("call", item->call),
                              JSON_PAIR_IF(item->stack, JSON_PAIR_U64("stack", item->stack)),
                              JSON_PAIR_IF(item->stack_calls, JSON_PAIR_U64("stack_call", item->stack_call)),
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

/* CMD's own crash or hang, as a report of the "command" detector: the
 * failed function is its signature's frame. */
static int explore_command_report(const FaultRun *run, const PlanItem *item, KernelReports *k) {
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
 * directory (dir, its $INJECTD_EXPLORE_RUN) and the command's arguments
 * that are absolute paths. */
static int explore_leftover_reports(const LeftoverSnapshot *before, const PlanItem *item, char **cmd, const char *dir,
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
        r = leftover_check(before, &(LeftoverRun) { .dir = dir, .files = files,
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

json_object *explore_report(const Explore *x, const char *stopped) {
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
                              JSON_PAIR_OBJECT("plan", explore_plan_json(x->plan, x->plan_options)),
                              JSON_PAIR_OBJECT("plan_runs_planned", explore_plan_items_json(x->plan)),
                              JSON_PAIR_U64("max_runs", x->max_runs),
                              JSON_PAIR_U64("timeout_usec", x->timeout),
                              JSON_PAIR_U64("jobs", x->jobs),
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
int explore_save(const Explore *x, const char *stopped) {
        _cleanup_json_ json_object *report = NULL;

        if (!x->report_path)
                return 0;
        report = explore_report(x, stopped);
        if (!report)
                return report_error(NULL, -ENOMEM, "Cannot build the report");
        return write_json_report(x->report_path, report) < 0 ? EXIT_REFUSED : 0;
}

/* A run under way (explore --jobs: up to that many side by side). */
typedef struct ExploreSlot {
        bool busy;
        const PlanItem *item;
        size_t index;                   /* in the plan */
        uint64_t n;                     /* its number in the report */
        FailSpec *spec;
        char *repro;
        json_object *reports;           /* the run's "reports" */
        FaultRunJob job;
        FaultRun run;
        SandboxRun box;
        LeftoverSnapshot before;        /* loop devices, mounts and holders before the run */
} ExploreSlot;

static void explore_slot_clear(ExploreSlot *s) {
        fail_spec_freep(&s->spec);
        free(s->repro);
        json_object_put(s->reports);
        fault_run_clear(&s->run);
        sandbox_run_done(&s->box);
        leftover_snapshot_done(&s->before);
        *s = (ExploreSlot) {};
}

static uint64_t explore_live_run(pid_t pid, void *userdata) {
        const Explore *x = userdata;

        return sandbox_run_of_pid(x->sandbox, pid);
}

/* Ties the reports of k from index from to their runs (explore-attribution.h). */
int explore_record(Explore *x, const KernelReports *k, size_t from, bool print, size_t *ret_new) {
        size_t before = 0;
        int r;

        r = run_windows_record_live(x->windows, k, from, print, explore_live_run, x, x->findings, ret_new, &before);
        if (before > 0)
                fprintf(stderr, "explore: %zu kernel report%s from before the first run (the discovery's, or "
                        "not this explore's): not findings.\n", before, before == 1 ? "" : "s");
        x->n_reports_before += before;
        return r;
}

/* kmemleak's leaks: after a batch of runs one scan, and at the end (final)
 * two, once the last run's objects are old enough. */
int explore_kmemleak(Explore *x, bool final) {
        _cleanup_(kernel_reports_done) KernelReports k = {};
        uint64_t now = now_usec(CLOCK_MONOTONIC), last_end = 0;
        size_t n_new = 0;
        int r;

        if (!x->kmemleak || x->windows->n == 0)
                return 0;
        if (!final && now < x->kmemleak_scanned + EXPLORE_KMEMLEAK_BATCH_USEC)
                return 0;
        if (final)
                fprintf(stderr, "explore: kmemleak: the last scan, once the last run's objects are 5 s old...\n");
        /* Runs end out of order side by side: the latest end. */
        for (size_t i = 0; i < x->windows->n; i++)
                if (x->windows->v[i].end_usec > last_end)
                        last_end = x->windows->v[i].end_usec;
        r = final ? kmemleak_collect(last_end, &k) : kmemleak_scan_once(&k);
        x->kmemleak_scanned = now_usec(CLOCK_MONOTONIC);
        if (r < 0) {
                fprintf(stderr, "explore: Cannot scan for leaks: %s\n", strerror(-r));
                return 0;
        }
        r = explore_record(x, &k, 0, !arg_json, &n_new);
        return r < 0 ? report_error(NULL, r, "Cannot record kmemleak's reports") : 0;
}

/* What the kernel logged so far, tied to the runs made or under way. */
static int explore_read_kmsg(Explore *x) {
        _cleanup_(kernel_reports_done) KernelReports k = {};
        size_t n_new = 0;
        int r;

        if (x->kmsg_fd < 0 || (r = kernel_reports_read_kmsg(x->kmsg_fd, &k)) <= 0)
                return 0;
        r = explore_record(x, &k, 0, !arg_json, &n_new);
        return r < 0 ? report_error(NULL, r, "Cannot record the kernel's reports") : 0;
}

/* Starts one run of the plan in slot s: no wait for the detectors; what
 * the kernel log says is read as runs end, kmemleak after a batch of runs,
 * each report tied to its run by pid or time. 0 with s->busy, or 0 and
 * *ret_refusal (injectd cannot fail the function), or an exit code. */
static int explore_slot_start(Explore *x, const PlanItem *item, size_t i, ExploreSlot *s, json_object **ret_refusal) {
        uint64_t n = x->n_before + x->n_started + 1;
        int r;

        *s = (ExploreSlot) { .item = item, .index = i, .n = n };
        s->spec = calloc(1, sizeof(*s->spec));
        s->repro = explore_reproducer(item->function, item->error, item->call, x->cmd);
        s->reports = json_object_new_array();
        if (!s->spec || !s->repro || !s->reports || !(s->spec->function = strdup(item->function))) {
                explore_slot_clear(s);
                return report_error(NULL, -ENOMEM, "Out of memory");
        }
        if (item->error)
                (void) errno_from_name(item->error, &s->spec->error);

        /* What the kernel logged before this run, of earlier runs (a
         * kworker's report late), is read and tied to them first. */
        r = explore_read_kmsg(x);
        if (r == 0 && (r = sandbox_run_new(x->sandbox, n, &s->box)) < 0)
                r = report_error(NULL, r, "Cannot make the run's directory and cgroup");
        if (r == 0 && (r = leftover_snapshot(&s->before)) < 0)
                r = report_error(NULL, r, "Cannot look at loop devices and mounts before the run");
        if (r == 0)
                r = fault_run_start(x->runner, s->spec, x->cmd, item->call, sandbox_run_prepare, &s->box, &s->job,
                                    &s->run);
        if (r != 0) {
                explore_slot_clear(s);
                return r;
        }
        if (s->run.refusal) {
                fprintf(stderr, "explore: run %zu/%zu: %s: injectd cannot fail it (%s: %s): its runs are skipped.\n",
                        i + 1, x->plan->n, item->function,
                        json_object_get_string(json_object_object_get(s->run.refusal, "error")),
                        json_object_get_string(json_object_object_get(s->run.refusal, "message")));
                *ret_refusal = TAKE_PTR(s->run.refusal);
                explore_slot_clear(s);
                return 0;
        }
        x->n_started++;
        r = run_windows_add(x->windows, &(RunWindow) {
                .run = n, .function = (char *) item->function, .call = item->call, .reproducer = s->repro,
                .reports = s->reports, .start_usec = s->run.start_usec, .pid = s->run.pid, .running = true,
        });
        if (r < 0) {
                fault_run_job_abort(x->runner, &s->job);
                explore_slot_clear(s);
                return report_error(NULL, r, "Cannot record the run");
        }
        s->busy = true;
        if (x->jobs > 1 && !arg_json)
                fprintf(stderr, "explore: run %" PRIu64 ": started: %s call %" PRIu64 " (plan's run %zu), pid %d\n",
                        n, item->function, item->call, i + 1, (int) s->run.pid);
        return 0;
}

/* Its command ended (or hung): its run is recorded, its cgroup killed, its
 * directory removed. 0 or an exit code. */
static int explore_slot_finish(Explore *x, ExploreSlot *s) {
        _cleanup_(kernel_reports_done) KernelReports own = {};
        _cleanup_free_ pid_t *pids = NULL;
        _cleanup_free_ char *dir = NULL;
        const PlanItem *item = s->item;
        size_t n_pids = 0, n_new = 0;
        int r;

        /* Its tree's pids still alive, for the attribution of their
         * reports read later (explore-attribution.h). */
        (void) sandbox_run_pids(&s->box, &pids, &n_pids);
        r = fault_run_finish(x->runner, &s->job);
        s->busy = false;
        /* The run's directory, to tell its own leftovers (the directory
         * itself is removed now). */
        if (s->box.dir && !(dir = strdup(s->box.dir)))
                r = report_error(NULL, -ENOMEM, "Out of memory");
        /* Whatever it left running, in or out of its process group. */
        sandbox_run_done(&s->box);
        if (r != 0) {
                explore_slot_clear(s);
                return r;
        }
        x->plan->n_made++;
        r = run_windows_end(x->windows, s->n, s->run.end_usec, s->run.last_pid, pids, n_pids, s->run.stack);
        /* CMD's own crash or hang is this run's, whatever its pid, and so
         * is what its tree left behind (its cgroup is empty by now). */
        if (r >= 0)
                r = explore_command_report(&s->run, item, &own);
        if (r >= 0)
                r = explore_leftover_reports(&s->before, item, x->cmd, dir, &own);
        for (size_t c = 0; r >= 0 && c < own.n; c++) {
                json_object *o = NULL;

                r = findings_add(x->findings, own.v[c].signature, own.v[c].detector, own.v[c].title, own.v[c].text,
                                 item->function, item->call, s->repro, s->run.stack, s->n);
                if (r >= 0)
                        r = json_build_object(&o,
                                              JSON_PAIR_STRING("detector", own.v[c].detector),
                                              JSON_PAIR_STRING("title", own.v[c].title),
                                              JSON_PAIR_STRING("signature", own.v[c].signature),
                                              JSON_BUILD_END);
                if (r >= 0)
                        r = json_append(s->reports, o);
        }
        if (r >= 0 && x->kmsg_fd >= 0) {
                _cleanup_(kernel_reports_done) KernelReports k = {};

                if (kernel_reports_read_kmsg(x->kmsg_fd, &k) < 0)
                        fprintf(stderr, "explore: Cannot read the kernel log after run %" PRIu64 "\n", s->n);
                r = explore_record(x, &k, 0, x->jobs > 1 && !arg_json, &n_new);
        }
        if (r >= 0)
                r = json_append(x->runs, explore_run_json(&s->run, item, s->n, s->reports));
        if (r < 0) {
                explore_slot_clear(s);
                return report_error(NULL, r, "Cannot record the run");
        }
        if (!arg_json)
                explore_print_run(&s->run, item, s->n, x->plan->n, s->reports);
        explore_slot_clear(s);
        r = explore_kmemleak(x, false);
        if (r != 0)
                return r;
        return explore_save(x, "running");
}

/* The plan's runs, up to x->jobs at once: a run starts as soon as one
 * ends. A function injectd refuses to fail has its other runs skipped
 * (plan_refuse()). Returns 0, an exit code, or 130 after
 * SIGINT/SIGTERM (the runs under way are killed and not recorded: a
 * resume makes them again). */
int explore_execute(Explore *x) {
        ExploreSlot slots[FAULT_RUN_JOBS_MAX] = {};
        Plan *p = x->plan;
        size_t next = 0, busy = 0;
        int r = 0;

        for (;;) {
                FaultRunJob *jobs[FAULT_RUN_JOBS_MAX];
                ExploreSlot *which[FAULT_RUN_JOBS_MAX];
                size_t n = 0;
                int k;

                while (r == 0 && busy < x->jobs && next < p->n && !fault_run_got_signal) {
                        _cleanup_json_ json_object *refusal = NULL;
                        size_t i = next++, free_slot = 0;

                        if (p->v[i].skipped)
                                continue;
                        while (slots[free_slot].busy)
                                free_slot++;
                        r = explore_slot_start(x, &p->v[i], i, &slots[free_slot], &refusal);
                        if (r != 0)
                                break;
                        if (!refusal) {
                                busy++;
                                continue;
                        }
                        r = plan_refuse(p, i, TAKE_PTR(refusal));
                        if (r < 0)
                                r = report_error(NULL, r, "Out of memory");
                        else
                                r = explore_save(x, "running");
                }
                if (r != 0 || busy == 0 || fault_run_got_signal)
                        break;
                for (size_t i = 0; i < x->jobs; i++)
                        if (slots[i].busy) {
                                which[n] = &slots[i];
                                jobs[n++] = &slots[i].job;
                        }
                explore_print_progress(x->tty, p->n_made + p->n_skipped, p->n, x->started);
                k = fault_run_wait_any(jobs, n);
                explore_print_progress(x->tty, SIZE_MAX, 0, 0);
                if (k == -EINTR)
                        break;
                if (k < 0) {
                        r = report_error(NULL, k, "Cannot wait for the command");
                        break;
                }
                busy--;
                r = explore_slot_finish(x, which[k]);
        }
        for (size_t i = 0; i < x->jobs; i++)
                if (slots[i].busy) {
                        fault_run_job_abort(x->runner, &slots[i].job);
                        explore_slot_clear(&slots[i]);
                }
        if (r == 0 && fault_run_got_signal)
                return 130;
        return r;
}
