/* SPDX-License-Identifier: MIT */
/* idle-threads N: start N threads that sleep, print "ready N", and hold
 * them until SIGTERM or SIGINT. The benchmark's idle load: a process-scope
 * arm that walks every task on the machine pays for each of them, one
 * bounded by the scope's subtree does not. Small stacks (64 KiB of
 * address space each, a page or two touched) keep 10,000 of them cheap.
 * Exit status: 0 after a signal, 1 when a thread cannot be started (what
 * pthread_create said is printed), 2 usage. */

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *sleeper(void *arg) {
        (void) arg;
        for (;;)
                pause();        /* every signal is blocked: never returns */
        return NULL;
}

int main(int argc, char **argv) {
        pthread_attr_t attr;
        sigset_t mask;
        long n;
        int sig, r;

        if (argc != 2 || (n = atol(argv[1])) < 1 || n > 1000000) {
                fprintf(stderr, "usage: idle-threads N\n");
                return 2;
        }
        /* Blocked in every thread (they inherit the mask), so only
         * sigwait() below takes them. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);

        (void) pthread_attr_init(&attr);
        (void) pthread_attr_setstacksize(&attr, 64 * 1024);
        for (long i = 0; i < n; i++) {
                pthread_t t;

                r = pthread_create(&t, &attr, sleeper, NULL);
                if (r != 0) {
                        fprintf(stderr, "idle-threads: thread %ld: %s\n", i + 1, strerror(r));
                        return 1;
                }
        }
        printf("ready %ld\n", n);
        fflush(stdout);
        (void) sigwait(&mask, &sig);
        return 0;
}
