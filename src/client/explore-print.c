/* SPDX-License-Identifier: MIT */
/* What explore prints for people: the plan, its progress, each run, the
 * findings and the functions reached (explore-print.h). --json prints the
 * report instead (explore.h). */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "explore-print.h"
#include "cli.h"
#include "json-util.h"
#include "time-util.h"

#define EXPLORE_REACHED_SHOWN 20        /* functions listed after discovery */

void explore_print_plan(const Plan *p, const PlanOptions *o) {
        fprintf(stderr, "explore: plan: %zu run%s, ", p->n, p->n == 1 ? "" : "s");
        if (o->per_call)
                fputs("one per call", stderr);
        else if (p->depth == 1)
                fputs("one per distinct kernel stack of each function (its first call from it)", stderr);
        else if (p->depth == 2)
                fputs("per distinct kernel stack of each function, its first and last call from it", stderr);
        else
                fprintf(stderr, "per distinct kernel stack of each function, %" PRIu64 " of its calls from it "
                        "(--depth), first and last included", p->depth);
        if (p->n_total > p->n)
                fprintf(stderr, "; %zu more left out by --max-runs=%" PRIu64 " (depth cut first)", p->n_total - p->n,
                        o->max_runs);
        fputs(".\n", stderr);
        if (o->n_through > 0)
                fprintf(stderr, "explore: --through: %zu of the %zu stacks pass through none of the functions "
                        "given: left out.\n", p->n_through_dropped, p->n_stacks);
        for (size_t g = 0; g < p->n_through; g++)
                if (p->through_hits[g] == 0)
                        fprintf(stderr, "explore: --through '%s' matches no function of any stack the command "
                                "reached.\n", o->through[g]);
        if (!o->per_call && p->n_syscalls > 0)
                fprintf(stderr, "explore: %zu stack%s %s a system call's entry: %s.\n", p->n_syscalls,
                        p->n_syscalls == 1 ? "" : "s", p->n_syscalls == 1 ? "is" : "are",
                        p->syscalls_dropped ? "left out (--no-syscalls)" :
                                              "planned after the kernel-internal ones (--no-syscalls leaves them out)");
        if (p->n == 0)
                return;
        fprintf(stderr, "%6s  %-40s  %8s  %-9s  %s\n", "RUN", "FUNCTION", "CALL", "STACK", "STACK CALL");
        for (size_t i = 0; i < p->n; i++) {
                char st[48] = "-", sc[64] = "-";

                if (p->v[i].stack)
                        snprintf(st, sizeof(st), "%" PRIu64 "/%" PRIu64, p->v[i].stack, p->v[i].n_stacks);
                if (p->v[i].stack_calls)
                        snprintf(sc, sizeof(sc), "%" PRIu64 " of %" PRIu64 "%s", p->v[i].stack_call,
                                 p->v[i].stack_calls, p->v[i].syscall ? " (syscall entry)" : "");
                fprintf(stderr, "%6zu  %-40s  %8" PRIu64 "  %-9s  %s\n", i + 1, p->v[i].function, p->v[i].call, st,
                        sc);
        }
}


void explore_print_progress(bool on, size_t done, size_t total, uint64_t started) {
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

void explore_print_run(const FaultRun *r, const PlanItem *item, uint64_t n, size_t total, json_object *reports) {
        char result[32];

        fprintf(stderr, "explore: run %" PRIu64 "/%zu: %s call %" PRIu64 ": %s, %s%s", n, total, item->function,
                item->call, r->fired ? "failed" : "not reached", fault_run_result(r, result, sizeof(result)),
                r->exec_failed ? " (the command could not be executed)" : "");
        for (size_t i = 0; i < json_object_array_length(reports); i++)
                fprintf(stderr, "%s%s", i ? ", " : "; kernel: ",
                        json_object_get_string(json_object_object_get(json_object_array_get_idx(reports, i), "detector")));
        fputc('\n', stderr);
}

void explore_print_findings(const Findings *f) {
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

void explore_print_reached(json_object *reached, json_object *observing, size_t n_asked, size_t denied) {
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
