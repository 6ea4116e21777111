/* SPDX-License-Identifier: MIT */
/* log.c's journal sink in a build without libsystemd (injectctl-static):
 * there is none, and log.c writes to stderr. */

#include <errno.h>

#include "log-journal.h"

bool log_journal_supported(void) {
        return false;
}

int log_journal_send(int level, int error, const char *message) {
        return -EOPNOTSUPP;
}

int log_journal_sendv(const struct iovec *iov, size_t n) {
        return -EOPNOTSUPP;
}
