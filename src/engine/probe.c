/* SPDX-License-Identifier: MIT */
/* The probes: each finding comes from trying the thing itself. What the
 * findings mean (the backends derived from them, their descriptions, the
 * refusals and the log) is probe-findings.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "errno-name.h"
#include "probe.h"

#define ERROR_INJECTION_LIST "/sys/kernel/debug/error_injection/list"
#define DEBUGFS_DIR "/sys/kernel/debug"
#define DEBUGFS_MAGIC_NUMBER 0x64626720
#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe/type"
#define LOCKDOWN_FILE "/sys/kernel/security/lockdown"
/* The hook every probe attaches to: present in every kernel with
 * CONFIG_SECURITY, and the one the stock-kernel fallback is about. */
#define PROBE_LSM_HOOK "security_file_open"

#define CAP_BIT_SYS_ADMIN 21
#define CAP_BIT_PERFMON 38
#define CAP_BIT_BPF 39

static void set(KernelProbe *p, ProbeFeature f, int error, const char *fmt, ...) _printf_(4, 5);
static void set(KernelProbe *p, ProbeFeature f, int error, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        kernel_probe_record(p, f, error, fmt, ap);
        va_end(ap);
}

KernelProbe *kernel_probe_free(KernelProbe *p) {
        if (!p)
                return NULL;
        kconfig_free(p->config);
        free(p);
        return NULL;
}

static bool have_cap(unsigned bit) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;

        if (!f)
                return true;    /* unknown: do not blame ourselves */
        while (getline(&line, &cap, f) > 0) {
                unsigned long long v;

                if (sscanf(line, "CapEff: %llx", &v) == 1)
                        return (v >> bit) & 1;
        }
        return true;
}

/* The lockdown mode from securityfs; without securityfs mounted, the
 * least it can be: the boot parameter, else the configured default
 * (either can only be raised at run time). */
static void read_lockdown(KernelProbe *p) {
        static const char *const forced[][2] = {
                { "CONFIG_LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY", "confidentiality" },
                { "CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY", "integrity" },
                { "CONFIG_LOCK_DOWN_KERNEL_FORCE_NONE", "none" },
        };
        _cleanup_fclose_ FILE *f = fopen(LOCKDOWN_FILE, "re");
        _cleanup_fclose_ FILE *c = NULL;
        char buf[128], *a, *b;
        _cleanup_free_ char *cmdline = NULL;
        size_t cap = 0;

        if (f && fgets(buf, sizeof(buf), f)) {
                a = strchr(buf, '[');
                b = a ? strchr(a, ']') : NULL;
                if (a && b && (size_t) (b - a - 1) < sizeof(p->lockdown)) {
                        snprintf(p->lockdown, sizeof(p->lockdown), "%.*s", (int) (b - a - 1), a + 1);
                        snprintf(p->lockdown_source, sizeof(p->lockdown_source), "%s", LOCKDOWN_FILE);
                        p->lockdown_exact = true;
                        return;
                }
        }
        if (!kconfig_enabled(p->config, "CONFIG_SECURITY_LOCKDOWN_LSM"))
                return;
        c = fopen("/proc/cmdline", "re");
        if (c && getline(&cmdline, &cap, c) > 0)
                for (char *w = strtok(cmdline, " \n"); w; w = strtok(NULL, " \n"))
                        if (strcmp(w, "lockdown=integrity") == 0 || strcmp(w, "lockdown=confidentiality") == 0) {
                                snprintf(p->lockdown, sizeof(p->lockdown), "%s", w + 9);
                                snprintf(p->lockdown_source, sizeof(p->lockdown_source),
                                         "the lockdown= boot parameter");
                                return;
                        }
        for (size_t i = 0; i < ELEMENTSOF(forced); i++)
                if (kconfig_enabled(p->config, forced[i][0])) {
                        snprintf(p->lockdown, sizeof(p->lockdown), "%s", forced[i][1]);
                        snprintf(p->lockdown_source, sizeof(p->lockdown_source), "%s", forced[i][0]);
                        return;
                }
}

static int load(enum bpf_prog_type type, const struct bpf_insn *insns, size_t n, enum bpf_attach_type attach,
                int btf_id, char *log, size_t log_size) {
        LIBBPF_OPTS(bpf_prog_load_opts, o,
                    .expected_attach_type = attach,
                    .attach_btf_id = btf_id,
                    .log_buf = log,
                    .log_size = log ? log_size : 0,
                    .log_level = log ? 1 : 0);
        int fd;

        if (log && log_size)
                log[0] = 0;
        fd = bpf_prog_load(type, NULL, "GPL", insns, n, &o);
        if (fd < 0)
                return fd == -1 ? negative_errno() : fd;
        close(fd);
        return 0;
}

static const struct bpf_insn ret0[] = {
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
        { .code = BPF_JMP | BPF_EXIT },
};

/* Why the kernel said EPERM to a program that CAP_BPF and CAP_PERFMON
 * should be able to load. */
static const char *eperm_cause(const KernelProbe *p, char *buf, size_t n) {
        if (!have_cap(CAP_BIT_BPF) && !have_cap(CAP_BIT_SYS_ADMIN))
                return "injectd lacks CAP_BPF";
        if (!have_cap(CAP_BIT_PERFMON) && !have_cap(CAP_BIT_SYS_ADMIN))
                return "injectd lacks CAP_PERFMON";
        if (strcmp(p->lockdown, "confidentiality") == 0)
                return "kernel lockdown is in 'confidentiality' mode, which refuses tracing BPF";
        if (p->lockdown[0] && p->lockdown_exact)
                snprintf(buf, n, "kernel lockdown is '%s', which allows tracing BPF, so another security "
                         "policy (an LSM, or a kernel patch) refuses it", p->lockdown);
        else if (p->lockdown[0])
                snprintf(buf, n, "kernel lockdown is at least '%s' (%s), which allows tracing BPF unless "
                         "raised to 'confidentiality'; else another security policy refuses it",
                         p->lockdown, p->lockdown_source);
        else
                snprintf(buf, n, "lockdown state unknown (%s unreadable); a security policy (lockdown, an LSM, "
                         "or a kernel patch) refuses it", LOCKDOWN_FILE);
        return buf;
}

static void probe_bpf(KernelProbe *p) {
        char why[300];
        int r;

        r = load(BPF_PROG_TYPE_SOCKET_FILTER, ret0, ELEMENTSOF(ret0), 0, 0, NULL, 0);
        if (r == 0)
                set(p, PROBE_BPF, 0, "bpf() loads programs (a socket filter loaded)");
        else if (r == -ENOSYS)
                set(p, PROBE_BPF, r, "the kernel has no bpf() system call");
        else if (r == -EPERM)
                set(p, PROBE_BPF, r, "bpf() refuses even a socket filter (EPERM): %s",
                    eperm_cause(p, why, sizeof(why)));
        else
                set(p, PROBE_BPF, r, "bpf() cannot load a socket filter: %s", strerror(-r));
}

static void probe_tracing(KernelProbe *p, const struct btf *btf, int hook_id) {
        char why[300];
        int k, t;

        k = p->kprobe_prog_error = load(BPF_PROG_TYPE_KPROBE, ret0, ELEMENTSOF(ret0), 0, 0, NULL, 0);
        if (!btf || hook_id <= 0)
                t = p->trampoline_error = -ENOENT;
        else
                t = p->trampoline_error = load(BPF_PROG_TYPE_TRACING, ret0, ELEMENTSOF(ret0), BPF_TRACE_FENTRY,
                                               hook_id, NULL, 0);

        if (k == -EPERM || t == -EPERM)
                set(p, PROBE_TRACING, -EPERM, "the kernel refuses %s programs with EPERM: %s",
                    k == -EPERM && t == -EPERM ? "kprobe and BPF trampoline (fentry, fmod_ret)" :
                    k == -EPERM ? "kprobe" : "BPF trampoline (fentry, fmod_ret)",
                    eperm_cause(p, why, sizeof(why)));
        else if (k < 0)
                set(p, PROBE_TRACING, k, "a kprobe program does not load: %s", strerror(-k));
        else if (!btf)
                set(p, PROBE_TRACING, 0, "kprobe programs load; BPF trampolines untested without BTF");
        else if (hook_id <= 0)
                set(p, PROBE_TRACING, 0, "kprobe programs load; BPF trampolines untested: no %s in BTF",
                    PROBE_LSM_HOOK);
        else if (t < 0)
                set(p, PROBE_TRACING, t, "kprobe programs load, but an fentry program on %s does not: %s",
                    PROBE_LSM_HOOK, strerror(-t));
        else
                set(p, PROBE_TRACING, 0, "kprobe and BPF trampoline (fentry) programs load");
}

static void probe_kprobes(KernelProbe *p) {
        static const char *const events[] = {
                "/sys/kernel/tracing/kprobe_events",
                "/sys/kernel/debug/tracing/kprobe_events",
        };

        if (access(KPROBE_PMU, F_OK) == 0) {
                set(p, PROBE_KPROBES, 0, "kprobes can be attached (the kprobe perf PMU exists)");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(events); i++)
                if (access(events[i], F_OK) == 0) {
                        set(p, PROBE_KPROBES, 0, "kprobes can be attached (through %s)", events[i]);
                        return;
                }
        set(p, PROBE_KPROBES, -EOPNOTSUPP, "the kernel cannot attach kprobes (no kprobe PMU, no kprobe_events)");
}

/* libbpf_probe_bpf_helper() of libbpf 1.1 takes "program of this type
 * cannot use helper", the verifier's wording since Linux 6.4, for "supported";
 * ask the verifier ourselves and read every wording. */
static void probe_override(KernelProbe *p) {
        static const struct bpf_insn insns[] = {
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0 },
                { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_override_return },
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
                { .code = BPF_JMP | BPF_EXIT },
        };
        char log[4096], *line;
        int r;

        if (p->kprobe_prog_error < 0) {
                set(p, PROBE_OVERRIDE, p->kprobe_prog_error, "untested: kprobe programs do not load (%s)",
                    strerror(-p->kprobe_prog_error));
                return;
        }
        r = load(BPF_PROG_TYPE_KPROBE, insns, ELEMENTSOF(insns), 0, 0, log, sizeof(log));
        if (r == 0) {
                set(p, PROBE_OVERRIDE, 0, "the verifier accepts bpf_override_return in a kprobe program");
                return;
        }
        line = strstr(log, "unknown func");
        if (!line)
                line = strstr(log, "invalid func");
        if (!line)
                line = strstr(log, "cannot use helper");
        if (line) {
                line[strcspn(line, "\n")] = 0;
                set(p, PROBE_OVERRIDE, -EOPNOTSUPP, "the verifier does not offer bpf_override_return to kprobe "
                    "programs (\"%.80s\")", line);
        } else
                set(p, PROBE_OVERRIDE, r, "a kprobe program calling bpf_override_return does not load: %s",
                    strerror(-r));
}

static bool debugfs_mounted(void) {
        struct statfs s;

        return statfs(DEBUGFS_DIR, &s) >= 0 && (unsigned long) s.f_type == DEBUGFS_MAGIC_NUMBER;
}

static void probe_list(KernelProbe *p, const FunctionTable *t) {
        int e = t ? t->list_error : -ENOENT;

        if (e == 0)
                set(p, PROBE_ERROR_INJECTION_LIST, 0, "%zu functions on %s", p->n_listed, ERROR_INJECTION_LIST);
        else if (e == -ENOENT && !debugfs_mounted() &&
                 kconfig_get(p->config, "CONFIG_FUNCTION_ERROR_INJECTION", NULL) != KCONFIG_UNSET) {
                /* Not a configuration problem: nothing is "missing". */
                set(p, PROBE_ERROR_INJECTION_LIST, e, "debugfs is not mounted at %s, where the list is", DEBUGFS_DIR);
                p->findings[PROBE_ERROR_INJECTION_LIST].n_missing = 0;
        } else if (e == -ENOENT)
                set(p, PROBE_ERROR_INJECTION_LIST, e, "the kernel has no error-injection list (no %s)",
                    ERROR_INJECTION_LIST);
        else
                set(p, PROBE_ERROR_INJECTION_LIST, e, "%s cannot be read: %s", ERROR_INJECTION_LIST, strerror(-e));
}

static void probe_fmod_ret(KernelProbe *p, ProbeFeature f, const struct btf *btf, const char *target, int id) {
        int r;

        if (!btf) {
                set(p, f, p->findings[PROBE_BTF].error, "untested: no vmlinux BTF to attach by");
                return;
        }
        if (p->trampoline_error == -EPERM) {
                set(p, f, -EPERM, "%s", p->findings[PROBE_TRACING].reason);
                return;
        }
        if (!target || id <= 0) {
                if (f == PROBE_FMOD_RET_LISTED)
                        set(p, f, p->n_listed ? -ENOENT : p->findings[PROBE_ERROR_INJECTION_LIST].error ?: -ENOENT,
                            p->n_listed ? "no listed function is in vmlinux BTF" :
                                          "no function is on an error-injection list");
                else
                        set(p, f, -ENOENT, "no %s in vmlinux BTF", PROBE_LSM_HOOK);
                return;
        }
        r = load(BPF_PROG_TYPE_TRACING, ret0, ELEMENTSOF(ret0), BPF_MODIFY_RETURN, id, NULL, 0);
        if (r == 0)
                set(p, f, 0, "an fmod_ret program loaded against %s", target);
        else
                set(p, f, r, "an fmod_ret program does not load against %s: %s", target, strerror(-r));
}

/* A listed function fmod_ret can reach, preferring a well-known one. */
static const char *pick_listed(const FunctionTable *t) {
        const InjectableFunction *f;

        if (!t)
                return NULL;
        f = function_table_find(t, "should_failslab");
        if (f && f->listed && f->in_btf)
                return f->name;
        for (size_t i = 0; i < t->n; i++)
                if (t->funcs[i].listed && t->funcs[i].in_btf && !t->funcs[i].module &&
                    t->funcs[i].type != FUNC_TYPE_NULL)
                        return t->funcs[i].name;
        return NULL;
}

int kernel_probe_run(const FunctionTable *t, KernelProbe **ret) {
        _cleanup_(kernel_probe_freep) KernelProbe *p = NULL;
        struct btf *btf;
        const char *listed;
        struct utsname u;
        int hook_id = -ENOENT, listed_id = -ENOENT, r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        r = kconfig_load(NULL, &p->config);
        if (r < 0)
                return r;
        if (uname(&u) >= 0)
                snprintf(p->release, sizeof(p->release), "%s", u.release);
        read_lockdown(p);
        for (size_t i = 0; t && i < t->n; i++) {
                if (t->funcs[i].listed)
                        p->n_listed++;
                if (t->funcs[i].type == FUNC_TYPE_LSM)
                        p->n_lsm_hooks++;
        }

        probe_bpf(p);

        btf = btf__load_vmlinux_btf();
        if (btf) {
                set(p, PROBE_BTF, 0, "vmlinux BTF is readable (%u types)", btf__type_cnt(btf));
                hook_id = btf__find_by_name_kind(btf, PROBE_LSM_HOOK, BTF_KIND_FUNC);
        } else {
                r = negative_errno();
                set(p, PROBE_BTF, r, "vmlinux BTF cannot be read (/sys/kernel/btf/vmlinux): %s", strerror(-r));
        }
        listed = pick_listed(t);
        if (btf && listed)
                listed_id = btf__find_by_name_kind(btf, listed, BTF_KIND_FUNC);

        probe_tracing(p, btf, hook_id);
        probe_kprobes(p);
        probe_override(p);
        probe_list(p, t);
        probe_fmod_ret(p, PROBE_FMOD_RET_LSM, btf, hook_id > 0 ? PROBE_LSM_HOOK : NULL, hook_id);
        probe_fmod_ret(p, PROBE_FMOD_RET_LISTED, btf, listed, listed_id);
        btf__free(btf);

        kernel_probe_derive(p);
        *ret = TAKE_PTR(p);
        return 0;
}
