/* SPDX-License-Identifier: MIT */
/* What the findings of probe.c say: each one with the CONFIG options
 * behind it, the backends derived from them, their description, the
 * refusals that explain themselves, and the log. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook-alternatives.h"
#include "log.h"
#include "probe-findings.h"

static const char *const feature_table[_PROBE_FEATURE_MAX] = {
        [PROBE_BPF] = "bpf",
        [PROBE_BTF] = "btf",
        [PROBE_TRACING] = "tracing",
        [PROBE_KPROBES] = "kprobes",
        [PROBE_OVERRIDE] = "override",
        [PROBE_ERROR_INJECTION_LIST] = "error_injection_list",
        [PROBE_FMOD_RET_LSM] = "fmod_ret_lsm",
        [PROBE_FMOD_RET_LISTED] = "fmod_ret_listed",
        [PROBE_BACKEND_KPROBE] = "kprobe",
        [PROBE_BACKEND_FMOD_RET] = "fmod_ret",
        [PROBE_INJECTION] = "injection",
};

static const char *const title_table[_PROBE_FEATURE_MAX] = {
        [PROBE_BPF] = "BPF",
        [PROBE_BTF] = "vmlinux BTF",
        [PROBE_TRACING] = "tracing programs",
        [PROBE_KPROBES] = "kprobes",
        [PROBE_OVERRIDE] = "bpf_override_return",
        [PROBE_ERROR_INJECTION_LIST] = "error-injection list",
        [PROBE_FMOD_RET_LSM] = "fmod_ret on LSM hooks",
        [PROBE_FMOD_RET_LISTED] = "fmod_ret on listed functions",
        [PROBE_BACKEND_KPROBE] = "backend kprobe",
        [PROBE_BACKEND_FMOD_RET] = "backend fmod_ret",
        [PROBE_INJECTION] = "injection",
};

/* What each base feature takes from the kernel configuration (Linux 6.1
 * Kconfig; dependencies spelled out, since a missing dependency is what an
 * administrator has to turn on). */
static const char *const needs_table[PROBE_FIRST_DERIVED][6] = {
        [PROBE_BPF] = { "CONFIG_BPF_SYSCALL" },
        [PROBE_BTF] = { "CONFIG_DEBUG_INFO_BTF" },
        [PROBE_TRACING] = { "CONFIG_BPF_EVENTS", "CONFIG_BPF_JIT" },
        [PROBE_KPROBES] = { "CONFIG_KPROBES", "CONFIG_KPROBE_EVENTS" },
        [PROBE_OVERRIDE] = { "CONFIG_BPF_KPROBE_OVERRIDE", "CONFIG_FUNCTION_ERROR_INJECTION", "CONFIG_KPROBE_EVENTS" },
        [PROBE_ERROR_INJECTION_LIST] = { "CONFIG_FUNCTION_ERROR_INJECTION", "CONFIG_DEBUG_FS" },
        [PROBE_FMOD_RET_LSM] = { "CONFIG_BPF_JIT", "CONFIG_DEBUG_INFO_BTF", "CONFIG_FUNCTION_TRACER", "CONFIG_SECURITY" },
        [PROBE_FMOD_RET_LISTED] = { "CONFIG_FUNCTION_ERROR_INJECTION", "CONFIG_BPF_JIT", "CONFIG_DEBUG_INFO_BTF",
                                    "CONFIG_FUNCTION_TRACER" },
};

const char *probe_feature_to_string(ProbeFeature f) {
        return f >= 0 && f < _PROBE_FEATURE_MAX ? feature_table[f] : NULL;
}

const char *probe_feature_title(ProbeFeature f) {
        return f >= 0 && f < _PROBE_FEATURE_MAX ? title_table[f] : NULL;
}

static void add_unique(const char **v, size_t *n, const char *s) {
        for (size_t i = 0; i < *n; i++)
                if (strcmp(v[i], s) == 0)
                        return;
        if (*n < PROBE_NEEDS_MAX)
                v[(*n)++] = s;
}

void kernel_probe_record(KernelProbe *p, ProbeFeature f, int error, const char *fmt, va_list ap) {
        ProbeFinding *x = &p->findings[f];

        x->error = error;
        (void) vsnprintf(x->reason, sizeof(x->reason), fmt, ap);
        x->n_needs = x->n_missing = 0;
        if (f >= PROBE_FIRST_DERIVED)
                return;
        for (size_t i = 0; i < ELEMENTSOF(needs_table[f]) && needs_table[f][i]; i++) {
                add_unique(x->needs, &x->n_needs, needs_table[f][i]);
                /* Only an option the configuration shows unset is "missing";
                 * an unreadable configuration claims nothing. */
                if (error < 0 && kconfig_get(p->config, needs_table[f][i], NULL) == KCONFIG_UNSET)
                        add_unique(x->missing, &x->n_missing, needs_table[f][i]);
        }
}

void kernel_probe_set(KernelProbe *p, ProbeFeature f, int error, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        kernel_probe_record(p, f, error, fmt, ap);
        va_end(ap);
        kernel_probe_derive(p);
}

/* A derived finding: available when every component is; otherwise the
 * first failing component explains it, and the missing options of all
 * failing ones are listed (the kprobe backend on a stock kernel lacks both
 * bpf_override_return and the list, and both have to be turned on). */
static void derive_all(KernelProbe *p, ProbeFeature f, const ProbeFeature *parts, size_t n, const char *ok) {
        ProbeFinding *x = &p->findings[f];
        const ProbeFinding *first = NULL;
        ProbeFeature first_f = 0;

        *x = (ProbeFinding) {};
        for (size_t i = 0; i < n; i++) {
                const ProbeFinding *c = &p->findings[parts[i]];

                for (size_t j = 0; j < c->n_needs; j++)
                        add_unique(x->needs, &x->n_needs, c->needs[j]);
                if (c->error == 0)
                        continue;
                if (!first) {
                        first = c;
                        first_f = parts[i];
                }
                for (size_t j = 0; j < c->n_missing; j++)
                        add_unique(x->missing, &x->n_missing, c->missing[j]);
        }
        if (!first) {
                snprintf(x->reason, sizeof(x->reason), "%s", ok);
                return;
        }
        x->error = first->error;
        snprintf(x->reason, sizeof(x->reason), "%s: %.280s", title_table[first_f], first->reason);
}

void kernel_probe_derive(KernelProbe *p) {
        ProbeFinding *inj = &p->findings[PROBE_INJECTION];
        const ProbeFinding *k, *fm;
        ProbeFeature kparts[4];
        size_t n = 0;

        /* kprobe: a kprobe program must load (tracing, unless it was only
         * the trampoline that failed), attach, override, on a listed function. */
        if (p->kprobe_prog_error < 0 || p->findings[PROBE_TRACING].error == 0)
                kparts[n++] = PROBE_TRACING;
        kparts[n++] = PROBE_KPROBES;
        kparts[n++] = PROBE_OVERRIDE;
        kparts[n++] = PROBE_ERROR_INJECTION_LIST;
        derive_all(p, PROBE_BACKEND_KPROBE, kparts, n,
                   "kprobe programs attach and may call bpf_override_return on listed functions");

        /* fmod_ret: the LSM hooks are the broad case; listed functions alone
         * would do, but a kernel where those load and the hooks do not does
         * not exist in practice, so the hooks decide and explain. */
        if (p->findings[PROBE_FMOD_RET_LSM].error < 0 && p->findings[PROBE_FMOD_RET_LISTED].error == 0)
                derive_all(p, PROBE_BACKEND_FMOD_RET, (ProbeFeature[]) { PROBE_FMOD_RET_LISTED }, 1,
                           "fmod_ret programs load on listed functions (not on LSM hooks)");
        else
                derive_all(p, PROBE_BACKEND_FMOD_RET, (ProbeFeature[]) { PROBE_FMOD_RET_LSM }, 1,
                           p->findings[PROBE_FMOD_RET_LISTED].error == 0 ?
                           "fmod_ret programs load on LSM hooks and listed functions" :
                           "fmod_ret programs load on LSM hooks");

        k = &p->findings[PROBE_BACKEND_KPROBE];
        fm = &p->findings[PROBE_BACKEND_FMOD_RET];
        *inj = (ProbeFinding) {};
        if (k->error == 0 || fm->error == 0) {
                snprintf(inj->reason, sizeof(inj->reason), "%s",
                         k->error == 0 && fm->error == 0 ? "both backends work" :
                         k->error == 0 ? "the kprobe backend works" : "the fmod_ret backend works");
                return;
        }
        for (size_t j = 0; j < k->n_needs; j++)
                add_unique(inj->needs, &inj->n_needs, k->needs[j]);
        for (size_t j = 0; j < fm->n_needs; j++)
                add_unique(inj->needs, &inj->n_needs, fm->needs[j]);
        for (size_t j = 0; j < k->n_missing; j++)
                add_unique(inj->missing, &inj->n_missing, k->missing[j]);
        for (size_t j = 0; j < fm->n_missing; j++)
                add_unique(inj->missing, &inj->n_missing, fm->missing[j]);
        /* When the kernel refuses tracing programs, that is the first
         * reason; the kprobe backend may lack more than that. */
        if (p->findings[PROBE_TRACING].error < 0) {
                inj->error = p->findings[PROBE_TRACING].error;
                if (k->error < 0 && strncmp(k->reason, title_table[PROBE_TRACING],
                                            strlen(title_table[PROBE_TRACING])) != 0)
                        snprintf(inj->reason, sizeof(inj->reason), "%.280s; and the kprobe backend lacks %.160s",
                                 p->findings[PROBE_TRACING].reason, k->reason);
                else
                        snprintf(inj->reason, sizeof(inj->reason), "%s", p->findings[PROBE_TRACING].reason);
        } else {
                inj->error = fm->error;
                snprintf(inj->reason, sizeof(inj->reason), "neither backend works (kprobe: %.130s; fmod_ret: %.130s)",
                         k->reason, fm->reason);
        }
}

char *kernel_probe_describe(const KernelProbe *p, ProbeFeature f, char *buf, size_t n) {
        const ProbeFinding *x = &p->findings[f];
        size_t l;

        l = (size_t) snprintf(buf, n, "%s", x->reason);
        if (x->error == 0 || l >= n)
                return buf;
        if (x->n_missing > 0) {
                l += (size_t) snprintf(buf + l, n - l, " (missing");
                for (size_t i = 0; i < x->n_missing && l < n; i++)
                        l += (size_t) snprintf(buf + l, n - l, "%s %s", i ? "," : "", x->missing[i]);
                if (l < n)
                        (void) snprintf(buf + l, n - l, ")");
        } else if (!kconfig_readable(p->config) && x->n_needs > 0 && x->error != -EPERM) {
                l += (size_t) snprintf(buf + l, n - l, " (needs");
                for (size_t i = 0; i < x->n_needs && l < n; i++)
                        l += (size_t) snprintf(buf + l, n - l, "%s %s", i ? "," : "", x->needs[i]);
                if (l < n)
                        (void) snprintf(buf + l, n - l, "; the kernel configuration is not readable)");
        }
        return buf;
}

#define UNAVAILABLE_PREFIX "Injection is unavailable on this kernel: "

int kernel_probe_refuse_unavailable(const KernelProbe *p, InjectError *err) {
        char buf[640];

        /* The whole story if it fits, else its first part: 'injectctl caps'
         * tells the rest. */
        kernel_probe_describe(p, PROBE_INJECTION, buf, sizeof(buf));
        if (strlen(UNAVAILABLE_PREFIX) + strlen(buf) >= sizeof(err->message) &&
            p->findings[PROBE_TRACING].error < 0) {
                kernel_probe_describe(p, PROBE_TRACING, buf, sizeof(buf) - 32);
                strcat(buf, " (injectctl caps tells more)");
        }
        return inject_error_set(err, p->findings[PROBE_INJECTION].error ?: -EOPNOTSUPP, INJECT_ERROR_UNAVAILABLE,
                                UNAVAILABLE_PREFIX "%s", buf);
}

static void join_missing(const ProbeFinding *a, const ProbeFinding *b, char *buf, size_t n) {
        const char *v[PROBE_NEEDS_MAX * 2];
        size_t nv = 0, l = 0;

        for (size_t i = 0; i < a->n_missing; i++)
                add_unique(v, &nv, a->missing[i]);
        for (size_t i = 0; i < b->n_missing; i++)
                add_unique(v, &nv, b->missing[i]);
        buf[0] = 0;
        for (size_t i = 0; i < nv && l < n; i++)
                l += (size_t) snprintf(buf + l, n - l, "%s%s", i ? ", " : "", v[i]);
}

int kernel_probe_refuse_not_injectable(const KernelProbe *p, const FunctionTable *t, const char *function,
                                       InjectError *err) {
        const ProbeFinding *list = &p->findings[PROBE_ERROR_INJECTION_LIST];
        const ProbeFinding *override = &p->findings[PROBE_OVERRIDE];
        const HookAlternative *alt = hook_alternative(function);
        char why[320], instead[256] = "", missing[192];

        /* Suggest a hook only when it can be failed here and now. */
        if (alt && t && function_table_find(t, alt->hook) && kernel_probe_available(p, PROBE_BACKEND_FMOD_RET))
                snprintf(instead, sizeof(instead), ". The LSM hook %s covers the same operation (%s): fail it "
                         "instead", alt->hook, alt->operation);

        if (list->error == 0)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_NOT_INJECTABLE,
                                        "'%s' cannot be made to fail: it is not on this kernel's error-injection "
                                        "list (ALLOW_ERROR_INJECTION) and is not an LSM hook (security_*)%s",
                                        function, instead);

        join_missing(list, override, missing, sizeof(missing));
        if (missing[0])
                snprintf(why, sizeof(why), "this kernel has none: missing %s", missing);
        else if (!kconfig_readable(p->config) && list->n_needs > 0)
                snprintf(why, sizeof(why), "%.120s; it needs CONFIG_FUNCTION_ERROR_INJECTION and, for kprobe override, "
                         "CONFIG_BPF_KPROBE_OVERRIDE (the kernel configuration is not readable)", list->reason);
        else
                snprintf(why, sizeof(why), "%.250s", list->reason);
        return inject_error_set(err, -ENOENT, INJECT_ERROR_NOT_INJECTABLE,
                                "'%s' cannot be made to fail on this kernel: it is not an LSM hook (security_*), "
                                "and any other function must be on the kernel's error-injection list, but %s%s",
                                function, why, instead);
}

void kernel_probe_log(const KernelProbe *p) {
        char buf[640];

        if (kconfig_readable(p->config))
                log_info("Kernel %s: configuration read from '%s'%s%s.", p->release, p->config->source,
                         p->lockdown[0] ? ", lockdown " : "", p->lockdown);
        else
                log_info("Kernel %s: configuration not readable (%s)%s%s.", p->release,
                         p->config ? p->config->tried : "?", p->lockdown[0] ? ", lockdown " : "", p->lockdown);
        for (ProbeFeature f = 0; f < _PROBE_FEATURE_MAX; f++) {
                if (f == PROBE_INJECTION)
                        continue;
                log_info("Kernel: %s: %s: %s.", title_table[f], p->findings[f].error == 0 ? "yes" : "no",
                         kernel_probe_describe(p, f, buf, sizeof(buf)));
        }
        if (p->findings[PROBE_INJECTION].error < 0)
                log_warning("Injection is unavailable on this kernel: %s. Serving the capabilities and the "
                            "function list; every Inject is refused.",
                            kernel_probe_describe(p, PROBE_INJECTION, buf, sizeof(buf)));
}
