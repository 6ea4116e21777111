/* SPDX-License-Identifier: MIT */
/* bench-floor [--tagged] kprobe|fmod_ret FUNCTION: attach an empty program
 * of that type (floor.bpf.c) to FUNCTION, print "attached", and hold it
 * until SIGINT or SIGTERM. The hot-path benchmark measures a caller of
 * FUNCTION with it in place: the cost of the attach point itself, with no
 * work in the program. With --tagged, the program is instead the sketch of
 * a process scope kept in task-local storage (see floor.bpf.c), with its
 * site marked live. Exit status: 0 after a signal, 1 when loading or
 * attaching fails, 2 usage. */

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "cleanup.h"
#include "floor.skel.h"
#include "log.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct floor_bpf *, floor_bpf__destroy);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct bpf_link *, bpf_link__destroy);

static int hold(bool tagged, const char *kind, const char *function) {
        _cleanup_(floor_bpf__destroyp) struct floor_bpf *skel = NULL;
        _cleanup_(bpf_link__destroyp) struct bpf_link *link = NULL;
        bool kprobe = strcmp(kind, "kprobe") == 0;
        struct bpf_program *progs[4], *prog;
        __u32 zero = 0, live = 1;
        sigset_t mask;
        int sig, r;

        skel = floor_bpf__open();
        if (!skel)
                return log_error_errno(-errno, "Failed to open the program: %m");

        /* Load only the one program asked for. */
        progs[0] = skel->progs.floor_kprobe;
        progs[1] = skel->progs.floor_fmod_ret;
        progs[2] = skel->progs.tagged_kprobe;
        progs[3] = skel->progs.tagged_fmod_ret;
        prog = progs[(tagged ? 2 : 0) + (kprobe ? 0 : 1)];
        for (size_t i = 0; i < ELEMENTSOF(progs); i++)
                (void) bpf_program__set_autoload(progs[i], progs[i] == prog);
        if (!kprobe) {
                r = bpf_program__set_attach_target(prog, 0, function);
                if (r < 0)
                        return log_error_errno(r, "No BTF target '%s': %m", function);
        }
        r = floor_bpf__load(skel);
        if (r < 0)
                return log_error_errno(r, "Failed to load the %s program: %m", kind);
        r = bpf_map__update_elem(skel->maps.tagged_site, &zero, sizeof(zero), &live, sizeof(live), BPF_ANY);
        if (r < 0)
                return log_error_errno(r, "Failed to mark the site live: %m");

        link = kprobe ? bpf_program__attach_kprobe(prog, false, function) : bpf_program__attach_trace(prog);
        if (!link)
                return log_error_errno(-errno, "Failed to attach to '%s': %m", function);

        /* Block the signals before saying "attached", so none is lost
         * between the line and sigwait(). */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        printf("attached\n");
        fflush(stdout);
        (void) sigwait(&mask, &sig);
        return 0;
}

int main(int argc, char **argv) {
        bool tagged = argc > 1 && strcmp(argv[1], "--tagged") == 0;

        log_set_target("stderr");
        if (argc != 3 + tagged || (strcmp(argv[1 + tagged], "kprobe") != 0 && strcmp(argv[1 + tagged], "fmod_ret") != 0)) {
                fprintf(stderr, "usage: bench-floor [--tagged] kprobe|fmod_ret FUNCTION\n");
                return 2;
        }
        return hold(tagged, argv[1 + tagged], argv[2 + tagged]) < 0 ? 1 : 0;
}
