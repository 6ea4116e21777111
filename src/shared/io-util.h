/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/* read(2), retried when a signal interrupts it: the bytes read (0 at end
 * of file), or a negative errno. */
ssize_t read_retry(int fd, void *buf, size_t n);
