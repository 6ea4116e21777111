/* SPDX-License-Identifier: MIT */
/* sweep-steps K: the sweep benchmark's fixture. Makes K eventfd() calls,
 * closing each descriptor at once, and exits 1 if any failed (0 if none).
 * Unlike tests/vm's sweep-target (at most 64 calls, stops at the first
 * failure), it goes on after a failure, so every run of a sweep does the
 * same work whichever call fails: the runs of a 1,000-step sweep cost the
 * same, and a sweep cut into chunks (bench/in-vm.sh) measures what the
 * whole one would. */

#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

int main(int argc, char **argv) {
        long k, failed = 0;

        if (argc != 2 || (k = atol(argv[1])) < 1 || k > 1000000) {
                fprintf(stderr, "usage: sweep-steps K\n");
                return 2;
        }
        for (long i = 0; i < k; i++) {
                int fd = eventfd(0, EFD_CLOEXEC);

                if (fd < 0)
                        failed++;
                else
                        close(fd);
        }
        if (failed)
                fprintf(stderr, "sweep-steps: %ld of %ld eventfd() calls failed\n", failed, k);
        return failed ? 1 : 0;
}
