/* SPDX-License-Identifier: MIT */
/* attach-loop kprobe|fmod_ret FUNCTION [--cycles N] [--reload-every K]
 *             [--hold-us US] [--gap-us US]
 *
 * Attaches an empty program of that type (floor.bpf.c) to FUNCTION and
 * detaches it again, N times (default: until killed), with plain libbpf:
 * no injectd, no pins, no maps. Every K cycles (default 0: never) the
 * program is unloaded and loaded afresh, so the next attach builds a new
 * trampoline (fmod_ret) or kprobe for a new program. It holds each attach
 * for --hold-us and waits --gap-us after each detach (default 0 both).
 * Prints "cycle N T_MS" every 100 cycles and at the end, so a wedge shows
 * as output that stops. Exit status: 0 done, 1 load or attach failed,
 * 2 usage.
 *
 * What it is for: tests/vm/wedge-repro.sh, the reproducer of issue 19
 * (the guest wedged while injectd attached and detached sites), run with
 * the same attach and detach as injectd but none of its own sequence. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "floor.skel.h"

static unsigned long long now_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (unsigned long long) ts.tv_sec * 1000 + (unsigned long long) ts.tv_nsec / 1000000;
}

static struct floor_bpf *load(bool kprobe, const char *function) {
        struct floor_bpf *skel;
        int r;

        skel = floor_bpf__open();
        if (!skel)
                return NULL;
        (void) bpf_program__set_autoload(kprobe ? skel->progs.floor_fmod_ret : skel->progs.floor_kprobe, false);
        if (!kprobe) {
                r = bpf_program__set_attach_target(skel->progs.floor_fmod_ret, 0, function);
                if (r < 0)
                        goto fail;
        }
        r = floor_bpf__load(skel);
        if (r < 0)
                goto fail;
        return skel;
fail:
        floor_bpf__destroy(skel);
        errno = -r;
        return NULL;
}

int main(int argc, char **argv) {
        unsigned long long cycles = 0, reload_every = 0, hold_us = 0, gap_us = 0, n, start;
        struct floor_bpf *skel;
        const char *function;
        bool kprobe;
        int i;

        if (argc < 3 || (strcmp(argv[1], "kprobe") != 0 && strcmp(argv[1], "fmod_ret") != 0))
                goto usage;
        kprobe = strcmp(argv[1], "kprobe") == 0;
        function = argv[2];
        for (i = 3; i < argc; i += 2) {
                unsigned long long *dst;

                if (i + 1 >= argc)
                        goto usage;
                if (strcmp(argv[i], "--cycles") == 0)
                        dst = &cycles;
                else if (strcmp(argv[i], "--reload-every") == 0)
                        dst = &reload_every;
                else if (strcmp(argv[i], "--hold-us") == 0)
                        dst = &hold_us;
                else if (strcmp(argv[i], "--gap-us") == 0)
                        dst = &gap_us;
                else
                        goto usage;
                *dst = strtoull(argv[i + 1], NULL, 10);
        }

        skel = load(kprobe, function);
        if (!skel) {
                fprintf(stderr, "attach-loop: cannot load the %s program for '%s': %s\n", argv[1], function,
                        strerror(errno));
                return 1;
        }
        start = now_ms();
        for (n = 0; cycles == 0 || n < cycles; n++) {
                struct bpf_link *link;

                if (reload_every && n && n % reload_every == 0) {
                        floor_bpf__destroy(skel);
                        skel = load(kprobe, function);
                        if (!skel) {
                                fprintf(stderr, "attach-loop: cannot reload: %s\n", strerror(errno));
                                return 1;
                        }
                }
                link = kprobe ? bpf_program__attach_kprobe(skel->progs.floor_kprobe, false, function)
                              : bpf_program__attach_trace(skel->progs.floor_fmod_ret);
                if (!link) {
                        fprintf(stderr, "attach-loop: cycle %llu: cannot attach to '%s': %s\n", n, function,
                                strerror(errno));
                        floor_bpf__destroy(skel);
                        return 1;
                }
                if (hold_us)
                        (void) usleep(hold_us);
                bpf_link__destroy(link);
                if (gap_us)
                        (void) usleep(gap_us);
                if ((n + 1) % 100 == 0) {
                        printf("cycle %llu %llu\n", n + 1, now_ms() - start);
                        fflush(stdout);
                }
        }
        printf("cycle %llu %llu\n", n, now_ms() - start);
        floor_bpf__destroy(skel);
        return 0;

usage:
        fprintf(stderr, "usage: attach-loop kprobe|fmod_ret FUNCTION [--cycles N] [--reload-every K] "
                        "[--hold-us US] [--gap-us US]\n");
        return 2;
}
