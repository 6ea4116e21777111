/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "kallsyms.h"

Kallsyms *kallsyms_free(Kallsyms *k) {
        if (!k)
                return NULL;
        for (size_t i = 0; i < k->n; i++) {
                free(k->syms[i].name);
                free(k->syms[i].module);
        }
        free(k->syms);
        free(k);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Kallsyms *, kallsyms_free);

static int ksym_cmp(const void *a, const void *b) {
        const KSym *x = a, *y = b;
        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int is_text(char type) {
        return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

int kallsyms_load(const char *path, Kallsyms **ret) {
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0, alloc = 0;
        int any_addr = 0;

        f = fopen(path ?: "/proc/kallsyms", "re");
        if (!f)
                return negative_errno();

        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;

        while (getline(&line, &cap, f) > 0) {
                char name[256], module[128] = "", type;
                unsigned long long addr;
                int n;

                n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, module);
                if (n < 3 || !is_text(type))
                        continue;
                if (addr)
                        any_addr = 1;
                if (k->n == alloc) {
                        size_t na = alloc ? alloc * 2 : 65536;
                        KSym *s = realloc(k->syms, na * sizeof(*s));
                        if (!s)
                                return -ENOMEM;
                        k->syms = s;
                        alloc = na;
                }
                k->syms[k->n] = (KSym) {
                        .addr = addr,
                        .name = strdup(name),
                        .module = n == 4 ? strdup(module) : NULL,
                };
                if (!k->syms[k->n].name || (n == 4 && !k->syms[k->n].module)) {
                        k->n++;
                        return -ENOMEM;
                }
                k->n++;
        }
        if (ferror(f))
                return -EIO;
        /* kptr_restrict shows every address as zero to those who may not see them. */
        if (k->n > 0 && !any_addr)
                return -EPERM;
        if (k->n == 0)
                return -ENODATA;

        qsort(k->syms, k->n, sizeof(KSym), ksym_cmp);
        for (size_t i = 0; i < k->n; i++) {
                size_t j = i + 1;
                while (j < k->n && k->syms[j].addr == k->syms[i].addr)
                        j++;
                k->syms[i].size = j < k->n ? k->syms[j].addr - k->syms[i].addr : 0;
        }

        *ret = TAKE_PTR(k);
        return 0;
}

const KSym *kallsyms_find(const Kallsyms *k, const char *name) {
        /* Prefer vmlinux over a module's static function of the same name. */
        const KSym *found = NULL;

        for (size_t i = 0; i < k->n; i++)
                if (strcmp(k->syms[i].name, name) == 0) {
                        if (!k->syms[i].module)
                                return &k->syms[i];
                        if (!found)
                                found = &k->syms[i];
                }
        return found;
}

const KSym *kallsyms_lookup_addr(const Kallsyms *k, uint64_t addr) {
        size_t lo = 0, hi = k->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (k->syms[mid].addr <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return NULL;
        const KSym *s = &k->syms[lo - 1];
        if (s->size && addr >= s->addr + s->size)
                return NULL;
        return s;
}

int kallsyms_format_addr(const Kallsyms *k, uint64_t addr, char *buf, size_t size) {
        const KSym *s = k ? kallsyms_lookup_addr(k, addr) : NULL;
        int n;

        /* Past the last symbol (BPF programs and trampolines, say) is no
         * symbol's. */
        if (!s || s->size == 0 || addr - s->addr >= s->size)
                return -ENOENT;
        if (s->module)
                n = snprintf(buf, size, "%s+0x%" PRIx64 " [%s]", s->name, addr - s->addr, s->module);
        else
                n = snprintf(buf, size, "%s+0x%" PRIx64, s->name, addr - s->addr);
        return n < 0 ? -EINVAL : 0;
}

int kallsyms_data_symbol(const char *path, const char *name, uint64_t *ret) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;

        f = fopen(path ?: "/proc/kallsyms", "re");
        if (!f)
                return negative_errno();
        while (getline(&line, &cap, f) > 0) {
                char sym[256], module[128], type;
                unsigned long long addr;
                int n;

                n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, sym, module);
                if (n != 3 || strcmp(sym, name) != 0 || !strchr("dDbB", type))
                        continue;
                if (addr == 0)
                        return -EPERM;  /* kptr_restrict hides it */
                *ret = addr;
                return 0;
        }
        return ferror(f) ? -EIO : -ENXIO;
}

void kallsyms_cache_done(KallsymsCache *c) {
        c->k = kallsyms_free(c->k);
        c->last_read_usec = 0;
        c->last_error = 0;
}

static bool kallsyms_cache_too_soon(const KallsymsCache *c, uint64_t now_usec) {
        return c->last_read_usec != 0 && now_usec - c->last_read_usec < c->min_interval_usec;
}

static int kallsyms_cache_read(KallsymsCache *c, uint64_t now_usec) {
        Kallsyms *k = NULL;
        int r;

        /* Never 0, which means "never read". */
        c->last_read_usec = now_usec ?: 1;
        r = kallsyms_load(c->path, &k);
        c->last_error = r < 0 ? r : 0;
        if (r < 0)
                return r;
        kallsyms_free(c->k);
        c->k = k;
        return 0;
}

int kallsyms_cache_get(KallsymsCache *c, uint64_t now_usec, const Kallsyms **ret) {
        int r;

        if (!c->k) {
                if (c->last_read_usec != 0 && kallsyms_cache_too_soon(c, now_usec))
                        return c->last_error ?: -ENODATA;
                r = kallsyms_cache_read(c, now_usec);
                if (r < 0)
                        return r;
        }
        *ret = c->k;
        return 0;
}

int kallsyms_cache_refresh(KallsymsCache *c, uint64_t now_usec) {
        int r;

        if (kallsyms_cache_too_soon(c, now_usec))
                return 0;
        r = kallsyms_cache_read(c, now_usec);
        return r < 0 ? r : 1;
}
