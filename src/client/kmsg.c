/* SPDX-License-Identifier: MIT */
/* Kernel trouble in /dev/kmsg (kmsg.h). Record format, from the kernel's
 * Documentation/ABI/testing/dev-kmsg: "PRI,SEQ,TS,FLAGS[,...];MESSAGE\n"
 * then continuation lines " KEY=VALUE\n". PRI is facility << 3 | level;
 * the kernel's own messages have facility 0. */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"

/* What the kernel prints when it detects its own bugs, by kind. Matched
 * at the start of the message, or anywhere for the "contains" ones. */
static const struct {
        const char *text;
        bool anywhere;
        const char *kind;
} troubles[] = {
        { "WARNING:",                   false,  "warning" },
        { "kernel BUG at",              false,  "bug" },
        { "BUG:",                       false,  "bug" },
        { "Oops",                       false,  "oops" },
        { "general protection fault",   false,  "oops" },
        { "Kernel panic",               false,  "oops" },
        { "blocked for more than",      true,   "hung-task" },
        { "rcu_sched self-detected stall", true, "stall" },
        { "rcu: INFO:",                 false,  "stall" },
        { "watchdog: BUG: soft lockup", false,  "stall" },
        { "UBSAN:",                     false,  "sanitizer" },
        { "list_add corruption",        false,  "bug" },
        { "list_del corruption",        false,  "bug" },
        { "refcount_t:",                false,  "bug" },
};

static bool has_prefix(const char *s, size_t len, const char *p) {
        size_t n = strlen(p);

        return len >= n && memcmp(s, p, n) == 0;
}

static bool contains(const char *s, size_t len, const char *p) {
        size_t n = strlen(p);

        for (size_t i = 0; n <= len && i <= len - n; i++)
                if (memcmp(s + i, p, n) == 0)
                        return true;
        return false;
}

/* The message of a record the kernel itself logged (facility 0), up to
 * its first newline (the continuation lines are KEY=VALUE pairs). */
static bool kernel_message(const char *record, size_t size, const char **ret_message, size_t *ret_len) {
        const char *semi, *msg, *nl;
        unsigned long pri;
        char *end;
        size_t len;

        if (!record || size == 0)
                return false;
        semi = memchr(record, ';', size);
        if (!semi)
                return false;
        errno = 0;
        pri = strtoul(record, &end, 10);
        if (errno || end == record || (*end != ',' && end != semi))
                return false;
        if ((pri >> 3) != 0)
                return false;   /* not the kernel's own */

        msg = semi + 1;
        len = size - (size_t) (msg - record);
        nl = memchr(msg, '\n', len);
        if (nl)
                len = (size_t) (nl - msg);
        *ret_message = msg;
        *ret_len = len;
        return true;
}

const char *kmsg_message_trouble(const char *msg, size_t len) {
        for (size_t i = 0; i < sizeof(troubles) / sizeof(troubles[0]); i++)
                if (troubles[i].anywhere ? contains(msg, len, troubles[i].text)
                                         : has_prefix(msg, len, troubles[i].text))
                        return troubles[i].kind;
        return NULL;
}

const char *kmsg_record_trouble(const char *record, size_t size, const char **ret_message, size_t *ret_len) {
        const char *msg, *kind;
        size_t len;

        if (!kernel_message(record, size, &msg, &len))
                return NULL;
        kind = kmsg_message_trouble(msg, len);
        if (kind) {
                if (ret_message)
                        *ret_message = msg;
                if (ret_len)
                        *ret_len = len;
        }
        return kind;
}

int kmsg_open(int *ret_fd) {
        int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        /* Reading works only where the read side is allowed: probe it. */
        if (lseek(fd, 0, SEEK_END) < 0) {
                int e = errno;

                (void) close(fd);
                return -e;
        }
        *ret_fd = fd;
        return 0;
}

int kmsg_drain_kernel(int fd, void (*fn)(const char *message, size_t len, void *userdata), void *userdata) {
        char buf[8192];
        int n_records = 0;

        for (;;) {
                const char *msg;
                size_t len;
                ssize_t n = read(fd, buf, sizeof(buf) - 1);

                if (n < 0) {
                        if (errno == EINTR || errno == EPIPE)
                                continue;
                        if (errno == EAGAIN)
                                return n_records;
                        return -errno;
                }
                if (n == 0)
                        return n_records;
                if (kernel_message(buf, (size_t) n, &msg, &len)) {
                        n_records++;
                        if (fn)
                                fn(msg, len, userdata);
                }
        }
}

typedef struct TroubleFilter {
        void (*fn)(const char *kind, const char *message, size_t len, void *userdata);
        void *userdata;
        int n;
} TroubleFilter;

static void on_kernel_message(const char *msg, size_t len, void *userdata) {
        TroubleFilter *f = userdata;
        const char *kind = kmsg_message_trouble(msg, len);

        if (!kind)
                return;
        f->n++;
        if (f->fn)
                f->fn(kind, msg, len, f->userdata);
}

int kmsg_drain(int fd, void (*fn)(const char *kind, const char *message, size_t len, void *userdata), void *userdata) {
        TroubleFilter f = { .fn = fn, .userdata = userdata };
        int r = kmsg_drain_kernel(fd, on_kernel_message, &f);

        return r < 0 ? r : f.n;
}
