/* SPDX-License-Identifier: MIT */
/* --polkit=off|auto|required as the manager lives them, with the real
 * polkit.c and no system bus (polkit unreachable): off and auto authorize
 * by the JSON policy alone and say so, required refuses; managing someone
 * else's injection is never granted by either fallback. The engine is the
 * fake one (fake-engine.c). */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core-test-util.h"
#include "fake-engine.h"
#include "fake-frontend.h"
#include "manager.h"
#include "test-util.h"

static const char policy_fmt[] =
        "{ \"rules\": [\n"
        "  { \"name\": \"test-own\", \"users\": [%u],\n"
        "    \"functions\": [\"__x64_sys_openat\"], \"errors\": [\"ENOENT\"],\n"
        "    \"scopes\": [\"process\", \"global\"], \"max-duration\": \"1min\", \"max-active\": 10 }\n"
        "] }\n";

static char *policy_dir;

static Manager *setup(PolkitMode mode) {
        fake_engine_reset();
        return manager_setup(policy_dir, (ManagerOptions) { .polkit_mode = mode });
}

static void teardown(Manager *m) {
        manager_stop(m);
        ASSERT_EQ(fake_engine_n_armed(), 0);
        manager_free(m);
}

static char *own_request(void) {
        char *s;

        ASSERT_TRUE(asprintf(&s, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"process\", "
                                 "\"pid\": %d}", (int) own_pid()) > 0);
        return s;
}

static const char global_request[] = "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"global\"}";

/* The owner cancels without polkit; another user would need a real yes. */
static void check_cancel(Manager *m, const Caller *owner, uint64_t id) {
        Caller other = caller_of(other_uid(), own_pid());
        DoneResult done = {};
        char buf[17];

        snprintf(buf, sizeof(buf), "%016" PRIx64, id);
        ASSERT_OK(manager_cancel(m, &other, buf, false, NULL, on_done, &done));
        run_until(m, &done.n_calls, "the answer to another user's Cancel");
        ASSERT_STREQ(done.err.name, "NotAuthorized");
        ASSERT_TRUE(fake_engine_is_armed(id));

        done = (DoneResult) {};
        ASSERT_OK(manager_cancel(m, owner, buf, false, NULL, on_done, &done));
        run_until(m, &done.n_calls, "the answer to the owner's Cancel");
        ASSERT_NULL(done.err.name);
        ASSERT_FALSE(fake_engine_is_armed(id));
}

/* off and auto (unreachable) both grant by the policy, recording how. */
static void check_fallback(PolkitMode mode, const char *how) {
        Manager *m = setup(mode);
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(), *audit = NULL;
        char polkit[64];
        uint64_t id, global;

        audit_capture_start();
        id = inject_ok(m, &c, req);
        audit = audit_capture_end();
        snprintf(polkit, sizeof(polkit), "polkit=%s", how);
        assert_audit_line(audit, (const char *const[]) { "event=armed", "result=allowed", polkit, NULL });
        ASSERT_STREQ(manager_find(m, id)->polkit_how, how);

        /* Foreign too: the policy is the only gate (docs/security.md). */
        global = inject_ok(m, &c, global_request);
        ASSERT_STREQ(manager_find(m, global)->polkit_how, how);
        ASSERT_EQ(fake_engine_last_arm()->owner_uid, INJECT_UID_ANY);

        check_cancel(m, &c, id);
        teardown(m);
}

static void test_off(void) {
        check_fallback(POLKIT_MODE_OFF, POLKIT_HOW_OFF);
}

static void test_auto_unreachable(void) {
        check_fallback(POLKIT_MODE_AUTO, POLKIT_HOW_UNAVAILABLE_AUTO);
}

static void test_required_unreachable(void) {
        Manager *m = setup(POLKIT_MODE_REQUIRED);
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(), *audit = NULL;
        InjectResult res;

        audit_capture_start();
        inject_json(m, &c, req, NULL, &res, NULL);
        ASSERT_EQ(res.n_calls, 0);      /* never from inside manager_inject() */
        run_until(m, &res.n_calls, "the answer to an Inject");
        audit = audit_capture_end();
        ASSERT_STREQ(res.err.name, "AuthorizationUnavailable");
        ASSERT_TRUE(strstr(res.err.message, "polkit is required") != NULL);
        assert_audit_line(audit, (const char *const[]) { "event=decision", "result=denied",
                                                         "reason=AuthorizationUnavailable", NULL });
        ASSERT_EQ(fake_engine_n_arms(), 0);

        /* polkit is asked for every caller, root too (polkit always says yes
         * to root): unreachable, with required, root is refused as well. */
        {
                Caller root = caller_of(0, own_pid());

                inject_refused(m, &root, global_request, "AuthorizationUnavailable");
        }
        teardown(m);
}

int main(void) {
        _cleanup_free_ char *policy = NULL;

        core_test_init();
        ASSERT_TRUE(asprintf(&policy, policy_fmt, (unsigned) test_uid()) > 0);
        policy_dir = policy_dir_new(policy);

        TEST_RUN(test_off);
        TEST_RUN(test_auto_unreachable);
        TEST_RUN(test_required_unreachable);

        policy_dir_free(policy_dir);
        return 0;
}
