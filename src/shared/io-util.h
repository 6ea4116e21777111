/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>
#include <sys/types.h>

/* read(2), retried when a signal interrupts it: the bytes read (0 at end
 * of file), or a negative errno. */
ssize_t read_retry(int fd, void *buf, size_t n);

/* The start of a small file (sysfs, procfs, a /proc/PID map): what one
 * read gives, at most size - 1 bytes, NUL-terminated in buf (size > 0).
 * 0, or a negative errno with buf "". */
int read_small_file(const char *path, char *buf, size_t size);

/* The same, cut at the first newline: a one-line sysfs or procfs file's
 * value. */
int read_first_line(const char *path, char *buf, size_t size);

/* Writes a new file beside path (path.XXXXXX, mode 0666 less the umask),
 * fills it through fill(f, userdata), and renames it over path. So a
 * reader finds the last whole file, never half of one, and whatever path
 * names now (a symlink another user planted in /tmp, say) is replaced, not
 * followed. fill returns 0 or a negative errno. 0, or a negative errno,
 * with nothing left beside path. */
int file_replace(const char *path, int (*fill)(FILE *f, void *userdata), void *userdata);
