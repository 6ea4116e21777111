/* SPDX-License-Identifier: MIT */
/* explore's plan and its execution against a fake run: round-robin
 * across functions within --max-runs; an earlier report's runs and refused
 * functions left out when resuming; a function whose injection injectd
 * refuses is recorded once with why, its other runs skipped, and the rest
 * of the plan still made; an exit code ends it. */

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

typedef struct Fake {
        const char *refuse;     /* the function injectd refuses */
        size_t stop_at;         /* the call that returns an exit code; SIZE_MAX: none */
        char made[16][8];       /* "a0": function and call of each run made or tried */
        size_t n;
} Fake;

static int fake_run(const PlanItem *item, size_t index, void *userdata, json_object **ret_refusal) {
        Fake *f = userdata;

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

static void test_build(void) {
        _cleanup_json_ json_object *reached = json_tokener_parse(reached_json), *list = json_tokener_parse(list_json);
        _cleanup_json_ json_object *done = json_tokener_parse("[ { \"function\": \"a\", \"call\": 4 } ]");
        _cleanup_json_ json_object *refused = json_tokener_parse("[ { \"function\": \"c\" } ]");
        _cleanup_(plan_done) Plan p = {};
        size_t n_done = 99;

        /* Per stack, round-robin: a0 b0 c0, a4 b1, a7. */
        ASSERT_OK(plan_build(reached, list, false, 100, NULL, NULL, &p, &n_done));
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
        ASSERT_OK(plan_build(reached, list, false, 3, NULL, NULL, &p, &n_done));
        ASSERT_EQ(p.n, 3u);
        ASSERT_EQ(p.n_total, 6u);
        plan_done(&p);

        /* Per call: 9 + 2 + 1. */
        ASSERT_OK(plan_build(reached, list, true, 100, NULL, NULL, &p, &n_done));
        ASSERT_EQ(p.n, 12u);
        plan_done(&p);

        /* Resumed: a's call 4 was run, c was refused. */
        ASSERT_OK(plan_build(reached, list, false, 100, done, refused, &p, &n_done));
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

        ASSERT_OK(plan_build(reached, list, false, 100, NULL, NULL, &p, &n_done));
        ASSERT_OK(plan_execute(&p, fake_run, &f));
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

        ASSERT_OK(plan_build(reached, list, false, 100, NULL, NULL, &p, &n_done));
        ASSERT_EQ(plan_execute(&p, fake_run, &f), 4);
        ASSERT_EQ(f.n, 2u);
        ASSERT_EQ(p.n_made, 1u);
        ASSERT_EQ(json_object_array_length(p.refused), 0u);
}

int main(void) {
        test_build();
        test_execute_refused();
        test_execute_stop();
        return 0;
}
