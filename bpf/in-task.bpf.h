/* SPDX-License-Identifier: GPL-2.0 */
/* in_task_context(): whether the current call is made by a task rather
 * than by an interrupt that landed on it. bpf/inject.bpf.c has the same
 * test (with the reasons at length: interrupt context is nobody's scope);
 * observe.bpf.c must count exactly the calls inject.bpf.c would match, so
 * that a call number it reports is the after=N that fails that call.
 * Kept here for the other programs; inject.bpf.c can include it too. */
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
