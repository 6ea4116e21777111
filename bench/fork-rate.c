/* SPDX-License-Identifier: MIT */
/* fork-rate [--rounds R] [--forks F] [--cpu N]: the fork benchmark's loop.
 * Each round forks F children that _exit(0) at once, each waited for
 * before the next fork, and the cost of one fork+exit+wait is printed per
 * round as one JSON line:
 *
 *   {"forks_per_round": F, "us_per_fork": [r1, r2, ...]}
 *
 * Defaults: 40 rounds of 10. --cpu pins the loop (and so the children,
 * which inherit it) to one CPU. Every fork on the machine runs injectd's
 * tag-copying program while process scopes exist (docs/engine.md): this
 * measures what that costs a process outside every scope. */

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 1000

static uint64_t now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

int main(int argc, char **argv) {
        long rounds = 40, forks = 10, cpu = -1;
        double us[MAX_ROUNDS];

        for (int i = 1; i < argc; i++) {
                long *dst = NULL, v;
                char *end;

                if (strcmp(argv[i], "--rounds") == 0)
                        dst = &rounds;
                else if (strcmp(argv[i], "--forks") == 0)
                        dst = &forks;
                else if (strcmp(argv[i], "--cpu") == 0)
                        dst = &cpu;
                if (!dst || i + 1 >= argc)
                        goto usage;
                errno = 0;
                v = strtol(argv[++i], &end, 10);
                if (errno || *end || v < (dst == &cpu ? 0 : 1) || v > (dst == &rounds ? MAX_ROUNDS : 100000))
                        goto usage;
                *dst = v;
        }
        if (cpu >= 0) {
                cpu_set_t set;

                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                if (sched_setaffinity(0, sizeof(set), &set) < 0) {
                        fprintf(stderr, "fork-rate: cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
                        return 1;
                }
        }

        for (long r = 0; r < rounds; r++) {
                uint64_t t0 = now_ns();

                for (long f = 0; f < forks; f++) {
                        pid_t pid = fork();

                        if (pid < 0) {
                                fprintf(stderr, "fork-rate: fork: %s\n", strerror(errno));
                                return 1;
                        }
                        if (pid == 0)
                                _exit(0);
                        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                                ;
                }
                us[r] = (double) (now_ns() - t0) / 1000.0 / (double) forks;
        }

        printf("{\"forks_per_round\": %ld, \"us_per_fork\": [", forks);
        for (long r = 0; r < rounds; r++)
                printf("%s%.1f", r ? ", " : "", us[r]);
        printf("]}\n");
        return 0;

usage:
        fprintf(stderr, "usage: fork-rate [--rounds R] [--forks F] [--cpu N]\n");
        return 2;
}
