/* SPDX-License-Identifier: MIT */
/* log.c's journal sink, through sd-journal. */

#include <errno.h>
#include <limits.h>

#include <systemd/sd-journal.h>

#include "log-journal.h"

bool log_journal_supported(void) {
        return true;
}

int log_journal_send(int level, int error, const char *message) {
        return sd_journal_send("MESSAGE=%s", message, "PRIORITY=%i", level,
                               error ? "ERRNO=%i" : NULL, -error, NULL);
}

int log_journal_sendv(const struct iovec *iov, size_t n) {
        if (n > INT_MAX)
                return -E2BIG;
        return sd_journal_sendv(iov, (int) n);
}
