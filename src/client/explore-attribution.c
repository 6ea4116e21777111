/* SPDX-License-Identifier: MIT */
/* Which run a kernel report belongs to (explore-attribution.h). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "explore-attribution.h"
#include "json-build.h"
#include "json-util.h"
#include "time-util.h"

/* A kmemleak allocation time is its read time less its age, printed to
 * the millisecond, and the clocks are read around the run, not at its
 * exact first and last instruction: a margin either side. */
#define ATTRIBUTION_SLACK_USEC (USEC_PER_SEC / 2)
/* A pid in a run's range is its own unless pid_max wrapped and the pid was
 * reused by a later run: its time only has to rule that out, and the
 * kernel's clock (jiffies, for kmemleak's age) is allowed to drift from
 * ours under emulation. */
#define ATTRIBUTION_PID_SLACK_USEC (10 * USEC_PER_SEC)

void run_windows_done(RunWindows *w) {
        for (size_t i = 0; i < w->n; i++) {
                free(w->v[i].function);
                free(w->v[i].reproducer);
                json_object_put(w->v[i].stack);
                json_object_put(w->v[i].reports);
        }
        free(w->v);
        *w = (RunWindows) {};
}

int run_windows_add(RunWindows *w, const RunWindow *r) {
        RunWindow *v = realloc(w->v, (w->n + 1) * sizeof(*v)), *x;

        if (!v)
                return -ENOMEM;
        w->v = v;
        x = &v[w->n];
        *x = *r;
        x->function = strdup(r->function);
        x->reproducer = strdup(r->reproducer);
        if (!x->function || !x->reproducer) {
                free(x->function);
                free(x->reproducer);
                return -ENOMEM;
        }
        x->stack = json_object_get(r->stack);
        x->reports = json_object_get(r->reports);
        w->n++;
        return 0;
}

static bool pid_in(const RunWindow *r, int pid) {
        if (pid <= 0 || r->pid <= 0)
                return false;
        if (pid == r->pid)
                return true;
        if (r->last_pid <= 0)
                return false;
        if (r->last_pid >= r->pid)
                return pid > r->pid && pid <= r->last_pid;
        /* pid_max was reached during the run: the range wraps. */
        return pid > r->pid || pid <= r->last_pid;
}

static bool time_in(const RunWindow *r, uint64_t t, uint64_t slack) {
        return t + slack >= r->start_usec && t <= r->end_usec + slack;
}

const RunWindow *run_windows_attribute(const RunWindows *w, int pid, uint64_t time_usec, const char **ret_how) {
        /* The latest first: pids are reused after a wrap, and a report
         * without a time is read after the run that just ended. */
        for (size_t i = w->n; i > 0; i--) {
                const RunWindow *r = &w->v[i - 1];

                if (pid_in(r, pid) && (time_usec == 0 || time_in(r, time_usec, ATTRIBUTION_PID_SLACK_USEC))) {
                        *ret_how = "pid";
                        return r;
                }
        }
        for (size_t i = w->n; i > 0; i--) {
                const RunWindow *r = &w->v[i - 1];

                if (time_usec == 0 || time_usec + ATTRIBUTION_SLACK_USEC >= r->start_usec) {
                        *ret_how = "time window";
                        return r;
                }
        }
        *ret_how = NULL;
        return NULL;
}

int run_windows_record(const RunWindows *w, const KernelReports *k, size_t from, bool print, Findings *f,
                       size_t *ret_new, size_t *ret_before) {
        for (size_t i = from; i < k->n; i++) {
                const KernelReport *x = &k->v[i];
                const char *how = NULL;
                const RunWindow *run = run_windows_attribute(w, x->pid, x->time_usec, &how);
                json_object *o = NULL;
                int r;

                if (!run) {
                        (*ret_before)++;
                        continue;
                }
                r = findings_add(f, x->signature, x->detector, x->title, x->text, run->function, run->call,
                                 run->reproducer, run->stack, run->run);
                if (r > 0 && (r = finding_set_attribution(f, f->n - 1, how, x->pid, x->comm)) >= 0)
                        r = 1;
                if (r < 0)
                        return r;
                *ret_new += (size_t) r;
                r = json_build_object(&o,
                                      JSON_PAIR_STRING("detector", x->detector),
                                      JSON_PAIR_STRING("title", x->title),
                                      JSON_PAIR_STRING("signature", x->signature),
                                      JSON_PAIR_STRING("attributed", how),
                                      JSON_PAIR_IF(x->pid > 0, JSON_PAIR_I64("pid", x->pid)),
                                      JSON_PAIR_IF(x->comm, JSON_PAIR_STRING("comm", x->comm)),
                                      JSON_BUILD_END);
                if (r >= 0)
                        r = json_append(run->reports, o);
                if (r < 0)
                        return r;
                if (print)
                        fprintf(stderr, "explore: %s, of run %" PRIu64 " (%s call %" PRIu64 ") by %s%s%s%s: %s\n",
                                x->detector, run->run, run->function, run->call, how,
                                x->comm ? " (" : "", x->comm ?: "", x->comm ? ")" : "", x->title);
        }
        return 0;
}
