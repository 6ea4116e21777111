/* SPDX-License-Identifier: MIT */
#pragma once

/* Which kernel functions may be made to fail: the kernel's error-injection
 * list (ALLOW_ERROR_INJECTION, with its return type) plus the LSM hooks
 * (security_* returning int), which fmod_ret may override on any kernel. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct btf;

typedef enum FuncType {
        FUNC_TYPE_NULL,         /* fails by returning 0 */
        FUNC_TYPE_ERRNO,        /* fails by returning -errno */
        FUNC_TYPE_ERRNO_NULL,   /* -errno or 0 */
        FUNC_TYPE_TRUE,         /* fails by returning 1 */
        FUNC_TYPE_LSM,          /* an LSM hook: denies with -errno */
        _FUNC_TYPE_MAX,
} FuncType;

const char *func_type_to_string(FuncType t);
int func_type_from_string(const char *s);       /* FuncType, or -EINVAL */

typedef struct InjectableFunction {
        char *name;
        char *module;           /* NULL: vmlinux */
        FuncType type;
        bool listed;            /* on the error-injection list: kprobe override may serve it */
        bool in_btf;            /* described in vmlinux BTF: fmod_ret may attach */
} InjectableFunction;

typedef struct FunctionTable {
        InjectableFunction *funcs;      /* sorted by name */
        size_t n;
        int list_error;         /* 0, or why the error-injection list could not be read */
        int btf_error;          /* 0, or why vmlinux BTF could not be read */
} FunctionTable;

FunctionTable *function_table_free(FunctionTable *t);

/* Reads /sys/kernel/debug/error_injection/list (or list_path) and vmlinux
 * BTF (or btf). Either source may be missing; its error is recorded and the
 * table holds what the other gave. */
int function_table_load(const char *list_path, const struct btf *btf, FunctionTable **ret);

/* The two halves, exposed for tests. */
int function_table_parse_list(FunctionTable *t, FILE *f);
int function_table_add_btf(FunctionTable *t, const struct btf *btf);
void function_table_sort(FunctionTable *t);        /* by name, each (name, module) once */

const InjectableFunction *function_table_find(const FunctionTable *t, const char *name);

/* Checks that retval is a failure value for a function of this type. */
bool func_type_accepts(FuncType t, int64_t retval);
const char *func_type_range(FuncType t);         /* "[-4095, -1]" etc., for messages */
