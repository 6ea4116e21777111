/* SPDX-License-Identifier: MIT */
/* Rules by the caller's cgroup ("cgroups") and deny rules: the pattern
 * matcher alone, what the loader refuses and where, and decisions,
 * including callers in cgroups named to look like a match. */

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy-cgroup.h"
#include "policy-load.h"
#include "policy.h"
#include "test-util.h"

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) type;
        (void) ftw;
        return remove(path);
}

/* Loads text as the only file of a fresh directory. */
static Policy *load_text(const char *text) {
        char dir[] = "/tmp/test-policy-cgroup-XXXXXX", *path;
        Policy *p = NULL;
        FILE *f;

        ASSERT_NOT_NULL(mkdtemp(dir));
        ASSERT_EQ(chmod(dir, 0755), 0);
        ASSERT_TRUE(asprintf(&path, "%s/50-test.json", dir) > 0);
        f = fopen(path, "we");
        ASSERT_NOT_NULL(f);
        ASSERT_TRUE(fputs(text, f) >= 0);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(chmod(path, 0644), 0);

        ASSERT_RET(policy_load((const char *const[]) { dir, NULL }, getuid(), &p), 0);
        ASSERT_NOT_NULL(p);

        ASSERT_EQ(nftw(dir, remove_one, 4, FTW_DEPTH | FTW_PHYS), 0);
        free(path);
        return p;
}

/* The one problem of p must end in expected (the directory varies). */
static void assert_refused(const Policy *p, const char *expected) {
        const PolicyProblem *pr;
        size_t n, l, k = strlen(expected);

        pr = policy_problems(p, &n);
        if (n != 1)
                test_fail("expected one problem ending in \"%s\", seen %zu", expected, n);
        l = strlen(pr[0].message);
        if (l < k || strcmp(pr[0].message + l - k, expected) != 0)
                test_fail("expected a problem ending in \"%s\", seen \"%s\"", expected, pr[0].message);
        ASSERT_EQ(pr[0].level, POLICY_PROBLEM_ERROR);
        ASSERT_EQ(policy_n_rules(p), 0);
}

static void check_refused(const char *text, const char *expected) {
        Policy *p = load_text(text);

        assert_refused(p, expected);
        policy_free(p);
}

/* A rule's keys around one line under test, which is line 3. */
#define RULE_WITH(extra)                                                        \
        "{ \"rules\": [ { \"name\": \"r\", \"users\": [\"*\"],\n"               \
        "  \"functions\": [\"f\"], \"errors\": [\"EIO\"], \"scopes\": [\"cgroup\"],\n" \
        extra "\n"                                                              \
        "  \"max-duration\": \"1min\", \"max-active\": 1 } ] }\n"

/* ---- The matcher ---- */

static void test_patterns_valid(void) {
        static const char *const valid[] = {
                "/", "/**", "/system.slice/docker-*.scope", "/machine.slice/libpod-*.scope/**",
                "/user.slice/user-*.slice/user@*.service/**/libpod-*.scope/**", "/a/**/b", "/a?c",
                "/machine.slice/machine-test\\x2dvm.scope", "/a b/c", "/**/**",
        };
        static const struct {
                const char *pattern, *why;
        } invalid[] = {
                { "", "empty" },
                { "system.slice/*", "must be an absolute path, starting with '/'" },
                { "*", "must be an absolute path, starting with '/'" },
                { "/system.slice/", "trailing '/' (write \"/**\" for \"and below\")" },
                { "/a//b", "empty component (\"//\") or too many components" },
                { "//", "trailing '/' (write \"/**\" for \"and below\")" },
                { "/a/../b", "'.' and '..' components are not allowed" },
                { "/a/.", "'.' and '..' components are not allowed" },
                { "/docker-**.scope", "\"**\" must be a whole component (\"/a/**\", \"/a/**/b\")" },
                { "/***", "\"**\" must be a whole component (\"/a/**\", \"/a/**/b\")" },
                { "/user-[0-9].slice", "[...] classes are not supported (only '*', '?' and \"**\")" },
                { "/a\tb", "control character" },
        };
        char deep[POLICY_CGROUP_DEPTH_MAX * 2 + 3], *big;

        for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
                if (policy_cgroup_pattern_invalid(valid[i]))
                        test_fail("\"%s\" refused: %s", valid[i], policy_cgroup_pattern_invalid(valid[i]));
        for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
                const char *why = policy_cgroup_pattern_invalid(invalid[i].pattern);

                if (!why)
                        test_fail("\"%s\" accepted", invalid[i].pattern);
                ASSERT_STREQ(why, invalid[i].why);
        }

        /* One component more than the limit. */
        for (size_t i = 0; i <= POLICY_CGROUP_DEPTH_MAX; i++)
                memcpy(deep + 2 * i, "/a", 2);
        deep[2 * (POLICY_CGROUP_DEPTH_MAX + 1)] = '\0';
        ASSERT_STREQ(policy_cgroup_pattern_invalid(deep), "empty component (\"//\") or too many components");
        ASSERT_FALSE(policy_cgroup_path_is_canonical(deep));
        deep[2 * POLICY_CGROUP_DEPTH_MAX] = '\0';
        ASSERT_NULL(policy_cgroup_pattern_invalid(deep));

        big = malloc(POLICY_CGROUP_PATTERN_MAX + 2);
        ASSERT_NOT_NULL(big);
        memset(big, 'a', POLICY_CGROUP_PATTERN_MAX + 1);
        big[0] = '/';
        big[POLICY_CGROUP_PATTERN_MAX + 1] = '\0';
        ASSERT_STREQ(policy_cgroup_pattern_invalid(big), "too long");
        free(big);
}

static void test_match(void) {
        static const struct {
                const char *pattern, *path;
                bool match;
        } cases[] = {
                { "/system.slice/docker-*.scope", "/system.slice/docker-0123abcd.scope", true },
                { "/system.slice/docker-*.scope", "/system.slice/docker-.scope", true },
                /* '*' stays in its component. */
                { "/system.slice/docker-*.scope", "/system.slice/docker-x/y.scope", false },
                { "/system.slice/docker-*.scope", "/system.slice/docker-x.scope/sub", false },
                { "/system.slice/*", "/system.slice/a/b", false },
                { "/system.slice/*", "/system.slice", false },
                /* Anchored at both ends. */
                { "/system.slice/docker-*.scope", "/user.slice/system.slice/docker-x.scope", false },
                { "/system.slice/docker-*.scope", "/system.slice/docker-x.scopes", false },
                { "/system.slice/docker-*.scope", "/system.slice/docker-x.scope.evil", false },
                /* '?' is one character, not '/'. */
                { "/a?c", "/abc", true },
                { "/a?c", "/ac", false },
                { "/a?c", "/a/c", false },
                /* Several '*' in one component. */
                { "/*-*-*.scope", "/a-b-c.scope", true },
                { "/*-*-*.scope", "/a-b.scope", false },
                { "/*ab*ab", "/xabyabab", true },
                /* "**": zero or more whole components. */
                { "/machine.slice/libpod-*.scope/**", "/machine.slice/libpod-1.scope", true },
                { "/machine.slice/libpod-*.scope/**", "/machine.slice/libpod-1.scope/container", true },
                { "/machine.slice/libpod-*.scope/**", "/machine.slice/libpod-1.scope/a/b/c", true },
                { "/machine.slice/libpod-*.scope/**", "/machine.slice/libpod-conmon-1.scope2", false },
                { "/a/**/b", "/a/b", true },
                { "/a/**/b", "/a/x/y/b", true },
                { "/a/**/b", "/a/x/y/b/c", false },
                { "/a/**/b/**/c", "/a/b/x/b/y/c", true },
                { "/**/docker-*.scope", "/system.slice/docker-1.scope", true },
                { "/**", "/", true },
                { "/**", "/any/thing", true },
                { "/", "/", true },
                { "/", "/a", false },
                /* Backslashes are plain characters (systemd's escapes). */
                { "/machine.slice/machine-test\\x2dvm.scope", "/machine.slice/machine-test\\x2dvm.scope", true },
                { "/machine.slice/machine-test\\x2dvm.scope", "/machine.slice/machine-testx2dvm.scope", false },
                /* Paths that are not canonical match nothing, not even "/" "**":
                 * /proc/PID/cgroup shows ".." for a cgroup outside the
                 * reader's cgroup namespace. */
                { "/**", "/system.slice/docker-x.scope/../../user.slice", false },
                { "/system.slice/**", "/system.slice/docker-x.scope/..", false },
                { "/system.slice/docker-*.scope", "/system.slice/./docker-x.scope", false },
                { "/system.slice/docker-*.scope", "/system.slice//docker-x.scope", false },
                { "/system.slice/docker-*.scope", "/system.slice/docker-x.scope/", false },
                { "/**", "", false },
                { "/**", "system.slice", false },
                { "/**", "/a\nb", false },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (policy_cgroup_match(cases[i].pattern, cases[i].path) != cases[i].match)
                        test_fail("\"%s\" against \"%s\": expected %s, seen %s", cases[i].pattern, cases[i].path,
                                  cases[i].match ? "a match" : "none", cases[i].match ? "none" : "a match");

        ASSERT_FALSE(policy_cgroup_match("/**", NULL));
        /* An invalid pattern matches nothing. */
        ASSERT_FALSE(policy_cgroup_match("/a/../b", "/b"));
        ASSERT_FALSE(policy_cgroup_match("a", "a"));
}

/* ---- Loading ---- */

static void test_load(void) {
        Policy *p = load_text(
                "{ \"rules\": [\n"
                "  { \"name\": \"docker\", \"users\": [\"*\"],\n"
                "    \"cgroups\": [\"/system.slice/docker-*.scope\", \"/machine.slice/libpod-*.scope/**\"],\n"
                "    \"functions\": [\"f\"], \"errors\": [\"EIO\"], \"scopes\": [\"cgroup\"],\n"
                "    \"max-duration\": \"1min\", \"max-active\": 1 },\n"
                "  { \"name\": \"no-docker-slab\", \"deny\": true, \"users\": [\"*\"],\n"
                "    \"cgroups\": [\"/system.slice/docker-*.scope\"], \"functions\": [\"should_failslab\"] },\n"
                "  { \"name\": \"allow-explicitly\", \"deny\": false, \"users\": [0],\n"
                "    \"functions\": [\"g\"], \"errors\": [\"EIO\"], \"scopes\": [\"process\"],\n"
                "    \"max-duration\": \"1min\", \"max-active\": 1 },\n"
                "  { \"name\": \"off\", \"enabled\": false, \"deny\": true }\n"
                "] }\n");
        const PolicyRule *r;

        ASSERT_EQ(policy_problems(p, NULL) ? 1 : 0, 0);
        ASSERT_EQ(policy_n_rules(p), 4);

        r = policy_find_rule(p, "docker");
        ASSERT_NOT_NULL(r);
        ASSERT_FALSE(r->deny);
        ASSERT_EQ(r->n_cgroups, 2);
        ASSERT_STREQ(r->cgroups[0], "/system.slice/docker-*.scope");
        ASSERT_STREQ(r->cgroups[1], "/machine.slice/libpod-*.scope/**");

        r = policy_find_rule(p, "no-docker-slab");
        ASSERT_NOT_NULL(r);
        ASSERT_TRUE(r->deny);
        ASSERT_EQ(r->n_cgroups, 1);
        ASSERT_EQ(r->scopes, 0);
        ASSERT_EQ(r->max_active, 0);

        r = policy_find_rule(p, "allow-explicitly");
        ASSERT_FALSE(r->deny);
        ASSERT_EQ(r->n_cgroups, 0);

        r = policy_find_rule(p, "off");
        ASSERT_TRUE(r->deny);
        ASSERT_FALSE(r->enabled);
        policy_free(p);
}

static void test_load_errors(void) {
        /* Every refusal on the line of what it is about. */
        check_refused(RULE_WITH("  \"cgroups\": [],"),
                      ":3: rule \"r\": \"cgroups\" must not be empty (an empty list would allow nothing; "
                      "leave the key out); file refused");
        check_refused(RULE_WITH("  \"cgroups\": \"/system.slice/*\","),
                      ":3: rule \"r\": \"cgroups\" must be an array; file refused");
        check_refused(RULE_WITH("  \"cgroups\": [1],"),
                      ":3: rule \"r\": \"cgroups\" entries must be strings; file refused");
        check_refused(RULE_WITH("  \"cgroups\": [\"/a\",\n\"system.slice/docker-*.scope\"],"),
                      ":4: rule \"r\": invalid cgroup pattern \"system.slice/docker-*.scope\": must be an "
                      "absolute path, starting with '/'; file refused");
        check_refused(RULE_WITH("  \"cgroups\": [\"/system.slice/docker-**\"],"),
                      ":3: rule \"r\": invalid cgroup pattern \"/system.slice/docker-**\": \"**\" must be a "
                      "whole component (\"/a/**\", \"/a/**/b\"); file refused");
        check_refused(RULE_WITH("  \"cgroups\": [\"/user.slice/x/../../system.slice/*\"],"),
                      ":3: rule \"r\": invalid cgroup pattern \"/user.slice/x/../../system.slice/*\": '.' and "
                      "'..' components are not allowed; file refused");
        check_refused(RULE_WITH("  \"cgroups\": [\"/user-[0-9]*.slice\"],"),
                      ":3: rule \"r\": invalid cgroup pattern \"/user-[0-9]*.slice\": [...] classes are not "
                      "supported (only '*', '?' and \"**\"); file refused");
        check_refused(RULE_WITH("  \"cgroup\": [\"/a\"],"),
                      ":3: rule \"r\": unknown key \"cgroup\"; file refused");
        check_refused(RULE_WITH("  \"deny\": \"yes\","),
                      ":3: rule \"r\": \"deny\" must be true or false; file refused");

        /* A deny rule: subjects and functions, nothing that would seem to
         * narrow it. */
        check_refused("{ \"rules\": [ { \"name\": \"d\", \"deny\": true,\n"
                      "  \"functions\": [\"*\"] } ] }\n",
                      ":1: rule \"d\": no subjects: \"users\" or \"groups\" is required; file refused");
        check_refused("{ \"rules\": [ { \"name\": \"d\", \"deny\": true,\n"
                      "  \"users\": [\"*\"], \"cgroups\": [\"/system.slice/docker-*.scope\"] } ] }\n",
                      ":1: rule \"d\": \"functions\" is required (write [\"*\"] to deny every function); "
                      "file refused");
        check_refused("{ \"rules\": [ { \"name\": \"d\", \"deny\": true, \"users\": [\"*\"],\n"
                      "  \"functions\": [\"*\"],\n"
                      "  \"errors\": [\"EIO\"] } ] }\n",
                      ":3: rule \"d\": \"errors\" is not allowed in a deny rule (it refuses its functions "
                      "whatever the value, scope or duration); file refused");
        check_refused("{ \"rules\": [ { \"name\": \"d\", \"deny\": true, \"users\": [\"*\"],\n"
                      "  \"functions\": [\"*\"],\n"
                      "  \"max-duration\": \"1min\" } ] }\n",
                      ":3: rule \"d\": \"max-duration\" is not allowed in a deny rule (it refuses its functions "
                      "whatever the value, scope or duration); file refused");
        check_refused("{ \"rules\": [ { \"name\": \"d\", \"deny\": true, \"users\": [\"*\"],\n"
                      "  \"functions\": [],\n"
                      "  \"cgroups\": [\"/a\"] } ] }\n",
                      ":2: rule \"d\": \"functions\" must not be empty (an empty list would allow nothing; "
                      "leave the key out); file refused");
        /* An allow rule still needs all it needed. */
        check_refused("{ \"rules\": [ { \"name\": \"a\", \"users\": [\"*\"],\n"
                      "  \"cgroups\": [\"/system.slice/docker-*.scope\"], \"functions\": [\"*\"] } ] }\n",
                      ":1: rule \"a\": \"errors\" or \"retvals\" is required; file refused");
}

/* ---- Decisions ---- */

static const char policy_text[] =
        "{ \"rules\": [\n"
        /* Any user, from Docker's scopes (systemd cgroup driver) only. */
        "  { \"name\": \"docker\", \"users\": [\"*\"],\n"
        "    \"cgroups\": [\"/system.slice/docker-*.scope\"],\n"
        "    \"functions\": [\"__x64_sys_*\", \"should_failslab\"], \"errors\": [\"EACCES\", \"ENOMEM\"],\n"
        "    \"scopes\": [\"cgroup\", \"process\"], \"max-duration\": \"5min\", \"max-active\": 2 },\n"
        /* Rootless podman of uid 1000, at any depth below its manager. */
        "  { \"name\": \"podman-1000\", \"users\": [1000],\n"
        "    \"cgroups\": [\"/user.slice/user-1000.slice/user@1000.service/**/libpod-*.scope/**\"],\n"
        "    \"functions\": [\"__x64_sys_getpgid\"], \"errors\": [\"EACCES\"],\n"
        "    \"scopes\": [\"cgroup\"], \"max-duration\": \"1min\", \"max-active\": 1 },\n"
        /* uid 1001 anywhere, but see the deny rules. */
        "  { \"name\": \"anywhere-1001\", \"users\": [1001],\n"
        "    \"functions\": [\"*\"], \"errors\": [\"*\"],\n"
        "    \"scopes\": [\"cgroup\", \"process\"], \"max-duration\": \"1h\", \"max-active\": 9 },\n"
        /* Denies, placed after the allows: order does not matter. */
        "  { \"name\": \"no-slab-in-containers\", \"deny\": true, \"users\": [\"*\"],\n"
        "    \"cgroups\": [\"/system.slice/docker-*.scope\", \"/machine.slice/**\"],\n"
        "    \"functions\": [\"should_failslab\"] },\n"
        "  { \"name\": \"no-1001-kill\", \"deny\": true, \"users\": [1001],\n"
        "    \"functions\": [\"__x64_sys_kill\"] }\n"
        "] }\n";

static PolicySubject subject(uid_t uid, const char *name, const char *cgroup) {
        return (PolicySubject) { .uid = uid, .gid = uid, .user_name = name, .cgroup = cgroup };
}

static PolicyDecision check(const Policy *p, PolicySubject s, const char *function, int error) {
        PolicyDecision d;

        ASSERT_RET(policy_check(p, &s, &(PolicyRequest) {
                                        .function = function,
                                        .retval = -error,
                                        .is_errno = true,
                                        .scope = POLICY_SCOPE_CGROUP,
                                        .duration_usec = 1000000,
                                }, &d), 0);
        return d;
}

static void assert_allowed(PolicyDecision d, const char *rule, bool by_cgroup) {
        if (!d.allowed)
                test_fail("expected allowed by '%s', seen denied: %s", rule, d.message);
        ASSERT_STREQ(d.rule, rule);
        ASSERT_EQ(d.by_cgroup, by_cgroup);
}

static void assert_denied(PolicyDecision d, PolicyDenial denial, const char *rule, bool by_cgroup,
                          const char *message) {
        if (d.allowed)
                test_fail("expected denied, seen allowed by '%s'", d.rule);
        ASSERT_EQ(d.denial, denial);
        ASSERT_STREQ(d.rule, rule);
        ASSERT_EQ(d.by_cgroup, by_cgroup);
        ASSERT_STREQ(d.message, message);
}

static void test_grant_by_cgroup(void) {
        Policy *p = load_text(policy_text);

        ASSERT_EQ(policy_problems(p, NULL) ? 1 : 0, 0);

        /* Rootful Docker's root (uid 0, not privileged) and any other uid
         * in a Docker scope. */
        assert_allowed(check(p, subject(0, "root", "/system.slice/docker-4f2a.scope"), "__x64_sys_getpgid", EACCES),
                       "docker", true);
        assert_allowed(check(p, subject(1000, "alice", "/system.slice/docker-4f2a.scope"), "__x64_sys_read",
                             ENOMEM), "docker", true);

        /* Rootless podman: uid 1000 in its libpod scope, or in podman's
         * "container" child of it. */
        assert_allowed(check(p, subject(1000, "alice",
                                        "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-9e.scope"),
                             "__x64_sys_getpgid", EACCES), "podman-1000", true);
        assert_allowed(check(p, subject(1000, "alice",
                                        "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-9e.scope/"
                                        "container"),
                             "__x64_sys_getpgid", EACCES), "podman-1000", true);

        /* A rule without "cgroups" applies anywhere, an unknown cgroup too,
         * and the cgroup did not decide. */
        assert_denied(check(p, subject(1001, "carol", "/user.slice/user-1001.slice/session-2.scope"),
                            "__x64_sys_kill", EIO),
                      POLICY_DENIAL_FUNCTION, "no-1001-kill", false,
                      "Policy rule 'no-1001-kill' denies user 'carol' making '__x64_sys_kill' fail.");
        assert_allowed(check(p, subject(1001, "carol", "/user.slice/user-1001.slice/session-2.scope"), "vfs_read",
                             EIO), "anywhere-1001", false);
        assert_allowed(check(p, subject(1001, "carol", NULL), "vfs_read", EIO), "anywhere-1001", false);
        policy_free(p);
}

static void test_lookalikes_refused(void) {
        Policy *p = load_text(policy_text);

        /* alice's own session: no rule names her there. */
        assert_denied(check(p, subject(1000, "alice", "/user.slice/user-1000.slice/session-3.scope"),
                            "__x64_sys_getpgid", EACCES),
                      POLICY_DENIAL_USER, "", true,
                      "No policy rule lets user 'alice' inject faults from cgroup "
                      "'/user.slice/user-1000.slice/session-3.scope'.");

        /* A delegated cgroup she made and named like Docker's, under her
         * own manager, at whatever depth. */
        assert_denied(check(p, subject(1000, "alice",
                                       "/user.slice/user-1000.slice/user@1000.service/docker-evil.scope"),
                            "__x64_sys_getpgid", EACCES),
                      POLICY_DENIAL_USER, "", true,
                      "No policy rule lets user 'alice' inject faults from cgroup "
                      "'/user.slice/user-1000.slice/user@1000.service/docker-evil.scope'.");
        ASSERT_FALSE(check(p, subject(1000, "alice",
                                      "/user.slice/user-1000.slice/user@1000.service/system.slice/docker-x.scope"),
                           "__x64_sys_getpgid", EACCES).allowed);
        /* ...or one below a real Docker scope (were it delegated to her):
         * '*' does not cross '/'. */
        ASSERT_FALSE(check(p, subject(1000, "alice", "/system.slice/docker-4f2a.scope/mine"),
                           "__x64_sys_getpgid", EACCES).allowed);
        /* Paths with "..", ".", "//", or a trailing '/' match no rule. */
        ASSERT_FALSE(check(p, subject(1000, "alice",
                                      "/system.slice/docker-x.scope/../../user.slice/user-1000.slice/session-3.scope"),
                           "__x64_sys_getpgid", EACCES).allowed);
        ASSERT_FALSE(check(p, subject(1000, "alice", "/system.slice/docker-x.scope/.."), "__x64_sys_getpgid",
                           EACCES).allowed);
        ASSERT_FALSE(check(p, subject(1000, "alice", "/system.slice//docker-x.scope"), "__x64_sys_getpgid",
                           EACCES).allowed);
        ASSERT_FALSE(check(p, subject(1000, "alice", "/system.slice/docker-x.scope/"), "__x64_sys_getpgid",
                           EACCES).allowed);
        ASSERT_FALSE(check(p, subject(1000, "alice", "system.slice/docker-x.scope"), "__x64_sys_getpgid",
                           EACCES).allowed);

        /* A cgroup that could not be read grants nothing by cgroup. */
        assert_denied(check(p, subject(1000, "alice", NULL), "__x64_sys_getpgid", EACCES),
                      POLICY_DENIAL_USER, "", true,
                      "No policy rule lets user 'alice' inject faults from cgroup '(unknown)'.");

        /* A rule for the function only from Docker's scopes, and one for
         * the user for another function: the refusal says where she was. */
        {
                Policy *q = load_text(
                        "{ \"rules\": [\n"
                        "  { \"name\": \"docker\", \"users\": [\"*\"], \"cgroups\": [\"/system.slice/docker-*.scope\"],\n"
                        "    \"functions\": [\"g\"], \"errors\": [\"EIO\"], \"scopes\": [\"cgroup\"],\n"
                        "    \"max-duration\": \"1min\", \"max-active\": 1 },\n"
                        "  { \"name\": \"other\", \"users\": [7], \"functions\": [\"f\"], \"errors\": [\"EIO\"],\n"
                        "    \"scopes\": [\"cgroup\"], \"max-duration\": \"1min\", \"max-active\": 1 }\n"
                        "] }\n");

                assert_denied(check(q, subject(7, "eve", "/user.slice/u/docker-1.scope"), "g", EIO),
                              POLICY_DENIAL_FUNCTION, "", true,
                              "No policy rule lets user 'eve' make 'g' fail from cgroup '/user.slice/u/docker-1.scope'.");
                /* Where no cgroup rule has the function, the cgroup is not why. */
                assert_denied(check(q, subject(7, "eve", "/user.slice/u/docker-1.scope"), "h", EIO),
                              POLICY_DENIAL_FUNCTION, "", false, "No policy rule lets user 'eve' make 'h' fail.");
                assert_allowed(check(q, subject(7, "eve", "/system.slice/docker-1.scope"), "g", EIO), "docker", true);
                policy_free(q);
        }

        /* Another user's rootless podman scope is not alice's rule's. */
        ASSERT_FALSE(check(p, subject(1000, "alice",
                                      "/user.slice/user-1002.slice/user@1002.service/user.slice/libpod-1.scope"),
                           "__x64_sys_getpgid", EACCES).allowed);
        /* And the right scope does not help another uid ("docker" names
         * every user, so the cgroup is what refused). */
        assert_denied(check(p, subject(1002, "dave",
                                       "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-9e.scope"),
                            "__x64_sys_getpgid", EACCES),
                      POLICY_DENIAL_USER, "", true,
                      "No policy rule lets user 'dave' inject faults from cgroup "
                      "'/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-9e.scope'.");
        policy_free(p);
}

static void test_deny_beats_allow(void) {
        Policy *p = load_text(policy_text);
        PolicyDecision d;

        /* "docker" allows should_failslab, and comes first; the deny rule
         * after it wins. */
        d = check(p, subject(0, "root", "/system.slice/docker-4f2a.scope"), "should_failslab", ENOMEM);
        assert_denied(d, POLICY_DENIAL_FUNCTION, "no-slab-in-containers", true,
                      "Policy rule 'no-slab-in-containers' denies user 'root' making 'should_failslab' fail from "
                      "cgroup '/system.slice/docker-4f2a.scope'.");
        ASSERT_STREQ(d.error_name, "FunctionNotAllowed");
        /* The rest of "docker" still holds. */
        assert_allowed(check(p, subject(0, "root", "/system.slice/docker-4f2a.scope"), "__x64_sys_getpgid", EACCES),
                       "docker", true);

        /* A deny rule by cgroup, for a user allowed anywhere: outside
         * those cgroups it does nothing, inside it refuses. */
        assert_allowed(check(p, subject(1001, "carol", "/user.slice/user-1001.slice/session-2.scope"),
                             "should_failslab", ENOMEM), "anywhere-1001", false);
        assert_denied(check(p, subject(1001, "carol", "/machine.slice/machine-ci.scope/payload"), "should_failslab",
                            ENOMEM),
                      POLICY_DENIAL_FUNCTION, "no-slab-in-containers", true,
                      "Policy rule 'no-slab-in-containers' denies user 'carol' making 'should_failslab' fail from "
                      "cgroup '/machine.slice/machine-ci.scope/payload'.");
        /* A cgroup that cannot be matched is caught by the deny rule. */
        ASSERT_FALSE(check(p, subject(1001, "carol", NULL), "should_failslab", ENOMEM).allowed);
        ASSERT_FALSE(check(p, subject(1001, "carol", "/system.slice/docker-x.scope/../.."), "should_failslab",
                           ENOMEM).allowed);

        /* A deny rule without "cgroups" holds everywhere. */
        assert_denied(check(p, subject(1001, "carol", "/user.slice/user-1001.slice/session-2.scope"),
                            "__x64_sys_kill", EPERM),
                      POLICY_DENIAL_FUNCTION, "no-1001-kill", false,
                      "Policy rule 'no-1001-kill' denies user 'carol' making '__x64_sys_kill' fail.");

        /* ListFunctions agrees. */
        {
                PolicySubject carol = subject(1001, "carol", "/user.slice/user-1001.slice/session-2.scope");
                PolicySubject in_docker = subject(0, "root", "/system.slice/docker-1.scope");
                PolicySubject in_session = subject(0, "root", "/user.slice/user-0.slice/session-1.scope");

                ASSERT_FALSE(policy_function_allowed(p, &carol, "__x64_sys_kill"));
                ASSERT_TRUE(policy_function_allowed(p, &carol, "__x64_sys_read"));
                ASSERT_FALSE(policy_function_allowed(p, &in_docker, "should_failslab"));
                ASSERT_TRUE(policy_function_allowed(p, &in_docker, "__x64_sys_getpgid"));
                ASSERT_FALSE(policy_function_allowed(p, &in_session, "__x64_sys_getpgid"));
        }
        policy_free(p);
}

static void test_rules_for(void) {
        Policy *p = load_text(policy_text);
        PolicySubject in_docker = subject(1001, "carol", "/system.slice/docker-1.scope");
        PolicySubject elsewhere = subject(1001, "carol", "/user.slice/user-1001.slice/session-2.scope");
        const PolicyRule **rules = NULL;
        size_t n = 0;

        /* Allow rules only, and those with "cgroups" only from there. */
        ASSERT_RET(policy_rules_for(p, &in_docker, &rules, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_STREQ(rules[0]->name, "docker");
        ASSERT_STREQ(rules[1]->name, "anywhere-1001");
        free(rules);

        ASSERT_RET(policy_rules_for(p, &elsewhere, &rules, &n), 0);
        ASSERT_EQ(n, 1);
        ASSERT_STREQ(rules[0]->name, "anywhere-1001");
        free(rules);

        /* policy_rule_applies() says it of deny rules too. */
        ASSERT_TRUE(policy_rule_applies(policy_find_rule(p, "no-slab-in-containers"), &in_docker));
        ASSERT_FALSE(policy_rule_applies(policy_find_rule(p, "no-slab-in-containers"), &elsewhere));
        policy_free(p);
}

static void test_disabled_deny(void) {
        /* A later file's disabled redefinition switches a deny rule off, as
         * it would an allow rule. */
        Policy *p = load_text(
                "{ \"rules\": [\n"
                "  { \"name\": \"a\", \"users\": [\"*\"], \"functions\": [\"f\"], \"errors\": [\"EIO\"],\n"
                "    \"scopes\": [\"cgroup\"], \"max-duration\": \"1min\", \"max-active\": 1 },\n"
                "  { \"name\": \"d\", \"enabled\": false, \"deny\": true, \"users\": [\"*\"],\n"
                "    \"functions\": [\"*\"] }\n"
                "] }\n");

        assert_allowed(check(p, subject(5, NULL, "/x"), "f", EIO), "a", false);
        policy_free(p);
}

/* A refused file that redefines a deny rule does not withdraw it (that
 * would allow more); an allow rule it redefines is withdrawn as before. */
static void test_refused_override_keeps_deny(void) {
        char dir[] = "/tmp/test-policy-cgroup-XXXXXX", *a, *b;
        const PolicyProblem *pr;
        Policy *p = NULL;
        size_t n;
        FILE *f;

        ASSERT_NOT_NULL(mkdtemp(dir));
        ASSERT_EQ(chmod(dir, 0755), 0);
        ASSERT_TRUE(asprintf(&a, "%s/10-a.json", dir) > 0);
        ASSERT_TRUE(asprintf(&b, "%s/20-b.json", dir) > 0);
        f = fopen(a, "we");
        ASSERT_NOT_NULL(f);
        ASSERT_TRUE(fputs("{ \"rules\": [\n"
                          "  { \"name\": \"allow\", \"users\": [\"*\"], \"functions\": [\"*\"], \"errors\": [\"*\"],\n"
                          "    \"scopes\": [\"cgroup\"], \"max-duration\": \"1min\", \"max-active\": 1 },\n"
                          "  { \"name\": \"no-f\", \"deny\": true, \"users\": [\"*\"], \"functions\": [\"f\"] }\n"
                          "] }\n", f) >= 0);
        ASSERT_EQ(fclose(f), 0);
        f = fopen(b, "we");
        ASSERT_NOT_NULL(f);
        ASSERT_TRUE(fputs("{ \"rules\": [\n"
                          "  { \"name\": \"no-f\", \"enabled\": false, \"typo\": 1 },\n"
                          "  { \"name\": \"allow\", \"enabled\": false }\n"
                          "] }\n", f) >= 0);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(chmod(a, 0644), 0);
        ASSERT_EQ(chmod(b, 0644), 0);

        ASSERT_RET(policy_load((const char *const[]) { dir, NULL }, getuid(), &p), 0);
        pr = policy_problems(p, &n);
        ASSERT_EQ(n, 3);
        ASSERT_TRUE(strstr(pr[0].message, "20-b.json:2: rule \"no-f\": unknown key \"typo\"; file refused"));
        ASSERT_TRUE(strstr(pr[1].message, "deny rule \"no-f\" of "));
        ASSERT_TRUE(strstr(pr[1].message, "10-a.json:4 stays in effect, although this file redefines it and "
                                          "was refused"));
        ASSERT_TRUE(strstr(pr[2].message, "rule \"allow\" of "));
        ASSERT_EQ(policy_n_rules(p), 1);
        ASSERT_TRUE(policy_find_rule(p, "no-f")->deny);
        assert_denied(check(p, subject(5, NULL, "/x"), "f", EIO), POLICY_DENIAL_FUNCTION, "no-f", false,
                      "Policy rule 'no-f' denies uid 5 making 'f' fail.");
        policy_free(p);

        ASSERT_EQ(unlink(a), 0);
        ASSERT_EQ(unlink(b), 0);
        ASSERT_EQ(rmdir(dir), 0);
        free(a);
        free(b);
}

/* policy/examples/50-docker-containers.json loads, grants a Docker
 * container's root its own syscalls, and nobody outside Docker's scopes. */
static void test_docker_example(void) {
        char *path, *text = NULL;
        size_t len = 0;
        Policy *p;
        FILE *f;

        ASSERT_TRUE(asprintf(&path, "%s/examples/50-docker-containers.json", POLICY_SOURCE_DIR) > 0);
        f = fopen(path, "re");
        if (!f)
                test_fail("cannot open %s: %s", path, strerror(errno));
        ASSERT_TRUE(getdelim(&text, &len, '\0', f) > 0);
        fclose(f);

        p = load_text(text);
        ASSERT_EQ(policy_problems(p, NULL) ? 1 : 0, 0);
        ASSERT_EQ(policy_n_rules(p), 2);
        assert_allowed(check(p, subject(0, "root", "/system.slice/docker-8d1f.scope"), "__x64_sys_getpgid", EACCES),
                       "docker-containers-syscalls", true);
        assert_allowed(check(p, subject(0, "root", "/system.slice/docker-8d1f.scope"), "should_failslab", ENOMEM),
                       "docker-containers-slab", true);
        ASSERT_FALSE(check(p, subject(0, "root", "/system.slice/ssh.service"), "__x64_sys_getpgid", EACCES).allowed);
        ASSERT_FALSE(check(p, subject(1000, "alice", "/user.slice/user-1000.slice/user@1000.service/app.slice/"
                                                     "docker-8d1f.scope"),
                           "__x64_sys_getpgid", EACCES).allowed);
        ASSERT_FALSE(check(p, subject(1000, "alice", "/machine.slice/libpod-8d1f.scope"), "__x64_sys_getpgid",
                           EACCES).allowed);
        policy_free(p);
        free(text);
        free(path);
}

int main(void) {
        test_patterns_valid();
        test_match();
        test_load();
        test_load_errors();
        test_grant_by_cgroup();
        test_lookalikes_refused();
        test_deny_beats_allow();
        test_rules_for();
        test_disabled_deny();
        test_refused_override_keeps_deny();
        test_docker_example();
        return 0;
}
