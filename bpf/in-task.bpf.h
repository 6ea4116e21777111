/* SPDX-License-Identifier: GPL-2.0 */
/* in_task_context(): interrupt context is nobody's scope. In a hardirq,
 * an NMI or a softirq being served, current is whichever task was
 * interrupted: a user who keeps
 * her CPU busy inside her scope would otherwise fail the network receive,
 * timer, RCU and block completion work of everyone else that lands there.
 * So a call counts as the task's own only in task context, which is what
 * the kernel's in_task() says: no NMI, no hardirq, no softirq being served
 * (a task that merely disabled bottom halves is still itself).
 *
 * x86 keeps the preempt count per CPU: in __preempt_count up to 6.1 and
 * again from 6.15, in pcpu_hot.preempt_count from 6.2 to 6.14. This CPU's
 * copy is at __per_cpu_offset[cpu] plus the variable's per-CPU offset.
 *
 * The symbols are untyped ksyms: libbpf takes their values from
 * /proc/kallsyms (the daemon keeps CAP_SYSLOG to read them). Typed ones
 * with bpf_this_cpu_ptr() would be simpler, but a typed ksym missing from
 * the kernel's BTF (pcpu_hot on 6.1) makes libbpf search module BTFs,
 * which needs CAP_SYS_ADMIN, and the daemon does not keep it. Both are
 * weak: the one this kernel lacks is 0. pcpu_hot's layout is not read
 * with CO-RE for the same reason (a type missing from the kernel's BTF,
 * as on 6.1, sends libbpf to the module BTFs): preempt_count follows the
 * current_task pointer there, at offset 8. On a kernel with neither (not x86,
 * or a layout we do not know) nothing is failed: calls are seen and never
 * matched, which the counters show. Only callers in scope pay the two
 * reads. The masks are include/linux/preempt.h's.
 *
 * Shared by inject.bpf.c and observe.bpf.c: observe must count exactly the
 * calls inject would match, so that a call number it reports is the
 * after=N that fails that call. */
#ifndef INJECTD_IN_TASK_BPF_H
#define INJECTD_IN_TASK_BPF_H

extern const void __per_cpu_offset __ksym __weak;
extern const void __preempt_count __ksym __weak;
extern const void pcpu_hot __ksym __weak;

#define PREEMPT_SOFTIRQ_OFFSET  0x00000100u     /* 1 << SOFTIRQ_SHIFT (8) */
#define PREEMPT_HARDIRQ_MASK    0x000f0000u     /* 4 bits at HARDIRQ_SHIFT (16) */
#define PREEMPT_NMI_MASK        0x00f00000u     /* 4 bits at NMI_SHIFT (20) */
#define PCPU_HOT_PREEMPT_COUNT_OFFSET 8         /* after struct task_struct *current_task */

/* x86's per-CPU preempt count: __preempt_count up to 6.1 and from 6.15,
 * pcpu_hot.preempt_count in between. Unknown layout: 0 (never in task). */
static __always_inline int in_task_context(void)
{
        __u64 base = 0, var;
        unsigned int pc = 0;
        __u32 cpu = bpf_get_smp_processor_id();

        if (!&__per_cpu_offset)
                return 0;
        if (bpf_probe_read_kernel(&base, sizeof(base), (const __u64 *) &__per_cpu_offset + cpu) < 0)
                return 0;
        if (&__preempt_count)
                var = (__u64) &__preempt_count;
        else if (&pcpu_hot)
                var = (__u64) &pcpu_hot + PCPU_HOT_PREEMPT_COUNT_OFFSET;
        else
                return 0;
        if (bpf_probe_read_kernel(&pc, sizeof(pc), (const void *) (base + var)) < 0)
                return 0;
        return !(pc & (PREEMPT_NMI_MASK | PREEMPT_HARDIRQ_MASK | PREEMPT_SOFTIRQ_OFFSET));
}

#endif
