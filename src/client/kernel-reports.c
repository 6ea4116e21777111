/* SPDX-License-Identifier: MIT */
/* The kernel's own bug reports (kernel-reports.h). */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "kernel-reports.h"
#include "kmsg.h"
#include "time-util.h"

#define KMEMLEAK_PATH "/sys/kernel/debug/kmemleak"
#define KMEMLEAK_MIN_AGE_USEC (6 * USEC_PER_SEC)       /* its 5 s, and a margin for the clocks */

void kernel_reports_done(KernelReports *r) {
        for (size_t i = 0; i < r->n; i++) {
                free(r->v[i].detector);
                free(r->v[i].title);
                free(r->v[i].signature);
                free(r->v[i].text);
                free(r->v[i].comm);
        }
        free(r->v);
        *r = (KernelReports) {};
}

static bool starts(const char *s, size_t len, const char *p) {
        size_t n = strlen(p);

        return len >= n && memcmp(s, p, n) == 0;
}

static bool has(const char *s, size_t len, const char *p) {
        size_t n = strlen(p);

        for (size_t i = 0; n <= len && i + n <= len; i++)
                if (memcmp(s + i, p, n) == 0)
                        return true;
        return false;
}

/* kmsg.h's kind made finer where the first line tells more. */
static const char *detector_of(const char *kind, const char *msg, size_t len) {
        static const char *const lockdep[] = {
                "possible circular locking dependency", "possible recursive locking", "inconsistent lock state",
                "bad unlock balance", "lock held when returning to user space", "suspicious RCU usage",
                "held lock freed", "workqueue leaked lock", "possible irq lock inversion",
                "lock held at task exit", "releasing a pinned lock", "bad contention detected",
        };

        if (starts(msg, len, "BUG: KASAN:"))
                return "kasan";
        for (size_t i = 0; i < sizeof(lockdep) / sizeof(lockdep[0]); i++)
                if (has(msg, len, lockdep[i]))
                        return "lockdep";
        if (has(msg, len, "sleeping function called from invalid context") || has(msg, len, "scheduling while atomic"))
                return "atomic-sleep";
        return kind;
}

/* A frame's function name from a stack line: " tm_write+0x1a/0x30",
 * " ? foo+0x1/0x2", "    [<ffffffff81234567>] tm_write+0x1a/0x30". NULL
 * for a line that is no frame or a "?" (unreliable) one. */
static char *frame_name(const char *line) {
        const char *p = line, *plus;

        while (*p == ' ' || *p == '\t')
                p++;
        if (p[0] == '?')
                return NULL;
        if (p[0] == '[' && p[1] == '<') {
                p = strstr(p, ">]");
                if (!p)
                        return NULL;
                p += 2;
                while (*p == ' ')
                        p++;
        }
        plus = strstr(p, "+0x");
        if (!plus || plus == p)
                return NULL;
        for (const char *q = p; q < plus; q++)
                if (!(isalnum((unsigned char) *q) || *q == '_' || *q == '.'))
                        return NULL;
        return strndup(p, (size_t) (plus - p));
}

/* Frames of the reporting machinery itself, never a signature's. */
static bool frame_is_machinery(const char *name) {
        static const char *const prefixes[] = {
                "dump_stack", "show_stack", "print_", "kasan_", "__kasan_", "check_", "__warn", "warn_",
                "report_bug", "handle_bug", "exc_", "asm_exc_", "lockdep_", "__lock_acquire", "lock_acquire",
                "lock_release", "validate_chain", "debug_", "kmemleak_", "__kmem_cache_alloc", "kmem_cache_alloc",
                "__kmalloc", "kmalloc", "slab_", "__slab", "___slab", "mark_lock", "__might_", "___might_",
                "might_", "__asan_", "panic", "die", "oops_", "__die", "__schedule", "schedule",
        };

        for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
                if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        return false;
}

/* The title without what changes from one run to the next: addresses,
 * offsets, numbers (CPU, PID, line numbers stay: "file.c:88" is kept by
 * keeping digits after ':' that follow a file name). */
static void normalize_title(const char *title, char *buf, size_t size) {
        size_t o = 0;

        for (const char *p = title; *p && o + 1 < size;) {
                if (p[0] == '+' && p[1] == '0' && p[2] == 'x') {
                        /* "+0x1a/0x30": an offset */
                        p += 3;
                        while (isxdigit((unsigned char) *p) || *p == '/' || *p == 'x')
                                p++;
                        continue;
                }
                if (p[0] == '0' && p[1] == 'x') {
                        p += 2;
                        while (isxdigit((unsigned char) *p))
                                p++;
                        buf[o++] = 'X';
                        continue;
                }
                if (isdigit((unsigned char) *p) && p >= title + 2 && p[-1] == ':' && p[-2] == 'c') {
                        /* "file.c:88": a line of source, the same in every run */
                        while (isdigit((unsigned char) *p) && o + 1 < size)
                                buf[o++] = *p++;
                        continue;
                }
                if (isdigit((unsigned char) *p)) {
                        while (isdigit((unsigned char) *p))
                                p++;
                        buf[o++] = 'N';
                        continue;
                }
                buf[o++] = *p++;
        }
        buf[o] = 0;
}

char *kernel_report_signature(const char *detector, const char *title, const char *text) {
        char norm[512], sig[1024];
        const char *line = text;
        size_t n_frames = 0, o;

        normalize_title(title, norm, sizeof(norm));
        o = (size_t) snprintf(sig, sizeof(sig), "%s: %s", detector, norm);
        while (line && *line && n_frames < KERNEL_REPORT_FRAMES && o < sizeof(sig)) {
                const char *nl = strchr(line, '\n');
                _cleanup_free_ char *l = nl ? strndup(line, (size_t) (nl - line)) : strdup(line);
                _cleanup_free_ char *name = l ? frame_name(l) : NULL;

                if (!l)
                        return NULL;
                if (name && !frame_is_machinery(name)) {
                        o += (size_t) snprintf(sig + o, sizeof(sig) - o, "%s%s", n_frames ? " < " : " @ ", name);
                        n_frames++;
                }
                line = nl ? nl + 1 : NULL;
        }
        return strdup(sig);
}

static int report_add(KernelReports *r, const char *detector, const char *title, size_t title_len) {
        KernelReport *v = realloc(r->v, (r->n + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        r->v = v;
        v[r->n] = (KernelReport) {
                .detector = strdup(detector),
                .title = strndup(title, title_len),
                .text = strndup(title, title_len),
        };
        if (!v[r->n].detector || !v[r->n].title || !v[r->n].text) {
                r->n++;
                return -ENOMEM;
        }
        r->n++;
        return 0;
}

static int report_append(KernelReport *k, const char *line, size_t len) {
        size_t have = strlen(k->text);
        char *t;

        if (have + 1 + len >= KERNEL_REPORT_TEXT_MAX)
                return 0;
        t = realloc(k->text, have + len + 2);
        if (!t)
                return -ENOMEM;
        t[have] = '\n';
        memcpy(t + have + 1, line, len);
        t[have + 1 + len] = 0;
        k->text = t;
        return 0;
}

typedef struct Reader {
        KernelReports *reports;
        size_t first;           /* the first report this read added */
        bool in_report;
        int error;
} Reader;

static void on_message(const char *msg, size_t len, void *userdata) {
        Reader *rd = userdata;
        const char *kind = kmsg_message_trouble(msg, len);
        int r;

        if (rd->error)
                return;
        if (kind)
                r = report_add(rd->reports, detector_of(kind, msg, len), msg, len);
        else if (rd->reports->n > rd->first)
                r = report_append(&rd->reports->v[rd->reports->n - 1], msg, len);
        else
                r = 0;
        if (r < 0)
                rd->error = r;
}

/* "216 Comm: sh" and the like: a number then a name up to a space. */
static int set_task(KernelReport *r, long pid, const char *comm, size_t len) {
        if (pid <= 0 || pid > INT32_MAX || len == 0)
                return 0;
        r->pid = (int) pid;
        free(r->comm);
        r->comm = strndup(comm, len);
        return r->comm ? 1 : -ENOMEM;
}

int kernel_report_parse_task(KernelReport *r, unsigned long long read_usec) {
        const char *p;
        char *end;
        long pid;

        if (!r->text)
                return 0;
        /* kmemleak: '  comm "sh", pid 216, jiffies 4294937296 (age 5.123s)' */
        p = strstr(r->text, "comm \"");
        if (p) {
                const char *c = p + strlen("comm \""), *q = strchr(c, '"');

                if (q && strncmp(q, "\", pid ", strlen("\", pid ")) == 0) {
                        pid = strtol(q + strlen("\", pid "), &end, 10);
                        if (set_task(r, pid, c, (size_t) (q - c)) < 0)
                                return -ENOMEM;
                        p = strstr(end, "(age ");
                        if (p && read_usec) {
                                double age = strtod(p + strlen("(age "), &end);

                                if (end != p + strlen("(age ") && *end == 's' && age >= 0 &&
                                    age * USEC_PER_SEC < (double) read_usec)
                                        r->time_usec = read_usec - (unsigned long long) (age * USEC_PER_SEC);
                        }
                        return 0;
                }
        }
        /* The stack dump's header: "CPU: 0 PID: 216 Comm: sh Not tainted ..." */
        for (p = strstr(r->text, " PID: "); p; p = strstr(p + 1, " PID: ")) {
                pid = strtol(p + strlen(" PID: "), &end, 10);
                if (strncmp(end, " Comm: ", strlen(" Comm: ")) == 0) {
                        const char *c = end + strlen(" Comm: ");

                        return set_task(r, pid, c, strcspn(c, " \n")) < 0 ? -ENOMEM : 0;
                }
        }
        /* KASAN's "Write of size 8 at addr ... by task sh/216" */
        p = strstr(r->text, " by task ");
        if (p) {
                const char *c = p + strlen(" by task "), *slash = NULL;

                for (const char *q = c; *q && *q != '\n'; q++)
                        if (*q == '/')
                                slash = q;
                if (slash) {
                        pid = strtol(slash + 1, &end, 10);
                        if (end != slash + 1)
                                return set_task(r, pid, c, (size_t) (slash - c)) < 0 ? -ENOMEM : 0;
                }
        }
        /* might_sleep's "in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 216, name: sh" */
        p = strstr(r->text, ", pid: ");
        if (p) {
                pid = strtol(p + strlen(", pid: "), &end, 10);
                if (strncmp(end, ", name: ", strlen(", name: ")) == 0) {
                        const char *c = end + strlen(", name: ");

                        return set_task(r, pid, c, strcspn(c, " \n")) < 0 ? -ENOMEM : 0;
                }
        }
        return 0;
}

static int sign_from(KernelReports *r, size_t first) {
        unsigned long long now = now_usec(CLOCK_MONOTONIC);

        for (size_t i = first; i < r->n; i++) {
                if (kernel_report_parse_task(&r->v[i], now) < 0)
                        return -ENOMEM;
                r->v[i].signature = kernel_report_signature(r->v[i].detector, r->v[i].title, r->v[i].text);
                if (!r->v[i].signature)
                        return -ENOMEM;
        }
        return 0;
}

int kernel_reports_read_kmsg(int fd, KernelReports *reports) {
        Reader rd = { .reports = reports, .first = reports->n };
        int r;

        r = kmsg_drain_kernel(fd, on_message, &rd);
        if (r < 0)
                return r;
        if (rd.error < 0)
                return rd.error;
        r = sign_from(reports, rd.first);
        return r < 0 ? r : (int) (reports->n - rd.first);
}

static int kmemleak_write(const char *cmd) {
        _cleanup_close_ int fd = open(KMEMLEAK_PATH, O_WRONLY | O_CLOEXEC);
        size_t len = strlen(cmd);

        if (fd < 0)
                return -errno;
        if (write(fd, cmd, len) != (ssize_t) len)
                return errno ? -errno : -EIO;
        return 0;
}

int kmemleak_available(void) {
        return access(KMEMLEAK_PATH, R_OK | W_OK) < 0 ? -errno : 0;
}

int kmemleak_clear(void) {
        return kmemleak_write("clear");
}

/* The leaks listed now: "unreferenced object 0x... (size 64):" starts
 * each, its backtrace follows. */
static int kmemleak_read(KernelReports *reports) {
        _cleanup_fclose_ FILE *f = fopen(KMEMLEAK_PATH, "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0, first = reports->n;
        ssize_t len;
        int r;

        if (!f)
                return -errno;
        while ((len = getline(&line, &size, f)) > 0) {
                if (line[len - 1] == '\n')
                        line[--len] = 0;
                if (strncmp(line, "unreferenced object", strlen("unreferenced object")) == 0)
                        r = report_add(reports, "kmemleak", line, (size_t) len);
                else if (reports->n > first)
                        r = report_append(&reports->v[reports->n - 1], line, (size_t) len);
                else
                        r = 0;
                if (r < 0)
                        return r;
        }
        r = sign_from(reports, first);
        return r < 0 ? r : (int) (reports->n - first);
}

int kmemleak_scan_once(KernelReports *reports) {
        int r, n;

        r = kmemleak_write("scan");
        if (r < 0)
                return r;
        n = kmemleak_read(reports);
        if (n < 0)
                return n;
        r = kmemleak_clear();
        return r < 0 ? r : n;
}

int kmemleak_collect(unsigned long long since_usec, KernelReports *reports) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        if (now < since_usec + KMEMLEAK_MIN_AGE_USEC) {
                uint64_t left = since_usec + KMEMLEAK_MIN_AGE_USEC - now;

                (void) nanosleep(&(struct timespec) { .tv_sec = (time_t) (left / USEC_PER_SEC),
                                                      .tv_nsec = (long) (left % USEC_PER_SEC) * 1000L }, NULL);
        }
        /* The first scan records each object's checksum; an object is
         * reported only when a later scan finds it unchanged and
         * unreferenced. */
        r = kmemleak_write("scan");
        return r < 0 ? r : kmemleak_scan_once(reports);
}
