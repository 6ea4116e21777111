/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "cleanup.h"
#include "functions.h"

#define ERROR_INJECTION_LIST "/sys/kernel/debug/error_injection/list"

static const char *const func_type_table[_FUNC_TYPE_MAX] = {
        [FUNC_TYPE_NULL] = "NULL",
        [FUNC_TYPE_ERRNO] = "ERRNO",
        [FUNC_TYPE_ERRNO_NULL] = "ERRNO_NULL",
        [FUNC_TYPE_TRUE] = "TRUE",
        [FUNC_TYPE_LSM] = "LSM",
};

const char *func_type_to_string(FuncType t) {
        return t >= 0 && t < _FUNC_TYPE_MAX ? func_type_table[t] : NULL;
}

int func_type_from_string(const char *s) {
        for (int i = 0; i < _FUNC_TYPE_MAX; i++)
                if (strcmp(func_type_table[i], s) == 0)
                        return i;
        return -EINVAL;
}

bool func_type_accepts(FuncType t, int64_t v) {
        switch (t) {
        case FUNC_TYPE_NULL:
                return v == 0;
        case FUNC_TYPE_TRUE:
                return v == 1;
        case FUNC_TYPE_ERRNO_NULL:
                return v >= -4095 && v <= 0;
        case FUNC_TYPE_ERRNO:
        case FUNC_TYPE_LSM:
                return v >= -4095 && v <= -1;
        default:
                return false;
        }
}

const char *func_type_range(FuncType t) {
        switch (t) {
        case FUNC_TYPE_NULL:
                return "0 (NULL)";
        case FUNC_TYPE_TRUE:
                return "1 (true)";
        case FUNC_TYPE_ERRNO_NULL:
                return "-errno in [-4095, -1], or 0";
        default:
                return "-errno in [-4095, -1]";
        }
}

FunctionTable *function_table_free(FunctionTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n; i++) {
                free(t->funcs[i].name);
                free(t->funcs[i].module);
        }
        free(t->funcs);
        free(t);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(FunctionTable *, function_table_free);

static int table_add(FunctionTable *t, const char *name, const char *module, FuncType type, bool listed, bool in_btf) {
        InjectableFunction *f;

        /* Capacity is 64, then doubles whenever n reaches a power of two. */
        if (t->n == 0 || (t->n >= 64 && (t->n & (t->n - 1)) == 0)) {
                f = realloc(t->funcs, (t->n ? t->n * 2 : 64) * sizeof(*f));
                if (!f)
                        return -ENOMEM;
                t->funcs = f;
        }
        f = &t->funcs[t->n];
        *f = (InjectableFunction) { .type = type, .listed = listed, .in_btf = in_btf };
        f->name = strdup(name);
        f->module = module ? strdup(module) : NULL;
        if (!f->name || (module && !f->module)) {
                free(f->name);
                free(f->module);
                return -ENOMEM;
        }
        t->n++;
        return 0;
}

/* Lines read "func\tTYPE" or "func [module]\tTYPE". */
int function_table_parse_list(FunctionTable *t, FILE *f) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        int r;

        while (getline(&line, &cap, f) > 0) {
                char name[256], module[128], type[32];
                int n, ft;

                if (sscanf(line, "%255s [%127[^]]] %31s", name, module, type) == 3)
                        n = 3;
                else if (sscanf(line, "%255s %31s", name, type) == 2)
                        n = 2;
                else
                        continue;
                ft = func_type_from_string(type);
                if (ft < 0 || ft == FUNC_TYPE_LSM)
                        continue;       /* a type this build does not know: not ours to guess */
                r = table_add(t, name, n == 3 ? module : NULL, ft, true, false);
                if (r < 0)
                        return r;
        }
        return ferror(f) ? -EIO : 0;
}

static int cmp_name(const void *a, const void *b) {
        const InjectableFunction *x = a, *y = b;
        return strcmp(x->name, y->name);
}

static bool same_module(const InjectableFunction *x, const InjectableFunction *y) {
        return x->module == y->module || (x->module && y->module && strcmp(x->module, y->module) == 0);
}

void function_table_sort(FunctionTable *t) {
        size_t k = 0;

        if (t->n <= 1)
                return;
        qsort(t->funcs, t->n, sizeof(*t->funcs), cmp_name);
        /* One entry per function: the list names a function once per
         * ALLOW_ERROR_INJECTION, and a system call has two (its x64 and
         * ia32 entry points, one address that the list prints by one name,
         * __do_sys_NAME). */
        for (size_t i = 0; i < t->n; i++) {
                InjectableFunction *f = &t->funcs[i], *kept = NULL;

                for (size_t j = k; j > 0 && strcmp(t->funcs[j - 1].name, f->name) == 0 && !kept; j--)
                        if (same_module(&t->funcs[j - 1], f))
                                kept = &t->funcs[j - 1];
                if (kept) {
                        kept->listed |= f->listed;
                        kept->in_btf |= f->in_btf;
                        free(f->name);
                        free(f->module);
                        continue;
                }
                t->funcs[k++] = *f;
        }
        t->n = k;
}

const InjectableFunction *function_table_find(const FunctionTable *t, const char *name) {
        InjectableFunction key = { .name = (char *) name };

        if (!t->n)
                return NULL;
        return bsearch(&key, t->funcs, t->n, sizeof(*t->funcs), cmp_name);
}

static bool returns_int(const struct btf *btf, const struct btf_type *func) {
        const struct btf_type *proto, *rt;

        proto = btf__type_by_id(btf, func->type);
        if (!proto || !btf_is_func_proto(proto) || !proto->type)
                return false;
        rt = btf__type_by_id(btf, proto->type);
        while (rt && (btf_is_typedef(rt) || btf_is_mod(rt)))
                rt = btf__type_by_id(btf, rt->type);
        return rt && btf_is_int(rt) && rt->size == 4 && (btf_int_encoding(rt) & BTF_INT_SIGNED);
}

/* Marks listed functions that fmod_ret can reach, and adds the LSM hooks. */
int function_table_add_btf(FunctionTable *t, const struct btf *btf) {
        uint32_t n = btf__type_cnt(btf);
        size_t listed;
        int r;

        function_table_sort(t);
        listed = t->n;
        for (uint32_t id = 1; id < n; id++) {
                const struct btf_type *ty = btf__type_by_id(btf, id);
                const char *name;
                InjectableFunction key, *f;

                if (!btf_is_func(ty))
                        continue;
                name = btf__name_by_offset(btf, ty->name_off);
                if (!name || !*name)
                        continue;

                key.name = (char *) name;
                f = listed ? bsearch(&key, t->funcs, listed, sizeof(*f), cmp_name) : NULL;
                if (f) {
                        f->in_btf = true;
                        continue;
                }
                if (strncmp(name, "security_", 9) != 0 || !returns_int(btf, ty))
                        continue;
                r = table_add(t, name, NULL, FUNC_TYPE_LSM, false, true);
                if (r < 0)
                        return r;
        }
        function_table_sort(t);
        return 0;
}

int function_table_load(const char *list_path, const struct btf *btf, FunctionTable **ret) {
        _cleanup_(function_table_freep) FunctionTable *t = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        struct btf *own_btf = NULL;
        int r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;

        f = fopen(list_path ?: ERROR_INJECTION_LIST, "re");
        if (!f)
                t->list_error = negative_errno();
        else {
                r = function_table_parse_list(t, f);
                if (r < 0)
                        t->list_error = r;
        }

        if (!btf) {
                own_btf = btf__load_vmlinux_btf();
                if (!own_btf)
                        t->btf_error = negative_errno();
                btf = own_btf;
        }
        if (btf) {
                r = function_table_add_btf(t, btf);
                btf__free(own_btf);
                if (r < 0)
                        return r;
        } else
                function_table_sort(t);

        *ret = TAKE_PTR(t);
        return 0;
}
