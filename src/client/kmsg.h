/* SPDX-License-Identifier: MIT */
#pragma once

/* The kernel log as sweep reads it: the records of /dev/kmsg that say the
 * kernel itself went wrong (a WARN, a BUG, an oops, a hung task...), told
 * apart from everything else it logs. */

#include <stddef.h>

/* Opens /dev/kmsg positioned after the last record, so only what comes
 * later is read. -EPERM when kernel.dmesg_restrict hides it from us. */
int kmsg_open(int *ret_fd);

/* Which kind of trouble one /dev/kmsg record reports ("warning", "bug",
 * "oops", "hung-task", "stall", "sanitizer"), or NULL for a record that is
 * fine, malformed, or not from the kernel: messages written to /dev/kmsg
 * by user space carry a non-zero facility and are never trouble. When not
 * NULL, *ret_message and *ret_len give the message text. */
const char *kmsg_record_trouble(const char *record, size_t size, const char **ret_message, size_t *ret_len);

/* Calls fn for each troubling record available now on fd (non-blocking)
 * and returns how many there were, or a negative errno. Records the
 * kernel overwrote before we read them are skipped. */
int kmsg_drain(int fd, void (*fn)(const char *kind, const char *message, size_t len, void *userdata), void *userdata);
