/* SPDX-License-Identifier: MIT */
#pragma once

/* Which LSM hook covers the same operation as a function that cannot be
 * made to fail on this kernel. On a kernel without
 * CONFIG_FUNCTION_ERROR_INJECTION (Debian's stock one) the syscalls and
 * open_ctree are out of reach, but fmod_ret can still deny the operation at
 * its security_* hook, e.g. openat(2) at security_file_open. The hook
 * denies with an errno before the operation runs, which is what most tests
 * of an error path want; it is not the same call, so the refusal says so. */

typedef struct HookAlternative {
        const char *hook;       /* "security_file_open" */
        const char *operation;  /* "opening a file", for messages */
} HookAlternative;

/* The alternative for function, or NULL if the table has none. Syscall
 * entry points are matched by their syscall name whatever the prefix
 * (__x64_sys_, __ia32_sys_, __se_sys_, __do_sys_, __arm64_sys_, ksys_,
 * sys_), so "__x64_sys_openat" and "__do_sys_openat" both find openat. */
const HookAlternative *hook_alternative(const char *function);

/* 0 if the tables are sorted (lookups rely on it), else -EINVAL; for the
 * unit test. */
int hook_alternatives_check(void);
