/* SPDX-License-Identifier: MIT */
/* The core's defenses against one user starving the daemon or the others
 * (docs/security.md): the active injections kept for privileged callers,
 * the per-injection rate limit of fault events with its suppressed count,
 * and the bound on events read per event loop turn. Against the fake
 * engine, as test-manager.c. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core-test-util.h"
#include "fake-engine.h"
#include "fake-frontend.h"
#include "fake-polkit.h"
#include "fault-events.h"
#include "json-util.h"
#include "manager.h"
#include "test-util.h"
#include "time-util.h"

/* test_uid() and other_uid() may fail openat globally, 10 at a time. */
static const char policy_fmt[] =
        "{ \"rules\": [\n"
        "  { \"name\": \"test-limits\", \"users\": [%u, %u],\n"
        "    \"functions\": [\"__x64_sys_openat\"], \"errors\": [\"ENOENT\"],\n"
        "    \"scopes\": [\"process\", \"global\"], \"max-duration\": \"1min\", \"max-active\": 10 }\n"
        "] }\n";
static const char global[] = "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"global\"}";

static char *policy_dir;

static Manager *setup(ManagerOptions o) {
        fake_engine_reset();
        fake_polkit_reset();
        return manager_setup(policy_dir, o);
}

static void teardown(Manager *m) {
        manager_stop(m);
        ASSERT_EQ(fake_engine_n_armed(), 0);
        manager_free(m);
}

static size_t faults_of(uint64_t id) {
        size_t n = 0;

        for (size_t i = 0; i < fake_frontend_n_events(); i++)
                n += fake_frontend_event(i)->type == FAKE_EVENT_FAULT && fake_frontend_event(i)->id == id;
        return n;
}

static void test_reserved_active(void) {
        Manager *m = setup((ManagerOptions) { .polkit_mode = POLKIT_MODE_AUTO, .max_active = 4, .reserved_active = 2 });
        Caller c = caller_of(test_uid(), own_pid());
        Caller other = caller_of(other_uid(), own_pid());
        Caller root = caller_of(0, own_pid());

        /* Users together get 4 - 2, whoever they are. */
        (void) inject_ok(m, &c, global);
        (void) inject_ok(m, &other, global);
        inject_refused(m, &c, global, "LimitExceeded");
        inject_refused(m, &other, global, "LimitExceeded");
        /* The privileged get the rest, and no more. */
        ASSERT_TRUE(root.privileged);
        (void) inject_ok(m, &root, global);
        (void) inject_ok(m, &root, global);
        inject_refused(m, &root, global, "LimitExceeded");
        ASSERT_EQ(fake_engine_n_armed(), 4);
        teardown(m);
}

static void test_event_admit(void) {
        Injection inj = {};
        uint64_t t = 1000 * USEC_PER_SEC;
        unsigned passed = 0;

        /* 0: no limit. */
        for (int i = 0; i < 1000; i++)
                ASSERT_TRUE(fault_event_admit(&inj, 0, t));
        ASSERT_EQ(inj.events_suppressed, 0);

        /* A burst: one second's worth passes, the rest is counted. */
        for (int i = 0; i < 25; i++)
                passed += fault_event_admit(&inj, 10, t);
        ASSERT_EQ(passed, 10);
        ASSERT_EQ(inj.events_suppressed, 15);

        /* Tokens come back at the rate: 0.5 s later, 5 more. */
        passed = 0;
        for (int i = 0; i < 25; i++)
                passed += fault_event_admit(&inj, 10, t + USEC_PER_SEC / 2);
        ASSERT_EQ(passed, 5);
        ASSERT_EQ(inj.events_suppressed, 35);

        /* After a quiet while, a full burst again, not more. */
        passed = 0;
        for (int i = 0; i < 25; i++)
                passed += fault_event_admit(&inj, 10, t + 60 * USEC_PER_SEC);
        ASSERT_EQ(passed, 10);
}

static void test_event_rate(void) {
        Manager *m = setup((ManagerOptions) { .polkit_mode = POLKIT_MODE_AUTO, .event_rate = 10 });
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_json_ json_object *doc = NULL;
        uint64_t id, suppressed = 0;
        Injection *inj;

        id = inject_ok(m, &c, global);
        for (int i = 0; i < 30; i++)
                ASSERT_OK(fake_engine_fire(id, own_pid(), "hot"));
        run_idle(m);

        /* Within a second: the burst of 10 is passed on. */
        inj = manager_find(m, id);
        ASSERT_NOT_NULL(inj);
        ASSERT_TRUE(faults_of(id) >= 10 && faults_of(id) <= 12);
        ASSERT_EQ(inj->events_suppressed, 30 - faults_of(id));

        /* Shown with the counters, which count every fault. */
        ASSERT_OK(manager_refresh(m, inj));
        doc = injection_to_json(inj);
        ASSERT_NOT_NULL(doc);
        ASSERT_OK(json_get_u64(doc, "events_suppressed", 0, UINT64_MAX, &suppressed));
        ASSERT_EQ(suppressed, inj->events_suppressed);
        ASSERT_EQ(inj->info.slot.injected, 30);
        teardown(m);
}

static void test_events_per_turn(void) {
        Manager *m = setup((ManagerOptions) { .polkit_mode = POLKIT_MODE_AUTO });
        Caller c = caller_of(test_uid(), own_pid());
        const unsigned n = MANAGER_EVENTS_PER_TURN + 100;
        uint64_t id;

        id = inject_ok(m, &c, global);
        for (unsigned i = 0; i < n; i++)
                ASSERT_OK(fake_engine_fire(id, own_pid(), "hot"));

        /* One turn of the loop reads its share, then lets others run. */
        ASSERT_TRUE(sd_event_run(m->event, 0) > 0);
        ASSERT_EQ(faults_of(id), MANAGER_EVENTS_PER_TURN);
        /* The rest come on the next turns: nothing is lost. */
        run_idle(m);
        ASSERT_EQ(faults_of(id), n);
        ASSERT_EQ(manager_find(m, id)->events_suppressed, 0);
        teardown(m);
}

int main(void) {
        _cleanup_free_ char *policy = NULL;

        core_test_init();
        ASSERT_TRUE(asprintf(&policy, policy_fmt, (unsigned) test_uid(), (unsigned) other_uid()) > 0);
        policy_dir = policy_dir_new(policy);

        TEST_RUN(test_reserved_active);
        TEST_RUN(test_event_admit);
        TEST_RUN(test_event_rate);
        TEST_RUN(test_events_per_turn);

        policy_dir_free(policy_dir);
        return 0;
}
