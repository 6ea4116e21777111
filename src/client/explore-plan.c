/* SPDX-License-Identifier: MIT */
/* explore's plan and its execution (explore-plan.h). */

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "explore-plan.h"
#include "json-build.h"
#include "json-util.h"

void plan_done(Plan *p) {
        free(p->v);
        free(p->through_hits);
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

/* What a system call's entry is made of, below the function: the entry
 * code, do_syscall_64 and the table's wrappers (x86-64 and its 32-bit
 * compatibility entries). */
static const char *const syscall_frames[] = {
        "entry_SYSCALL_64*", "do_syscall_64", "x64_sys_call", "__x64_sys_*", "__ia32_sys_*", "__se_sys_*",
        "__do_sys_*", "__x64_compat_sys_*", "__ia32_compat_sys_*", "__do_compat_sys_*", "__se_compat_sys_*",
        "do_int80_syscall_32", "__do_fast_syscall_32", "do_fast_syscall_32", "do_SYSENTER_32",
        "entry_SYSENTER_compat*", "entry_INT80_compat*", "entry_SYSCALL_compat*",
};
/* A function that is itself a system call. */
static const char *const syscall_functions[] = {
        "__x64_sys_*", "__ia32_sys_*", "__se_sys_*", "__do_sys_*", "__x64_compat_sys_*", "__ia32_compat_sys_*",
        "__do_compat_sys_*", "__se_compat_sys_*",
};

static bool match_any(const char *const *globs, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (fnmatch(globs[i], name, 0) == 0)
                        return true;
        return false;
}

bool plan_stack_is_syscall(const char *function, json_object *frames) {
        size_t n = frames ? json_object_array_length(frames) : 0, i = 0;

        if (match_any(syscall_functions, ELEMENTSOF(syscall_functions), function))
                return true;
        /* The innermost frames are the function's own (or, with some
         * unwinders, none of them are): what lies below it counts. */
        for (size_t k = 0; k < n; k++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(frames, k)), function) == 0)
                        i = k + 1;
        if (i >= n)
                return false;
        for (; i < n; i++)
                if (!match_any(syscall_frames, ELEMENTSOF(syscall_frames),
                               json_object_get_string(json_object_array_get_idx(frames, i))))
                        return false;
        return true;
}

/* The i-th of m positions spread evenly over 0..c-1, first and last
 * included (m >= 2, m <= c), rounded to the nearest. */
static uint64_t spread(uint64_t c, uint64_t m, uint64_t i) {
        unsigned __int128 x = (unsigned __int128) i * (c - 1) + (m - 1) / 2;

        return (uint64_t) (x / (m - 1));
}

size_t plan_stack_picks(json_object *s, uint64_t depth, uint64_t *calls, uint64_t *stack_calls) {
        json_object *samples = NULL;
        uint64_t c = 1, first = 0, last = 0, stride = 1, m;
        size_t n = 0, n_samples;

        (void) json_get_u64(s, "first_call", 0, UINT64_MAX, &first);
        (void) json_get_u64(s, "calls", 1, UINT64_MAX, &c);
        (void) json_get_u64(s, "sample_stride", 1, UINT64_MAX, &stride);
        (void) json_get_array(s, "samples", &samples);
        n_samples = samples ? json_object_array_length(samples) : 0;
        /* A stack of an older daemon's discovery has no last call. */
        if (json_get_u64(s, "last_call", 0, UINT64_MAX, &last) < 0)
                c = 1;
        m = depth < c ? depth : c;
        calls[n] = first;
        stack_calls[n++] = 0;
        for (uint64_t i = 1; i < m; i++) {
                uint64_t pos = spread(c, m, i), call;

                if (pos == c - 1)
                        call = last;
                else {
                        /* Not the first nor the last: the nearest call
                         * the discovery kept (exact up to OBSERVE_SAMPLES
                         * calls per stack). */
                        uint64_t idx = (pos + stride / 2) / stride;

                        if (n_samples == 0)
                                continue;
                        if (idx >= n_samples)
                                idx = n_samples - 1;
                        call = json_object_get_uint64(json_object_array_get_idx(samples, idx));
                        pos = idx * stride;
                }
                if (call == calls[n - 1] || pos == stack_calls[n - 1])
                        continue;
                calls[n] = call;
                stack_calls[n++] = pos;
        }
        return n;
}

/* One stack kept for the plan, with the calls to fail. */
typedef struct Unit {
        const char *function;
        size_t function_index;          /* in reached: the round-robin's order */
        size_t rank;                    /* among its function's stacks of the same kind */
        uint64_t stack, n_stacks, stack_calls;
        bool syscall;
        size_t n_picks;
        uint64_t calls[PLAN_DEPTH_MAX], local[PLAN_DEPTH_MAX];
} Unit;

typedef struct Slot {
        const Unit *unit;
        size_t pick;
} Slot;

/* Kernel-internal stacks first; then by the pick's depth (every stack's
 * first call before any stack's second), then round-robin across the
 * functions by their stacks' order. */
static int cmp_slot(const void *a, const void *b) {
        const Slot *x = a, *y = b;

        if (x->unit->syscall != y->unit->syscall)
                return x->unit->syscall ? 1 : -1;
        if (x->pick != y->pick)
                return x->pick < y->pick ? -1 : 1;
        if (x->unit->rank != y->unit->rank)
                return x->unit->rank < y->unit->rank ? -1 : 1;
        return x->unit->function_index < y->unit->function_index ? -1 :
               x->unit->function_index > y->unit->function_index;
}

static int plan_add(Plan *p, json_object *list, uint64_t max_runs, json_object *done, json_object *refused,
                    PlanItem item, size_t *n_done) {
        if (done_before(done, item.function, item.call) || find_refused(refused, item.function)) {
                (*n_done)++;
                return 0;
        }
        p->n_total++;
        if (p->n >= max_runs)
                return 0;
        item.error = type_error(list, item.function);
        return plan_push(p, item);
}

/* Every call of each function, round-robin: the i-th of each before the
 * (i+1)-th of any. */
static int plan_per_call(Plan *p, json_object *reached, json_object *list, uint64_t max_runs, json_object *done,
                         json_object *refused, size_t *n_done) {
        size_t n = json_object_array_length(reached);
        bool more = true;
        int r;

        for (uint64_t call = 0; more; call++) {
                more = false;
                for (size_t i = 0; i < n; i++) {
                        json_object *f = json_object_array_get_idx(reached, i);
                        const char *name = NULL;
                        uint64_t calls = 0;

                        (void) json_get_string(f, "function", &name);
                        (void) json_get_u64(f, "calls", 0, UINT64_MAX, &calls);
                        if (!name || call >= calls)
                                continue;
                        more = true;
                        r = plan_add(p, list, max_runs, done, refused, (PlanItem) { .function = name, .call = call },
                                     n_done);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int plan_build(json_object *reached, json_object *list, const PlanOptions *o, json_object *done,
               json_object *refused, Plan *ret, size_t *ret_done) {
        _cleanup_(plan_done) Plan p = {};
        _cleanup_free_ Unit *units = NULL;
        _cleanup_free_ Slot *slots = NULL;
        size_t n = json_object_array_length(reached), n_done = 0, n_units = 0, n_slots = 0, cap = 0;
        uint64_t depth = o->depth ?: PLAN_DEPTH_DEFAULT;
        int r;

        if (depth > PLAN_DEPTH_MAX)
                return -EINVAL;
        p.refused = json_object_new_array();
        if (!p.refused)
                return -ENOMEM;
        if (o->per_call) {
                r = plan_per_call(&p, reached, list, o->max_runs, done, refused, &n_done);
                if (r < 0)
                        return r;
                goto finish;
        }
        p.depth = depth;
        p.n_through = o->n_through;
        if (o->n_through > 0) {
                p.through_hits = calloc(o->n_through, sizeof(*p.through_hits));
                if (!p.through_hits)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *stacks = NULL;

                (void) json_get_array(json_object_array_get_idx(reached, i), "stacks", &stacks);
                cap += stacks && json_object_array_length(stacks) > 0 ? json_object_array_length(stacks) : 1;
        }
        units = calloc(cap ?: 1, sizeof(*units));
        if (!units)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *f = json_object_array_get_idx(reached, i), *stacks = NULL;
                const char *name = NULL;
                size_t n_stacks, rank[2] = {};
                uint64_t calls = 0;

                (void) json_get_string(f, "function", &name);
                (void) json_get_u64(f, "calls", 0, UINT64_MAX, &calls);
                (void) json_get_array(f, "stacks", &stacks);
                n_stacks = stacks ? json_object_array_length(stacks) : 0;
                if (!name)
                        continue;
                if (n_stacks == 0) {
                        /* Calls, but no stack recorded (the stack map was
                         * full): by call number, spread over its calls, and
                         * no --through can keep it. */
                        Unit *u = &units[n_units];
                        uint64_t m = depth < calls ? depth : calls;

                        if (calls == 0)
                                continue;
                        if (o->n_through > 0) {
                                p.n_stacks++;   /* one, unknown: counted as left out */
                                p.n_through_dropped++;
                                continue;
                        }
                        *u = (Unit) { .function = name, .function_index = i, .stack_calls = calls };
                        u->calls[u->n_picks++] = 0;
                        for (uint64_t k = 1; k < m; k++)
                                u->local[u->n_picks] = u->calls[u->n_picks] = spread(calls, m, k), u->n_picks++;
                        n_units++;
                        continue;
                }
                p.n_stacks += n_stacks;
                for (size_t k = 0; k < n_stacks; k++) {
                        json_object *s = json_object_array_get_idx(stacks, k), *frames = NULL;
                        Unit *u = &units[n_units];
                        bool kept = o->n_through == 0;

                        (void) json_get_array(s, "frames", &frames);
                        for (size_t g = 0; g < o->n_through; g++) {
                                bool hit = fnmatch(o->through[g], name, 0) == 0;

                                for (size_t j = 0; !hit && frames && j < json_object_array_length(frames); j++)
                                        hit = fnmatch(o->through[g],
                                                      json_object_get_string(json_object_array_get_idx(frames, j)),
                                                      0) == 0;
                                if (hit) {
                                        p.through_hits[g]++;
                                        kept = true;
                                }
                        }
                        if (!kept) {
                                p.n_through_dropped++;
                                continue;
                        }
                        *u = (Unit) { .function = name, .function_index = i, .stack = k + 1, .n_stacks = n_stacks,
                                      .syscall = plan_stack_is_syscall(name, frames) };
                        if (u->syscall) {
                                p.n_syscalls++;
                                if (o->no_syscalls)
                                        continue;
                        }
                        (void) json_get_u64(s, "calls", 1, UINT64_MAX, &u->stack_calls);
                        u->rank = rank[u->syscall]++;
                        u->n_picks = plan_stack_picks(s, depth, u->calls, u->local);
                        n_units++;
                }
        }
        p.syscalls_dropped = o->no_syscalls;
        for (size_t i = 0; i < n_units; i++)
                n_slots += units[i].n_picks;
        slots = calloc(n_slots ?: 1, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        n_slots = 0;
        for (size_t i = 0; i < n_units; i++)
                for (size_t k = 0; k < units[i].n_picks; k++)
                        slots[n_slots++] = (Slot) { .unit = &units[i], .pick = k };
        qsort(slots, n_slots, sizeof(*slots), cmp_slot);
        for (size_t i = 0; i < n_slots; i++) {
                const Unit *u = slots[i].unit;

                r = plan_add(&p, list, o->max_runs, done, refused, (PlanItem) {
                                .function = u->function,
                                .call = u->calls[slots[i].pick],
                                .stack = u->stack,
                                .n_stacks = u->n_stacks,
                                .stack_call = u->local[slots[i].pick],
                                .stack_calls = u->stack_calls,
                                .syscall = u->syscall,
                        }, &n_done);
                if (r < 0)
                        return r;
        }
finish:
        *ret = p;
        p = (Plan) {};
        *ret_done = n_done;
        return 0;
}

int plan_refuse(Plan *p, size_t i, json_object *refusal) {
        _cleanup_json_ json_object *r = refusal;
        const char *function = p->v[i].function;

        /* The same function's other runs would be refused too. */
        for (size_t j = i; j < p->n; j++)
                if (!p->v[j].skipped && strcmp(p->v[j].function, function) == 0) {
                        p->v[j].skipped = true;
                        p->n_skipped++;
                }
        return json_append(p->refused, TAKE_PTR(r));
}
