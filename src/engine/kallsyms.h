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

/* addr as "name+0xoff" (" [module]" appended for a module). -ENOENT when
 * no symbol covers it: the caller shows it as unknown, never as the raw
 * address, which would give away where the kernel sits (KASLR). Truncates
 * to size. */
int kallsyms_format_addr(const Kallsyms *k, uint64_t addr, char *buf, size_t size);

/* The address of a vmlinux data symbol (kallsyms types d, D, b, B), read
 * from path (NULL: /proc/kallsyms). -ENXIO when there is none, -EPERM when
 * the kernel hides addresses. */
int kallsyms_data_symbol(const char *path, const char *name, uint64_t *ret);

/* The kernel's symbols as one reader keeps them: read on first use, and
 * read again when asked because something was not found (a module, or a
 * BPF program, loaded since), at most once per min_interval_usec. Reads
 * that fail are not retried sooner either: a hidden /proc/kallsyms costs a
 * whole read to find out. */
typedef struct KallsymsCache {
        const char *path;               /* NULL: /proc/kallsyms */
        uint64_t min_interval_usec;
        Kallsyms *k;                    /* the last table read, kept when a refresh fails */
        uint64_t last_read_usec;        /* when it was last tried; 0: never */
        int last_error;                 /* of that try, <= 0 */
} KallsymsCache;

void kallsyms_cache_done(KallsymsCache *c);
/* The table, reading it if it was never read. Returns 0 and sets *ret,
 * or the error of the last read (tried again once min_interval_usec has
 * passed since). now_usec: CLOCK_MONOTONIC. */
int kallsyms_cache_get(KallsymsCache *c, uint64_t now_usec, const Kallsyms **ret);
/* Reads the table again, unless it was read less than min_interval_usec
 * ago. Returns 1 when a new table replaced the old, 0 when it was too soon,
 * or a negative errno when the read failed (the old table stays). */
int kallsyms_cache_refresh(KallsymsCache *c, uint64_t now_usec);
