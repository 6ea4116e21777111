/* SPDX-License-Identifier: MIT */
/* first-fault [--comm NAME] [--interval-us US] [--timeout SECS]
 *             [--syscall NR --errno NAME] [--hold] [PATH]: the arm-latency
 * probe. Names its thread NAME (default "benchprobe", for comm filters),
 * prints "ready PID", then makes one call every US microseconds (default
 * 500) until one fails, and prints
 *
 *   fault ERRNAME REALTIME_NS
 *
 * with the CLOCK_REALTIME of that failure, so the caller can subtract the
 * moment it made its request. Exit status: 0 fault seen, 1 timeout (default
 * 120 s), 2 usage.
 *
 * The call is openat(2) of PATH (default /etc/hostname), any failure
 * counting; or, with --syscall, the raw system call NR with the arguments
 * (-1, 0, 0, 0, 0, 0), which counts only when it fails with NAME: the
 * arm-latency benchmark fails a function never armed before in each round,
 * so it needs many system calls that are harmless with such arguments
 * (most fail at once with EBADF or EFAULT, never with the injected error).
 *
 * --hold: after "ready", wait (up to the timeout) for SIGUSR1 before the
 * first call, so that a thousand concurrent `injectctl run` clients can
 * all be armed before any of them is checked.
 *
 * The pause between calls keeps the probe from competing for the CPU with
 * the tool being measured (under TCG, two vCPUs on a loaded host); it
 * bounds the error of each figure by US. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id) {
        struct timespec ts;

        (void) clock_gettime(id, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The errno value of NAME ("EIO"), or -1. */
static int errno_by_name(const char *name) {
        for (int e = 1; e < 4096; e++) {
                const char *n = strerrorname_np(e);

                if (n && strcmp(n, name) == 0)
                        return e;
        }
        return -1;
}

/* Nonzero when the call failed the way the fault fails it. */
static int call_fails(long nr, int want, const char *path) {
        if (nr < 0) {
                int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);

                if (fd < 0)
                        return 1;
                close(fd);
                return 0;
        }
        return syscall(nr, -1L, 0L, 0L, 0L, 0L, 0L) == -1 && errno == want;
}

int main(int argc, char **argv) {
        const char *comm = "benchprobe", *path = "/etc/hostname", *errname = NULL;
        long interval_us = 500, timeout_s = 120, nr = -1;
        bool hold = false;
        struct timespec pause;
        uint64_t deadline;
        int i, want = 0;

        for (i = 1; i < argc && argv[i][0] == '-'; i++) {
                if (strcmp(argv[i], "--hold") == 0) {
                        hold = true;
                        continue;
                }
                if (i + 1 >= argc)
                        goto usage;
                if (strcmp(argv[i], "--comm") == 0)
                        comm = argv[++i];
                else if (strcmp(argv[i], "--interval-us") == 0)
                        interval_us = atol(argv[++i]);
                else if (strcmp(argv[i], "--timeout") == 0)
                        timeout_s = atol(argv[++i]);
                else if (strcmp(argv[i], "--syscall") == 0)
                        nr = atol(argv[++i]);
                else if (strcmp(argv[i], "--errno") == 0)
                        errname = argv[++i];
                else
                        goto usage;
        }
        if (argc - i > 1 || interval_us < 1 || interval_us > 1000000 || timeout_s < 1 || (nr >= 0) != !!errname)
                goto usage;
        if (i < argc)
                path = argv[i];
        if (errname && (want = errno_by_name(errname)) < 0) {
                fprintf(stderr, "first-fault: unknown errno name '%s'\n", errname);
                return 2;
        }

        if (prctl(PR_SET_NAME, comm) < 0) {
                fprintf(stderr, "first-fault: cannot set comm '%s': %s\n", comm, strerror(errno));
                return 1;
        }
        if (hold) {
                sigset_t usr1;
                struct timespec wait = { timeout_s, 0 };

                /* Blocked before "ready", so a signal sent on seeing it is
                 * never lost. */
                sigemptyset(&usr1);
                sigaddset(&usr1, SIGUSR1);
                (void) sigprocmask(SIG_BLOCK, &usr1, NULL);
                printf("ready %d\n", (int) getpid());
                fflush(stdout);
                if (sigtimedwait(&usr1, NULL, &wait) < 0) {
                        fprintf(stderr, "first-fault: not released within %ld s\n", timeout_s);
                        return 1;
                }
        } else {
                printf("ready %d\n", (int) getpid());
                fflush(stdout);
        }

        pause = (struct timespec) { interval_us / 1000000, (interval_us % 1000000) * 1000 };
        deadline = clock_ns(CLOCK_MONOTONIC) + (uint64_t) timeout_s * 1000000000u;
        while (clock_ns(CLOCK_MONOTONIC) < deadline) {
                if (call_fails(nr, want, path)) {
                        const char *name = strerrorname_np(errno);
                        uint64_t t = clock_ns(CLOCK_REALTIME);

                        printf("fault %s %llu\n", name ? name : "?", (unsigned long long) t);
                        return 0;
                }
                (void) nanosleep(&pause, NULL);
        }
        fprintf(stderr, "first-fault: no fault within %ld s\n", timeout_s);
        return 1;

usage:
        fprintf(stderr, "usage: first-fault [--comm NAME] [--interval-us US] [--timeout SECS] "
                        "[--syscall NR --errno NAME] [--hold] [PATH]\n");
        return 2;
}
