/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "log-journal.h"
#include "log.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static int max_level = LOG_INFO;
static int target = -1;         /* -1 auto, 0 stderr, 1 journal */

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

void log_set_target(const char *t) {
        if (!t || strcmp(t, "auto") == 0)
                target = -1;
        else
                target = strcmp(t, "journal") == 0;
}

bool log_to_journal(void) {
        if (target < 0)
                target = access(JOURNAL_SOCKET, W_OK) == 0;
        return target == 1 && log_journal_supported();
}

static int normalize(int error) {
        return error > 0 ? -error : error;
}

int log_internal(int level, int error, const char *fmt, ...) {
        char msg[2048];
        va_list ap;
        int saved = errno;

        error = normalize(error);
        if (level > max_level)
                return error;

        /* glibc's %m reads errno: point it at our error. */
        errno = error ? -error : saved;
        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        if (log_to_journal())
                (void) log_journal_send(level, error, msg);
        else
                fprintf(stderr, "%s\n", msg);
        errno = saved;
        return error;
}

int log_struct(int level, const char *message, const char *const *fields) {
        size_t n = 0;

        if (level > max_level)
                return 0;
        for (const char *const *f = fields; f && *f; f++)
                n++;

        if (log_to_journal()) {
                struct iovec *iov = calloc(n + 2, sizeof(*iov));
                char *m = NULL, *p = NULL;
                int r;

                if (!iov || asprintf(&m, "MESSAGE=%s", message) < 0 || asprintf(&p, "PRIORITY=%i", level) < 0) {
                        free(iov);
                        free(m);
                        return -ENOMEM;
                }
                iov[0] = (struct iovec) { m, strlen(m) };
                iov[1] = (struct iovec) { p, strlen(p) };
                for (size_t i = 0; i < n; i++)
                        iov[i + 2] = (struct iovec) { (void *) fields[i], strlen(fields[i]) };
                r = log_journal_sendv(iov, n + 2);
                free(iov);
                free(m);
                free(p);
                return r;
        }

        /* KEY=value, lower-cased without the INJECTD_ prefix, on one line. */
        fputs(message, stderr);
        for (size_t i = 0; i < n; i++) {
                const char *f = fields[i], *eq = strchr(f, '=');

                if (!eq)
                        continue;
                if (strncmp(f, "INJECTD_", 8) == 0)
                        f += 8;
                fputc(' ', stderr);
                for (const char *c = f; c < eq; c++)
                        fputc(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c, stderr);
                fprintf(stderr, "=%s", eq + 1);
        }
        fputc('\n', stderr);
        return 0;
}
