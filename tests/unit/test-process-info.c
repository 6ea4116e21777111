/* SPDX-License-Identifier: MIT */
/* What /proc says about a process (process-info.c) and who is privileged
 * (caller.c): the status table, the privilege rule, namespaces compared,
 * pid namespaces nested and side by side, pid numbers translated, and a
 * caller without the capabilities or with another uid.
 *
 * The cases with children in new pid namespaces, or that drop capabilities,
 * need root; each that cannot run says why and the rest go on. */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "caller.h"
#include "process-info.h"
#include "test-util.h"

static ProcStatus parse_text(const char *text, int *ret) {
        ProcStatus st = {};
        FILE *f = fmemopen((void *) text, strlen(text), "r");

        ASSERT_NOT_NULL(f);
        *ret = proc_status_parse(f, &st);
        fclose(f);
        return st;
}

static void test_status_table(void) {
        ProcStatus st;
        int r;

        st = parse_text("Name:\tsleep\nTgid:\t4242\nPid:\t4243\nPPid:\t17\n"
                        "Uid:\t1000\t1001\t1002\t1003\nGid:\t5\t5\t5\t5\n"
                        "NSpid:\t4243\t12\t3\nCapEff:\t000001ffffffffff\n", &r);
        ASSERT_OK(r);
        ASSERT_EQ(st.tgid, 4242);
        ASSERT_EQ(st.ppid, 17);
        ASSERT_EQ(st.uids[0], 1000u);
        ASSERT_EQ(st.uids[3], 1003u);
        ASSERT_EQ_U64(st.cap_eff, UINT64_C(0x000001ffffffffff));
        ASSERT_EQ(st.n_nspid, 3u);
        ASSERT_EQ(st.nspid[1], 12);
        ASSERT_EQ(st.nspid[2], 3);

        /* A key missing, twice, or malformed: not a status file we trust. */
        parse_text("Tgid:\t1\nPPid:\t0\nUid:\t0\t0\t0\t0\nNSpid:\t1\n", &r);
        ASSERT_EQ(r, -EIO);
        parse_text("Tgid:\t1\nPPid:\t0\nUid:\t0\t0\t0\t0\nNSpid:\t1\nCapEff:\t0\nCapEff:\t1\n", &r);
        ASSERT_EQ(r, -EIO);
        parse_text("Tgid:\t1\nPPid:\t0\nUid:\t0\t0\nNSpid:\t1\nCapEff:\t0\n", &r);
        ASSERT_EQ(r, -EIO);
        parse_text("Tgid:\t1\nPPid:\t0\nUid:\t0\t0\t0\t0\nNSpid:\t\nCapEff:\t0\n", &r);
        ASSERT_EQ(r, -EIO);

        /* This process, as /proc says. */
        ASSERT_OK(proc_status_read(getpid(), &st));
        ASSERT_EQ(st.tgid, getpid());
        ASSERT_EQ(st.ppid, getppid());
        ASSERT_TRUE(st.n_nspid >= 1);
}

static void test_privilege_rule(void) {
        const uint64_t admin = UINT64_C(1) << CAP_SYS_ADMIN;
        const uint64_t bpf = UINT64_C(1) << CAP_BPF, perfmon = UINT64_C(1) << CAP_PERFMON;

        ASSERT_TRUE(proc_privilege_from(admin, true, true));
        ASSERT_TRUE(proc_privilege_from(bpf | perfmon, true, true));
        ASSERT_TRUE(proc_privilege_from(~UINT64_C(0), true, true));
        ASSERT_FALSE(proc_privilege_from(bpf, true, true));
        ASSERT_FALSE(proc_privilege_from(perfmon, true, true));
        ASSERT_FALSE(proc_privilege_from(0, true, true));
        /* Root of a user namespace of its own, or in a pid namespace of its own. */
        ASSERT_FALSE(proc_privilege_from(~UINT64_C(0), false, true));
        ASSERT_FALSE(proc_privilege_from(~UINT64_C(0), true, false));
}

static void test_own_namespaces(void) {
        bool userns = false, pidns = false;
        ProcNsRef ref;
        ProcStatus st;
        uid_t owner;
        pid_t pid;

        ASSERT_OK(proc_status_read(getpid(), &st));
        ASSERT_OK(proc_same_namespaces(getpid(), &st, &userns, &pidns));
        ASSERT_TRUE(userns);
        ASSERT_EQ(pidns, st.n_nspid == 1);      /* the /proc here may be an outer namespace's */
        ASSERT_OK(proc_dump_owner(getpid(), &owner));
        ASSERT_EQ(owner, geteuid());

        ASSERT_OK(proc_ns_ref(NULL, getpid(), 0, &st, &ref));
        ASSERT_EQ(ref.level, st.n_nspid - 1);
        ASSERT_EQ(proc_ns_contains(&ref, getpid(), 0, &st), 1);
        ASSERT_OK(proc_ns_translate(&ref, st.nspid[st.n_nspid - 1], &pid));
        ASSERT_EQ(pid, getpid());
}

/* A child in a new pid namespace, pausing; -1 if that cannot be made. */
static pid_t spawn_in_new_pidns(void) {
        int p[2];
        pid_t pid;
        char c;

        if (unshare(CLONE_NEWPID) < 0)
                return -1;
        ASSERT_EQ(pipe(p), 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                (void) write(p[1], "x", 1);
                for (;;)
                        pause();
        }
        /* Back to our own namespace for the next child. */
        ASSERT_EQ(read(p[0], &c, 1), 1);
        close(p[0]);
        close(p[1]);
        return pid;
}

static void test_nested_namespaces(void) {
        ProcStatus self, st_a, st_b;
        ProcNsRef ref_self, ref_a;
        pid_t a, b, pid;
        int fd;

        /* unshare(CLONE_NEWPID) changes where our next child goes, once: fork
         * each child from a helper so that they land in sibling namespaces. */
        fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (a = spawn_in_new_pidns()) < 0) {
                printf("  skipped: nested pid namespaces (%m)\n");
                if (fd >= 0)
                        close(fd);
                return;
        }
        ASSERT_EQ(setns(fd, CLONE_NEWPID), 0);  /* children back in ours */
        b = spawn_in_new_pidns();
        ASSERT_TRUE(b > 0);
        ASSERT_EQ(setns(fd, CLONE_NEWPID), 0);
        close(fd);

        ASSERT_OK(proc_status_read(getpid(), &self));
        ASSERT_OK(proc_status_read(a, &st_a));
        ASSERT_OK(proc_status_read(b, &st_b));
        ASSERT_EQ(st_a.n_nspid, self.n_nspid + 1);
        ASSERT_EQ(st_a.nspid[st_a.n_nspid - 1], 1);
        ASSERT_OK(proc_ns_ref(NULL, getpid(), 0, &self, &ref_self));
        ASSERT_OK(proc_ns_ref(NULL, a, 0, &st_a, &ref_a));

        /* Below us: ours. Above it, or beside it: not its. */
        ASSERT_EQ(proc_ns_contains(&ref_self, a, 0, &st_a), 1);
        ASSERT_EQ(proc_ns_contains(&ref_a, a, 0, &st_a), 1);
        ASSERT_EQ(proc_ns_contains(&ref_a, getpid(), 0, &self), 0);
        ASSERT_EQ(proc_ns_contains(&ref_a, b, 0, &st_b), 0);

        /* pid 1 there is a; b is pid 1 too, in its own namespace only. */
        ASSERT_OK(proc_ns_translate(&ref_a, 1, &pid));
        ASSERT_EQ(pid, a);
        ASSERT_RET(proc_ns_translate(&ref_a, 2, &pid), -ESRCH);

        kill(a, SIGKILL);
        kill(b, SIGKILL);
        waitpid(a, NULL, 0);
        waitpid(b, NULL, 0);
}

/* Lets the child that waits on q go, reaps it, and closes both pipes. */
static void release_child(pid_t pid, int p[2], int q[2]) {
        (void) write(q[1], "x", 1);
        waitpid(pid, NULL, 0);
        close(p[0]);
        close(p[1]);
        close(q[0]);
        close(q[1]);
}

static void test_caller_privileged(void) {
        ProcStatus st;
        bool userns, pidns;
        Caller c;
        pid_t pid;
        int p[2], q[2];
        char x;

        ASSERT_OK(proc_status_read(getpid(), &st));
        ASSERT_OK(proc_same_namespaces(getpid(), &st, &userns, &pidns));

        /* As privileged as we are, and only under our own euid. */
        ASSERT_OK(caller_from_ucred(geteuid(), getegid(), getpid(), &c));
        ASSERT_EQ(c.privileged, proc_privilege_from(st.cap_eff, userns, pidns));
        caller_done(&c);
        ASSERT_OK(caller_from_ucred(geteuid() + 4242, getegid(), getpid(), &c));
        ASSERT_FALSE(c.privileged);
        caller_done(&c);

        if (geteuid() != 0 || !proc_privilege_from(st.cap_eff, userns, pidns)) {
                printf("  skipped: uid 0 without capabilities (needs a privileged test)\n");
                return;
        }

        /* uid 0 with no capability: an ordinary caller. */
        ASSERT_EQ(pipe(p), 0);
        ASSERT_EQ(pipe(q), 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
                struct __user_cap_data_struct d[2] = {};

                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (syscall(SYS_capset, &h, d) < 0)
                        _exit(1);
                (void) write(p[1], "x", 1);
                (void) read(q[0], &x, 1);
                _exit(0);
        }
        ASSERT_EQ(read(p[0], &x, 1), 1);
        ASSERT_OK(caller_from_ucred(0, 0, pid, &c));
        ASSERT_EQ(c.uid, 0u);
        ASSERT_FALSE(c.privileged);
        caller_done(&c);
        release_child(pid, p, q);
}

/* A child of another uid: its /proc files are its own while dumpable, and
 * root's once it is not. */
static void test_dump_owner(void) {
        int p[2], q[2];
        uid_t owner;
        char x;

        if (geteuid() != 0) {
                printf("  skipped: a process of another uid (needs root)\n");
                return;
        }
        for (int dumpable = 1; dumpable >= 0; dumpable--) {
                pid_t pid;

                ASSERT_EQ(pipe(p), 0);
                ASSERT_EQ(pipe(q), 0);
                pid = fork();
                ASSERT_TRUE(pid >= 0);
                if (pid == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0 ||
                            prctl(PR_SET_DUMPABLE, dumpable) < 0)
                                _exit(1);
                        (void) write(p[1], "x", 1);
                        (void) read(q[0], &x, 1);
                        _exit(0);
                }
                ASSERT_EQ(read(p[0], &x, 1), 1);
                ASSERT_OK(proc_dump_owner(pid, &owner));
                ASSERT_EQ(owner, dumpable ? 65534u : 0u);
                release_child(pid, p, q);
        }
}

/* The caller's cgroup is the "0::" line of its /proc/PID/cgroup. */
static void test_caller_cgroup(void) {
        char *line = NULL, *expected = NULL;
        size_t n = 0;
        FILE *f;
        Caller c;

        f = fopen("/proc/self/cgroup", "re");
        ASSERT_NOT_NULL(f);
        while (getline(&line, &n, f) > 0)
                if (strncmp(line, "0::", 3) == 0) {
                        line[strcspn(line, "\n")] = 0;
                        expected = strdup(line + 3);
                }
        fclose(f);
        free(line);
        if (!expected) {
                printf("  skipped: no cgroup2 hierarchy\n");
                return;
        }

        ASSERT_OK(caller_from_ucred(geteuid(), getegid(), getpid(), &c));
        ASSERT_STREQ(c.cgroup, expected);
        caller_done(&c);
        free(expected);
}

int main(void) {
        TEST_RUN(test_status_table);
        TEST_RUN(test_privilege_rule);
        TEST_RUN(test_own_namespaces);
        TEST_RUN(test_dump_owner);
        TEST_RUN(test_nested_namespaces);
        TEST_RUN(test_caller_privileged);
        TEST_RUN(test_caller_cgroup);
        return 0;
}
