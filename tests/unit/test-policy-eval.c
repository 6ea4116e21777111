/* SPDX-License-Identifier: MIT */
/* The policy's decisions (policy-eval.c) on a policy loaded from a
 * temporary directory: allowed, denied and why, ties, the kernel log
 * option, invalid requests, the rules for a subject; and the decisions of
 * the policy files the project ships (policy/). */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "duration.h"
#include "policy-load.h"
#include "policy.h"
#include "policy-fixture.h"
#include "test-util.h"

/* ---- Evaluation ---- */

static const char eval_policy[] =
        "{\"rules\": [\n"
        " {\"name\": \"alloc\", \"groups\": [100],\n"
        "  \"functions\": [\"should_failslab\", \"should_fail_alloc_page\"],\n"
        "  \"errors\": [\"ENOMEM\"], \"retvals\": [1], \"scopes\": [\"cgroup\", \"process\"],\n"
        "  \"max-duration\": \"10min\", \"max-active\": 3},\n"
        " {\"name\": \"sys\", \"users\": [\"1000\"], \"functions\": [\"__x64_sys_*\"],\n"
        "  \"errors\": [\"ENOENT\", 5, \"-13\"], \"scopes\": [\"process\"],\n"
        "  \"max-duration\": \"5min\", \"max-active\": 2},\n"
        " {\"name\": \"sys-long\", \"users\": [1000], \"functions\": [\"__x64_sys_open*\"],\n"
        "  \"errors\": [\"*\"], \"scopes\": [\"cgroup\"], \"max-duration\": \"1h\", \"max-active\": 1},\n"
        " {\"name\": \"off\", \"enabled\": false, \"users\": [1000], \"functions\": [\"vfs_read\"]},\n"
        " {\"name\": \"root-global\", \"users\": [\"root\"], \"functions\": [\"*\"], \"errors\": [\"*\"],\n"
        "  \"scopes\": [\"global\"], \"max-duration\": \"1h\", \"max-active\": 100},\n"
        " {\"name\": \"classes\", \"users\": [3000], \"functions\": [\"f[0-9]_[!x]\", \"g?\"],\n"
        "  \"retvals\": [0, -5000], \"scopes\": [\"process\"], \"max-duration\": \"1s\", \"max-active\": 1}\n"
        "]}\n";

static const PolicySubject alice = { .uid = 1000, .gid = 1000, .user_name = "alice" };
static const PolicySubject bob = { .uid = 2000, .gid = 2000, .user_name = "bob" };
static const PolicySubject nameless = { .uid = 2001, .gid = 2001 };
static const PolicySubject carol = { .uid = 3000, .gid = 3000, .groups = (const gid_t[]) { 50, 100 },
                                     .n_groups = 2, .user_name = "carol" };
static const PolicySubject dave = { .uid = 4000, .gid = 100, .user_name = "dave" };
static const PolicySubject root = { .uid = 0, .gid = 0, .user_name = "root" };

static Policy *eval_load(char **ret_dir) {
        char *dir = make_dir();
        Policy *p;

        write_file(dir, "50-eval.json", eval_policy);
        p = load1(dir);
        assert_no_problems(p);
        ASSERT_EQ(policy_n_rules(p), 6);
        *ret_dir = dir;
        return p;
}

static PolicyDecision check(const Policy *p, const PolicySubject *s, const char *function,
                            int64_t retval, bool is_errno, PolicyScope scope, uint64_t duration) {
        PolicyDecision d;

        memset(&d, 0x55, sizeof(d));    /* so stale fields would show */
        ASSERT_RET(policy_check(p, s, &(PolicyRequest) {
                .function = function,
                .retval = retval,
                .is_errno = is_errno,
                .scope = scope,
                .duration_usec = duration,
        }, &d), 0);
        ASSERT_EQ(d.allowed, d.denial == POLICY_DENIAL_NONE);
        ASSERT_STREQ(d.error_name, policy_denial_to_error_name(d.denial));
        return d;
}

/* These report the line of their caller, which is what tells the cases
 * apart. */
#define FAIL_AT(line, fmt, ...)                                                 \
        do {                                                                    \
                fprintf(stderr, "%s:%d: FAIL: " fmt "\n", __FILE__, line, __VA_ARGS__); \
                exit(EXIT_FAILURE);                                             \
        } while (false)

static void assert_allowed_at(int line, PolicyDecision d, const char *rule, unsigned max_active,
                              uint64_t max_duration) {
        if (!d.allowed)
                FAIL_AT(line, "expected allowed by \"%s\", seen denied (%s): %s",
                        rule, d.error_name, d.message);
        if (d.denial != POLICY_DENIAL_NONE || d.error_name)
                FAIL_AT(line, "expected no denial, seen %d (%s)", (int) d.denial, d.error_name);
        if (strcmp(d.rule, rule) != 0)
                FAIL_AT(line, "expected granting rule \"%s\", seen \"%s\"", rule, d.rule);
        if (d.max_active != max_active)
                FAIL_AT(line, "expected max_active %u, seen %u", max_active, d.max_active);
        if (d.max_duration_usec != max_duration)
                FAIL_AT(line, "expected max_duration_usec %" PRIu64 ", seen %" PRIu64,
                        max_duration, d.max_duration_usec);
}
#define assert_allowed(...) assert_allowed_at(__LINE__, __VA_ARGS__)

static void assert_denied_at(int line, PolicyDecision d, PolicyDenial denial, const char *rule,
                             const char *message) {
        if (d.allowed)
                FAIL_AT(line, "expected denied (%s), seen allowed by \"%s\"",
                        policy_denial_to_error_name(denial), d.rule);
        if (d.denial != denial)
                FAIL_AT(line, "expected denial %s, seen %s: %s", policy_denial_to_error_name(denial),
                        policy_denial_to_error_name(d.denial), d.message);
        if (strcmp(d.rule, rule) != 0)
                FAIL_AT(line, "expected rule \"%s\", seen \"%s\"", rule, d.rule);
        if (d.max_active != 0)
                FAIL_AT(line, "expected max_active 0 when denied, seen %u", d.max_active);
        if (strcmp(d.message, message) != 0)
                FAIL_AT(line, "expected message \"%s\", seen \"%s\"", message, d.message);
}
#define assert_denied(...) assert_denied_at(__LINE__, __VA_ARGS__)

static void test_check_allowed(void) {
        char *dir;
        Policy *p = eval_load(&dir);
        PolicyDecision d;

        /* By user id given as a string, errno by name. */
        d = check(p, &alice, "__x64_sys_read", -ENOENT, true, POLICY_SCOPE_PROCESS, USEC_PER_MINUTE);
        assert_allowed(d, "sys", 2, 5 * USEC_PER_MINUTE);
        ASSERT_STREQ(d.message, "Allowed by policy rule 'sys'.");
        /* Errno given as 5 and as "-13" in the file. */
        assert_allowed(check(p, &alice, "__x64_sys_read", -EIO, true, POLICY_SCOPE_PROCESS, 1),
                       "sys", 2, 5 * USEC_PER_MINUTE);
        assert_allowed(check(p, &alice, "__x64_sys_read", -EACCES, true, POLICY_SCOPE_PROCESS, 1),
                       "sys", 2, 5 * USEC_PER_MINUTE);
        /* Exactly the cap is allowed. */
        assert_allowed(check(p, &alice, "__x64_sys_read", -EIO, true, POLICY_SCOPE_PROCESS, 5 * USEC_PER_MINUTE),
                       "sys", 2, 5 * USEC_PER_MINUTE);
        /* No duration asked: allowed, the caller takes the cap. */
        assert_allowed(check(p, &alice, "__x64_sys_read", -EIO, true, POLICY_SCOPE_PROCESS, 0),
                       "sys", 2, 5 * USEC_PER_MINUTE);
        /* The first rule that allows it all grants: "sys" refuses the
         * scope, "sys-long" allows any errno in a cgroup. */
        assert_allowed(check(p, &alice, "__x64_sys_openat", -EXDEV, true, POLICY_SCOPE_CGROUP, 30 * USEC_PER_MINUTE),
                       "sys-long", 1, USEC_PER_HOUR);
        /* Both allow it: the first in effect order grants. */
        assert_allowed(check(p, &alice, "__x64_sys_openat", -ENOENT, true, POLICY_SCOPE_PROCESS, 1),
                       "sys", 2, 5 * USEC_PER_MINUTE);

        /* By supplementary and by primary group. */
        assert_allowed(check(p, &carol, "should_failslab", -ENOMEM, true, POLICY_SCOPE_PROCESS, 1),
                       "alloc", 3, 10 * USEC_PER_MINUTE);
        assert_allowed(check(p, &dave, "should_failslab", -ENOMEM, true, POLICY_SCOPE_CGROUP, 1),
                       "alloc", 3, 10 * USEC_PER_MINUTE);
        /* A TRUE-type function: retval 1, not an errno. */
        assert_allowed(check(p, &dave, "should_fail_alloc_page", 1, false, POLICY_SCOPE_CGROUP, 1),
                       "alloc", 3, 10 * USEC_PER_MINUTE);

        /* By user name, resolved at load; global only where a rule says so. */
        assert_allowed(check(p, &root, "anything_at_all", -EPERM, true, POLICY_SCOPE_GLOBAL, USEC_PER_HOUR),
                       "root-global", 100, USEC_PER_HOUR);

        /* Classes and '?'; retvals that are not errnos. */
        assert_allowed(check(p, &carol, "f7_a", 0, true, POLICY_SCOPE_PROCESS, 1), "classes", 1, USEC_PER_SEC);
        assert_allowed(check(p, &carol, "gz", 0, false, POLICY_SCOPE_PROCESS, 1), "classes", 1, USEC_PER_SEC);
        /* -5000 is no errno even for an errno-typed function: "retvals" decides. */
        assert_allowed(check(p, &carol, "gz", -5000, true, POLICY_SCOPE_PROCESS, 1), "classes", 1, USEC_PER_SEC);

        policy_free(p);
        remove_dir(dir);
}

static void test_check_denied(void) {
        char *dir;
        Policy *p = eval_load(&dir);
        PolicyDecision d;

        /* No rule for the user at all. */
        assert_denied(check(p, &bob, "should_failslab", -ENOMEM, true, POLICY_SCOPE_PROCESS, 1),
                      POLICY_DENIAL_USER, "", "No policy rule lets user 'bob' inject faults.");
        d = check(p, &nameless, "should_failslab", -ENOMEM, true, POLICY_SCOPE_PROCESS, 1);
        assert_denied(d, POLICY_DENIAL_USER, "", "No policy rule lets uid 2001 inject faults.");
        ASSERT_STREQ(d.error_name, "UserNotInPolicy");

        /* Rules for the user, none for the function; "off" is disabled. */
        d = check(p, &alice, "vfs_read", -EIO, true, POLICY_SCOPE_PROCESS, 1);
        assert_denied(d, POLICY_DENIAL_FUNCTION, "", "No policy rule lets user 'alice' make 'vfs_read' fail.");
        ASSERT_STREQ(d.error_name, "FunctionNotAllowed");
        assert_denied(check(p, &carol, "f7_x", 0, false, POLICY_SCOPE_PROCESS, 1),
                      POLICY_DENIAL_FUNCTION, "", "No policy rule lets user 'carol' make 'f7_x' fail.");
        assert_denied(check(p, &carol, "g", 0, false, POLICY_SCOPE_PROCESS, 1),
                      POLICY_DENIAL_FUNCTION, "", "No policy rule lets user 'carol' make 'g' fail.");
        /* fnmatch() without FNM_PATHNAME or such: '*' matches '.' too. */
        ASSERT_TRUE(check(p, &alice, "__x64_sys_read.cold", -EIO, true, POLICY_SCOPE_PROCESS, 1).allowed);

        /* The function matches, the error does not. */
        d = check(p, &alice, "__x64_sys_read", -EXDEV, true, POLICY_SCOPE_PROCESS, 1);
        assert_denied(d, POLICY_DENIAL_VALUE, "sys",
                      "Policy rule 'sys' does not allow error EXDEV for '__x64_sys_read' (allowed: ENOENT, EIO, EACCES).");
        ASSERT_STREQ(d.error_name, "ErrorNotAllowed");
        assert_denied(check(p, &alice, "__x64_sys_read", -4000, true, POLICY_SCOPE_PROCESS, 1),
                      POLICY_DENIAL_VALUE, "sys",
                      "Policy rule 'sys' does not allow error 4000 for '__x64_sys_read' (allowed: ENOENT, EIO, EACCES).");
        /* "*" means any errno, not any value: retval 1 of a TRUE function. */
        assert_denied(check(p, &alice, "__x64_sys_openat", 1, false, POLICY_SCOPE_CGROUP, 1),
                      POLICY_DENIAL_VALUE, "sys",
                      "Policy rule 'sys' does not allow return value 1 for '__x64_sys_openat' (allowed: ENOENT, EIO, EACCES).");
        /* A negative value is an errno only for an errno-typed function. */
        assert_denied(check(p, &dave, "should_failslab", -ENOMEM, false, POLICY_SCOPE_CGROUP, 1),
                      POLICY_DENIAL_VALUE, "alloc",
                      "Policy rule 'alloc' does not allow return value -12 for 'should_failslab' (allowed: ENOMEM, retval 1).");
        assert_denied(check(p, &dave, "should_fail_alloc_page", 0, false, POLICY_SCOPE_CGROUP, 1),
                      POLICY_DENIAL_VALUE, "alloc",
                      "Policy rule 'alloc' does not allow return value 0 for 'should_fail_alloc_page' (allowed: ENOMEM, retval 1).");

        /* The most specific reason wins: "sys" refuses EXDEV, "sys-long"
         * gets further and refuses the scope. */
        d = check(p, &alice, "__x64_sys_openat", -EXDEV, true, POLICY_SCOPE_PROCESS, 1);
        assert_denied(d, POLICY_DENIAL_SCOPE, "sys-long",
                      "Policy rule 'sys-long' does not allow scope 'process' for '__x64_sys_openat' (allowed: cgroup).");
        ASSERT_STREQ(d.error_name, "ScopeNotAllowed");
        assert_denied(check(p, &dave, "should_failslab", -ENOMEM, true, POLICY_SCOPE_GLOBAL, 1),
                      POLICY_DENIAL_SCOPE, "alloc",
                      "Policy rule 'alloc' does not allow scope 'global' for 'should_failslab' (allowed: cgroup, process).");
        assert_denied(check(p, &root, "x", -EIO, true, POLICY_SCOPE_CGROUP, 1),
                      POLICY_DENIAL_SCOPE, "root-global",
                      "Policy rule 'root-global' does not allow scope 'cgroup' for 'x' (allowed: global).");

        /* Too long: the cap is named and returned. */
        d = check(p, &alice, "__x64_sys_read", -EIO, true, POLICY_SCOPE_PROCESS, 6 * USEC_PER_MINUTE);
        assert_denied(d, POLICY_DENIAL_DURATION, "sys",
                      "Duration 6min exceeds the limit of 5min set by policy rule 'sys'.");
        ASSERT_STREQ(d.error_name, "DurationTooLong");
        ASSERT_EQ_U64(d.max_duration_usec, 5 * USEC_PER_MINUTE);
        assert_denied(check(p, &alice, "__x64_sys_read", -EIO, true, POLICY_SCOPE_PROCESS, 5 * USEC_PER_MINUTE + 1),
                      POLICY_DENIAL_DURATION, "sys",
                      "Duration 5min 1us exceeds the limit of 5min set by policy rule 'sys'.");
        /* "sys" fails on scope, "sys-long" on duration: duration is deeper. */
        d = check(p, &alice, "__x64_sys_openat", -ENOENT, true, POLICY_SCOPE_CGROUP, 2 * USEC_PER_HOUR);
        assert_denied(d, POLICY_DENIAL_DURATION, "sys-long",
                      "Duration 2h exceeds the limit of 1h set by policy rule 'sys-long'.");
        ASSERT_EQ_U64(d.max_duration_usec, USEC_PER_HOUR);

        policy_free(p);
        remove_dir(dir);
}

/* Of several rules that are all too short, the longest cap is named. */
static void test_check_duration_tie(void) {
        char *dir = make_dir();
        PolicyDecision d;
        Policy *p;

        write_file(dir, "50-t.json",
                   "{\"rules\": [\n"
                   " {\"name\": \"short\", \"users\": [1000], \"functions\": [\"f\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1},\n"
                   " {\"name\": \"longer\", \"users\": [1000], \"functions\": [\"f\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"3min\", \"max-active\": 1},\n"
                   " {\"name\": \"mid\", \"users\": [1000], \"functions\": [\"f\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"2min\", \"max-active\": 1},\n"
                   " {\"name\": \"everyone\", \"users\": [\"*\"], \"functions\": [\"should_fail_bio\"],\n"
                   "  \"errors\": [\"EIO\"], \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1}\n"
                   "]}\n");
        p = load1(dir);
        assert_no_problems(p);

        d = check(p, &alice, "f", -EIO, true, POLICY_SCOPE_PROCESS, USEC_PER_HOUR);
        assert_denied(d, POLICY_DENIAL_DURATION, "longer",
                      "Duration 1h exceeds the limit of 3min set by policy rule 'longer'.");
        ASSERT_EQ_U64(d.max_duration_usec, 3 * USEC_PER_MINUTE);
        assert_allowed(check(p, &alice, "f", -EIO, true, POLICY_SCOPE_PROCESS, 150 * USEC_PER_SEC),
                       "longer", 1, 3 * USEC_PER_MINUTE);

        /* "users": ["*"] names everyone, so nobody gets UserNotInPolicy. */
        assert_allowed(check(p, &bob, "should_fail_bio", -EIO, true, POLICY_SCOPE_PROCESS, 1),
                       "everyone", 1, USEC_PER_MINUTE);
        assert_denied(check(p, &bob, "f", -EIO, true, POLICY_SCOPE_PROCESS, 1),
                      POLICY_DENIAL_FUNCTION, "", "No policy rule lets user 'bob' make 'f' fail.");

        policy_free(p);
        remove_dir(dir);
}

/* Kernel log records: only a rule with "kernel-log": true grants them,
 * and a later rule that does is found past one that does not. */
static void test_check_kernel_log(void) {
        char *dir = make_dir();
        PolicyDecision d;
        Policy *p;

        write_file(dir, "50-k.json",
                   "{\"rules\": [\n"
                   " {\"name\": \"plain\", \"users\": [1000], \"functions\": [\"f\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1},\n"
                   " {\"name\": \"logged\", \"users\": [1000], \"functions\": [\"g\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1, \"kernel-log\": true}\n"
                   "]}\n");
        p = load1(dir);
        assert_no_problems(p);

        ASSERT_OK(policy_check(p, &alice, &(PolicyRequest) { .function = "f", .retval = -EIO, .is_errno = true,
                                                              .scope = POLICY_SCOPE_PROCESS, .duration_usec = 1,
                                                              .kernel_log = true }, &d));
        assert_denied(d, POLICY_DENIAL_KERNEL_LOG, "plain",
                      "Policy rule 'plain' does not allow kernel log records of the faults of 'f' (it would need "
                      "\"kernel-log\": true).");
        ASSERT_STREQ(d.error_name, "KernelLogNotAllowed");
        ASSERT_OK(policy_check(p, &alice, &(PolicyRequest) { .function = "g", .retval = -EIO, .is_errno = true,
                                                              .scope = POLICY_SCOPE_PROCESS, .duration_usec = 1,
                                                              .kernel_log = true }, &d));
        ASSERT_TRUE(d.allowed);
        assert_allowed(check(p, &alice, "f", -EIO, true, POLICY_SCOPE_PROCESS, 1), "plain", 1, USEC_PER_MINUTE);

        policy_free(p);
        remove_dir(dir);
}

static void test_check_invalid(void) {
        char *dir;
        Policy *p = eval_load(&dir), *empty;
        PolicyDecision d = { .allowed = true, .max_active = 77 };
        PolicyRequest q = { .function = "should_failslab", .retval = -ENOMEM, .is_errno = true,
                            .scope = POLICY_SCOPE_PROCESS, .duration_usec = 1 };

        ASSERT_RET(policy_check(NULL, &carol, &q, &d), -EINVAL);
        ASSERT_RET(policy_check(p, NULL, &q, &d), -EINVAL);
        ASSERT_RET(policy_check(p, &carol, NULL, &d), -EINVAL);
        ASSERT_RET(policy_check(p, &carol, &q, NULL), -EINVAL);
        q.function = NULL;
        ASSERT_RET(policy_check(p, &carol, &q, &d), -EINVAL);
        q.function = "";
        ASSERT_RET(policy_check(p, &carol, &q, &d), -EINVAL);
        q.function = "should_failslab";
        q.scope = _POLICY_SCOPE_MAX;
        ASSERT_RET(policy_check(p, &carol, &q, &d), -EINVAL);
        q.scope = (PolicyScope) -1;
        ASSERT_RET(policy_check(p, &carol, &q, &d), -EINVAL);
        /* ret_ is untouched on failure. */
        ASSERT_TRUE(d.allowed);
        ASSERT_EQ(d.max_active, 77);

        /* An empty policy denies everything, root included. */
        ASSERT_RET(policy_load((const char *const[]) { NULL }, 0, &empty), 0);
        q.scope = POLICY_SCOPE_GLOBAL;
        ASSERT_RET(policy_check(empty, &root, &q, &d), 0);
        ASSERT_FALSE(d.allowed);
        ASSERT_EQ(d.denial, POLICY_DENIAL_USER);
        ASSERT_FALSE(policy_function_allowed(empty, &root, "should_failslab"));
        policy_free(empty);

        policy_free(p);
        remove_dir(dir);
}

static void test_function_allowed(void) {
        char *dir;
        Policy *p = eval_load(&dir);

        ASSERT_TRUE(policy_function_allowed(p, &alice, "__x64_sys_openat"));
        ASSERT_TRUE(policy_function_allowed(p, &alice, "__x64_sys_read"));
        ASSERT_FALSE(policy_function_allowed(p, &alice, "__ia32_sys_read"));
        ASSERT_FALSE(policy_function_allowed(p, &alice, "vfs_read"));      /* disabled rule */
        ASSERT_FALSE(policy_function_allowed(p, &alice, "should_failslab"));
        ASSERT_TRUE(policy_function_allowed(p, &carol, "should_failslab"));
        ASSERT_TRUE(policy_function_allowed(p, &dave, "should_fail_alloc_page"));
        ASSERT_FALSE(policy_function_allowed(p, &bob, "should_failslab"));
        ASSERT_TRUE(policy_function_allowed(p, &root, "vfs_read"));
        ASSERT_FALSE(policy_function_allowed(p, &alice, NULL));
        ASSERT_FALSE(policy_function_allowed(NULL, &alice, "__x64_sys_read"));

        policy_free(p);
        remove_dir(dir);
}

static void test_rules_for(void) {
        char *dir;
        Policy *p = eval_load(&dir);
        const PolicyRule **rules;
        size_t n;

        ASSERT_RET(policy_rules_for(p, &alice, &rules, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_STREQ(rules[0]->name, "sys");
        ASSERT_STREQ(rules[1]->name, "sys-long");
        free(rules);

        ASSERT_RET(policy_rules_for(p, &carol, &rules, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_STREQ(rules[0]->name, "alloc");
        ASSERT_STREQ(rules[1]->name, "classes");
        free(rules);

        ASSERT_RET(policy_rules_for(p, &bob, &rules, &n), 0);
        ASSERT_EQ(n, 0);
        ASSERT_NULL(rules);

        ASSERT_RET(policy_rules_for(p, NULL, &rules, &n), -EINVAL);

        ASSERT_TRUE(policy_rule_applies(policy_find_rule(p, "alloc"), &dave));
        ASSERT_FALSE(policy_rule_applies(policy_find_rule(p, "off"), &alice));
        ASSERT_FALSE(policy_rule_applies(NULL, &alice));

        policy_free(p);
        remove_dir(dir);
}


/* ---- The shipped files ---- */

static char *read_source(const char *relative) {
        char *path, *text = NULL;
        size_t len = 0;
        FILE *f;

        ASSERT_TRUE(asprintf(&path, "%s/%s", POLICY_SOURCE_DIR, relative) > 0);
        f = fopen(path, "re");
        if (!f)
                test_fail("cannot open %s: %s", path, strerror(errno));
        ASSERT_TRUE(getdelim(&text, &len, '\0', f) > 0);
        fclose(f);
        free(path);
        return text;
}

/* Replaces every occurrence of from by to. */
static char *replace(const char *s, const char *from, const char *to) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        const char *m;

        ASSERT_NOT_NULL(f);
        while ((m = strstr(s, from))) {
                fwrite(s, 1, (size_t) (m - s), f);
                fputs(to, f);
                s = m + strlen(from);
        }
        fputs(s, f);
        ASSERT_EQ(fclose(f), 0);
        return buf;
}

static void test_default_policy(void) {
        char *dir = make_dir(), *text = read_source("10-injectd-default.json"), *mine;
        const PolicySubject member = { .uid = 1500, .gid = 1500, .groups = (const gid_t[]) { 4242 },
                                       .n_groups = 1, .user_name = "member" };
        static const int syscall_errors[] = {
                ENOENT, EACCES, EPERM, EIO, ENOMEM, EINTR, EAGAIN, ENOSPC, EBADF, EINVAL, EMFILE,
        };
        Policy *p;

        /* As shipped: valid; the group may not exist here. */
        write_file(dir, "10-injectd-default.json", text);
        p = load1(dir);
        if (getgrnam("injectd"))
                assert_no_problems(p);
        else {
                const PolicyProblem *pr;
                size_t n;

                pr = policy_problems(p, &n);
                ASSERT_FALSE(policy_has_errors(p));
                for (size_t i = 0; i < n; i++)
                        ASSERT_TRUE(strstr(pr[i].message, "unknown group \"injectd\", ignoring") != NULL);
        }
        ASSERT_EQ(policy_n_rules(p), 3);
        policy_free(p);

        /* With the group as gid 4242, to see what it allows. */
        mine = replace(text, "\"injectd\"", "4242");
        write_file(dir, "10-injectd-default.json", mine);
        p = load1(dir);
        assert_no_problems(p);

        assert_allowed(check(p, &member, "should_failslab", -ENOMEM, true, POLICY_SCOPE_CGROUP, 10 * USEC_PER_MINUTE),
                       "injectd-default-slab", 16, 10 * USEC_PER_MINUTE);
        assert_allowed(check(p, &member, "should_fail_alloc_page", 1, false, POLICY_SCOPE_PROCESS, USEC_PER_MINUTE),
                       "injectd-default-page-alloc", 16, 10 * USEC_PER_MINUTE);
        for (size_t i = 0; i < ELEMENTSOF(syscall_errors); i++) {
                assert_allowed(check(p, &member, "__x64_sys_openat", -syscall_errors[i], true,
                                     POLICY_SCOPE_PROCESS, USEC_PER_MINUTE),
                               "injectd-default-syscalls", 16, 10 * USEC_PER_MINUTE);
                assert_allowed(check(p, &member, "__do_sys_openat", -syscall_errors[i], true,
                                     POLICY_SCOPE_CGROUP, USEC_PER_MINUTE),
                               "injectd-default-syscalls", 16, 10 * USEC_PER_MINUTE);
        }
        ASSERT_EQ(check(p, &member, "should_failslab", -EIO, true, POLICY_SCOPE_CGROUP, 1).denial,
                  POLICY_DENIAL_VALUE);
        ASSERT_EQ(check(p, &member, "__x64_sys_openat", -EXDEV, true, POLICY_SCOPE_CGROUP, 1).denial,
                  POLICY_DENIAL_VALUE);
        ASSERT_EQ(check(p, &member, "should_fail_alloc_page", 0, false, POLICY_SCOPE_CGROUP, 1).denial,
                  POLICY_DENIAL_VALUE);
        /* Never global, never longer than 10 minutes, nothing else. */
        ASSERT_EQ(check(p, &member, "should_failslab", -ENOMEM, true, POLICY_SCOPE_GLOBAL, 1).denial,
                  POLICY_DENIAL_SCOPE);
        ASSERT_EQ(check(p, &member, "__x64_sys_openat", -ENOENT, true, POLICY_SCOPE_GLOBAL, 1).denial,
                  POLICY_DENIAL_SCOPE);
        ASSERT_EQ(check(p, &member, "should_failslab", -ENOMEM, true, POLICY_SCOPE_CGROUP,
                        10 * USEC_PER_MINUTE + 1).denial, POLICY_DENIAL_DURATION);
        ASSERT_FALSE(policy_function_allowed(p, &member, "open_ctree"));
        ASSERT_FALSE(policy_function_allowed(p, &member, "should_fail_bio"));
        ASSERT_FALSE(policy_function_allowed(p, &member, "__ia32_sys_openat"));
        for (size_t i = 0; i < policy_n_rules(p); i++)
                ASSERT_FALSE(policy_rule(p, i)->scopes & (1u << POLICY_SCOPE_GLOBAL));
        /* Others get nothing. */
        ASSERT_EQ(check(p, &bob, "should_failslab", -ENOMEM, true, POLICY_SCOPE_CGROUP, 1).denial,
                  POLICY_DENIAL_USER);

        policy_free(p);
        free(mine);
        free(text);
        remove_dir(dir);
}

static void test_example_policy(void) {
        char *dir = make_dir(), *text = read_source("examples/50-btrfs-developers.json");
        Policy *p;

        write_file(dir, "50-btrfs-developers.json", text);
        p = load1(dir);
        ASSERT_FALSE(policy_has_errors(p));
        ASSERT_EQ(policy_n_rules(p), 1);
        ASSERT_STREQ(policy_rule(p, 0)->functions[0], "open_ctree");
        policy_free(p);
        free(text);
        remove_dir(dir);
}

int main(void) {
        TEST_RUN(test_check_kernel_log);
        TEST_RUN(test_check_allowed);
        TEST_RUN(test_check_denied);
        TEST_RUN(test_check_duration_tie);
        TEST_RUN(test_check_invalid);
        TEST_RUN(test_function_allowed);
        TEST_RUN(test_rules_for);
        TEST_RUN(test_default_policy);
        TEST_RUN(test_example_policy);
        return 0;
}
