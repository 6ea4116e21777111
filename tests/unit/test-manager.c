/* SPDX-License-Identifier: MIT */
/* The daemon's core, request to removal: the manager with its real request
 * parser, scope resolution, policy, limits and audit trail, against an
 * engine in memory (fake-engine.c) and polkit with scripted answers
 * (fake-polkit.c). No kernel, bus or privilege is needed; as root the
 * requesters' processes run as an unused uid.
 *
 * Every refusal is checked by its error name and by its audit record. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "core-test-util.h"
#include "fake-engine.h"
#include "fake-frontend.h"
#include "fake-polkit.h"
#include "manager.h"
#include "test-util.h"
#include "time-util.h"

/* test_uid() may fail openat and failslab with ENOENT or ENOMEM in its own
 * processes, 2 at a time, for a minute; page allocations anywhere (global,
 * which is foreign: inject-global). other_uid() may fail openat globally. */
static const char policy_fmt[] =
        "{ \"rules\": [\n"
        "  { \"name\": \"test-own\", \"users\": [%u],\n"
        "    \"functions\": [\"__x64_sys_openat\", \"should_failslab\"], \"errors\": [\"ENOENT\", \"ENOMEM\"],\n"
        "    \"scopes\": [\"cgroup\", \"process\"], \"max-duration\": \"1min\", \"max-active\": 2 },\n"
        "  { \"name\": \"test-alloc\", \"users\": [%u],\n"
        "    \"functions\": [\"should_fail_alloc_page\"], \"retvals\": [1],\n"
        "    \"scopes\": [\"process\", \"global\"], \"max-duration\": \"1min\", \"max-active\": 2 },\n"
        "  { \"name\": \"test-other\", \"users\": [%u],\n"
        "    \"functions\": [\"__x64_sys_openat\"], \"errors\": [\"ENOENT\"],\n"
        "    \"scopes\": [\"global\"], \"max-duration\": \"1min\", \"max-active\": 10 }\n"
        "] }\n";

static char *policy_dir;

/* A request for the own process, with extra keys appended. */
static char *own_request(const char *extra) {
        char *s;

        ASSERT_TRUE(asprintf(&s, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"process\", "
                                 "\"pid\": %d%s%s}", (int) own_pid(), extra ? ", " : "", extra ?: "") > 0);
        return s;
}

static Manager *setup(ManagerOptions o) {
        fake_engine_reset();
        fake_polkit_reset();
        return manager_setup(policy_dir, o);
}

static Manager *setup_default(void) {
        return setup((ManagerOptions) { .polkit_mode = POLKIT_MODE_AUTO });
}

static void teardown(Manager *m) {
        manager_stop(m);
        ASSERT_EQ(fake_engine_n_armed(), 0);
        manager_free(m);
}

static const char *id_str(uint64_t id, char buf[static 17]) {
        snprintf(buf, 17, "%016" PRIx64, id);
        return buf;
}

static void assert_removed(uint64_t id, RemoveReason reason) {
        const FakeEvent *ev = fake_frontend_last_event(id);

        if (!ev || ev->type != FAKE_EVENT_REMOVED)
                test_fail("expected injection %016" PRIx64 " removed (%s), seen %s", id,
                          remove_reason_to_string(reason), ev ? "another event last" : "no event");
        ASSERT_STREQ(remove_reason_to_string(ev->reason), remove_reason_to_string(reason));
        ASSERT_FALSE(fake_engine_is_armed(id));
}

/* Runs the loop until the injection is gone; see run_until() for the bound. */
static void run_until_removed(Manager *m, uint64_t id, const char *what) {
        uint64_t start = now_usec(CLOCK_MONOTONIC);

        while (manager_find(m, id)) {
                if (now_usec(CLOCK_MONOTONIC) - start > 60 * USEC_PER_SEC)
                        test_fail("expected %s within a minute of the event loop, seen the injection still there",
                                  what);
                ASSERT_OK(sd_event_run(m->event, USEC_PER_SEC));
        }
}

/* Refused, audited as a denied decision with that reason, and nothing armed. */
static void refused_audited(Manager *m, const Caller *c, const char *json, const char *error_name) {
        char reason[96];
        unsigned arms = fake_engine_n_arms();
        _cleanup_free_ char *audit = NULL;

        audit_capture_start();
        inject_refused(m, c, json, error_name);
        audit = audit_capture_end();
        snprintf(reason, sizeof(reason), "reason=%s", error_name);
        assert_audit_line(audit, (const char *const[]) { "event=request", NULL });
        assert_audit_line(audit, (const char *const[]) { "event=decision", "result=denied", reason, NULL });
        ASSERT_EQ(fake_engine_n_arms(), arms);
}

/* ---- malformed requests and what the engine refuses ---- */

static void test_request_refusals(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        static const struct {
                const char *json;
                const char *error;
        } cases[] = {
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"colour\": \"red\"}", "InvalidArgument" },
                { "{\"error\": \"ENOENT\"}", "InvalidArgument" },
                { "{\"function\": 42, \"error\": \"ENOENT\"}", "InvalidArgument" },
                { "{\"function\": \"\", \"error\": \"ENOENT\"}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\"}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"retval\": -2}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOTANERRNO\"}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": 5000}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"duration_usec\": \"1s\"}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"duration_usec\": 0}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"everything\"}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"pid\": 1}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"detach\": \"yes\"}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"probability\": 101}", "InvalidArgument" },
                { "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"callers\": \"f\"}", "InvalidArgument" },
                { "[\"__x64_sys_openat\"]", "InvalidArgument" },
                /* Device scopes: the keys that go together. */
                { "{\"function\": \"should_failslab\", \"error\": \"ENOMEM\", \"scope\": \"device\"}", "InvalidArgument" },
                { "{\"function\": \"should_failslab\", \"error\": \"ENOMEM\", \"scope\": \"process\", \"device\": \"loop0\"}", "InvalidArgument" },
                { "{\"function\": \"should_failslab\", \"error\": \"ENOMEM\", \"backing_fd\": 0}", "InvalidArgument" },
                { "{\"function\": \"should_failslab\", \"error\": \"ENOMEM\", \"device\": 7}", "InvalidArgument" },
                { "{\"function\": \"should_failslab\", \"error\": \"ENOMEM\", \"device\": \"\"}", "InvalidArgument" },
                /* An fd index the call did not bring. */
                { "{\"function\": \"should_failslab\", \"error\": \"ENOMEM\", \"device\": \"loop0\", \"backing_fd\": 0}", "InvalidArgument" },
                /* A function whose arguments name no device, and names that are none. */
                { "{\"function\": \"should_failslab\", \"error\": \"ENOMEM\", \"device\": \"loop0\"}", "BadScope" },
                /* The function and value are the engine's to judge. */
                { "{\"function\": \"no_such_function\", \"error\": \"ENOENT\"}", "NotInjectable" },
                { "{\"function\": \"should_fail_alloc_page\", \"error\": \"ENOMEM\"}", "BadValue" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                refused_audited(m, &c, cases[i].json, cases[i].error);
        ASSERT_EQ(fake_polkit_n_asked(), 0);
        teardown(m);
}

/* ---- the policy ---- */

static void test_policy_refusals(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        Caller stranger = caller_of(other_uid() + 1, own_pid());
        _cleanup_free_ char *eperm = NULL, *too_long = NULL, *max_ok = NULL;
        char *s;

        /* Not in the policy, though the kernel could. */
        ASSERT_TRUE(asprintf(&s, "{\"function\": \"__x64_sys_mkdirat\", \"error\": \"ENOENT\", \"scope\": \"process\", "
                                 "\"pid\": %d}", (int) own_pid()) > 0);
        refused_audited(m, &c, s, "FunctionNotAllowed");
        free(s);

        /* A value the rule does not list. */
        ASSERT_TRUE(asprintf(&eperm, "{\"function\": \"__x64_sys_openat\", \"error\": \"EPERM\", \"scope\": \"process\", "
                                     "\"pid\": %d}", (int) own_pid()) > 0);
        refused_audited(m, &c, eperm, "ErrorNotAllowed");

        /* A scope the rule does not list. */
        refused_audited(m, &c, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"global\"}",
                        "ScopeNotAllowed");

        /* Longer than the rule's maximum of a minute, by one microsecond. */
        too_long = own_request("\"duration_usec\": 60000001");
        refused_audited(m, &c, too_long, "DurationTooLong");
        max_ok = own_request("\"duration_usec\": 60000000");
        (void) inject_ok(m, &c, max_ok);

        /* A user no rule names. */
        refused_audited(m, &stranger, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"global\"}",
                        "UserNotInPolicy");

        /* Without a duration, the rule's maximum applies. */
        teardown(m);
        m = setup_default();
        s = own_request(NULL);
        (void) inject_ok(m, &c, s);
        free(s);
        ASSERT_EQ_U64(fake_engine_last_arm()->duration_usec, 60 * USEC_PER_SEC);
        teardown(m);
}

/* ---- scopes: own or foreign ---- */

static void test_scopes(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *own = own_request(NULL);
        uint64_t id;

        /* The own process: org.injectd.inject, and only tasks running as the user fail. */
        id = inject_ok(m, &c, own);
        ASSERT_STREQ(fake_polkit_last_action(), POLKIT_ACTION_INJECT);
        ASSERT_EQ(fake_engine_last_arm()->scope, INJECT_SCOPE_PROCESS);
        ASSERT_EQ(fake_engine_last_arm()->pid, own_pid());
        ASSERT_EQ(fake_engine_last_arm()->owner_uid, test_uid());
        {
                char desc[32];

                snprintf(desc, sizeof(desc), "process:%d", (int) own_pid());
                ASSERT_STREQ(manager_find(m, id)->scope_desc, desc);
        }
        ASSERT_EQ(fake_polkit_last_subject().pid, own_pid());
        ASSERT_EQ(fake_polkit_last_subject().uid, test_uid());
        ASSERT_EQ(fake_polkit_last_subject().kind, POLKIT_SUBJECT_PROCESS);

        /* pid 1 is root's: foreign, so org.injectd.inject-global, which polkit refuses... */
        fake_polkit_set_answer(POLKIT_ACTION_INJECT_GLOBAL, FAKE_POLKIT_NO);
        refused_audited(m, &c, "{\"function\": \"should_fail_alloc_page\", \"retval\": 1, \"scope\": \"process\", "
                               "\"pid\": 1}", "NotAuthorized");
        ASSERT_STREQ(fake_polkit_last_action(), POLKIT_ACTION_INJECT_GLOBAL);
        /* ... even though it grants org.injectd.inject. */
        refused_audited(m, &c, "{\"function\": \"should_fail_alloc_page\", \"retval\": 1, \"scope\": \"global\"}",
                        "NotAuthorized");
        ASSERT_STREQ(fake_polkit_last_action(), POLKIT_ACTION_INJECT_GLOBAL);

        /* Granted, it fails anyone's tasks. */
        fake_polkit_set_answer(POLKIT_ACTION_INJECT_GLOBAL, FAKE_POLKIT_YES);
        (void) inject_ok(m, &c, "{\"function\": \"should_fail_alloc_page\", \"retval\": 1, \"scope\": \"process\", "
                                "\"pid\": 1}");
        ASSERT_EQ(fake_engine_last_arm()->owner_uid, INJECT_UID_ANY);
        ASSERT_EQ(fake_engine_last_arm()->pid, 1);

        /* A pid that names nothing. */
        refused_audited(m, &c, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"process\", "
                               "\"pid\": 2147483647}", "BadScope");
        teardown(m);
}

/* ---- limits ---- */

static void test_limit_per_user(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        Caller other = caller_of(other_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *req2 = NULL, *req3 = NULL;
        DoneResult done = {};
        char buf[17];
        uint64_t a;

        req2 = own_request("\"comm\": \"two\"");
        req3 = own_request("\"comm\": \"three\"");
        a = inject_ok(m, &c, req);
        (void) inject_ok(m, &c, req2);
        /* The rule allows 2 at a time; another user's do not count. */
        (void) inject_ok(m, &other, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"global\"}");
        refused_audited(m, &c, req3, "LimitExceeded");

        /* One ends: there is room again. */
        ASSERT_OK(manager_cancel(m, &c, id_str(a, buf), false, NULL, on_done, &done));
        run_until(m, &done.n_calls, "the answer to Cancel");
        ASSERT_NULL(done.err.name);
        (void) inject_ok(m, &c, req3);
        teardown(m);
}

static void test_limit_global(void) {
        Manager *m = setup((ManagerOptions) { .polkit_mode = POLKIT_MODE_AUTO, .max_active = 3 });
        Caller c = caller_of(test_uid(), own_pid());
        Caller other = caller_of(other_uid(), own_pid());
        static const char global[] = "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"global\"}";
        _cleanup_free_ char *req = own_request(NULL);
        _cleanup_free_ char *audit = NULL;

        (void) inject_ok(m, &other, global);
        (void) inject_ok(m, &other, global);
        (void) inject_ok(m, &c, req);
        /* Each user is within their rule, the daemon is full. */
        refused_audited(m, &other, global, "LimitExceeded");
        refused_audited(m, &c, req, "LimitExceeded");
        ASSERT_EQ(fake_engine_n_armed(), 3);
        teardown(m);
}

static void test_rate(void) {
        Manager *m = setup((ManagerOptions) { .polkit_mode = POLKIT_MODE_AUTO, .rate_per_minute = 3 });
        Caller c = caller_of(test_uid(), own_pid());
        Caller other = caller_of(other_uid(), own_pid());
        static const char bad[] = "{\"function\": \"__x64_sys_mkdirat\", \"error\": \"ENOENT\", \"scope\": \"global\"}";
        uint64_t now = now_nsec(CLOCK_BOOTTIME) % (60 * NSEC_PER_SEC);

        /* The limit counts per minute of CLOCK_BOOTTIME: start early in one,
         * so that all 4 requests (milliseconds) fall in it. */
        if (now > 45 * NSEC_PER_SEC) {
                printf("  waiting %" PRIu64 " s for the next minute to start\n", 60 - now / NSEC_PER_SEC);
                fflush(stdout);
                while (now_nsec(CLOCK_BOOTTIME) % (60 * NSEC_PER_SEC) > 45 * NSEC_PER_SEC)
                        usleep(100000);
        }
        /* Refused requests count too: the limit guards the daemon's work. */
        inject_refused(m, &c, bad, "FunctionNotAllowed");
        inject_refused(m, &c, bad, "FunctionNotAllowed");
        inject_refused(m, &c, bad, "FunctionNotAllowed");
        refused_audited(m, &c, bad, "LimitExceeded");
        /* Per user. */
        (void) inject_ok(m, &other, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"global\"}");
        /* Malformed requests count as well (parsing them and the engine's
         * check are the daemon's work too), and once the rate is spent
         * they are refused for it before anything is read. */
        inject_refused(m, &other, "{\"function\": 42}", "InvalidArgument");
        inject_refused(m, &other, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOPE\"}", "InvalidArgument");
        refused_audited(m, &other, "{\"function\": 42}", "LimitExceeded");
        teardown(m);
}

/* ---- polkit's answers ---- */

static void test_polkit_answers(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *interactive = own_request("\"interactive\": true");
        InjectResult res;
        uint64_t id;

        fake_polkit_set_answer(NULL, FAKE_POLKIT_NO);
        refused_audited(m, &c, req, "NotAuthorized");
        ASSERT_FALSE(fake_polkit_last_interactive());

        fake_polkit_set_answer(NULL, FAKE_POLKIT_CHALLENGE);
        inject_json(m, &c, req, NULL, &res, NULL);
        run_until(m, &res.n_calls, "the answer to an Inject");
        ASSERT_STREQ(res.err.name, "NotAuthorized");
        ASSERT_TRUE(strstr(res.err.message, "interactive authentication could") != NULL);

        fake_polkit_set_answer(NULL, FAKE_POLKIT_DISMISSED);
        refused_audited(m, &c, interactive, "NotAuthorized");
        ASSERT_TRUE(fake_polkit_last_interactive());

        fake_polkit_set_answer(NULL, FAKE_POLKIT_ERROR);
        refused_audited(m, &c, req, "AuthorizationUnavailable");

        fake_polkit_set_answer(NULL, FAKE_POLKIT_YES);
        audit_capture_start();
        id = inject_ok(m, &c, req);
        {
                _cleanup_free_ char *audit = audit_capture_end();
                char idw[32];

                snprintf(idw, sizeof(idw), "id=%016" PRIx64, id);
                assert_audit_line(audit, (const char *const[]) { "event=decision", "result=policy-allowed",
                                                                 "rule=test-own", NULL });
                assert_audit_line(audit, (const char *const[]) { "event=armed", idw, "result=allowed",
                                                                 "polkit=polkit", NULL });
        }
        ASSERT_STREQ(manager_find(m, id)->polkit_how, POLKIT_HOW_POLKIT);
        ASSERT_STREQ(manager_find(m, id)->rule, "test-own");
        ASSERT_EQ(fake_frontend_last_event(id)->type, FAKE_EVENT_ADDED);
        teardown(m);
}

/* A check still waiting when the request is dropped is cancelled, and no
 * late answer arms anything. */
static void test_polkit_pending_cancel(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL);
        PendingRequest *p = NULL;
        InjectResult res;

        fake_polkit_set_answer(NULL, FAKE_POLKIT_DELAY);
        inject_json(m, &c, req, NULL, &res, &p);
        ASSERT_NOT_NULL(p);
        run_idle(m);
        ASSERT_EQ(res.n_calls, 0);
        ASSERT_EQ(fake_polkit_n_pending(), 1);

        pending_request_cancel(p);
        ASSERT_EQ(fake_polkit_n_cancelled(), 1);
        ASSERT_EQ(fake_polkit_n_pending(), 0);
        ASSERT_RET(fake_polkit_answer(FAKE_POLKIT_YES), -ENOENT);
        run_idle(m);
        ASSERT_EQ(res.n_calls, 0);      /* dropped quietly */
        ASSERT_EQ(fake_engine_n_arms(), 0);

        /* A delayed yes arms. */
        inject_json(m, &c, req, NULL, &res, &p);
        run_idle(m);
        ASSERT_EQ(res.n_calls, 0);
        ASSERT_OK(fake_polkit_answer(FAKE_POLKIT_YES));
        ASSERT_EQ(res.n_calls, 1);
        ASSERT_TRUE(res.id != 0);
        ASSERT_TRUE(fake_engine_is_armed(res.id));

        /* A delayed error refuses. */
        inject_json(m, &c, req, NULL, &res, &p);
        run_idle(m);
        ASSERT_OK(fake_polkit_answer(FAKE_POLKIT_ERROR));
        ASSERT_EQ(res.n_calls, 1);
        ASSERT_STREQ(res.err.name, "AuthorizationUnavailable");
        teardown(m);
}

/* ---- the requester goes away ---- */

static void test_owner_gone_pending(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *detached = own_request("\"detach\": true");
        static int conn_a, conn_b;      /* stand for the front end's handles on requesters */
        void *a = &conn_a, *b = &conn_b;
        InjectResult ra, rb;

        fake_polkit_set_answer(NULL, FAKE_POLKIT_DELAY);
        inject_json(m, &c, req, a, &ra, NULL);
        inject_json(m, &c, detached, b, &rb, NULL);
        run_idle(m);
        ASSERT_EQ(fake_polkit_n_pending(), 2);

        /* a's requester leaves: its request is answered (to nobody) and its check cancelled. */
        fake_frontend_owner_leaves(m, a);
        ASSERT_EQ(ra.n_calls, 1);
        ASSERT_TRUE(ra.id == 0);
        ASSERT_NOT_NULL(ra.err.name);
        ASSERT_EQ(fake_polkit_n_cancelled(), 1);
        ASSERT_EQ(fake_polkit_n_pending(), 1);

        /* b asked to detach: it goes on without its requester. */
        fake_frontend_owner_leaves(m, b);
        ASSERT_EQ(rb.n_calls, 0);
        ASSERT_OK(fake_polkit_answer(FAKE_POLKIT_YES));
        ASSERT_EQ(rb.n_calls, 1);
        ASSERT_TRUE(fake_engine_is_armed(rb.id));
        ASSERT_EQ(fake_engine_n_arms(), 1);
        teardown(m);
}

/* An owner handle as the D-Bus front end keeps one (bus-requester.c): a
 * record that lives while its requests wait, each holding a reference it
 * drops in its answer. The answers manager_requester_gone() gives drop
 * those references while it walks the requests, so the front end holds one
 * across the call; the record goes with the last answer, a detached
 * request's after polkit (ASan sees any use of it after). */
typedef struct RefOwner {
        unsigned n_ref;
} RefOwner;

typedef struct RefCall {
        RefOwner *owner;
        InjectResult res;
} RefCall;

static unsigned ref_owners_freed;

static void ref_owner_unref(RefOwner *o) {
        if (--o->n_ref > 0)
                return;
        free(o);
        ref_owners_freed++;
}

static void on_ref_answer(Manager *m, Injection *inj, const InjectError *err, void *userdata) {
        RefCall *call = userdata;

        call->res.n_calls++;
        call->res.id = inj ? inj->id : 0;
        if (err)
                call->res.err = *err;
        ref_owner_unref(TAKE_PTR(call->owner));
}

static void test_owner_refcounted_pending(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *detached = own_request("\"detach\": true");
        RefOwner *o = calloc(1, sizeof(*o));
        RefCall calls[4] = {};

        ASSERT_NOT_NULL(o);
        o->n_ref = 1;   /* the front end's own, while it makes the requests */
        ref_owners_freed = 0;
        fake_polkit_set_answer(NULL, FAKE_POLKIT_DELAY);
        for (size_t i = 0; i < 4; i++) {
                json_object *j = json_tokener_parse(i == 3 ? detached : req);

                ASSERT_NOT_NULL(j);
                o->n_ref++;
                calls[i].owner = o;
                ASSERT_OK(manager_inject(m, &c, j, NULL, 0, o, on_ref_answer, &calls[i], NULL));
                json_object_put(j);
        }
        ref_owner_unref(o);
        run_idle(m);
        ASSERT_EQ(fake_polkit_n_pending(), 4);
        ASSERT_EQ(o->n_ref, 4);

        /* The name goes: the three waiting are answered, dropping their
         * references while the front end still holds its own. */
        o->n_ref++;
        manager_requester_gone(m, o);
        for (size_t i = 0; i < 3; i++) {
                ASSERT_EQ(calls[i].res.n_calls, 1);
                ASSERT_TRUE(calls[i].res.id == 0);
                ASSERT_NOT_NULL(calls[i].res.err.name);
        }
        ASSERT_EQ(fake_polkit_n_cancelled(), 3);
        ASSERT_EQ(o->n_ref, 2);
        ref_owner_unref(o);
        ASSERT_EQ(ref_owners_freed, 0);

        /* The detached one goes on, and its answer lets go of the record. */
        ASSERT_EQ(calls[3].res.n_calls, 0);
        ASSERT_OK(fake_polkit_answer(FAKE_POLKIT_YES));
        ASSERT_EQ(calls[3].res.n_calls, 1);
        ASSERT_TRUE(fake_engine_is_armed(calls[3].res.id));
        ASSERT_EQ(ref_owners_freed, 1);
        teardown(m);
}

/* The requester left while polkit decided, and its front end only knows
 * when asked (OwnerTracker.gone): nothing is armed for it. */
static void test_owner_vanished_pending(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *audit = NULL;
        static int conn;
        InjectResult res;

        fake_polkit_set_answer(NULL, FAKE_POLKIT_DELAY);
        inject_json(m, &c, req, &conn, &res, NULL);
        run_idle(m);
        fake_frontend_owner_vanishes(&conn);
        audit_capture_start();
        ASSERT_OK(fake_polkit_answer(FAKE_POLKIT_YES));
        audit = audit_capture_end();
        ASSERT_EQ(res.n_calls, 1);
        ASSERT_TRUE(res.id == 0);
        ASSERT_NOT_NULL(res.err.name);
        ASSERT_EQ(fake_engine_n_arms(), 0);
        assert_audit_line(audit, (const char *const[]) { "event=decision", "result=denied", NULL });
        teardown(m);
}

static void test_owner_gone_armed(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *detached = own_request("\"detach\": true");
        static int conn;
        void *v = &conn;
        InjectResult ra, rb;

        inject_json(m, &c, req, v, &ra, NULL);
        inject_json(m, &c, detached, v, &rb, NULL);
        run_until(m, &rb.n_calls, "the answer to an Inject");
        run_until(m, &ra.n_calls, "the answer to an Inject");
        ASSERT_TRUE(ra.id && rb.id);

        ASSERT_EQ(fake_frontend_n_tracked(), 2);
        fake_frontend_owner_leaves(m, v);
        assert_removed(ra.id, REMOVE_OWNER_GONE);
        ASSERT_TRUE(fake_engine_is_armed(rb.id));
        ASSERT_NOT_NULL(manager_find(m, rb.id));
        teardown(m);
}

/* Without a connection to watch (as after a restart), the requester's
 * process is: its exit removes the injection, from the event loop. */
static void test_owner_gone_process(void) {
        Manager *m = setup_default();
        pid_t pid = spawn_owned();
        Caller c = caller_of(test_uid(), pid);
        _cleanup_free_ char *req = own_request(NULL);
        uint64_t id;

        id = inject_ok(m, &c, req);
        run_idle(m);
        ASSERT_NOT_NULL(manager_find(m, id));

        kill_owned(pid);
        run_until_removed(m, id, "the removal after the requester's exit");
        assert_removed(id, REMOVE_OWNER_GONE);
        teardown(m);
}

/* ---- the end of an injection ---- */

static void test_expiry(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request("\"duration_usec\": 100000"), *audit = NULL;
        char idw[32];
        uint64_t id;

        id = inject_ok(m, &c, req);
        audit_capture_start();
        /* The deadline timer fires from the loop, however late. */
        run_until_removed(m, id, "the removal at the deadline");
        audit = audit_capture_end();
        assert_removed(id, REMOVE_EXPIRED);
        snprintf(idw, sizeof(idw), "id=%016" PRIx64, id);
        assert_audit_line(audit, (const char *const[]) { "event=removed", idw, "reason=expired", NULL });
        teardown(m);
}

static void test_exhausted(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request("\"times\": 2");
        size_t faults = 0;
        uint64_t id;

        id = inject_ok(m, &c, req);
        ASSERT_EQ(fake_engine_last_arm()->times, 2);
        ASSERT_OK(fake_engine_fire(id, own_pid(), "victim"));
        run_idle(m);
        ASSERT_NOT_NULL(manager_find(m, id));
        ASSERT_OK(fake_engine_fire(id, own_pid(), "victim"));
        run_until_removed(m, id, "the removal after the last fault");
        assert_removed(id, REMOVE_EXHAUSTED);
        for (size_t i = 0; i < fake_frontend_n_events(); i++)
                faults += fake_frontend_event(i)->type == FAKE_EVENT_FAULT && fake_frontend_event(i)->id == id;
        ASSERT_EQ(faults, 2);
        teardown(m);
}

static void test_engine_refuses(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL);

        fake_engine_fail_next_arm(-EBUSY, NULL);
        refused_audited(m, &c, req, "KernelRefused");
        ASSERT_EQ(m->n_injections, 0);
        fake_engine_fail_next_arm(-EEXIST, INJECT_ERROR_SCOPE_TAKEN);
        refused_audited(m, &c, req, "ScopeTaken");
        (void) inject_ok(m, &c, req);
        teardown(m);
}

/* A process that exits while polkit decides, its pid taken by another:
 * the engine reads the newcomer's start time when it arms, and the
 * injection is disarmed and refused rather than left on the newcomer. */
static void test_pid_recycled(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        char req[256];

        snprintf(req, sizeof(req),
                 "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"process\", "
                 "\"pid\": %d, \"duration_usec\": 60000000}", (int) own_pid());
        fake_engine_recycle_next_pid(c.start_ticks + 1);
        inject_refused(m, &c, req, "BadScope");
        ASSERT_EQ(m->n_injections, 0);
        ASSERT_EQ(fake_engine_n_armed(), 0);
        ASSERT_EQ(fake_engine_n_disarms(), 1);
        (void) inject_ok(m, &c, req);
        teardown(m);
}

/* ---- a restart ---- */

/* What survives a daemon restart: the pinned injections the engine finds,
 * with the owner records the store kept. An injection whose requester
 * died meanwhile, or that has no record, goes; one the engine found
 * expired is reported and its record removed. */
static void test_restart(void) {
        Manager *m = setup((ManagerOptions) { .polkit_mode = POLKIT_MODE_AUTO, .keep_on_exit = true });
        pid_t pid = spawn_owned();
        Caller c = caller_of(test_uid(), own_pid()), dying = caller_of(test_uid(), pid);
        Caller other = caller_of(other_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *req2 = own_request("\"comm\": \"b\""), *audit = NULL;
        char adopted_a[32], adopted_c[32], gone_b[32], stray[PATH_MAX];
        uint64_t a, b, d;
        int fd;

        a = inject_ok(m, &c, req);
        b = inject_ok(m, &dying, req2);
        d = inject_ok(m, &other, "{\"function\": \"__x64_sys_openat\", \"error\": \"ENOENT\", \"scope\": \"global\", "
                                 "\"detach\": true}");
        manager_stop(m);                /* --keep-on-exit */
        ASSERT_EQ(fake_engine_n_armed(), 3);
        manager_free(m);

        kill_owned(pid);
        fake_engine_restart();
        ASSERT_OK(fake_engine_add_pinned(UINT64_C(0x1234), "should_failslab", -12, USEC_PER_SEC, ADOPT_EXPIRED));
        ASSERT_OK(fake_engine_add_pinned(UINT64_C(0x5678), "should_failslab", -12, 60 * USEC_PER_SEC, ADOPT_KEPT));

        /* A record whose pins are gone, as a crash between the two leaves:
         * pruned at start, while the adopted ones' records stay. */
        snprintf(stray, sizeof(stray), MANAGER_STATE_DIR "/%016" PRIx64 ".json", UINT64_C(0x9abc));
        fd = open(stray, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(close(fd), 0);

        audit_capture_start();
        m = manager_setup(policy_dir, (ManagerOptions) { .polkit_mode = POLKIT_MODE_AUTO });
        run_idle(m);
        audit = audit_capture_end();

        ASSERT_TRUE(access(stray, F_OK) < 0 && errno == ENOENT);
        snprintf(stray, sizeof(stray), MANAGER_STATE_DIR "/%016" PRIx64 ".json", a);
        ASSERT_OK(access(stray, F_OK));
        ASSERT_NOT_NULL(manager_find(m, a));
        ASSERT_EQ(manager_find(m, a)->owner_uid, test_uid());
        ASSERT_STREQ(manager_find(m, a)->rule, "test-own");
        ASSERT_STREQ(manager_find(m, a)->polkit_how, POLKIT_HOW_POLKIT);
        ASSERT_NOT_NULL(manager_find(m, d));
        ASSERT_TRUE(manager_find(m, d)->detach);
        ASSERT_EQ(fake_frontend_last_event(a)->type, FAKE_EVENT_ADDED);
        snprintf(adopted_a, sizeof(adopted_a), "id=%016" PRIx64, a);
        snprintf(adopted_c, sizeof(adopted_c), "id=%016" PRIx64, d);
        snprintf(gone_b, sizeof(gone_b), "id=%016" PRIx64, b);
        assert_audit_line(audit, (const char *const[]) { "event=adopted", adopted_a, NULL });
        assert_audit_line(audit, (const char *const[]) { "event=adopted", adopted_c, NULL });

        /* Its requester died while the daemon was away. */
        ASSERT_NULL(manager_find(m, b));
        ASSERT_FALSE(fake_engine_is_armed(b));
        assert_audit_line(audit, (const char *const[]) { "event=removed", gone_b, "reason=owner-gone", NULL });
        /* No record of who asked: it goes. */
        ASSERT_NULL(manager_find(m, UINT64_C(0x5678)));
        ASSERT_FALSE(fake_engine_is_armed(UINT64_C(0x5678)));
        /* Expired in the kernel: reported. */
        assert_audit_line(audit, (const char *const[]) { "event=removed", "id=0000000000001234", "reason=expired",
                                                         NULL });
        ASSERT_EQ(m->n_injections, 2);
        teardown(m);
}

/* ---- cancel ---- */

static void cancel(Manager *m, const Caller *c, const char *id, DoneResult *done) {
        *done = (DoneResult) {};
        ASSERT_OK(manager_cancel(m, c, id, false, NULL, on_done, done));
        run_until(m, &done->n_calls, "the answer to Cancel");
        ASSERT_EQ(done->n_calls, 1);
}

static void test_cancel(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        Caller other = caller_of(other_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *req2 = own_request("\"comm\": \"b\"");
        DoneResult done;
        unsigned asked;
        uint64_t a, b;
        char buf[17];

        a = inject_ok(m, &c, req);
        b = inject_ok(m, &c, req2);

        /* The owner may, without asking polkit. */
        asked = fake_polkit_n_asked();
        cancel(m, &c, id_str(a, buf), &done);
        ASSERT_NULL(done.err.name);
        ASSERT_EQ(fake_polkit_n_asked(), asked);
        assert_removed(a, REMOVE_CANCELLED);

        /* Another user needs org.injectd.manage. */
        fake_polkit_set_answer(POLKIT_ACTION_MANAGE, FAKE_POLKIT_NO);
        cancel(m, &other, id_str(b, buf), &done);
        ASSERT_STREQ(done.err.name, "NotAuthorized");
        ASSERT_STREQ(fake_polkit_last_action(), POLKIT_ACTION_MANAGE);
        ASSERT_TRUE(fake_engine_is_armed(b));
        fake_polkit_set_answer(POLKIT_ACTION_MANAGE, FAKE_POLKIT_YES);
        cancel(m, &other, id_str(b, buf), &done);
        ASSERT_NULL(done.err.name);
        assert_removed(b, REMOVE_CANCELLED);

        cancel(m, &c, "not-an-id", &done);
        ASSERT_STREQ(done.err.name, "InvalidArgument");
        cancel(m, &c, "00000000000000ff", &done);
        ASSERT_STREQ(done.err.name, "NoSuchInjection");
        teardown(m);
}

/* A Cancel or ReloadPolicy waiting for polkit ends with its requester, as
 * an Inject does: the check is cancelled, the call answered (to nobody),
 * and a late yes does nothing. Another requester's call goes on. Without
 * it, a caller that left still held a place in polkit's queue and its
 * Cancel could still be done. */
static void test_cancel_requester_gone(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        Caller other = caller_of(other_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL);
        int gone_owner, staying_owner;
        DoneResult cancel_done = {}, reload_done = {}, staying = {};
        char buf[17];
        uint64_t a;

        a = inject_ok(m, &c, req);
        fake_polkit_set_answer(POLKIT_ACTION_MANAGE, FAKE_POLKIT_DELAY);
        ASSERT_OK(manager_cancel(m, &other, id_str(a, buf), false, &gone_owner, on_done, &cancel_done));
        ASSERT_OK(manager_reload_policy_as(m, &other, false, &gone_owner, on_done, &reload_done));
        ASSERT_OK(manager_reload_policy_as(m, &other, false, &staying_owner, on_done, &staying));
        run_idle(m);
        ASSERT_EQ(fake_polkit_n_pending(), 3);
        ASSERT_EQ(cancel_done.n_calls + reload_done.n_calls + staying.n_calls, 0);

        manager_requester_gone(m, &gone_owner);
        ASSERT_EQ(cancel_done.n_calls, 1);
        ASSERT_EQ(reload_done.n_calls, 1);
        ASSERT_STREQ(cancel_done.err.message, "The requester disconnected before the answer");
        ASSERT_EQ(fake_polkit_n_cancelled(), 2);
        ASSERT_EQ(fake_polkit_n_pending(), 1);
        ASSERT_EQ(staying.n_calls, 0);
        /* polkit's yes, for the one left: it is done; the injection stays. */
        ASSERT_OK(fake_polkit_answer(FAKE_POLKIT_YES));
        run_until(m, &staying.n_calls, "the answer to the ReloadPolicy that stayed");
        ASSERT_NULL(staying.err.name);
        ASSERT_EQ(fake_polkit_n_pending(), 0);
        ASSERT_TRUE(fake_engine_is_armed(a));
        ASSERT_EQ(cancel_done.n_calls, 1);

        /* Stopping answers what still waits, before the front ends close. */
        cancel_done = (DoneResult) {};
        ASSERT_OK(manager_cancel(m, &other, id_str(a, buf), false, &staying_owner, on_done, &cancel_done));
        run_idle(m);
        manager_requests_abort(m);
        ASSERT_EQ(cancel_done.n_calls, 1);
        ASSERT_STREQ(cancel_done.err.name, "InjectionUnavailable");
        ASSERT_TRUE(fake_engine_is_armed(a));
        /* And one still waiting when the manager goes is freed (ASan). */
        ASSERT_OK(manager_cancel(m, &other, id_str(a, buf), false, &staying_owner, on_done, &cancel_done));
        run_idle(m);
        teardown(m);
}

/* ---- a process scope's walk, in steps (issue 29) ---- */

static void run_turns(Manager *m, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                ASSERT_TRUE(sd_event_run(m->event, 0) >= 0);
}

/* The walk goes a step per turn of the loop, after whatever else is
 * ready: another request is answered while it runs, and the arm is
 * answered when it is done. */
static void test_arm_steps(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL);
        char slab[256];
        InjectResult ra, rb;

        snprintf(slab, sizeof(slab), "{\"function\": \"should_failslab\", \"error\": \"ENOMEM\", "
                                     "\"scope\": \"process\", \"pid\": %d}", (int) own_pid());
        fake_engine_set_arm_steps(1000);
        inject_json(m, &c, req, NULL, &ra, NULL);
        run_turns(m, 10);
        ASSERT_EQ(ra.n_calls, 0);
        ASSERT_EQ(fake_engine_n_walking(), 1);

        inject_json(m, &c, slab, NULL, &rb, NULL);
        run_until(m, &rb.n_calls, "the answer to an Inject made while another arm walks");
        ASSERT_NULL(rb.err.name);
        ASSERT_TRUE(fake_engine_is_armed(rb.id));
        ASSERT_EQ(ra.n_calls, 0);
        ASSERT_EQ(fake_engine_n_walking(), 1);

        run_until(m, &ra.n_calls, "the answer to the arm once its walk is done");
        ASSERT_NULL(ra.err.name);
        ASSERT_TRUE(fake_engine_is_armed(ra.id));
        ASSERT_EQ(fake_engine_n_walking(), 0);
        ASSERT_EQ(fake_engine_n_undone(), 0);
        ASSERT_EQ(fake_engine_n_arms(), 2);
        teardown(m);
}

static int on_busy(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        return 0;       /* never read: always ready again, as a flood of requests */
}

/* A loop that is never idle (a source always ready, as a flood of
 * requests keeps it) still ends a walk: the nudge steps it. Without it the
 * arm was never answered (vm-daemon-crash's 20 clients). */
static void test_arm_steps_busy(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL);
        sd_event_source *busy = NULL;
        int fds[2];
        InjectResult ra;

        ASSERT_OK(pipe2(fds, O_CLOEXEC));
        ASSERT_EQ(write(fds[1], "x", 1), 1);
        ASSERT_OK(sd_event_add_io(m->event, &busy, fds[0], EPOLLIN, on_busy, NULL));
        fake_engine_set_arm_steps(20);
        inject_json(m, &c, req, NULL, &ra, NULL);
        run_until(m, &ra.n_calls, "the arm's answer while the loop is never idle");
        ASSERT_NULL(ra.err.name);
        ASSERT_TRUE(fake_engine_is_armed(ra.id));
        sd_event_source_disable_unref(busy);
        close(fds[0]);
        close(fds[1]);
        teardown(m);
}

/* A requester that leaves mid-walk drops it: answered (to nobody), as a
 * decision in the journal, the arm taken back. */
static void test_arm_steps_requester_gone(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL), *audit = NULL;
        static int conn;
        InjectResult ra;

        fake_engine_set_arm_steps(1000);
        inject_json(m, &c, req, &conn, &ra, NULL);
        run_turns(m, 10);
        ASSERT_EQ(fake_engine_n_walking(), 1);
        audit_capture_start();
        fake_frontend_owner_leaves(m, &conn);
        audit = audit_capture_end();
        ASSERT_EQ(ra.n_calls, 1);
        ASSERT_STREQ(ra.err.message, "The requester disconnected before the answer");
        assert_audit_line(audit, (const char *const[]) { "event=decision", "result=denied", NULL });
        ASSERT_EQ(fake_engine_n_walking(), 0);
        ASSERT_EQ(fake_engine_n_undone(), 1);
        ASSERT_EQ(fake_engine_n_armed(), 0);
        ASSERT_EQ(fake_engine_n_arms(), 0);
        run_turns(m, 10);
        ASSERT_EQ(ra.n_calls, 1);
        teardown(m);
}

/* Stopping mid-walk answers the arm and takes it back; a front end's
 * cancel (pending_request_cancel()) takes it back unanswered. */
static void test_arm_steps_abort(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL);
        PendingRequest *p = NULL;
        InjectResult ra, rb;

        fake_engine_set_arm_steps(1000);
        inject_json(m, &c, req, NULL, &rb, &p);
        run_turns(m, 10);
        ASSERT_EQ(fake_engine_n_walking(), 1);
        pending_request_cancel(p);
        ASSERT_EQ(rb.n_calls, 0);
        ASSERT_EQ(fake_engine_n_walking(), 0);
        ASSERT_EQ(fake_engine_n_undone(), 1);

        fake_engine_set_arm_steps(1000);
        inject_json(m, &c, req, NULL, &ra, NULL);
        run_turns(m, 10);
        ASSERT_EQ(fake_engine_n_walking(), 1);
        manager_requests_abort(m);
        ASSERT_EQ(ra.n_calls, 1);
        ASSERT_STREQ(ra.err.name, "InjectionUnavailable");
        ASSERT_EQ(fake_engine_n_walking(), 0);
        ASSERT_EQ(fake_engine_n_undone(), 2);
        ASSERT_EQ(fake_engine_n_armed(), 0);
        run_turns(m, 10);
        ASSERT_EQ(ra.n_calls, 1);
        teardown(m);
}

/* ---- what a user sees ---- */

static void test_list(void) {
        Manager *m = setup_default();
        Caller c = caller_of(test_uid(), own_pid());
        Caller other = caller_of(other_uid(), own_pid());
        _cleanup_free_ char *req = own_request(NULL);
        json_object *a = NULL;
        InjectError err = {};

        json_object *o, *v;
        uint64_t id;

        id = inject_ok(m, &c, req);
        ASSERT_OK(manager_list_json(m, &other, false, &a, &err));
        ASSERT_EQ(json_object_array_length(a), 0);
        json_object_put(a);

        /* The list reads the engine's counters and state afresh. */
        ASSERT_OK(fake_engine_set_counters(id, 10, 7, 3));
        ASSERT_OK(fake_engine_set_state(id, INJECTION_EXHAUSTED));
        ASSERT_OK(manager_list_json(m, &c, false, &a, &err));
        ASSERT_EQ(json_object_array_length(a), 1);
        o = json_object_array_get_idx(a, 0);
        ASSERT_TRUE(json_object_object_get_ex(o, "calls_seen", &v));
        ASSERT_EQ(json_object_get_int64(v), 10);
        ASSERT_TRUE(json_object_object_get_ex(o, "faults_injected", &v));
        ASSERT_EQ(json_object_get_int64(v), 3);
        ASSERT_TRUE(json_object_object_get_ex(o, "state", &v));
        ASSERT_STREQ(json_object_get_string(v), "exhausted");
        ASSERT_TRUE(json_object_object_get_ex(o, "rule", &v));
        ASSERT_STREQ(json_object_get_string(v), "test-own");
        json_object_put(a);
        ASSERT_RET(manager_list_json(m, &c, true, &a, &err), -EPERM);

        /* O(1) engine calls, whatever the number listed: one
         * engine_get_many(), no engine_get() per injection (issue 30). */
        {
                _cleanup_free_ char *r1 = own_request("\"comm\": \"one\"");   /* 'test-own' allows 2 */
                unsigned gets, manys;

                (void) inject_ok(m, &c, r1);
                gets = fake_engine_n_gets();
                manys = fake_engine_n_get_manys();
                ASSERT_OK(manager_list_json(m, &c, false, &a, &err));
                ASSERT_EQ(json_object_array_length(a), 2);
                ASSERT_EQ(fake_engine_n_gets(), gets);
                ASSERT_EQ(fake_engine_n_get_manys(), manys + 1);
                json_object_put(a);
        }

        /* Which functions this user may fail: the engine's, marked by the policy. */
        ASSERT_OK(manager_functions_json(m, &c, NULL, &a));
        ASSERT_EQ(json_object_array_length(a), 4);
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *name, *allowed;
                const char *n;

                o = json_object_array_get_idx(a, i);
                ASSERT_TRUE(json_object_object_get_ex(o, "name", &name));
                ASSERT_TRUE(json_object_object_get_ex(o, "allowed", &allowed));
                n = json_object_get_string(name);
                if (json_object_get_boolean(allowed) != (strcmp(n, "__x64_sys_mkdirat") != 0))
                        test_fail("expected '%s' allowed: %s, seen %s", n,
                                  strcmp(n, "__x64_sys_mkdirat") != 0 ? "yes" : "no",
                                  json_object_get_boolean(allowed) ? "yes" : "no");
        }
        json_object_put(a);
        ASSERT_OK(manager_functions_json(m, &other, "__x64_sys_*", &a));
        ASSERT_EQ(json_object_array_length(a), 2);
        json_object_put(a);
        teardown(m);
}

int main(void) {
        _cleanup_free_ char *policy = NULL;

        core_test_init();
        ASSERT_TRUE(asprintf(&policy, policy_fmt, (unsigned) test_uid(), (unsigned) test_uid(),
                             (unsigned) other_uid()) > 0);
        policy_dir = policy_dir_new(policy);

        TEST_RUN(test_request_refusals);
        TEST_RUN(test_policy_refusals);
        TEST_RUN(test_scopes);
        TEST_RUN(test_limit_per_user);
        TEST_RUN(test_limit_global);
        TEST_RUN(test_rate);
        TEST_RUN(test_polkit_answers);
        TEST_RUN(test_polkit_pending_cancel);
        TEST_RUN(test_owner_gone_pending);
        TEST_RUN(test_owner_vanished_pending);
        TEST_RUN(test_owner_refcounted_pending);
        TEST_RUN(test_owner_gone_armed);
        TEST_RUN(test_owner_gone_process);
        TEST_RUN(test_expiry);
        TEST_RUN(test_exhausted);
        TEST_RUN(test_engine_refuses);
        TEST_RUN(test_pid_recycled);
        TEST_RUN(test_restart);
        TEST_RUN(test_cancel);
        TEST_RUN(test_cancel_requester_gone);
        TEST_RUN(test_list);
        TEST_RUN(test_arm_steps);
        TEST_RUN(test_arm_steps_busy);
        TEST_RUN(test_arm_steps_requester_gone);
        TEST_RUN(test_arm_steps_abort);

        policy_dir_free(policy_dir);
        return 0;
}
