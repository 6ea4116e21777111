/* SPDX-License-Identifier: MIT */
#pragma once

/* The running kernel's build configuration, when the kernel or the
 * distribution publishes it: /proc/config.gz (CONFIG_IKCONFIG_PROC), else
 * /boot/config-$(uname -r) (Debian, Ubuntu), else
 * /lib/modules/$(uname -r)/config (Fedora). It lets a missing feature name
 * the options behind it instead of only an errno. Either file may be
 * plain text or gzip; zlib reads both. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cleanup.h"

typedef enum KconfigState {
        KCONFIG_UNKNOWN,        /* no configuration could be read */
        KCONFIG_UNSET,          /* "# CONFIG_X is not set", or absent */
        KCONFIG_YES,            /* =y */
        KCONFIG_MODULE,         /* =m */
        KCONFIG_VALUE,          /* a string or number */
} KconfigState;

typedef struct KconfigEntry {
        char *name;             /* "CONFIG_BPF_LSM" */
        char *value;            /* "y", "m", "\"lockdown,bpf\"", ... */
} KconfigEntry;

typedef struct KernelConfig {
        char *source;           /* the file read; NULL if none could be */
        char *tried;            /* "path (reason), path (reason)" when none could be */
        KconfigEntry *entries;  /* sorted by name */
        size_t n;
} KernelConfig;

KernelConfig *kconfig_free(KernelConfig *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(KernelConfig *, kconfig_free);

/* Reads the first readable file of paths (NULL-terminated; NULL: the
 * defaults above). Always returns a configuration, perhaps an unreadable
 * one (source NULL, tried saying why); fails only for -ENOMEM. */
int kconfig_load(const char *const *paths, KernelConfig **ret);

/* Adds the "CONFIG_X=..." lines of f (exposed for tests). */
int kconfig_parse(KernelConfig *k, FILE *f);

bool kconfig_readable(const KernelConfig *k);

/* The state of option (with its CONFIG_ prefix); ret_value, if set, gets
 * the raw value for KCONFIG_YES/MODULE/VALUE. */
KconfigState kconfig_get(const KernelConfig *k, const char *option, const char **ret_value);

/* Built in or a module. */
static inline bool kconfig_enabled(const KernelConfig *k, const char *option) {
        KconfigState s = kconfig_get(k, option, NULL);
        return s == KCONFIG_YES || s == KCONFIG_MODULE;
}
