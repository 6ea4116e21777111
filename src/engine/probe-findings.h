/* SPDX-License-Identifier: MIT */
#pragma once

/* The probe's types, and what its findings say (probe-findings.c): each
 * one with the CONFIG options behind it, the backends derived from them,
 * their description, the refusals that explain themselves, and the log.
 * probe.c, which makes the findings, calls these; they call nothing of it. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "cleanup.h"
#include "functions.h"
#include "inject-error.h"
#include "kconfig.h"

typedef enum ProbeFeature {
        PROBE_BPF,                      /* bpf() loads a program at all */
        PROBE_BTF,                      /* vmlinux BTF is readable */
        PROBE_TRACING,                  /* tracing programs (kprobe, BPF trampoline) may be loaded */
        PROBE_KPROBES,                  /* kprobes can be attached */
        PROBE_OVERRIDE,                 /* the verifier offers bpf_override_return */
        PROBE_ERROR_INJECTION_LIST,     /* /sys/kernel/debug/error_injection/list */
        PROBE_FMOD_RET_LSM,             /* fmod_ret on the security_* hooks */
        PROBE_FMOD_RET_LISTED,          /* fmod_ret on functions of the error-injection list */
        /* Derived from the above: */
        PROBE_BACKEND_KPROBE,
        PROBE_BACKEND_FMOD_RET,
        PROBE_INJECTION,                /* some backend can inject */
        _PROBE_FEATURE_MAX,
} ProbeFeature;

#define PROBE_FIRST_DERIVED PROBE_BACKEND_KPROBE
#define PROBE_NEEDS_MAX 12

/* "bpf", "btf", "tracing", "kprobes", "override", "error_injection_list",
 * "fmod_ret_lsm", "fmod_ret_listed", "kprobe", "fmod_ret", "injection": the
 * keys of the capabilities document. */
const char *probe_feature_to_string(ProbeFeature f);
/* "BPF trampolines" etc., for the doctor report and the log. */
const char *probe_feature_title(ProbeFeature f);

typedef struct ProbeFinding {
        int error;                              /* 0: available; else the negative errno that said no */
        char reason[480];                       /* what was seen, one sentence, no trailing period */
        const char *needs[PROBE_NEEDS_MAX];     /* the CONFIG options it takes */
        size_t n_needs;
        const char *missing[PROBE_NEEDS_MAX];   /* those the kernel config says are not set (only if unavailable) */
        size_t n_missing;
} ProbeFinding;

typedef struct KernelProbe {
        ProbeFinding findings[_PROBE_FEATURE_MAX];
        KernelConfig *config;
        char release[65];                       /* uname -r */
        char lockdown[24];                      /* "none", "integrity", "confidentiality"; "" if unknown */
        char lockdown_source[64];               /* where that came from */
        bool lockdown_exact;                    /* from securityfs; else the least it can be */
        int kprobe_prog_error;                  /* 0: a kprobe program loaded */
        int trampoline_error;                   /* 0: an fentry program loaded */
        size_t n_listed;                        /* functions on the error-injection list */
        size_t n_lsm_hooks;                     /* security_* hooks in BTF */
} KernelProbe;

/* Records a base finding, with the CONFIG options behind it (and those of
 * them the configuration shows unset), without deriving the backends: the
 * probes record every finding, then kernel_probe_run() derives once. */
void kernel_probe_record(KernelProbe *p, ProbeFeature f, int error, const char *fmt, va_list ap);

/* Replaces a finding (the engine confirms fmod_ret with its own program)
 * and derives the backends again. */
void kernel_probe_set(KernelProbe *p, ProbeFeature f, int error, const char *fmt, ...) _printf_(4, 5);

/* Recomputes the derived findings from the others (exposed for tests,
 * which build findings by hand). */
void kernel_probe_derive(KernelProbe *p);

static inline const ProbeFinding *kernel_probe_get(const KernelProbe *p, ProbeFeature f) {
        return &p->findings[f];
}

static inline bool kernel_probe_available(const KernelProbe *p, ProbeFeature f) {
        return p->findings[f].error == 0;
}

/* "reason (missing CONFIG_A, CONFIG_B)", or "reason (needs CONFIG_A; the
 * kernel configuration is not readable)" when the config is unknown. */
char *kernel_probe_describe(const KernelProbe *p, ProbeFeature f, char *buf, size_t n);

/* Refusals that explain themselves. Both return a negative errno after
 * filling err. */
int kernel_probe_refuse_unavailable(const KernelProbe *p, InjectError *err);
int kernel_probe_refuse_not_injectable(const KernelProbe *p, const FunctionTable *t, const char *function,
                                       InjectError *err);

/* One log line per finding, at start. */
void kernel_probe_log(const KernelProbe *p);
