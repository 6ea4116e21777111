/* SPDX-License-Identifier: MIT */

/* The policy loader (src/daemon/policy-load.c) on files it did not write: the
 * input is up to four policy files, separated by lines that hold only
 * "%%", written into a private directory as 10.json, 20.json... and loaded
 * with policy_load() exactly as the daemon loads /etc/injectd/policy.d, so
 * that overrides, withdrawals and duplicate names across files are fuzzed
 * too. Whatever loads is then asked a few questions. */

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errno-name.h"
#include "fuzz.h"
#include "policy-cgroup.h"
#include "policy-load.h"
#include "policy.h"

#define FILES_MAX 4
#define SEPARATOR "\n%%\n"

static char dir[64];

static void remove_dir(void) {
        char path[96];

        for (int i = 1; i <= FILES_MAX; i++) {
                snprintf(path, sizeof(path), "%s/%d0.json", dir, i);
                (void) unlink(path);
        }
        (void) rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        const char *tmp = getenv("TMPDIR");

        /* The loader refuses a directory others may write to, so this is
         * one of our own, 0700. */
        snprintf(dir, sizeof(dir), "%s/fuzz-policy.XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
        if (!mkdtemp(dir))
                abort();
        atexit(remove_dir);
        return 0;
}

static void write_file(int i, const char *text, size_t len) {
        char path[96];
        int fd;

        snprintf(path, sizeof(path), "%s/%d0.json", dir, i);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                abort();
        if (len > 0 && write(fd, text, len) != (ssize_t) len)
                abort();
        close(fd);
}

static void check_decision(const Policy *p, const PolicySubject *s, const PolicyRequest *q) {
        PolicyDecision d;

        FUZZ_ASSERT(policy_check(p, s, q, &d) == 0);
        FUZZ_ASSERT(d.allowed == (d.denial == POLICY_DENIAL_NONE));
        FUZZ_ASSERT(d.allowed == !d.error_name);
        FUZZ_ASSERT(!d.error_name || strcmp(d.error_name, policy_denial_to_error_name(d.denial)) == 0);
        FUZZ_ASSERT(memchr(d.message, 0, sizeof(d.message)));
        FUZZ_ASSERT(memchr(d.rule, 0, sizeof(d.rule)));
        if (d.allowed) {
                const PolicyRule *r = policy_find_rule(p, d.rule);

                FUZZ_ASSERT(r && r->enabled && policy_rule_applies(r, s));
                FUZZ_ASSERT(d.max_active >= 1 && d.max_duration_usec > 0);
                FUZZ_ASSERT(q->duration_usec <= d.max_duration_usec);
                FUZZ_ASSERT(r->scopes & (1u << q->scope));
                FUZZ_ASSERT(policy_function_allowed(p, s, q->function));
                FUZZ_ASSERT(!r->deny);
                FUZZ_ASSERT(!d.by_cgroup || (r->n_cgroups > 0 && s->cgroup));
        }
        /* A deny rule decides only as a refusal of the function. */
        if (d.rule[0] && policy_find_rule(p, d.rule)->deny)
                FUZZ_ASSERT(!d.allowed && d.denial == POLICY_DENIAL_FUNCTION);
}

static void check_policy(const Policy *p) {
        static const gid_t groups[] = { 0, 100, 1000 };
        static const char *const functions[] = { "should_failslab", "__x64_sys_openat", "open_ctree", "x" };
        static const int64_t values[] = { -ENOMEM, -EPERM, -ERRNO_MAX, 1, 0, INT64_MIN };
        /* Unknown, plain, a container's, and a path no pattern matches. */
        static const char *const cgroups[] = {
                NULL, "/", "/system.slice/docker-1.scope", "/user.slice/user-1000.slice/user@1000.service/a/b",
                "/system.slice/docker-1.scope/../..",
        };
        const PolicyProblem *problems;
        size_t n;

        problems = policy_problems(p, &n);
        for (size_t i = 0; i < n; i++) {
                FUZZ_ASSERT(problems[i].path && problems[i].message);
                FUZZ_ASSERT(problems[i].level == POLICY_PROBLEM_WARNING || problems[i].level == POLICY_PROBLEM_ERROR);
        }

        for (size_t i = 0; i < policy_n_rules(p); i++) {
                const PolicyRule *r = policy_rule(p, i);

                FUZZ_ASSERT(r && r->name && r->file);
                FUZZ_ASSERT(strlen(r->name) >= 1 && strlen(r->name) <= POLICY_RULE_NAME_MAX);
                FUZZ_ASSERT(policy_find_rule(p, r->name) == r);
                if (!r->enabled)
                        continue;
                for (size_t k = 0; k < r->n_cgroups; k++)
                        FUZZ_ASSERT(!policy_cgroup_pattern_invalid(r->cgroups[k]));
                if (r->deny) {
                        FUZZ_ASSERT(r->n_functions >= 1 && r->scopes == 0 && r->max_active == 0);
                        FUZZ_ASSERT(r->n_errors == 0 && r->n_retvals == 0 && r->max_duration_usec == 0);
                        continue;
                }
                FUZZ_ASSERT(r->n_functions >= 1 && r->max_duration_usec > 0 && r->max_active >= 1);
                FUZZ_ASSERT(r->scopes != 0 && r->scopes < (1u << _POLICY_SCOPE_MAX));
                for (size_t k = 0; k < r->n_errors; k++)
                        FUZZ_ASSERT(r->errors[k] >= 1 && r->errors[k] <= ERRNO_MAX);
        }
        FUZZ_ASSERT(!policy_rule(p, policy_n_rules(p)));

        for (uid_t uid = 0; uid <= 1000; uid += 1000)
                for (size_t c = 0; c < sizeof(cgroups) / sizeof(cgroups[0]); c++)
                for (size_t f = 0; f < sizeof(functions) / sizeof(functions[0]); f++)
                        for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++)
                                for (PolicyScope sc = 0; sc < _POLICY_SCOPE_MAX; sc++) {
                                        PolicySubject s = {
                                                .uid = uid,
                                                .gid = uid,
                                                .groups = groups,
                                                .n_groups = sizeof(groups) / sizeof(groups[0]),
                                                .cgroup = cgroups[c],
                                        };
                                        PolicyRequest q = {
                                                .function = functions[f],
                                                .retval = values[v],
                                                .is_errno = values[v] < 0 && values[v] >= -ERRNO_MAX,
                                                .scope = sc,
                                                .duration_usec = v * 60000000ull,
                                        };

                                        check_decision(p, &s, &q);
                                }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(policy_freep) Policy *p = NULL;
        const char *text = (const char *) data, *end = text + size;
        const char *const dirs[] = { dir, NULL };
        int n = 0;

        while (n < FILES_MAX) {
                const char *sep = memmem(text, end - text, SEPARATOR, strlen(SEPARATOR));
                size_t len = sep && n < FILES_MAX - 1 ? (size_t) (sep - text) : (size_t) (end - text);

                write_file(++n, text, len);
                if (len == (size_t) (end - text))
                        break;
                text += len + strlen(SEPARATOR);
        }

        FUZZ_ASSERT(policy_load(dirs, getuid(), &p) == 0);
        check_policy(p);

        for (int i = 1; i <= n; i++) {
                char path[96];

                snprintf(path, sizeof(path), "%s/%d0.json", dir, i);
                (void) unlink(path);
        }
        return 0;
}
