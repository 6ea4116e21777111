/* SPDX-License-Identifier: MIT */
#pragma once

/* What the running kernel lets injectd do, and why not where it does not.
 * Each finding comes from trying the thing itself (loading a tiny program,
 * asking the verifier about a helper, reading a file), never from the
 * kernel version, and carries a sentence saying what was seen. Where the
 * kernel's configuration is readable (kconfig.h), a missing feature also
 * names the CONFIG options behind it that are not set.
 *
 * The two backends are derived from the findings: kprobe needs tracing
 * programs, kprobes, bpf_override_return and the error-injection list;
 * fmod_ret needs BPF trampolines, which work on every security_* hook even
 * without CONFIG_FUNCTION_ERROR_INJECTION (Debian's stock kernel). */

#include "cleanup.h"
#include "functions.h"
#include "probe-findings.h"

KernelProbe *kernel_probe_free(KernelProbe *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(KernelProbe *, kernel_probe_free);

/* Probes everything, once; t is the function table (for the list and a
 * listed function to try fmod_ret on), or NULL. Fails only for -ENOMEM:
 * everything else becomes a finding. */
int kernel_probe_run(const FunctionTable *t, KernelProbe **ret);
