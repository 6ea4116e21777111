/* SPDX-License-Identifier: MIT */
/* The authorization steps below the manager: scope resolution
 * (scope-resolve.c: own or foreign, on real processes and cgroups) and the
 * daemon's use of the policy (policy-check.c: root exempt, no policy, the
 * verdict, groups from the caller).
 *
 * The requester is test_uid() (an unused uid when run as root). Cgroup
 * cases need a cgroup2 hierarchy; making cgroups for the requester needs
 * root; each case that cannot run says why and the rest go on. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include "authorize.h"
#include "core-test-util.h"
#include "pidfd-util.h"
#include "policy-check.h"
#include "request.h"
#include "scope-resolve.h"
#include "test-util.h"

static int resolve(const Caller *c, InjectRequest req, ScopeResolution *s, InjectError *err) {
        *err = (InjectError) {};
        *s = (ScopeResolution) {};
        return resolve_scope(NULL, c, &req, s, err);
}

/* ---- processes ---- */

/* A pidfd names its process as a pid does; anything else, or a process
 * that has exited, is refused with a message that says so. */
static void test_pidfd_scopes(void) {
        Caller c = caller_of(test_uid(), own_pid());
        ScopeResolution s, by_pid;
        InjectError err;
        int fd, other;
        pid_t child;

        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .pid = own_pid(), .cgroup_fd = -1,
                                                .pidfd = -1 }, &by_pid, &err));
        fd = pidfd_open_pid(own_pid());
        if (fd == -ENOSYS) {
                printf("pidfd cases skipped: no pidfd_open() here\n");
                return;
        }
        ASSERT_OK(fd);
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .cgroup_fd = -1, .pidfd = fd },
                          &s, &err));
        ASSERT_EQ(s.pid, own_pid());
        ASSERT_EQ(s.foreign, by_pid.foreign);
        ASSERT_EQ(s.start_ticks, by_pid.start_ticks);
        close(fd);

        /* pid 1 by pidfd: foreign, and the refusal will say why. */
        fd = pidfd_open_pid(1);
        ASSERT_OK(fd);
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .cgroup_fd = -1, .pidfd = fd },
                          &s, &err));
        ASSERT_EQ(s.pid, 1);
        ASSERT_TRUE(s.foreign);
        ASSERT_TRUE(strstr(s.why, "system") != NULL);
        close(fd);

        /* Not a pidfd. */
        other = open("/dev/null", O_RDONLY | O_CLOEXEC);
        ASSERT_OK(other);
        ASSERT_EQ(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .cgroup_fd = -1, .pidfd = other },
                          &s, &err), -EBADF);
        ASSERT_STREQ(err.name, INJECT_ERROR_BAD_SCOPE);
        ASSERT_TRUE(strstr(err.message, "not a pidfd") != NULL);
        close(other);

        /* An exited (and reaped) process. */
        child = fork();
        ASSERT_TRUE(child >= 0);
        if (child == 0)
                _exit(0);
        fd = pidfd_open_pid(child);
        ASSERT_OK(fd);
        ASSERT_EQ(waitpid(child, NULL, 0), child);
        ASSERT_EQ(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .cgroup_fd = -1, .pidfd = fd },
                          &s, &err), -ESRCH);
        ASSERT_TRUE(strstr(err.message, "exited") != NULL);
        close(fd);
}

static void test_process_scopes(void) {
        Caller c = caller_of(test_uid(), own_pid());
        Caller root = caller_of(0, own_pid());
        ScopeResolution s;
        InjectError err;
        char desc[32];

        /* Its own process: not foreign. */
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .pid = own_pid(), .cgroup_fd = -1, .pidfd = -1 },
                          &s, &err));
        ASSERT_EQ(s.kind, INJECT_SCOPE_PROCESS);
        ASSERT_EQ(s.pid, own_pid());
        ASSERT_FALSE(s.foreign);
        snprintf(desc, sizeof(desc), "process:%d", (int) own_pid());
        ASSERT_STREQ(s.desc, desc);

        /* No pid: the caller itself. */
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .cgroup_fd = -1, .pidfd = -1 }, &s, &err));
        ASSERT_EQ(s.pid, own_pid());
        ASSERT_FALSE(s.foreign);

        /* pid 1 is root's: foreign for the user, not for root. */
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .pid = 1, .cgroup_fd = -1, .pidfd = -1 }, &s, &err));
        ASSERT_TRUE(s.foreign);
        ASSERT_OK(resolve(&root, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .pid = 1, .cgroup_fd = -1, .pidfd = -1 }, &s, &err));
        ASSERT_FALSE(s.foreign);
        /* An unprivileged uid 0 (root in a container) owns neither pid 1 nor kthreadd. */
        root.privileged = false;
        ASSERT_OK(resolve(&root, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .pid = 1, .cgroup_fd = -1, .pidfd = -1 }, &s, &err));
        ASSERT_TRUE(s.foreign);
        if (resolve(&root, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .pid = 2, .cgroup_fd = -1, .pidfd = -1 }, &s, &err) >= 0)
                ASSERT_TRUE(s.foreign);
        root.privileged = true;

        /* A process of the user's that runs setuid to someone else is not fully theirs. */
        if (geteuid() == 0) {
                pid_t pid = spawn_owned();
                Caller other = caller_of(other_uid(), own_pid());

                ASSERT_OK(resolve(&other, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .pid = pid,
                                                            .cgroup_fd = -1, .pidfd = -1 }, &s, &err));
                ASSERT_TRUE(s.foreign);
                kill_owned(pid);
        } else
                printf("  skipped: another user's process (needs root to start one)\n");

        /* Nothing there. */
        ASSERT_RET(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_PROCESS, .pid = 2147483647, .cgroup_fd = -1, .pidfd = -1 },
                           &s, &err), -ESRCH);
        ASSERT_STREQ(err.name, INJECT_ERROR_BAD_SCOPE);

        /* global: foreign for everyone but root. */
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_GLOBAL, .cgroup_fd = -1, .pidfd = -1 }, &s, &err));
        ASSERT_EQ(s.kind, INJECT_SCOPE_GLOBAL);
        ASSERT_TRUE(s.foreign);
        ASSERT_STREQ(s.desc, "global");
        ASSERT_OK(resolve(&root, (InjectRequest) { .scope = REQUEST_SCOPE_GLOBAL, .cgroup_fd = -1, .pidfd = -1 }, &s, &err));
        ASSERT_FALSE(s.foreign);
}

/* ---- cgroups ---- */

/* Where cgroup2 is mounted, from /proc/self/mountinfo; NULL: nowhere. */
static char *cgroup2_mount(void) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char *line = NULL, *found = NULL;
        size_t cap = 0;

        if (!f)
                return NULL;
        while (!found && getline(&line, &cap, f) > 0) {
                char mnt[512], fstype[64];
                const char *sep = strstr(line, " - ");

                if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 || sscanf(sep + 3, "%63s", fstype) != 1)
                        continue;
                if (strcmp(fstype, "cgroup2") == 0)
                        found = strdup(mnt);
        }
        free(line);
        fclose(f);
        return found;
}

static void move_to(const char *cgroup, pid_t pid) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof(p), "%s/cgroup.procs", cgroup);
        f = fopen(p, "we");
        ASSERT_NOT_NULL(f);
        ASSERT_TRUE(fprintf(f, "%d\n", (int) pid) > 0);
        ASSERT_EQ(fclose(f), 0);
}

static pid_t spawn_root(void) {
        pid_t pid = fork();

        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                        pause();
        }
        spawned(pid);
        return pid;
}

/* The cgroups this test made, removed even when an assertion fails. */
static char test_cgroup[512];

static void remove_test_cgroup(void) {
        char p[600];

        if (!test_cgroup[0])
                return;
        kill_children();        /* a cgroup with processes cannot go */
        snprintf(p, sizeof(p), "%s/mine", test_cgroup);
        (void) rmdir(p);
        snprintf(p, sizeof(p), "%s/theirs", test_cgroup);
        (void) rmdir(p);
        (void) rmdir(test_cgroup);
        test_cgroup[0] = 0;
}

static void test_cgroup_scopes(void) {
        _cleanup_free_ char *mnt = cgroup2_mount();
        Caller c = caller_of(test_uid(), own_pid());
        Caller root = caller_of(0, own_pid());
        char *dir = test_cgroup, mine[600], theirs[600];
        ScopeResolution s;
        InjectError err;
        uid_t other = 0;
        int fd;

        /* Not a cgroup at all, or nothing there. */
        ASSERT_RET(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_CGROUP, .cgroup_path = (char *) "/tmp",
                                                 .cgroup_fd = -1, .pidfd = -1 }, &s, &err), -EMEDIUMTYPE);
        ASSERT_STREQ(err.name, INJECT_ERROR_BAD_SCOPE);
        /* Not in a cgroup2 mount as the caller sees it (cgroup-path.c). */
        ASSERT_RET(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_CGROUP,
                                                 .cgroup_path = (char *) "/nonexistent/cgroup", .cgroup_fd = -1, .pidfd = -1 },
                           &s, &err), -EMEDIUMTYPE);
        ASSERT_STREQ(err.name, INJECT_ERROR_BAD_SCOPE);
        ASSERT_TRUE(strstr(err.message, "cgroup_fd") != NULL);

        if (!mnt) {
                printf("  skipped: cgroups (no cgroup2 hierarchy is mounted)\n");
                return;
        }
        {
                char p[PATH_MAX];

                snprintf(p, sizeof(p), "%s/nonexistent-injectd-test", mnt);
                ASSERT_RET(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_CGROUP, .cgroup_path = p,
                                                         .cgroup_fd = -1, .pidfd = -1 }, &s, &err), -ENOENT);
                ASSERT_STREQ(err.name, INJECT_ERROR_BAD_SCOPE);
        }

        /* The hierarchy's root holds every process: foreign, except for root. */
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_CGROUP, .cgroup_path = mnt, .cgroup_fd = -1, .pidfd = -1 },
                          &s, &err));
        ASSERT_EQ(s.kind, INJECT_SCOPE_CGROUP);
        ASSERT_EQ(s.cgroup_level, 0);
        ASSERT_TRUE(s.foreign);
        ASSERT_OK(resolve(&root, (InjectRequest) { .scope = REQUEST_SCOPE_CGROUP, .cgroup_path = mnt,
                                                   .cgroup_fd = -1, .pidfd = -1 }, &s, &err));
        ASSERT_FALSE(s.foreign);

        /* A cgroup delegated to the user (owned by them) is theirs; one that is not, is not. */
        snprintf(dir, sizeof(test_cgroup), "%s/injectd-test-%d", mnt, (int) getpid());
        if (geteuid() != 0 || mkdir(dir, 0755) < 0) {
                dir[0] = 0;
                printf("  skipped: delegated cgroups (cannot make a cgroup under '%s': %s)\n", mnt,
                       geteuid() != 0 ? "not root" : strerror(errno));
                return;
        }
        snprintf(mine, sizeof(mine), "%s/mine", dir);
        snprintf(theirs, sizeof(theirs), "%s/theirs", dir);
        ASSERT_EQ(mkdir(mine, 0755), 0);
        ASSERT_EQ(mkdir(theirs, 0755), 0);
        ASSERT_EQ(chown(mine, test_uid(), test_uid()), 0);

        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_CGROUP, .cgroup_path = mine, .cgroup_fd = -1, .pidfd = -1 },
                          &s, &err));
        ASSERT_FALSE(s.foreign);
        ASSERT_TRUE(s.cgroup_level >= 2);
        ASSERT_TRUE(strstr(s.desc, "/mine") != NULL);
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_CGROUP, .cgroup_path = theirs, .cgroup_fd = -1, .pidfd = -1 },
                          &s, &err));
        ASSERT_TRUE(s.foreign);

        /* Passed as an fd (D-Bus), the same. */
        fd = open(mine, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_CGROUP, .cgroup_fd = fd }, &s, &err));
        ASSERT_FALSE(s.foreign);
        close(fd);

        /* Who runs in a cgroup: only the user, until root joins. */
        {
                pid_t user_pid = spawn_owned(), root_pid = spawn_root();

                move_to(mine, user_pid);
                ASSERT_EQ(cgroup_only_uid(mine, test_uid(), &other), 1);
                move_to(theirs, root_pid);
                ASSERT_EQ(cgroup_only_uid(theirs, test_uid(), &other), 0);
                ASSERT_EQ(other, 0);
                ASSERT_EQ(cgroup_only_uid(dir, test_uid(), &other), 0);      /* below counts too */
                kill_owned(user_pid);
                kill_owned(root_pid);
        }
        ASSERT_EQ(rmdir(mine), 0);
        ASSERT_EQ(rmdir(theirs), 0);
        ASSERT_EQ(rmdir(dir), 0);
        dir[0] = 0;
}

/* The caller's own cgroup, where /sys/fs/cgroup is the unified hierarchy. */
static void test_own_cgroup(void) {
        Caller c = caller_of(test_uid(), own_pid());
        struct statfs sfs;
        ScopeResolution s;
        InjectError err;
        int r;

        r = resolve(&c, (InjectRequest) { .scope = REQUEST_SCOPE_OWN_CGROUP, .cgroup_fd = -1, .pidfd = -1 }, &s, &err);
        if (statfs("/sys/fs/cgroup", &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
                /* A hybrid or v1 machine: the daemon cannot find the cgroup, and says so. */
                ASSERT_TRUE(r < 0);
                ASSERT_STREQ(err.name, INJECT_ERROR_BAD_SCOPE);
                printf("  skipped: the own cgroup (/sys/fs/cgroup is not the unified cgroup2 hierarchy)\n");
                return;
        }
        if (r < 0) {
                /* The root cgroup, or one shared with other users: never "own". */
                ASSERT_RET(r, -EPERM);
                ASSERT_STREQ(err.name, INJECT_ERROR_SCOPE_NOT_OWNED);
                printf("  the own cgroup is refused: %s\n", err.message);
                return;
        }
        ASSERT_EQ(s.kind, INJECT_SCOPE_CGROUP);
        ASSERT_TRUE(s.cgroup_level > 0);
        ASSERT_FALSE(s.foreign);
}

/* ---- policy-check.c ---- */

static void test_policy_check(void) {
        _cleanup_free_ char *text = NULL;
        char *dir;
        Policy *p = NULL;
        Caller c = caller_of(test_uid(), own_pid());
        Caller root = caller_of(0, own_pid());
        Caller member = caller_of(other_uid(), own_pid());
        gid_t groups[] = { 4000, 4242 };
        PolicyVerdict v = {};
        InjectError err = {};
        InjectRequest req = { .function = (char *) "__x64_sys_openat", .retval = -2, .is_errno = true, .cgroup_fd = -1, .pidfd = -1 };

        ASSERT_TRUE(asprintf(&text,
                "{ \"rules\": [\n"
                "  { \"name\": \"by-uid\", \"users\": [%u], \"functions\": [\"__x64_sys_openat\"],\n"
                "    \"errors\": [\"ENOENT\"], \"scopes\": [\"process\"], \"max-duration\": \"90s\", \"max-active\": 7 },\n"
                "  { \"name\": \"by-group\", \"groups\": [4242], \"functions\": [\"should_failslab\"],\n"
                "    \"errors\": [\"ENOMEM\"], \"scopes\": [\"process\"], \"max-duration\": \"5min\", \"max-active\": 1 }\n"
                "] }\n", (unsigned) test_uid()) > 0);
        dir = policy_dir_new(text);
        ASSERT_OK(policy_glue_load((const char *const[]) { dir, NULL }, &p));

        /* Root needs no rule, and no policy. */
        ASSERT_OK(policy_glue_check(NULL, &root, &req, INJECT_SCOPE_GLOBAL, false, &v, &err));
        ASSERT_STREQ(v.rule, "root");
        ASSERT_EQ_U64(v.max_duration_usec, ROOT_DEFAULT_DURATION_USEC);
        policy_verdict_done(&v);

        /* Without a policy, nobody else may. */
        ASSERT_RET(policy_glue_check(NULL, &c, &req, INJECT_SCOPE_PROCESS, false, &v, &err), -EACCES);
        ASSERT_STREQ(err.name, POLICY_ERROR_USER_NOT_IN_POLICY);

        /* The verdict carries the rule's terms. */
        ASSERT_OK(policy_glue_check(p, &c, &req, INJECT_SCOPE_PROCESS, false, &v, &err));
        ASSERT_STREQ(v.rule, "by-uid");
        ASSERT_EQ_U64(v.max_duration_usec, 90 * UINT64_C(1000000));
        ASSERT_EQ(v.max_active, 7);
        policy_verdict_done(&v);

        err = (InjectError) {};
        ASSERT_RET(policy_glue_check(p, &c, &req, INJECT_SCOPE_CGROUP, false, &v, &err), -EACCES);
        ASSERT_STREQ(err.name, POLICY_ERROR_SCOPE_NOT_ALLOWED);

        /* Groups come from the caller's group list (the user database), not its process. */
        req.function = (char *) "should_failslab";
        req.retval = -12;
        err = (InjectError) {};
        ASSERT_RET(policy_glue_check(p, &member, &req, INJECT_SCOPE_PROCESS, false, &v, &err), -EACCES);
        ASSERT_STREQ(err.name, POLICY_ERROR_USER_NOT_IN_POLICY);
        ASSERT_FALSE(policy_glue_function_allowed(p, &member, "should_failslab"));
        member.groups = groups;
        member.n_groups = 2;
        ASSERT_OK(policy_glue_check(p, &member, &req, INJECT_SCOPE_PROCESS, false, &v, &err));
        ASSERT_STREQ(v.rule, "by-group");
        policy_verdict_done(&v);
        ASSERT_TRUE(policy_glue_function_allowed(p, &member, "should_failslab"));
        ASSERT_FALSE(policy_glue_function_allowed(p, &member, "__x64_sys_openat"));
        ASSERT_FALSE(policy_glue_function_allowed(NULL, &member, "should_failslab"));

        policy_glue_free(p);
        policy_dir_free(dir);
}

/* A foreign target needs a rule that names it; such a rule grants the
 * caller's own targets too; polkit's yes counts only when polkit gave it,
 * and never for an unprivileged uid 0. */
static void test_policy_foreign(void) {
        _cleanup_free_ char *text = NULL;
        char *dir;
        Policy *p = NULL;
        Caller c = caller_of(test_uid(), own_pid());
        Caller root = caller_of(0, own_pid());
        PolicyVerdict v = {};
        InjectError err = {};
        InjectRequest req = { .function = (char *) "should_failslab", .retval = -12, .is_errno = true, .cgroup_fd = -1, .pidfd = -1 };

        ASSERT_TRUE(asprintf(&text,
                "{ \"rules\": [\n"
                "  { \"name\": \"own\", \"users\": [%u], \"functions\": [\"should_failslab\"],\n"
                "    \"errors\": [\"ENOMEM\"], \"scopes\": [\"process\", \"cgroup\"], \"max-duration\": \"5min\",\n"
                "    \"max-active\": 3 },\n"
                "  { \"name\": \"others\", \"users\": [%u], \"functions\": [\"should_failslab\"],\n"
                "    \"errors\": [\"ENOMEM\"], \"scopes\": [\"foreign-process\"], \"max-duration\": \"1min\",\n"
                "    \"max-active\": 1 }\n"
                "] }\n", (unsigned) test_uid(), (unsigned) test_uid()) > 0);
        dir = policy_dir_new(text);
        ASSERT_OK(policy_glue_load((const char *const[]) { dir, NULL }, &p));

        /* Own targets: the first rule. */
        ASSERT_OK(policy_glue_check(p, &c, &req, INJECT_SCOPE_PROCESS, false, &v, &err));
        ASSERT_STREQ(v.rule, "own");
        policy_verdict_done(&v);
        /* Foreign processes: only the rule that names them, with its terms. */
        ASSERT_OK(policy_glue_check(p, &c, &req, INJECT_SCOPE_PROCESS, true, &v, &err));
        ASSERT_STREQ(v.rule, "others");
        ASSERT_EQ_U64(v.max_duration_usec, 60 * UINT64_C(1000000));
        policy_verdict_done(&v);
        /* Foreign cgroups: no rule names them. */
        err = (InjectError) {};
        ASSERT_RET(policy_glue_check(p, &c, &req, INJECT_SCOPE_CGROUP, true, &v, &err), -EACCES);
        ASSERT_STREQ(err.name, POLICY_ERROR_SCOPE_NOT_ALLOWED);
        /* "foreign-process" also grants one's own processes. */
        ASSERT_EQ(policy_rule(p, 1)->scopes,
                  (1u << POLICY_SCOPE_PROCESS) | (1u << POLICY_SCOPE_FOREIGN_PROCESS));

        /* Whose yes counts. */
        ASSERT_TRUE(authorize_polkit_vouches(&c, &(PolkitResult) { .allowed = true, .how = POLKIT_HOW_POLKIT }));
        ASSERT_FALSE(authorize_polkit_vouches(&c, &(PolkitResult) { .allowed = true,
                                                                     .how = POLKIT_HOW_UNAVAILABLE_AUTO }));
        ASSERT_FALSE(authorize_polkit_vouches(&c, &(PolkitResult) { .allowed = true, .how = POLKIT_HOW_OFF }));
        ASSERT_FALSE(authorize_polkit_vouches(&c, &(PolkitResult) { .allowed = false, .how = POLKIT_HOW_POLKIT }));
        ASSERT_TRUE(authorize_polkit_vouches(&root, &(PolkitResult) { .allowed = true, .how = POLKIT_HOW_POLKIT }));
        root.privileged = false;        /* root in a container */
        ASSERT_FALSE(authorize_polkit_vouches(&root, &(PolkitResult) { .allowed = true, .how = POLKIT_HOW_POLKIT }));

        policy_glue_free(p);
        policy_dir_free(dir);
}

/* A foreign device: only a "foreign-device" rule whose "devices" name it;
 * such a rule grants the caller's own devices too. */
static void test_policy_foreign_device(void) {
        _cleanup_free_ char *text = NULL;
        char *dir;
        Policy *p = NULL;
        Caller c = caller_of(test_uid(), own_pid());
        PolicyVerdict v = {};
        InjectError err = {};
        InjectRequest req = { .function = (char *) "should_fail_bio", .retval = -5, .is_errno = true, .cgroup_fd = -1,
                              .pidfd = -1, .backing_fd = -1, .device = (char *) "nvme1n1" };

        ASSERT_TRUE(asprintf(&text,
                "{ \"rules\": [\n"
                "  { \"name\": \"scratch\", \"users\": [%u], \"functions\": [\"should_fail_bio\"],\n"
                "    \"errors\": [\"EIO\"], \"scopes\": [\"foreign-device\"], \"devices\": [\"nvme1n*\", \"sdb\"],\n"
                "    \"max-duration\": \"5min\", \"max-active\": 1 }\n"
                "] }\n", (unsigned) test_uid()) > 0);
        dir = policy_dir_new(text);
        ASSERT_OK(policy_glue_load((const char *const[]) { dir, NULL }, &p));

        ASSERT_OK(policy_glue_check(p, &c, &req, INJECT_SCOPE_DEVICE, true, &v, &err));
        ASSERT_STREQ(v.rule, "scratch");
        policy_verdict_done(&v);
        req.device = (char *) "sdb";
        ASSERT_OK(policy_glue_check(p, &c, &req, INJECT_SCOPE_DEVICE, true, &v, &err));
        policy_verdict_done(&v);
        /* Own devices (a loop device on the caller's file): granted too. */
        req.device = (char *) "loop0";
        ASSERT_OK(policy_glue_check(p, &c, &req, INJECT_SCOPE_DEVICE, false, &v, &err));
        policy_verdict_done(&v);
        /* A device the list does not name: refused, saying so. */
        err = (InjectError) {};
        ASSERT_RET(policy_glue_check(p, &c, &req, INJECT_SCOPE_DEVICE, true, &v, &err), -EACCES);
        ASSERT_STREQ(err.name, POLICY_ERROR_SCOPE_NOT_ALLOWED);
        ASSERT_NOT_NULL(strstr(err.message, "does not grant device 'loop0'"));
        err = (InjectError) {};
        req.device = NULL;
        ASSERT_RET(policy_glue_check(p, &c, &req, INJECT_SCOPE_DEVICE, true, &v, &err), -EACCES);
        ASSERT_EQ(policy_rule(p, 0)->scopes, (1u << POLICY_SCOPE_DEVICE) | (1u << POLICY_SCOPE_FOREIGN_DEVICE));

        policy_glue_free(p);
        policy_dir_free(dir);
}

/* Rules by cgroup see the Caller's cgroup; the verdict says so, and an
 * unprivileged uid 0 (root in a container) is decided like anyone. */
static void test_policy_cgroup(void) {
        _cleanup_free_ char *text = NULL;
        char *dir;
        Policy *p = NULL;
        Caller c = caller_of(test_uid(), own_pid());
        Caller croot = caller_of(0, own_pid());
        PolicyVerdict v = {};
        InjectError err = {};
        InjectRequest req = { .function = (char *) "should_failslab", .retval = -12, .is_errno = true, .cgroup_fd = -1, .pidfd = -1 };

        ASSERT_TRUE(asprintf(&text,
                "{ \"rules\": [\n"
                "  { \"name\": \"docker\", \"users\": [\"*\"], \"cgroups\": [\"/system.slice/docker-*.scope\"],\n"
                "    \"functions\": [\"should_failslab\"], \"errors\": [\"ENOMEM\"], \"scopes\": [\"cgroup\"],\n"
                "    \"max-duration\": \"5min\", \"max-active\": 2 },\n"
                "  { \"name\": \"anywhere\", \"users\": [%u], \"functions\": [\"should_failslab\"],\n"
                "    \"errors\": [\"ENOMEM\"], \"scopes\": [\"cgroup\"], \"max-duration\": \"1min\", \"max-active\": 1 },\n"
                "  { \"name\": \"no-slab-in-docker-x\", \"deny\": true, \"users\": [\"*\"],\n"
                "    \"cgroups\": [\"/system.slice/docker-x.scope\"], \"functions\": [\"*\"] }\n"
                "] }\n", (unsigned) test_uid()) > 0);
        dir = policy_dir_new(text);
        ASSERT_OK(policy_glue_load((const char *const[]) { dir, NULL }, &p));

        croot.privileged = false;
        croot.cgroup = (char *) "/system.slice/docker-1.scope";
        ASSERT_OK(policy_glue_check(p, &croot, &req, INJECT_SCOPE_CGROUP, false, &v, &err));
        ASSERT_STREQ(v.rule, "docker");
        ASSERT_TRUE(v.by_cgroup);
        policy_verdict_done(&v);
        ASSERT_TRUE(policy_glue_function_allowed(p, &croot, "should_failslab"));

        /* Elsewhere, or nowhere known, nothing for uid 0. */
        croot.cgroup = (char *) "/user.slice/user-1000.slice/user@1000.service/docker-1.scope";
        err = (InjectError) {};
        ASSERT_RET(policy_glue_check(p, &croot, &req, INJECT_SCOPE_CGROUP, false, &v, &err), -EACCES);
        ASSERT_STREQ(err.name, POLICY_ERROR_USER_NOT_IN_POLICY);
        ASSERT_TRUE(strstr(err.message, "from cgroup '/user.slice/user-1000.slice/user@1000.service/docker-1.scope'"));
        croot.cgroup = NULL;
        err = (InjectError) {};
        ASSERT_RET(policy_glue_check(p, &croot, &req, INJECT_SCOPE_CGROUP, false, &v, &err), -EACCES);
        ASSERT_FALSE(policy_glue_function_allowed(p, &croot, "should_failslab"));

        /* A deny rule by cgroup beats both allows. */
        c.cgroup = (char *) "/system.slice/docker-x.scope";
        err = (InjectError) {};
        ASSERT_RET(policy_glue_check(p, &c, &req, INJECT_SCOPE_CGROUP, false, &v, &err), -EACCES);
        ASSERT_STREQ(err.name, POLICY_ERROR_FUNCTION_NOT_ALLOWED);
        ASSERT_TRUE(strstr(err.message, "Policy rule 'no-slab-in-docker-x' denies"));
        /* Elsewhere the rule without "cgroups" grants, not by cgroup. */
        c.cgroup = (char *) "/user.slice/user-1000.slice/session-1.scope";
        ASSERT_OK(policy_glue_check(p, &c, &req, INJECT_SCOPE_CGROUP, false, &v, &err));
        ASSERT_STREQ(v.rule, "anywhere");
        ASSERT_FALSE(v.by_cgroup);
        policy_verdict_done(&v);

        /* A privileged caller is not subject to the policy, deny rules included. */
        croot.privileged = true;
        croot.cgroup = (char *) "/system.slice/docker-x.scope";
        ASSERT_OK(policy_glue_check(p, &croot, &req, INJECT_SCOPE_CGROUP, false, &v, &err));
        ASSERT_STREQ(v.rule, "root");
        policy_verdict_done(&v);

        policy_glue_free(p);
        policy_dir_free(dir);
}

int main(void) {
        core_test_init();
        ASSERT_EQ(atexit(remove_test_cgroup), 0);

        TEST_RUN(test_process_scopes);
        TEST_RUN(test_pidfd_scopes);
        TEST_RUN(test_cgroup_scopes);
        TEST_RUN(test_own_cgroup);
        TEST_RUN(test_policy_check);
        TEST_RUN(test_policy_foreign);
        TEST_RUN(test_policy_foreign_device);
        TEST_RUN(test_policy_cgroup);
        return 0;
}
