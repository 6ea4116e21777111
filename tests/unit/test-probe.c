/* SPDX-License-Identifier: MIT */
/* The kernel probe's reasoning, on findings built by hand for the three
 * kernels injectd meets: the full test kernel, one configured like
 * Debian's stock kernel, and one that refuses tracing BPF. Checks which
 * backends follow, which CONFIG options are named as missing, and the
 * refusals' messages, including the LSM hook offered instead. Then the
 * real probe on this machine, which must be self-consistent. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook-alternatives.h"
#include "inject-error.h"
#include "probe.h"
#include "test-util.h"

#define ASSERT_CONTAINS(haystack, needle)                                               \
        do {                                                                            \
                const char *_h = (haystack), *_n = (needle);                            \
                if (!_h || !strstr(_h, _n))                                             \
                        test_fail("%s: expected to contain '%s', seen '%s'", #haystack, \
                                  _n, _h ?: "(null)");                                  \
        } while (false)

#define ASSERT_NOT_CONTAINS(haystack, needle)                                           \
        do {                                                                            \
                const char *_h = (haystack), *_n = (needle);                            \
                if (_h && strstr(_h, _n))                                               \
                        test_fail("%s: expected not to contain '%s', seen '%s'", #haystack, \
                                  _n, _h);                                              \
        } while (false)

DEFINE_TRIVIAL_CLEANUP_FUNC(FunctionTable *, function_table_free);

static char dir[] = "/tmp/test-probe.XXXXXX";

/* The options the probe asks about, all set, then the overrides. */
static KernelConfig *config(const char *unset_list) {
        static const char *const all[] = {
                "CONFIG_BPF_SYSCALL", "CONFIG_DEBUG_INFO_BTF", "CONFIG_BPF_EVENTS", "CONFIG_BPF_JIT",
                "CONFIG_KPROBES", "CONFIG_KPROBE_EVENTS", "CONFIG_BPF_KPROBE_OVERRIDE",
                "CONFIG_FUNCTION_ERROR_INJECTION", "CONFIG_DEBUG_FS", "CONFIG_FUNCTION_TRACER", "CONFIG_SECURITY",
        };
        _cleanup_free_ char *path = NULL;
        KernelConfig *k = NULL;
        FILE *f;

        ASSERT_TRUE(asprintf(&path, "%s/config", dir) > 0);
        f = fopen(path, "we");
        ASSERT_NOT_NULL(f);
        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                if (unset_list && strstr(unset_list, all[i]))
                        fprintf(f, "# %s is not set\n", all[i]);
                else
                        fprintf(f, "%s=y\n", all[i]);
        }
        ASSERT_EQ(fclose(f), 0);
        ASSERT_RET(kconfig_load((const char *const[]) { path, NULL }, &k), 0);
        ASSERT_TRUE(kconfig_readable(k));
        (void) unlink(path);
        return k;
}

static KernelProbe *probe_new(KernelConfig *k) {
        KernelProbe *p = calloc(1, sizeof(*p));

        ASSERT_NOT_NULL(p);
        p->config = k;
        snprintf(p->release, sizeof(p->release), "6.1.0-test");
        return p;
}

static void add(FunctionTable *t, const char *name, FuncType type, bool listed, bool in_btf) {
        t->funcs = realloc(t->funcs, (t->n + 1) * sizeof(*t->funcs));
        ASSERT_NOT_NULL(t->funcs);
        t->funcs[t->n++] = (InjectableFunction) {
                .name = strdup(name), .type = type, .listed = listed, .in_btf = in_btf,
        };
}

static FunctionTable *table(bool with_list) {
        FunctionTable *t = calloc(1, sizeof(*t));

        ASSERT_NOT_NULL(t);
        add(t, "security_file_open", FUNC_TYPE_LSM, false, true);
        add(t, "security_file_permission", FUNC_TYPE_LSM, false, true);
        add(t, "security_sb_mount", FUNC_TYPE_LSM, false, true);
        if (with_list) {
                add(t, "__x64_sys_openat", FUNC_TYPE_ERRNO, true, true);
                add(t, "open_ctree", FUNC_TYPE_ERRNO, true, true);
                add(t, "should_failslab", FUNC_TYPE_ERRNO, true, true);
        } else
                t->list_error = -ENOENT;
        function_table_sort(t);
        return t;
}

static const char *missing_str(const KernelProbe *p, ProbeFeature f, char *buf, size_t n) {
        const ProbeFinding *x = kernel_probe_get(p, f);
        size_t l = 0;

        buf[0] = 0;
        for (size_t i = 0; i < x->n_missing; i++)
                l += (size_t) snprintf(buf + l, n - l, "%s%s", i ? " " : "", x->missing[i]);
        return buf;
}

static void test_full_kernel(void) {
        _cleanup_(kernel_probe_freep) KernelProbe *p = probe_new(config(NULL));
        _cleanup_(function_table_freep) FunctionTable *t = table(true);
        InjectError err = {};
        char buf[512];

        kernel_probe_set(p, PROBE_BPF, 0, "ok");
        kernel_probe_set(p, PROBE_BTF, 0, "ok");
        kernel_probe_set(p, PROBE_TRACING, 0, "ok");
        kernel_probe_set(p, PROBE_KPROBES, 0, "ok");
        kernel_probe_set(p, PROBE_OVERRIDE, 0, "ok");
        kernel_probe_set(p, PROBE_ERROR_INJECTION_LIST, 0, "3 functions");
        kernel_probe_set(p, PROBE_FMOD_RET_LSM, 0, "ok");
        kernel_probe_set(p, PROBE_FMOD_RET_LISTED, 0, "ok");

        ASSERT_TRUE(kernel_probe_available(p, PROBE_BACKEND_KPROBE));
        ASSERT_TRUE(kernel_probe_available(p, PROBE_BACKEND_FMOD_RET));
        ASSERT_TRUE(kernel_probe_available(p, PROBE_INJECTION));
        ASSERT_STREQ(kernel_probe_get(p, PROBE_INJECTION)->reason, "both backends work");
        ASSERT_EQ(kernel_probe_get(p, PROBE_BACKEND_KPROBE)->n_missing, 0);
        /* What a backend takes is listed even when it is there. */
        ASSERT_TRUE(kernel_probe_get(p, PROBE_BACKEND_KPROBE)->n_needs >= 4);
        ASSERT_STREQ(kernel_probe_describe(p, PROBE_BACKEND_KPROBE, buf, sizeof(buf)),
                     kernel_probe_get(p, PROBE_BACKEND_KPROBE)->reason);

        /* Not on the list, with a hook for the same operation. */
        ASSERT_RET(kernel_probe_refuse_not_injectable(p, t, "vfs_read", &err), -ENOENT);
        ASSERT_STREQ(err.name, INJECT_ERROR_NOT_INJECTABLE);
        ASSERT_CONTAINS(err.message, "'vfs_read' cannot be made to fail: it is not on this kernel's "
                        "error-injection list (ALLOW_ERROR_INJECTION) and is not an LSM hook (security_*)");
        ASSERT_CONTAINS(err.message, "The LSM hook security_file_permission covers the same operation");
        /* ... and without one. */
        err = (InjectError) {};
        ASSERT_RET(kernel_probe_refuse_not_injectable(p, t, "some_helper", &err), -ENOENT);
        ASSERT_NOT_CONTAINS(err.message, "LSM hook security_");
        ASSERT_NOT_CONTAINS(err.message, "CONFIG_");
}

/* Debian's stock configuration: no FUNCTION_ERROR_INJECTION, hence no
 * BPF_KPROBE_OVERRIDE; fmod_ret on the LSM hooks still works. */
static KernelProbe *stock(bool config_readable) {
        KernelProbe *p = probe_new(config_readable ?
                                   config("CONFIG_FUNCTION_ERROR_INJECTION CONFIG_BPF_KPROBE_OVERRIDE") :
                                   calloc(1, sizeof(KernelConfig)));

        kernel_probe_set(p, PROBE_BPF, 0, "ok");
        kernel_probe_set(p, PROBE_BTF, 0, "ok");
        kernel_probe_set(p, PROBE_TRACING, 0, "ok");
        kernel_probe_set(p, PROBE_KPROBES, 0, "ok");
        kernel_probe_set(p, PROBE_OVERRIDE, -EOPNOTSUPP, "the verifier does not offer bpf_override_return");
        kernel_probe_set(p, PROBE_ERROR_INJECTION_LIST, -ENOENT, "the kernel has no error-injection list");
        kernel_probe_set(p, PROBE_FMOD_RET_LSM, 0, "an fmod_ret program loaded against security_file_open");
        kernel_probe_set(p, PROBE_FMOD_RET_LISTED, -ENOENT, "no function is on an error-injection list");
        return p;
}

static void test_stock_kernel(void) {
        _cleanup_(kernel_probe_freep) KernelProbe *p = stock(true);
        _cleanup_(function_table_freep) FunctionTable *t = table(false);
        InjectError err = {};
        char buf[512];

        ASSERT_FALSE(kernel_probe_available(p, PROBE_BACKEND_KPROBE));
        ASSERT_TRUE(kernel_probe_available(p, PROBE_BACKEND_FMOD_RET));
        ASSERT_TRUE(kernel_probe_available(p, PROBE_INJECTION));
        ASSERT_STREQ(kernel_probe_get(p, PROBE_INJECTION)->reason, "the fmod_ret backend works");

        /* Only the options the configuration shows unset are "missing". */
        ASSERT_STREQ(missing_str(p, PROBE_OVERRIDE, buf, sizeof(buf)),
                     "CONFIG_BPF_KPROBE_OVERRIDE CONFIG_FUNCTION_ERROR_INJECTION");
        ASSERT_STREQ(missing_str(p, PROBE_ERROR_INJECTION_LIST, buf, sizeof(buf)), "CONFIG_FUNCTION_ERROR_INJECTION");
        ASSERT_STREQ(missing_str(p, PROBE_BACKEND_KPROBE, buf, sizeof(buf)),
                     "CONFIG_BPF_KPROBE_OVERRIDE CONFIG_FUNCTION_ERROR_INJECTION");
        ASSERT_EQ(kernel_probe_get(p, PROBE_FMOD_RET_LSM)->n_missing, 0);
        ASSERT_EQ(kernel_probe_get(p, PROBE_BACKEND_KPROBE)->error, -EOPNOTSUPP);
        /* The first missing part explains the backend. */
        ASSERT_CONTAINS(kernel_probe_describe(p, PROBE_BACKEND_KPROBE, buf, sizeof(buf)),
                        "bpf_override_return: the verifier does not offer bpf_override_return (missing "
                        "CONFIG_BPF_KPROBE_OVERRIDE, CONFIG_FUNCTION_ERROR_INJECTION)");

        /* The syscall is refused, naming the options and the hook. */
        ASSERT_RET(kernel_probe_refuse_not_injectable(p, t, "__x64_sys_openat", &err), -ENOENT);
        ASSERT_STREQ(err.name, INJECT_ERROR_NOT_INJECTABLE);
        ASSERT_CONTAINS(err.message, "'__x64_sys_openat' cannot be made to fail on this kernel");
        ASSERT_CONTAINS(err.message, "missing CONFIG_FUNCTION_ERROR_INJECTION, CONFIG_BPF_KPROBE_OVERRIDE");
        ASSERT_CONTAINS(err.message, "The LSM hook security_file_open covers the same operation (opening a file)");
        err = (InjectError) {};
        ASSERT_RET(kernel_probe_refuse_not_injectable(p, t, "open_ctree", &err), -ENOENT);
        ASSERT_CONTAINS(err.message, "CONFIG_FUNCTION_ERROR_INJECTION");
        ASSERT_CONTAINS(err.message, "security_sb_mount");
        /* A hook this kernel does not have is not offered. */
        err = (InjectError) {};
        ASSERT_RET(kernel_probe_refuse_not_injectable(p, t, "__x64_sys_kill", &err), -ENOENT);
        ASSERT_CONTAINS(err.message, "missing CONFIG_FUNCTION_ERROR_INJECTION");
        ASSERT_NOT_CONTAINS(err.message, "security_task_kill");
}

/* The same kernel when its configuration cannot be read: no option is
 * claimed missing; the refusal says what it would take. */
static void test_stock_kernel_unknown_config(void) {
        _cleanup_(kernel_probe_freep) KernelProbe *p = stock(false);
        _cleanup_(function_table_freep) FunctionTable *t = table(false);
        InjectError err = {};
        char buf[512];

        ASSERT_EQ(kernel_probe_get(p, PROBE_BACKEND_KPROBE)->n_missing, 0);
        ASSERT_CONTAINS(kernel_probe_describe(p, PROBE_OVERRIDE, buf, sizeof(buf)),
                        "(needs CONFIG_BPF_KPROBE_OVERRIDE, CONFIG_FUNCTION_ERROR_INJECTION, CONFIG_KPROBE_EVENTS; "
                        "the kernel configuration is not readable)");
        ASSERT_RET(kernel_probe_refuse_not_injectable(p, t, "__x64_sys_openat", &err), -ENOENT);
        ASSERT_CONTAINS(err.message, "CONFIG_FUNCTION_ERROR_INJECTION");
        ASSERT_CONTAINS(err.message, "CONFIG_BPF_KPROBE_OVERRIDE");
        ASSERT_CONTAINS(err.message, "not readable");
        ASSERT_CONTAINS(err.message, "security_file_open");
}

/* This development machine: no kprobes, and BPF trampolines refused. */
static void test_tracing_refused(void) {
        _cleanup_(kernel_probe_freep) KernelProbe *p =
                probe_new(config("CONFIG_KPROBES CONFIG_KPROBE_EVENTS CONFIG_BPF_KPROBE_OVERRIDE "
                                 "CONFIG_FUNCTION_ERROR_INJECTION"));
        _cleanup_(function_table_freep) FunctionTable *t = table(false);
        const char *eperm = "the kernel refuses BPF trampoline (fentry, fmod_ret) programs with EPERM";
        InjectError err = {};
        char buf[640];

        p->kprobe_prog_error = 0;
        p->trampoline_error = -EPERM;
        kernel_probe_set(p, PROBE_BPF, 0, "ok");
        kernel_probe_set(p, PROBE_BTF, 0, "ok");
        kernel_probe_set(p, PROBE_TRACING, -EPERM, "%s", eperm);
        kernel_probe_set(p, PROBE_KPROBES, -EOPNOTSUPP, "the kernel cannot attach kprobes");
        kernel_probe_set(p, PROBE_OVERRIDE, -EOPNOTSUPP, "the verifier does not offer bpf_override_return");
        kernel_probe_set(p, PROBE_ERROR_INJECTION_LIST, -ENOENT, "the kernel has no error-injection list");
        kernel_probe_set(p, PROBE_FMOD_RET_LSM, -EPERM, "%s", eperm);
        kernel_probe_set(p, PROBE_FMOD_RET_LISTED, -EPERM, "%s", eperm);

        ASSERT_FALSE(kernel_probe_available(p, PROBE_BACKEND_KPROBE));
        ASSERT_FALSE(kernel_probe_available(p, PROBE_BACKEND_FMOD_RET));
        ASSERT_FALSE(kernel_probe_available(p, PROBE_INJECTION));
        ASSERT_RET(kernel_probe_get(p, PROBE_INJECTION)->error, -EPERM);
        /* EPERM is not a configuration problem: tracing names no option. */
        ASSERT_EQ(kernel_probe_get(p, PROBE_TRACING)->n_missing, 0);
        /* The kprobe backend failed at kprobes, not at loading. */
        ASSERT_CONTAINS(kernel_probe_get(p, PROBE_BACKEND_KPROBE)->reason, "kprobes: the kernel cannot attach");
        ASSERT_CONTAINS(kernel_probe_get(p, PROBE_INJECTION)->reason, eperm);
        ASSERT_CONTAINS(kernel_probe_get(p, PROBE_INJECTION)->reason, "and the kprobe backend lacks kprobes");
        ASSERT_CONTAINS(kernel_probe_describe(p, PROBE_INJECTION, buf, sizeof(buf)), "CONFIG_KPROBES");

        ASSERT_RET(kernel_probe_refuse_unavailable(p, &err), -EPERM);
        ASSERT_STREQ(err.name, INJECT_ERROR_UNAVAILABLE);
        ASSERT_CONTAINS(err.message, "Injection is unavailable on this kernel: ");
        ASSERT_CONTAINS(err.message, eperm);
        ASSERT_TRUE(strlen(err.message) < sizeof(err.message) - 1);     /* not cut off */

        /* No hook is offered where fmod_ret cannot run either. */
        err = (InjectError) {};
        ASSERT_RET(kernel_probe_refuse_not_injectable(p, t, "__x64_sys_openat", &err), -ENOENT);
        ASSERT_NOT_CONTAINS(err.message, "security_file_open");
}

static void test_hook_alternatives(void) {
        static const char *const cases[][2] = {
                { "__x64_sys_openat", "security_file_open" },
                { "__x64_sys_open", "security_file_open" },
                { "__do_sys_openat2", "security_file_open" },
                { "__ia32_sys_open", "security_file_open" },
                { "__arm64_sys_openat", "security_file_open" },
                { "ksys_read", "security_file_permission" },
                { "__x64_sys_mount", "security_sb_mount" },
                { "open_ctree", "security_sb_mount" },
                { "__x64_sys_connect", "security_socket_connect" },
                { "__x64_sys_execve", "security_bprm_check" },
                { "__x64_sys_unlinkat", "security_inode_unlink" },
                { "vfs_write", "security_file_permission" },
                /* first and last of each table */
                { "__x64_sys_accept", "security_socket_accept" },
                { "__x64_sys_writev", "security_file_permission" },
                { "__sock_create", "security_socket_create" },
        };

        ASSERT_RET(hook_alternatives_check(), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const HookAlternative *a = hook_alternative(cases[i][0]);

                if (!a)
                        test_fail("hook_alternative(\"%s\"): expected %s, seen none", cases[i][0], cases[i][1]);
                ASSERT_STREQ(a->hook, cases[i][1]);
                ASSERT_TRUE(strlen(a->operation) > 0);
        }
        ASSERT_NULL(hook_alternative("should_failslab"));
        ASSERT_NULL(hook_alternative("__x64_sys_"));
        ASSERT_NULL(hook_alternative("__x64_sys_getppid"));
        ASSERT_NULL(hook_alternative("openat"));        /* a bare name is no syscall entry */
        ASSERT_NULL(hook_alternative(""));
        ASSERT_NULL(hook_alternative(NULL));
}

/* The real probe of this machine: whatever it finds must hang together. */
static void test_this_kernel(void) {
        _cleanup_(kernel_probe_freep) KernelProbe *p = NULL;
        _cleanup_(function_table_freep) FunctionTable *t = NULL;
        bool k, f;
        char buf[640];

        ASSERT_RET(function_table_load(NULL, NULL, &t), 0);
        ASSERT_RET(kernel_probe_run(t, &p), 0);
        for (ProbeFeature i = 0; i < _PROBE_FEATURE_MAX; i++) {
                const ProbeFinding *x = kernel_probe_get(p, i);

                ASSERT_TRUE(x->error <= 0);
                ASSERT_TRUE(strlen(x->reason) > 0);
                if (x->error == 0)
                        ASSERT_EQ(x->n_missing, 0);
                printf("%-28s %-3s %s\n", probe_feature_title(i), x->error == 0 ? "yes" : "no",
                       kernel_probe_describe(p, i, buf, sizeof(buf)));
        }
        k = kernel_probe_available(p, PROBE_BACKEND_KPROBE);
        f = kernel_probe_available(p, PROBE_BACKEND_FMOD_RET);
        ASSERT_EQ(kernel_probe_available(p, PROBE_INJECTION), k || f);
        if (k)
                ASSERT_TRUE(kernel_probe_available(p, PROBE_OVERRIDE) &&
                            kernel_probe_available(p, PROBE_ERROR_INJECTION_LIST));
        if (!kernel_probe_available(p, PROBE_BPF))
                ASSERT_FALSE(k || f);
}

int main(void) {
        ASSERT_NOT_NULL(mkdtemp(dir));
        test_hook_alternatives();
        test_full_kernel();
        test_stock_kernel();
        test_stock_kernel_unknown_config();
        test_tracing_refused();
        /* As root or not (then bpf() says EPERM), it must hang together. */
        test_this_kernel();
        (void) rmdir(dir);
        return 0;
}
