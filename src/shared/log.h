/* SPDX-License-Identifier: MIT */
#pragma once

/* Logging for both binaries: to the journal (with structured fields) when
 * journald is there, else to stderr. Every log_*_errno() call returns the
 * negative errno it was given, so callers log and return in one step:
 *
 *      return log_error_errno(r, "Failed to attach to '%s': %m", fn);
 *
 * %m expands to strerror(-r). The journal is written through
 * log-journal.c (libsystemd); a build with log-journal-none.c in its place
 * (injectctl-static) logs only to stderr. */

#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>

void log_set_max_level(int level);
int log_get_max_level(void);
/* NULL, "auto": the journal when its socket exists; "stderr" or "journal". */
void log_set_target(const char *target);
bool log_to_journal(void);

int log_internal(int level, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A message plus NULL-terminated "KEY=value" fields (journal field names:
 * upper case, digits, underscores). On stderr the fields follow the message
 * as key=value pairs, so the audit trail is readable without a journal. */
int log_struct(int level, const char *message, const char *const *fields);

#define log_debug(...)   log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)    log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)  log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)   log_internal(LOG_ERR, 0, __VA_ARGS__)

#define log_debug_errno(r, ...)   log_internal(LOG_DEBUG, (r), __VA_ARGS__)
#define log_info_errno(r, ...)    log_internal(LOG_INFO, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_internal(LOG_WARNING, (r), __VA_ARGS__)
#define log_error_errno(r, ...)   log_internal(LOG_ERR, (r), __VA_ARGS__)

/* For allocation failures, which have nothing more to say. */
#define log_oom() log_internal(LOG_ERR, -ENOMEM, "Out of memory.")
