/* SPDX-License-Identifier: MIT */
#pragma once

/* Kernel text symbols with their sizes, for caller filters: a caller matches
 * when a return address on the kernel stack falls inside [addr, addr+size). */

#include <stddef.h>
#include <stdint.h>

typedef struct KSym {
        uint64_t addr;
        uint64_t size;          /* distance to the next symbol; 0 for the last */
        char *name;
        char *module;           /* NULL for vmlinux */
} KSym;

typedef struct Kallsyms {
        KSym *syms;             /* sorted by address */
        size_t n;
} Kallsyms;

/* path NULL means /proc/kallsyms. -EPERM when the kernel hides addresses. */
int kallsyms_load(const char *path, Kallsyms **ret);
Kallsyms *kallsyms_free(Kallsyms *k);

const KSym *kallsyms_find(const Kallsyms *k, const char *name);
const KSym *kallsyms_lookup_addr(const Kallsyms *k, uint64_t addr);

/* addr as "name+0xoff" (" [module]" appended for a module), or "0xaddr"
 * when no symbol covers it (k NULL: kallsyms unreadable). Truncates to
 * size. */
int kallsyms_format_addr(const Kallsyms *k, uint64_t addr, char *buf, size_t size);

/* The address of a vmlinux data symbol (kallsyms types d, D, b, B), read
 * from path (NULL: /proc/kallsyms). -ENXIO when there is none, -EPERM when
 * the kernel hides addresses. */
int kallsyms_data_symbol(const char *path, const char *name, uint64_t *ret);
