/* SPDX-License-Identifier: MIT */
/* explore's plan and its execution (explore-plan.h). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "explore-plan.h"
#include "json-build.h"
#include "json-util.h"

void plan_done(Plan *p) {
        free(p->v);
        json_object_put(p->refused);
        *p = (Plan) {};
}

static int plan_push(Plan *p, PlanItem item) {
        PlanItem *v = realloc(p->v, (p->n + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        p->v = v;
        v[p->n++] = item;
        return 0;
}

static const char *type_error(json_object *functions, const char *name) {
        for (size_t i = 0; functions && i < json_object_array_length(functions); i++) {
                json_object *f = json_object_array_get_idx(functions, i);
                const char *n = NULL, *type = NULL;

                if (json_get_string(f, "name", &n) < 0 || strcmp(n, name) != 0)
                        continue;
                (void) json_get_string(f, "type", &type);
                /* TRUE and NULL functions fail with 1 and 0, which `run`
                 * picks itself when no ERROR is given; an LSM hook denies. */
                if (type && strcmp(type, "LSM") == 0)
                        return "EACCES";
                return type && (strcmp(type, "TRUE") == 0 || strcmp(type, "NULL") == 0) ? NULL : "ENOMEM";
        }
        return "ENOMEM";
}

/* Whether runs (the JSON runs of an earlier explore) failed this call. */
static bool done_before(json_object *runs, const char *function, uint64_t call) {
        for (size_t i = 0; runs && i < json_object_array_length(runs); i++) {
                json_object *r = json_object_array_get_idx(runs, i);
                const char *f = NULL;
                uint64_t c = UINT64_MAX;

                (void) json_get_string(r, "function", &f);
                (void) json_get_u64(r, "call", 0, UINT64_MAX, &c);
                if (f && strcmp(f, function) == 0 && c == call)
                        return true;
        }
        return false;
}

/* The entry of refused ([{function, ...}]) for function, or NULL. */
static json_object *find_refused(json_object *refused, const char *function) {
        for (size_t i = 0; refused && i < json_object_array_length(refused); i++) {
                json_object *x = json_object_array_get_idx(refused, i);
                const char *f = NULL;

                if (json_get_string(x, "function", &f) >= 0 && strcmp(f, function) == 0)
                        return x;
        }
        return NULL;
}

int plan_build(json_object *reached, json_object *list, bool per_call, uint64_t max_runs, json_object *done,
               json_object *refused, Plan *ret, size_t *ret_done) {
        _cleanup_(plan_done) Plan p = {};
        size_t n = json_object_array_length(reached), n_done = 0;
        bool more = true;
        int r;

        p.refused = json_object_new_array();
        if (!p.refused)
                return -ENOMEM;
        /* Round-robin across the functions reached: the i-th run of each
         * before the (i+1)-th of any, so that --max-runs cuts depth, not
         * breadth. */
        for (uint64_t depth = 0; more; depth++) {
                more = false;
                for (size_t i = 0; i < n; i++) {
                        json_object *f = json_object_array_get_idx(reached, i), *stacks = NULL;
                        const char *name = NULL;
                        uint64_t calls = 0, first = depth;
                        size_t n_stacks;

                        (void) json_get_string(f, "function", &name);
                        (void) json_get_u64(f, "calls", 0, UINT64_MAX, &calls);
                        (void) json_get_array(f, "stacks", &stacks);
                        n_stacks = stacks ? json_object_array_length(stacks) : 0;
                        if (!name)
                                continue;
                        if (!per_call && n_stacks > 0) {
                                if (depth >= n_stacks)
                                        continue;
                                (void) json_get_u64(json_object_array_get_idx(stacks, depth), "first_call", 0,
                                                    UINT64_MAX, &first);
                        } else if (depth >= calls)
                                continue;
                        more = true;
                        if (done_before(done, name, first) || find_refused(refused, name)) {
                                n_done++;
                                continue;
                        }
                        p.n_total++;
                        if (p.n >= max_runs)
                                continue;
                        r = plan_push(&p, (PlanItem) {
                                        .function = name,
                                        .error = type_error(list, name),
                                        .call = first,
                                        .stack = per_call || n_stacks == 0 ? 0 : depth + 1,
                                        .n_stacks = n_stacks,
                                });
                        if (r < 0)
                                return r;
                }
        }
        *ret = p;
        p = (Plan) {};
        *ret_done = n_done;
        return 0;
}

int plan_execute(Plan *p, PlanRunFn fn, void *userdata) {
        for (size_t i = 0; i < p->n; i++) {
                _cleanup_json_ json_object *refusal = NULL;
                const char *function = p->v[i].function;
                int r;

                if (p->v[i].skipped)
                        continue;
                r = fn(&p->v[i], i, userdata, &refusal);
                if (r != 0)
                        return r;
                if (!refusal) {
                        p->n_made++;
                        continue;
                }
                /* Refused: the same function's other runs would be too. */
                for (size_t j = i; j < p->n; j++)
                        if (strcmp(p->v[j].function, function) == 0) {
                                p->v[j].skipped = true;
                                p->n_skipped++;
                        }
                r = json_append(p->refused, TAKE_PTR(refusal));
                if (r < 0)
                        return r;
        }
        return 0;
}
