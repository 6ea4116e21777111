/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core-test-util.h"
#include "fake-frontend.h"
#include "log.h"
#include "scope.h"
#include "test-util.h"

/* The test empties the state directory: it must be the test's own, never
 * the daemon's. */
#ifndef CORE_TEST_BUILD
#error "Build with core_test_args (tests/unit/meson.build): MANAGER_STATE_DIR must be the test's own"
#endif

/* Unused uids for the requesters when the test runs as root. */
#define ROOT_TEST_UID 47110
#define ROOT_OTHER_UID 47111

static uid_t uid_test, uid_other;
static pid_t pid_own;
static pid_t children[64];      /* alive, to kill if the test fails */
static size_t n_children;

static void child_add(pid_t pid) {
        ASSERT_TRUE(n_children < ELEMENTSOF(children));
        children[n_children++] = pid;
}

void spawned(pid_t pid) {
        child_add(pid);
}

static void child_forget(pid_t pid) {
        for (size_t i = 0; i < n_children; i++)
                if (children[i] == pid) {
                        children[i] = children[--n_children];
                        return;
                }
}

void kill_children(void) {
        if (getpid() == pid_own)
                return;
        while (n_children > 0) {
                pid_t pid = children[--n_children];

                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
        }
}

uid_t test_uid(void) {
        return uid_test;
}

uid_t other_uid(void) {
        return uid_other;
}

pid_t own_pid(void) {
        return pid_own;
}

pid_t spawn_owned(void) {
        int p[2];
        pid_t pid;
        char c;

        ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (geteuid() == 0 &&
                    (setgroups(0, NULL) < 0 || setresgid(uid_test, uid_test, uid_test) < 0 ||
                     setresuid(uid_test, uid_test, uid_test) < 0))
                        _exit(1);
                /* Changing uid made it non-dumpable; an exec, as after a
                 * login, would make it dumpable again, and a process that is
                 * not dumpable is not its user's own (scope-resolve.c). */
                if (prctl(PR_SET_DUMPABLE, 1) < 0)
                        _exit(1);
                if (write(p[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(p[1]);
        child_add(pid);
        ASSERT_EQ(read(p[0], &c, 1), 1);        /* it runs as uid_test now */
        close(p[0]);
        return pid;
}

void kill_owned(pid_t pid) {
        child_forget(pid);
        ASSERT_EQ(kill(pid, SIGKILL), 0);
        ASSERT_EQ(waitpid(pid, NULL, 0), pid);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

void core_test_init(void) {
        log_set_target("stderr");
        setvbuf(stderr, NULL, _IOLBF, 0);
        if (geteuid() == 0) {
                uid_test = ROOT_TEST_UID;
                uid_other = ROOT_OTHER_UID;
        } else {
                uid_test = getuid();
                uid_other = uid_test + 1;
        }
        pid_own = spawn_owned();
        ASSERT_EQ(atexit(kill_children), 0);
        if (strncmp(MANAGER_STATE_DIR, "/run/", 5) == 0)
                test_fail("expected a state directory of the test's own, seen the daemon's '%s'", MANAGER_STATE_DIR);
        /* Records a failed run left would be adopted: start empty. */
        (void) nftw(MANAGER_STATE_DIR, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        if (mkdir(MANAGER_STATE_DIR, 0700) < 0)
                test_fail("expected to make the state directory '%s', seen %m", MANAGER_STATE_DIR);
}

/* A caller as caller_from_ucred() would make it; uid 0 stands for a
 * privileged caller here (the tests that tell root from privileged set
 * the flag themselves). */
Caller caller_of(uid_t uid, pid_t pid) {
        Caller c = { .transport = TRANSPORT_VARLINK, .uid = uid, .gid = uid, .pid = pid, .privileged = uid == 0 };
        pid_t tgid;

        ASSERT_OK(scope_process(pid, &tgid, &c.start_ticks));
        return c;
}

char *policy_dir_new(const char *text) {
        char *d = strdup("/tmp/test-core-policy-XXXXXX"), *p;
        FILE *f;

        ASSERT_NOT_NULL(d);
        ASSERT_NOT_NULL(mkdtemp(d));
        ASSERT_EQ(chmod(d, 0755), 0);
        ASSERT_TRUE(asprintf(&p, "%s/50-test.json", d) > 0);
        f = fopen(p, "we");
        ASSERT_NOT_NULL(f);
        ASSERT_TRUE(fputs(text, f) >= 0);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(chmod(p, 0644), 0);
        free(p);
        return d;
}


void policy_dir_free(char *dir) {
        if (!dir)
                return;
        ASSERT_EQ(nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
        free(dir);
}

Manager *manager_setup(const char *dir, ManagerOptions o) {
        static const char *dirs[2];
        Manager *m = NULL;

        dirs[0] = dir;
        dirs[1] = NULL;
        o.policy_dirs = dirs;
        ASSERT_OK(manager_new(&o, &m));
        fake_frontend_attach(m);
        ASSERT_OK(manager_start(m, NULL));
        return m;
}

static void on_inject(Manager *m, Injection *inj, const InjectError *err, void *userdata) {
        InjectResult *res = userdata;

        res->n_calls++;
        if (inj)
                res->id = inj->id;
        if (err)
                res->err = *err;
}

void inject_json(Manager *m, const Caller *c, const char *json, void *owner, InjectResult *res,
                 PendingRequest **ret) {
        json_object *o = json_tokener_parse(json);

        if (!o)
                test_fail("the test's request is not JSON: %s", json);
        *res = (InjectResult) {};
        ASSERT_OK(manager_inject(m, c, o, NULL, 0, owner, on_inject, res, ret));
        json_object_put(o);
}

uint64_t inject_ok(Manager *m, const Caller *c, const char *json) {
        InjectResult res;

        inject_json(m, c, json, NULL, &res, NULL);
        run_until(m, &res.n_calls, "the answer to an Inject");
        ASSERT_EQ(res.n_calls, 1);
        if (res.err.name)
                test_fail("expected %s to be armed, seen refusal %s: %s", json, res.err.name, res.err.message);
        ASSERT_TRUE(res.id != 0);
        return res.id;
}

void inject_refused(Manager *m, const Caller *c, const char *json, const char *error_name) {
        InjectResult res;

        inject_json(m, c, json, NULL, &res, NULL);
        run_until(m, &res.n_calls, "the answer to an Inject");
        ASSERT_EQ(res.n_calls, 1);
        if (res.id)
                test_fail("expected %s to be refused with %s, seen it armed", json, error_name);
        if (!res.err.name || strcmp(res.err.name, error_name) != 0)
                test_fail("expected %s to be refused with %s, seen %s: %s", json, error_name,
                          res.err.name ?: "no error", res.err.message);
}

void on_done(Manager *m, const InjectError *err, void *userdata) {
        DoneResult *res = userdata;

        res->n_calls++;
        if (err)
                res->err = *err;
}

void run_until(Manager *m, const unsigned *flag, const char *what) {
        uint64_t start = (uint64_t) time(NULL);

        while (!*flag) {
                if ((uint64_t) time(NULL) - start > 60)
                        test_fail("expected %s within a minute of the event loop, seen nothing", what);
                ASSERT_OK(sd_event_run(m->event, 1000000));
        }
}

void run_idle(Manager *m) {
        while (sd_event_run(m->event, 0) > 0)
                ;
}

static int saved_stderr = -1, capture_fd = -1;

/* A failed assertion exits while stderr is captured: show what it said. */
static void capture_flush_at_exit(void) {
        if (capture_fd >= 0)
                free(audit_capture_end());
}

void audit_capture_start(void) {
        static bool registered;

        if (!registered) {
                ASSERT_EQ(atexit(capture_flush_at_exit), 0);
                registered = true;
        }
        fflush(stderr);
        capture_fd = memfd_create("audit", MFD_CLOEXEC);
        ASSERT_TRUE(capture_fd >= 0);
        saved_stderr = dup(STDERR_FILENO);
        ASSERT_TRUE(saved_stderr >= 0);
        ASSERT_EQ(dup2(capture_fd, STDERR_FILENO), STDERR_FILENO);
}

char *audit_capture_end(void) {
        off_t n;
        char *buf;

        fflush(stderr);
        ASSERT_EQ(dup2(saved_stderr, STDERR_FILENO), STDERR_FILENO);
        close(saved_stderr);
        n = lseek(capture_fd, 0, SEEK_END);
        ASSERT_TRUE(n >= 0);
        buf = calloc(1, (size_t) n + 1);
        ASSERT_NOT_NULL(buf);
        ASSERT_EQ(pread(capture_fd, buf, (size_t) n, 0), n);
        close(capture_fd);
        capture_fd = -1;
        /* Shown as well, for whoever reads the test's log. */
        fputs(buf, stderr);
        return buf;
}

static bool line_has(const char *line, size_t len, const char *word) {
        size_t wl = strlen(word);

        for (const char *p = line; p + wl <= line + len; p++)
                if ((p == line || p[-1] == ' ') && strncmp(p, word, wl) == 0 &&
                    (p + wl == line + len || p[wl] == ' '))
                        return true;
        return false;
}

void assert_audit_line(const char *text, const char *const *words) {
        char want[512] = "";

        for (const char *l = text; l && *l;) {
                const char *nl = strchr(l, '\n');
                size_t len = nl ? (size_t) (nl - l) : strlen(l);
                bool all = true;

                for (size_t i = 0; words[i] && all; i++)
                        all = line_has(l, len, words[i]);
                if (all)
                        return;
                l = nl ? nl + 1 : NULL;
        }
        for (size_t i = 0; words[i]; i++)
                snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s ", words[i]);
        test_fail("expected an audit line with %s, seen none in:\n%s", want, text);
}
