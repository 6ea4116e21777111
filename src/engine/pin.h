/* SPDX-License-Identifier: MIT */
#pragma once

/* Pins in bpffs, a directory at a time. The pins that belong together (a
 * site's maps and link, the tagging programs and their roots map) are built
 * in a temporary directory and renamed into place, so a crash never leaves
 * half of them under the real name; engine_adopt() removes the leftovers,
 * which are named PIN_TMP_PREFIX<random>. */

#include <stddef.h>

#define PIN_TMP_PREFIX "tmp-"

typedef struct Pin {
        const char *name;
        int fd;                 /* a map, program or link */
} Pin;

/* 0 when the directory path would be created in is on bpffs, -ENOMEDIUM
 * when it is not. */
int pin_check_bpffs(const char *path);

/* "dir/name" into buf, or -ENAMETOOLONG. */
int pin_path(char *buf, size_t n, const char *dir, const char *name);

/* Pins pins[0..n) in that order in a new directory of pin_root, then
 * renames it to dir, which must not exist. On failure nothing is left, and
 * *ret_failed (when not NULL) names the pin that failed, or is NULL when
 * the directory itself did. */
int pin_dir_create(const char *pin_root, const char *dir, const Pin *pins, size_t n, const char **ret_failed);

/* Unpins everything in dir and removes it; a missing dir is not an error.
 * Once the last pin of a link is gone (and nobody holds an fd), the kernel
 * detaches its program. */
int pin_dir_remove(const char *dir);
