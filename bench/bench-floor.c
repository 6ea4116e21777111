/* SPDX-License-Identifier: MIT */
/* bench-floor kprobe|fmod_ret FUNCTION: attach an empty program of that
 * type (floor.bpf.c) to FUNCTION, print "attached", and hold it until
 * SIGINT or SIGTERM. The hot-path benchmark measures a caller of FUNCTION
 * with it in place: the cost of the attach point itself, with no work in
 * the program. Exit status: 0 after a signal, 1 when loading or attaching
 * fails, 2 usage. */

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

static int hold(const char *kind, const char *function) {
        _cleanup_(floor_bpf__destroyp) struct floor_bpf *skel = NULL;
        _cleanup_(bpf_link__destroyp) struct bpf_link *link = NULL;
        bool kprobe = strcmp(kind, "kprobe") == 0;
        struct bpf_program *prog;
        sigset_t mask;
        int sig, r;

        skel = floor_bpf__open();
        if (!skel)
                return log_error_errno(-errno, "Failed to open the program: %m");

        /* Load only the one program asked for. */
        prog = kprobe ? skel->progs.floor_kprobe : skel->progs.floor_fmod_ret;
        (void) bpf_program__set_autoload(kprobe ? skel->progs.floor_fmod_ret : skel->progs.floor_kprobe, false);
        if (!kprobe) {
                r = bpf_program__set_attach_target(prog, 0, function);
                if (r < 0)
                        return log_error_errno(r, "No BTF target '%s': %m", function);
        }
        r = floor_bpf__load(skel);
        if (r < 0)
                return log_error_errno(r, "Failed to load the %s program: %m", kind);

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
        log_set_target("stderr");
        if (argc != 3 || (strcmp(argv[1], "kprobe") != 0 && strcmp(argv[1], "fmod_ret") != 0)) {
                fprintf(stderr, "usage: bench-floor kprobe|fmod_ret FUNCTION\n");
                return 2;
        }
        return hold(argv[1], argv[2]) < 0 ? 1 : 0;
}
