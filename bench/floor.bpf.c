// SPDX-License-Identifier: GPL-2.0
/* The floor of the hot-path benchmark: programs of each backend's type
 * that do nothing. What a caller pays with one of these attached is what
 * the kernel charges for running any program there (the kprobe's ftrace
 * handler and perf glue, or the trampoline), so the difference between
 * injectd's program and this one is what injectd's own code costs. (The
 * sketch of process scopes as task tags that used to live here is now
 * bpf/inject.bpf.c's own hot path.) */

#include "vmlinux-min.h"
#include <bpf/bpf_helpers.h>

/* The same licence as bpf/inject.bpf.c: a tracing program's type and
 * attach path, not its body, should differ from injectd's. */
char LICENSE[] SEC("license") = "GPL";

SEC("kprobe")
int floor_kprobe(struct pt_regs *ctx)
{
        return 0;
}

/* Zero: run the function as if no program were attached. */
SEC("fmod_ret")
long floor_fmod_ret(__u64 *ctx)
{
        return 0;
}
