/* SPDX-License-Identifier: MIT */
#pragma once

/* The journal sink of log.c, kept apart so that a program can be built
 * without libsystemd: log-journal.c writes through sd-journal;
 * log-journal-none.c, for injectctl-static, has no journal, and log.c then
 * writes everything to stderr. Nobody but log.c calls these. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* Whether this build can write to the journal at all. */
bool log_journal_supported(void);

/* One message with its priority and, if error is non-zero, ERRNO=-error. */
int log_journal_send(int level, int error, const char *message);

/* Ready "KEY=value" fields, MESSAGE= and PRIORITY= among them. */
int log_journal_sendv(const struct iovec *iov, size_t n);
