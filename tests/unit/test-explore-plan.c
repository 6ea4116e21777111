/* SPDX-License-Identifier: MIT */
/* explore's plan and its execution against a fake run: round-robin
 * across functions within --max-runs; a stack's first and last call, or
 * --depth K spread over them; --through; system-call entries last or
 * left out (--no-syscalls); --max-runs cutting depth before breadth; an earlier report's runs and refused
 * functions left out when resuming; a function whose injection injectd
 * refuses is recorded once with why, its other runs skipped, and the rest
 * of the plan still made; an exit code ends it. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "explore-plan.h"
#include "json-util.h"
#include "test-util.h"

/* What discovery reports: a (3 stacks), b (2), c (1 call, no stack). */
static const char *const reached_json =
        "[ { \"function\": \"a\", \"calls\": 9, \"stacks\": [ { \"first_call\": 0 }, { \"first_call\": 4 }, "
        "{ \"first_call\": 7 } ] },"
        "  { \"function\": \"b\", \"calls\": 2, \"stacks\": [ { \"first_call\": 0 }, { \"first_call\": 1 } ] },"
        "  { \"function\": \"c\", \"calls\": 1 } ]";
static const char *const list_json =
        "[ { \"name\": \"a\", \"type\": \"ERRNO\" }, { \"name\": \"b\", \"type\": \"TRUE\" }, "
        "{ \"name\": \"c\", \"type\": \"LSM\" } ]";

#define opts(per_call_, max_runs_) ((PlanOptions) { .per_call = (per_call_), .max_runs = (max_runs_) })

/* A discovery of the new kind: last calls, samples, frames. f (kernel
 * internal) from three stacks: 3 calls (0, 2, 4), 1 call (1), and 40 calls
 * whose samples, every 4th of its calls, are 3, 11, ..., 75, its last 99;
 * __x64_sys_openat is a system call itself, g is called from one's entry
 * alone. */
static const char *const deep_json =
        "[ { \"function\": \"__x64_sys_openat\", \"calls\": 2, \"stacks\": ["
        "    { \"first_call\": 0, \"last_call\": 1, \"calls\": 2, \"sample_stride\": 1, \"samples\": [0, 1],"
        "      \"frames\": [\"__x64_sys_openat\", \"do_syscall_64\", \"entry_SYSCALL_64_after_hwframe\"] } ] },"
        "  { \"function\": \"f\", \"calls\": 44, \"stacks\": ["
        "    { \"first_call\": 0, \"last_call\": 4, \"calls\": 3, \"sample_stride\": 1, \"samples\": [0, 2, 4],"
        "      \"frames\": [\"f\", \"loop_setup\", \"ext4_fill_super\", \"do_syscall_64\"] },"
        "    { \"first_call\": 1, \"last_call\": 1, \"calls\": 1, \"sample_stride\": 1, \"samples\": [1],"
        "      \"frames\": [\"f\", \"btrfs_x\", \"do_syscall_64\"] },"
        "    { \"first_call\": 3, \"last_call\": 99, \"calls\": 40, \"sample_stride\": 4,"
        "      \"samples\": [3, 11, 19, 27, 35, 43, 51, 59, 67, 75],"
        "      \"frames\": [\"f\", \"ext4_y\", \"do_syscall_64\"] } ] },"
        "  { \"function\": \"g\", \"calls\": 1, \"stacks\": ["
        "    { \"first_call\": 0, \"last_call\": 0, \"calls\": 1, \"sample_stride\": 1, \"samples\": [0],"
        "      \"frames\": [\"g\", \"__x64_sys_write\", \"do_syscall_64\", \"entry_SYSCALL_64_after_hwframe\"] } ] } ]";

/* The plan as "function:call" words, for one comparison. */
static void plan_words(const Plan *p, char *buf, size_t size) {
        size_t k = 0;

        buf[0] = 0;
        for (size_t i = 0; i < p->n && k < size; i++)
                k += (size_t) snprintf(buf + k, size - k, "%s%s:%llu", i ? " " : "",
                                       strcmp(p->v[i].function, "__x64_sys_openat") == 0 ? "open" : p->v[i].function,
                                       (unsigned long long) p->v[i].call);
}

static void test_depth(void) {
        _cleanup_json_ json_object *reached = json_tokener_parse(deep_json), *list = json_tokener_parse(list_json);
        _cleanup_(plan_done) Plan p = {};
        size_t n_done;
        char w[512];

        ASSERT_TRUE(reached);
        /* The default: every stack's first call, kernel-internal stacks
         * first, then their last calls; the system-call entries after. */
        ASSERT_OK(plan_build(reached, list, &opts(false, 100), NULL, NULL, &p, &n_done));
        plan_words(&p, w, sizeof(w));
        ASSERT_STREQ(w, "f:0 f:1 f:3 f:4 f:99 open:0 g:0 open:1");
        ASSERT_EQ_U64(p.depth, 2);
        ASSERT_EQ(p.n_stacks, 5u);
        ASSERT_EQ(p.n_syscalls, 2u);
        ASSERT_FALSE(p.syscalls_dropped);
        ASSERT_EQ_U64(p.v[3].stack, 1);         /* f:4 is stack 1's last call, its third */
        ASSERT_EQ_U64(p.v[3].stack_call, 2);
        ASSERT_EQ_U64(p.v[3].stack_calls, 3);
        ASSERT_EQ_U64(p.v[4].stack_call, 39);
        ASSERT_TRUE(p.v[5].syscall);
        ASSERT_TRUE(p.v[6].syscall);
        ASSERT_FALSE(p.v[0].syscall);
        plan_done(&p);

        /* --depth 1: today's plan, the first call of each stack. */
        ASSERT_OK(plan_build(reached, list, &(PlanOptions) { .depth = 1, .max_runs = 100 }, NULL, NULL, &p, &n_done));
        plan_words(&p, w, sizeof(w));
        ASSERT_STREQ(w, "f:0 f:1 f:3 open:0 g:0");
        plan_done(&p);

        /* --depth 3: 0, 1, 2 of the 3-call stack (calls 0, 2, 4); 0, 20, 39
         * of the 40-call one, call 20 being its sample 5 (43). */
        ASSERT_OK(plan_build(reached, list, &(PlanOptions) { .depth = 3, .max_runs = 100 }, NULL, NULL, &p, &n_done));
        plan_words(&p, w, sizeof(w));
        ASSERT_STREQ(w, "f:0 f:1 f:3 f:2 f:43 f:4 f:99 open:0 g:0 open:1");
        ASSERT_EQ_U64(p.v[4].stack_call, 20);
        plan_done(&p);

        /* --depth 64 takes every call of a short stack, never one twice. */
        ASSERT_OK(plan_build(reached, list, &(PlanOptions) { .depth = 64, .max_runs = 100 }, NULL, NULL, &p, &n_done));
        ASSERT_EQ(p.n, 3u + 1u + 11u + 2u + 1u);
        plan_done(&p);
        ASSERT_EQ(plan_build(reached, list, &(PlanOptions) { .depth = 65, .max_runs = 100 }, NULL, NULL, &p, &n_done),
                  -EINVAL);
}

static void test_max_runs_depth_last(void) {
        _cleanup_json_ json_object *reached = json_tokener_parse(deep_json), *list = json_tokener_parse(list_json);
        _cleanup_(plan_done) Plan p = {};
        size_t n_done;
        char w[512];

        /* Three runs: the three internal stacks' first calls, no second call. */
        ASSERT_OK(plan_build(reached, list, &opts(false, 3), NULL, NULL, &p, &n_done));
        plan_words(&p, w, sizeof(w));
        ASSERT_STREQ(w, "f:0 f:1 f:3");
        ASSERT_EQ(p.n_total, 8u);
        plan_done(&p);
        /* Four: one second call comes in only once every first one is. */
        ASSERT_OK(plan_build(reached, list, &opts(false, 4), NULL, NULL, &p, &n_done));
        plan_words(&p, w, sizeof(w));
        ASSERT_STREQ(w, "f:0 f:1 f:3 f:4");
        plan_done(&p);
}

static void test_through(void) {
        _cleanup_json_ json_object *reached = json_tokener_parse(deep_json), *list = json_tokener_parse(list_json);
        _cleanup_(plan_done) Plan p = {};
        char *globs[] = { (char *) "ext4_*", (char *) "nomatch_*", NULL };
        char *self[] = { (char *) "f", NULL };
        size_t n_done;
        char w[512];

        ASSERT_OK(plan_build(reached, list, &(PlanOptions) { .through = globs, .n_through = 2, .max_runs = 100 },
                             NULL, NULL, &p, &n_done));
        plan_words(&p, w, sizeof(w));
        ASSERT_STREQ(w, "f:0 f:3 f:4 f:99");
        ASSERT_EQ(p.n_through_dropped, 3u);
        ASSERT_EQ(p.through_hits[0], 2u);
        ASSERT_EQ(p.through_hits[1], 0u);       /* said: it matches nothing */
        plan_done(&p);

        /* The function itself is a frame it passes through. */
        ASSERT_OK(plan_build(reached, list, &(PlanOptions) { .through = self, .n_through = 1, .max_runs = 100 },
                             NULL, NULL, &p, &n_done));
        plan_words(&p, w, sizeof(w));
        ASSERT_STREQ(w, "f:0 f:1 f:3 f:4 f:99");
        ASSERT_EQ(p.n_through_dropped, 2u);
        plan_done(&p);
}

static void test_no_syscalls(void) {
        _cleanup_json_ json_object *reached = json_tokener_parse(deep_json), *list = json_tokener_parse(list_json);
        _cleanup_json_ json_object *f_frames = json_tokener_parse("[\"f\", \"do_syscall_64\", \"entry_SYSCALL_64\"]");
        _cleanup_json_ json_object *deep = json_tokener_parse("[\"f\", \"vfs_write\", \"do_syscall_64\"]");
        _cleanup_json_ json_object *none = json_tokener_parse("[]");
        _cleanup_(plan_done) Plan p = {};
        size_t n_done;
        char w[512];

        ASSERT_OK(plan_build(reached, list, &(PlanOptions) { .no_syscalls = true, .max_runs = 100 }, NULL, NULL, &p,
                             &n_done));
        plan_words(&p, w, sizeof(w));
        ASSERT_STREQ(w, "f:0 f:1 f:3 f:4 f:99");
        ASSERT_EQ(p.n_syscalls, 2u);
        ASSERT_TRUE(p.syscalls_dropped);
        plan_done(&p);

        ASSERT_TRUE(plan_stack_is_syscall("f", f_frames));
        ASSERT_FALSE(plan_stack_is_syscall("f", deep));
        ASSERT_FALSE(plan_stack_is_syscall("f", none));  /* no frames: nothing says it is */
        ASSERT_TRUE(plan_stack_is_syscall("__x64_sys_openat", none));
}

typedef struct Fake {
        const char *refuse;     /* the function injectd refuses */
        size_t stop_at;         /* the call that returns an exit code; SIZE_MAX: none */
        char made[16][8];       /* "a0": function and call of each run made or tried */
        size_t n;
} Fake;

static int fake_run(const PlanItem *item, size_t index, Fake *f, json_object **ret_refusal) {
        (void) index;
        ASSERT_TRUE(f->n < 16);
        snprintf(f->made[f->n], sizeof(f->made[f->n]), "%s%llu", item->function, (unsigned long long) item->call);
        if (f->n++ == f->stop_at)
                return 4;
        if (f->refuse && strcmp(item->function, f->refuse) == 0) {
                *ret_refusal = json_tokener_parse("{ \"function\": \"b\", \"error\": \"NotInjectable\", "
                                                  "\"message\": \"not on the list\" }");
                ASSERT_TRUE(*ret_refusal);
        }
        return 0;
}

/* What explore's run loop does with the plan, one run at a time: skip
 * what is skipped, hand a refusal to plan_refuse(), stop at an exit code. */
static int drive(Plan *p, Fake *f) {
        for (size_t i = 0; i < p->n; i++) {
                json_object *refusal = NULL;
                int r;

                if (p->v[i].skipped)
                        continue;
                r = fake_run(&p->v[i], i, f, &refusal);
                if (r != 0)
                        return r;
                if (!refusal) {
                        p->n_made++;
                        continue;
                }
                ASSERT_OK(plan_refuse(p, i, refusal));
        }
        return 0;
}

static void test_build(void) {
        _cleanup_json_ json_object *reached = json_tokener_parse(reached_json), *list = json_tokener_parse(list_json);
        _cleanup_json_ json_object *done = json_tokener_parse("[ { \"function\": \"a\", \"call\": 4 } ]");
        _cleanup_json_ json_object *refused = json_tokener_parse("[ { \"function\": \"c\" } ]");
        _cleanup_(plan_done) Plan p = {};
        size_t n_done = 99;

        /* Per stack, round-robin: a0 b0 c0, a4 b1, a7. */
        ASSERT_OK(plan_build(reached, list, &opts(false, 100), NULL, NULL, &p, &n_done));
        ASSERT_EQ(p.n, 6u);
        ASSERT_EQ(p.n_total, 6u);
        ASSERT_EQ(n_done, 0u);
        ASSERT_STREQ(p.v[0].function, "a");
        ASSERT_STREQ(p.v[1].function, "b");
        ASSERT_STREQ(p.v[2].function, "c");
        ASSERT_EQ_U64(p.v[3].call, 4);
        ASSERT_EQ_U64(p.v[3].stack, 2);
        ASSERT_EQ_U64(p.v[5].call, 7);
        ASSERT_STREQ(p.v[0].error, "ENOMEM");
        ASSERT_TRUE(p.v[1].error == NULL);     /* TRUE: run picks 1 itself */
        ASSERT_STREQ(p.v[2].error, "EACCES");   /* an LSM hook denies */
        ASSERT_EQ_U64(p.v[2].stack, 0);         /* no stack recorded: by call number */
        plan_done(&p);

        /* --max-runs cuts depth: the first of each function stays. */
        ASSERT_OK(plan_build(reached, list, &opts(false, 3), NULL, NULL, &p, &n_done));
        ASSERT_EQ(p.n, 3u);
        ASSERT_EQ(p.n_total, 6u);
        plan_done(&p);

        /* Per call: 9 + 2 + 1. */
        ASSERT_OK(plan_build(reached, list, &opts(true, 100), NULL, NULL, &p, &n_done));
        ASSERT_EQ(p.n, 12u);
        plan_done(&p);

        /* Resumed: a's call 4 was run, c was refused. */
        ASSERT_OK(plan_build(reached, list, &opts(false, 100), done, refused, &p, &n_done));
        ASSERT_EQ(p.n, 4u);
        ASSERT_EQ(n_done, 2u);
        for (size_t i = 0; i < p.n; i++) {
                ASSERT_FALSE(strcmp(p.v[i].function, "c") == 0);
                ASSERT_FALSE(strcmp(p.v[i].function, "a") == 0 && p.v[i].call == 4);
        }
}

static void test_execute_refused(void) {
        _cleanup_json_ json_object *reached = json_tokener_parse(reached_json), *list = json_tokener_parse(list_json);
        _cleanup_(plan_done) Plan p = {};
        Fake f = { .refuse = "b", .stop_at = SIZE_MAX };
        const char *error = NULL;
        size_t n_done;

        ASSERT_OK(plan_build(reached, list, &opts(false, 100), NULL, NULL, &p, &n_done));
        ASSERT_OK(drive(&p, &f));
        /* b tried once; its second run skipped; every other run made. */
        ASSERT_EQ(f.n, 5u);
        ASSERT_STREQ(f.made[0], "a0");
        ASSERT_STREQ(f.made[1], "b0");
        ASSERT_STREQ(f.made[2], "c0");
        ASSERT_STREQ(f.made[3], "a4");
        ASSERT_STREQ(f.made[4], "a7");
        ASSERT_EQ(p.n_made, 4u);
        ASSERT_EQ(p.n_skipped, 2u);             /* b's two: the one refused and the one not tried */
        ASSERT_EQ(json_object_array_length(p.refused), 1u);
        ASSERT_OK(json_get_string(json_object_array_get_idx(p.refused, 0), "error", &error));
        ASSERT_STREQ(error, "NotInjectable");
}

static void test_execute_stop(void) {
        _cleanup_json_ json_object *reached = json_tokener_parse(reached_json), *list = json_tokener_parse(list_json);
        _cleanup_(plan_done) Plan p = {};
        Fake f = { .stop_at = 1 };
        size_t n_done;

        ASSERT_OK(plan_build(reached, list, &opts(false, 100), NULL, NULL, &p, &n_done));
        ASSERT_EQ(drive(&p, &f), 4);
        ASSERT_EQ(f.n, 2u);
        ASSERT_EQ(p.n_made, 1u);
        ASSERT_EQ(json_object_array_length(p.refused), 0u);
}

int main(void) {
        test_build();
        test_depth();
        test_max_runs_depth_last();
        test_through();
        test_no_syscalls();
        test_execute_refused();
        test_execute_stop();
        return 0;
}
