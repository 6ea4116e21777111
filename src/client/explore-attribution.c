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
                free(w->v[i].pids);
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
        x->pids = r->n_pids ? malloc(r->n_pids * sizeof(pid_t)) : NULL;
        if (!x->function || !x->reproducer || (r->n_pids && !x->pids)) {
                free(x->function);
                free(x->reproducer);
                free(x->pids);
                return -ENOMEM;
        }
        if (r->n_pids)
                memcpy(x->pids, r->pids, r->n_pids * sizeof(pid_t));
        x->stack = json_object_get(r->stack);
        x->reports = json_object_get(r->reports);
        w->n++;
        return 0;
}

int run_windows_end(RunWindows *w, uint64_t run, uint64_t end_usec, pid_t last_pid, const pid_t *pids,
                    size_t n_pids, json_object *stack) {
        for (size_t i = 0; i < w->n; i++) {
                RunWindow *r = &w->v[i];
                pid_t *v = NULL;

                if (r->run != run)
                        continue;
                if (n_pids) {
                        v = malloc(n_pids * sizeof(*v));
                        if (!v)
                                return -ENOMEM;
                        memcpy(v, pids, n_pids * sizeof(*v));
                }
                free(r->pids);
                r->pids = v;
                r->n_pids = n_pids;
                r->end_usec = end_usec;
                r->last_pid = last_pid;
                r->running = false;
                if (stack) {
                        json_object_put(r->stack);
                        r->stack = json_object_get(stack);
                }
                return 0;
        }
        return -ENOENT;
}

static bool pid_in(const RunWindow *r, int pid) {
        if (pid <= 0 || r->pid <= 0)
                return false;
        if (pid == r->pid)
                return true;
        /* Under way: its tree may have any pid allocated since its root's. */
        if (r->running)
                return pid > r->pid;
        if (r->last_pid <= 0)
                return false;
        if (r->last_pid >= r->pid)
                return pid > r->pid && pid <= r->last_pid;
        /* pid_max was reached during the run: the range wraps. */
        return pid > r->pid || pid <= r->last_pid;
}

static bool time_in(const RunWindow *r, uint64_t t, uint64_t slack) {
        return t + slack >= r->start_usec && (r->running || t <= r->end_usec + slack);
}

/* Whether two runs were under way at the same time. */
static bool overlap(const RunWindow *a, const RunWindow *b) {
        return (b->running || a->start_usec <= b->end_usec) && (a->running || b->start_usec <= a->end_usec);
}

static bool time_ok(const RunWindow *r, uint64_t t) {
        return t == 0 || time_in(r, t, ATTRIBUTION_PID_SLACK_USEC);
}

bool run_windows_attribute_full(const RunWindows *w, int pid, uint64_t time_usec, uint64_t live_run,
                                Attribution *ret) {
        const RunWindow *latest = NULL;

        *ret = (Attribution) {};
        if (pid > 0) {
                /* A run's root: exact (the latest, for a pid reused). */
                for (size_t i = w->n; i > 0; i--)
                        if (w->v[i - 1].pid == pid && time_ok(&w->v[i - 1], time_usec)) {
                                *ret = (Attribution) { .run = &w->v[i - 1], .how = "pid" };
                                return true;
                        }
                /* Alive in a run's cgroup. */
                for (size_t i = 0; live_run && i < w->n; i++)
                        if (w->v[i].run == live_run) {
                                *ret = (Attribution) { .run = &w->v[i], .how = "pid" };
                                return true;
                        }
                /* Seen in a run's cgroup when it ended. */
                for (size_t i = w->n; i > 0; i--)
                        for (size_t k = 0; k < w->v[i - 1].n_pids; k++)
                                if (w->v[i - 1].pids[k] == pid && time_ok(&w->v[i - 1], time_usec)) {
                                        *ret = (Attribution) { .run = &w->v[i - 1], .how = "pid" };
                                        return true;
                                }
                /* The pid ranges: the latest, and every run side by side
                 * with it whose range holds the pid too. */
                for (size_t i = w->n; i > 0; i--) {
                        const RunWindow *r = &w->v[i - 1];

                        if (!pid_in(r, pid) || !time_ok(r, time_usec))
                                continue;
                        if (!latest) {
                                latest = r;
                                ret->run = r;
                                ret->how = "pid";
                        } else if (!overlap(latest, r))
                                continue;
                        else
                                ret->how = "ambiguous";
                        if (ret->n_candidates < ATTRIBUTION_CANDIDATES_MAX)
                                ret->candidates[ret->n_candidates++] = r->run;
                }
                if (latest) {
                        /* Named in run order, the first the finding's. */
                        for (size_t a = 1; a < ret->n_candidates; a++)
                                for (size_t b = a; b > 0 && ret->candidates[b - 1] > ret->candidates[b]; b--) {
                                        uint64_t t = ret->candidates[b];

                                        ret->candidates[b] = ret->candidates[b - 1];
                                        ret->candidates[b - 1] = t;
                                }
                        for (size_t i = 0; ret->n_candidates > 1 && i < w->n; i++)
                                if (w->v[i].run == ret->candidates[0])
                                        ret->run = &w->v[i];
                        if (ret->n_candidates <= 1)
                                ret->n_candidates = 0;
                        return true;
                }
        }
        for (size_t i = w->n; i > 0; i--) {
                const RunWindow *r = &w->v[i - 1];

                if (time_usec == 0 || time_usec + ATTRIBUTION_SLACK_USEC >= r->start_usec) {
                        *ret = (Attribution) { .run = r, .how = "time window" };
                        return true;
                }
        }
        return false;
}

const RunWindow *run_windows_attribute(const RunWindows *w, int pid, uint64_t time_usec, const char **ret_how) {
        Attribution a;

        if (!run_windows_attribute_full(w, pid, time_usec, 0, &a)) {
                *ret_how = NULL;
                return NULL;
        }
        *ret_how = a.how;
        return a.run;
}

int run_windows_record(const RunWindows *w, const KernelReports *k, size_t from, bool print, Findings *f,
                       size_t *ret_new, size_t *ret_before) {
        return run_windows_record_live(w, k, from, print, NULL, NULL, f, ret_new, ret_before);
}

int run_windows_record_live(const RunWindows *w, const KernelReports *k, size_t from, bool print,
                            uint64_t (*live_run)(pid_t pid, void *userdata), void *userdata, Findings *f,
                            size_t *ret_new, size_t *ret_before) {
        for (size_t i = from; i < k->n; i++) {
                const KernelReport *x = &k->v[i];
                _cleanup_json_ json_object *cand = NULL;
                const char *how = NULL;
                const RunWindow *run;
                json_object *o = NULL;
                Attribution a;
                int r;

                if (!run_windows_attribute_full(w, x->pid, x->time_usec,
                                                live_run && x->pid > 0 ? live_run(x->pid, userdata) : 0, &a)) {
                        (*ret_before)++;
                        continue;
                }
                run = a.run;
                how = a.how;
                if (a.n_candidates > 1) {
                        cand = json_object_new_array();
                        for (size_t c = 0; cand && c < a.n_candidates; c++)
                                if (json_object_array_add(cand, json_object_new_uint64(a.candidates[c])) < 0)
                                        return -ENOMEM;
                        if (!cand)
                                return -ENOMEM;
                }
                r = findings_add(f, x->signature, x->detector, x->title, x->text, run->function, run->call,
                                 run->reproducer, run->stack, run->run);
                if (r > 0 && (r = finding_set_attribution(f, f->n - 1, how, x->pid, x->comm)) >= 0 &&
                    (r = finding_set_candidates(f, f->n - 1, cand)) >= 0)
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
                                      JSON_PAIR_IF(cand, JSON_PAIR_REF("candidate_runs", cand)),
                                      JSON_BUILD_END);
                if (r >= 0)
                        r = json_append(run->reports, o);
                if (r < 0)
                        return r;
                if (print && cand)
                        fprintf(stderr, "explore: %s, ambiguous: pid %d (%s) may be of run %s: %s\n", x->detector,
                                x->pid, x->comm ?: "?", json_object_to_json_string(cand), x->title);
                else if (print)
                        fprintf(stderr, "explore: %s, of run %" PRIu64 " (%s call %" PRIu64 ") by %s%s%s%s: %s\n",
                                x->detector, run->run, run->function, run->call, how,
                                x->comm ? " (" : "", x->comm ?: "", x->comm ? ")" : "", x->title);
        }
        return 0;
}
