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

/* The kind of trouble a kernel message reports, as kmsg_record_trouble()
 * does for a whole record; NULL: none. */
const char *kmsg_message_trouble(const char *msg, size_t len);

/* Calls fn for every record the kernel itself logged available now on fd
 * (non-blocking), in order, with its message; returns how many, or a
 * negative errno. For readers of whole reports (explore), whose lines
 * are records of their own. */
int kmsg_drain_kernel(int fd, void (*fn)(const char *message, size_t len, void *userdata), void *userdata);

/* Calls fn for each troubling record available now on fd (non-blocking)
 * and returns how many there were, or a negative errno. Records the
 * kernel overwrote before we read them are skipped. */
int kmsg_drain(int fd, void (*fn)(const char *kind, const char *message, size_t len, void *userdata), void *userdata);
