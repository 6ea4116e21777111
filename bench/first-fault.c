/* SPDX-License-Identifier: MIT */
/* first-fault [--comm NAME] [--interval-us US] [--timeout SECS] [PATH]: the
 * arm-latency probe. Names its thread NAME (default "benchprobe", for comm
 * filters), prints "ready PID", then opens PATH (default /etc/hostname) with
 * openat(2) every US microseconds (default 500) until one open fails, and
 * prints
 *
 *   fault ERRNAME REALTIME_NS
 *
 * with the CLOCK_REALTIME of that failure, so the caller can subtract the
 * moment it made its request. Exit status: 0 fault seen, 1 timeout (default
 * 120 s), 2 usage.
 *
 * The pause between opens keeps the probe from competing for the CPU with
 * the tool being measured (under TCG, two vCPUs on a loaded host); it
 * bounds the error of each figure by US. */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id) {
        struct timespec ts;

        (void) clock_gettime(id, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

int main(int argc, char **argv) {
        const char *comm = "benchprobe", *path = "/etc/hostname";
        long interval_us = 500, timeout_s = 120;
        struct timespec pause;
        uint64_t deadline;
        int i;

        for (i = 1; i < argc && argv[i][0] == '-'; i++) {
                if (i + 1 >= argc)
                        goto usage;
                if (strcmp(argv[i], "--comm") == 0)
                        comm = argv[++i];
                else if (strcmp(argv[i], "--interval-us") == 0)
                        interval_us = atol(argv[++i]);
                else if (strcmp(argv[i], "--timeout") == 0)
                        timeout_s = atol(argv[++i]);
                else
                        goto usage;
        }
        if (argc - i > 1 || interval_us < 1 || interval_us > 1000000 || timeout_s < 1)
                goto usage;
        if (i < argc)
                path = argv[i];

        if (prctl(PR_SET_NAME, comm) < 0) {
                fprintf(stderr, "first-fault: cannot set comm '%s': %s\n", comm, strerror(errno));
                return 1;
        }
        printf("ready %d\n", (int) getpid());
        fflush(stdout);

        pause = (struct timespec) { interval_us / 1000000, (interval_us % 1000000) * 1000 };
        deadline = clock_ns(CLOCK_MONOTONIC) + (uint64_t) timeout_s * 1000000000u;
        while (clock_ns(CLOCK_MONOTONIC) < deadline) {
                int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);

                if (fd < 0) {
                        const char *name = strerrorname_np(errno);
                        uint64_t t = clock_ns(CLOCK_REALTIME);

                        printf("fault %s %llu\n", name ? name : "?", (unsigned long long) t);
                        return 0;
                }
                close(fd);
                (void) nanosleep(&pause, NULL);
        }
        fprintf(stderr, "first-fault: no fault within %ld s\n", timeout_s);
        return 1;

usage:
        fprintf(stderr, "usage: first-fault [--comm NAME] [--interval-us US] [--timeout SECS] [PATH]\n");
        return 2;
}
