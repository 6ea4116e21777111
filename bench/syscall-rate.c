/* SPDX-License-Identifier: MIT */
/* syscall-rate [--rounds R] [--round-ms MS] [--cpu N]: the hot-path probe.
 * Calls getppid(2) in a tight loop and prints the cost of one call, per
 * round, as one JSON line:
 *
 *   {"calls_per_round": N, "ns_per_call": [r1, r2, ...],
 *    "control_ns_per_call": [c1, c2, ...], "ancestry": A}
 *
 * Each round is followed by a control round of getpid(2), which costs about
 * the same and has nothing attached: ri / ci compares two stretches of the
 * same millisecond or two, so the host speeding up or slowing down (under
 * TCG on a shared machine it does, all the time) cancels out.
 *
 * getppid is about the cheapest system call there is (__do_sys_getppid reads
 * one field under RCU), so what an attached program adds shows up in full.
 * N is calibrated first so that one round lasts about MS milliseconds
 * (default 200); R rounds follow (default 5). --cpu pins the loop to one CPU
 * so the rounds do not differ by migrations. A is the number of processes
 * from this one up to PID 1, both counted: how far a walk up the process
 * tree from here goes.
 *
 * syscall-rate --check makes one call and prints "ok" or the errno's name:
 * the benchmark uses it to prove an injection is live for its own scope. */

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 1000

static uint64_t now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The raw syscall: no libc wrapper can cache it or get in the way. */
static uint64_t loop(long nr, uint64_t calls) {
        uint64_t start = now_ns();

        for (uint64_t i = 0; i < calls; i++)
                (void) syscall(nr);
        return now_ns() - start;
}

/* Follows PPid: in /proc/PID/status up to PID 1; -1 if /proc says no. */
static int ancestry(void) {
        pid_t pid = getpid();
        int n = 1;

        while (pid > 1 && n < 4096) {
                char path[64], line[256];
                FILE *f;
                long ppid = -1;

                snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
                f = fopen(path, "re");
                if (!f)
                        return -1;
                while (fgets(line, sizeof(line), f))
                        if (sscanf(line, "PPid: %ld", &ppid) == 1)
                                break;
                fclose(f);
                if (ppid < 0)
                        return -1;
                if (ppid == 0)
                        break;
                pid = (pid_t) ppid;
                n++;
        }
        return n;
}

static int parse_int(const char *s, long min, long max, long *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int main(int argc, char **argv) {
        long rounds = 5, round_ms = 200, cpu = -1;
        double ns[MAX_ROUNDS], control[MAX_ROUNDS];
        uint64_t calls = 1000, t;

        if (argc == 2 && strcmp(argv[1], "--check") == 0) {
                const char *name;

                if (syscall(SYS_getppid) >= 0) {
                        puts("ok");
                        return 0;
                }
                name = strerrorname_np(errno);
                puts(name ? name : "?");
                return 0;
        }

        for (int i = 1; i < argc; i++) {
                long *dst = NULL, max = 0;

                if (strcmp(argv[i], "--rounds") == 0)
                        dst = &rounds, max = MAX_ROUNDS;
                else if (strcmp(argv[i], "--round-ms") == 0)
                        dst = &round_ms, max = 60000;
                else if (strcmp(argv[i], "--cpu") == 0)
                        dst = &cpu, max = CPU_SETSIZE - 1;
                if (!dst || i + 1 >= argc || parse_int(argv[++i], dst == &cpu ? 0 : 1, max, dst) < 0) {
                        fprintf(stderr, "usage: syscall-rate [--rounds R] [--round-ms MS] [--cpu N] | --check\n");
                        return 2;
                }
        }

        if (cpu >= 0) {
                cpu_set_t set;

                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                if (sched_setaffinity(0, sizeof(set), &set) < 0) {
                        fprintf(stderr, "syscall-rate: cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
                        return 1;
                }
        }

        /* Grow the round until it lasts a quarter of the target, then
         * scale: short calibration rounds are dominated by timer noise. */
        while ((t = loop(SYS_getppid, calls)) < (uint64_t) round_ms * 250000u)
                calls *= 2;
        calls = calls * ((uint64_t) round_ms * 1000000u) / (t ? t : 1);
        if (calls < 1000)
                calls = 1000;

        for (long r = 0; r < rounds; r++) {
                ns[r] = (double) loop(SYS_getppid, calls) / (double) calls;
                control[r] = (double) loop(SYS_getpid, calls) / (double) calls;
        }

        printf("{\"calls_per_round\": %llu, \"ns_per_call\": [", (unsigned long long) calls);
        for (long r = 0; r < rounds; r++)
                printf("%s%.1f", r ? ", " : "", ns[r]);
        printf("], \"control_ns_per_call\": [");
        for (long r = 0; r < rounds; r++)
                printf("%s%.1f", r ? ", " : "", control[r]);
        printf("], \"ancestry\": %d}\n", ancestry());
        return 0;
}
