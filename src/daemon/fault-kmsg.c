/* SPDX-License-Identifier: MIT */
/* Kernel log records of injected faults, for the injections that ask for
 * them (kernel_log, allowed by a policy rule's "kernel-log"), in the
 * format of the kernel's own fault injection (lib/fault-inject.c,
 * fail_dump()), so that tools that read dmesg for "FAULT_INJECTION:" see
 * injectd's faults too:
 *
 *   FAULT_INJECTION: forcing a failure.
 *   name failslab, interval 1, probability 100, space 0, times 4
 *
 * and, at level 2, the stack as dump_stack() prints it. The differences,
 * which follow from who writes it: the daemon writes the record to
 * /dev/kmsg after the fact, from the fault event the program sent, not
 * the kernel in the failing task's context; so the record's facility is
 * "user" (dmesg -x), it is one record (the kernel's is one for the first
 * two lines and one per line of the stack), the stack starts at the
 * failed function (no dump_stack_lvl and should_fail_ex frames above it)
 * and has no register dump, "times" is what was left before this fault as
 * the daemon counts the events, space is always 0, and an allocation with
 * __GFP_NOWARN gets a record too (the event has no gfp flags). The rate is the
 * kernel's default for fail_dump() (verbose_ratelimit_burst 10 per
 * verbose_ratelimit_interval_ms 5000), per user: all of one uid's
 * injections share it. Per injection, a user with 16 injections would
 * write 16 times that, enough to rotate the kernel's ring buffer in
 * seconds and erase other users' oopses. A privileged owner's budget is
 * not that of an unprivileged caller with the same uid (root in a
 * container). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "fault-kmsg.h"
#include "fault-stack.h"
#include "json-util.h"
#include "log.h"
#include "time-util.h"

#define KMSG_RATELIMIT_INTERVAL_USEC (5 * USEC_PER_SEC)
#define KMSG_RATELIMIT_BURST 10
#define KMSG_RECORD_MAX 4096

/* The name of the kernel's fault attribute a function's faults stand for. */
static const char *attr_name(const char *function) {
        if (strcmp(function, "should_failslab") == 0)
                return "failslab";
        if (strcmp(function, "should_fail_alloc_page") == 0)
                return "fail_page_alloc";
        if (strcmp(function, "should_fail_bio") == 0)
                return "fail_make_request";
        return function;
}

/* dump_stack()'s "Hardware name:", from DMI as the kernel builds it
 * (dmi_setup()): vendor, product, the board when it differs, the BIOS. */
static void hardware_name(char *buf, size_t n) {
        char vendor[128], product[128], board[128], version[128], date[64];

        (void) read_first_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor));
        (void) read_first_line("/sys/class/dmi/id/product_name", product, sizeof(product));
        (void) read_first_line("/sys/class/dmi/id/board_name", board, sizeof(board));
        (void) read_first_line("/sys/class/dmi/id/bios_version", version, sizeof(version));
        (void) read_first_line("/sys/class/dmi/id/bios_date", date, sizeof(date));
        (void) snprintf(buf, n, "%s %s%s%s, BIOS %s %s", vendor, product, *board && strcmp(board, product) ? "/" : "",
                        *board && strcmp(board, product) ? board : "", version, date);
}

struct KmsgRate {
        uint32_t uid;
        bool privileged;
        uint64_t window_usec;           /* CLOCK_MONOTONIC start of the current window */
        unsigned in_window;
};

/* The owner's budget: one entry per (uid, privileged) that ever had a
 * record to write, a few bytes each, as the request rate keeps its own. */
static KmsgRate *owner_rate(Manager *m, const Injection *inj) {
        KmsgRate *v;

        for (size_t i = 0; i < m->n_kmsg_rates; i++)
                if (m->kmsg_rates[i].uid == inj->owner_uid && m->kmsg_rates[i].privileged == inj->owner_privileged)
                        return &m->kmsg_rates[i];
        v = realloc(m->kmsg_rates, (m->n_kmsg_rates + 1) * sizeof(*v));
        if (!v)
                return NULL;
        m->kmsg_rates = v;
        v[m->n_kmsg_rates] = (KmsgRate) { .uid = inj->owner_uid, .privileged = inj->owner_privileged,
                                          .window_usec = 0, .in_window = 0 };
        return &v[m->n_kmsg_rates++];
}

static bool admit(Manager *m, const Injection *inj, uint64_t now) {
        KmsgRate *e = owner_rate(m, inj);

        if (!e)         /* out of memory: no record rather than an unbounded one */
                return false;
        if (e->window_usec == 0 || now - e->window_usec >= KMSG_RATELIMIT_INTERVAL_USEC) {
                e->window_usec = now;
                e->in_window = 0;
        }
        return e->in_window++ < KMSG_RATELIMIT_BURST;
}

int fault_kmsg_write(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm) {
        const struct inject_slot *s = &inj->info.slot;
        char rec[KMSG_RECORD_MAX], hw[640], taint[32];
        _cleanup_json_ json_object *stack = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct utsname u;
        long long times;
        size_t n;

        inj->kmsg_faults++;
        if (!inj->kernel_log || !admit(m, inj, now_usec(CLOCK_MONOTONIC)))
                return 0;

        /* Left before this fault, as fail_dump() prints it: -1 without a limit. */
        times = s->times ? (long long) s->times - (long long) inj->kmsg_faults + 1 : -1;
        n = (size_t) snprintf(rec, sizeof(rec),
                              "<5>FAULT_INJECTION: forcing a failure.\n"
                              "name %s, interval %llu, probability %u, space 0, times %lld\n",
                              attr_name(inj->info.function), (unsigned long long) (s->every ?: 1),
                              s->probability_ppm / (INJECT_PPM / 100), times < 0 ? -1 : times);
        if (inj->kernel_log >= 2 && n < sizeof(rec)) {
                (void) read_first_line("/proc/sys/kernel/tainted", taint, sizeof(taint));
                hardware_name(hw, sizeof(hw));
                if (uname(&u) < 0)
                        u = (struct utsname) {};
                n += (size_t) snprintf(rec + n, sizeof(rec) - n,
                                       "CPU: %u PID: %u Comm: %.20s %s%s %s %.*s\n"
                                       "Hardware name: %s\n"
                                       "Call Trace:\n <TASK>\n",
                                       ev->cpu, ev->pid, comm, strcmp(taint, "0") == 0 ? "Not tainted" : "Tainted: ",
                                       strcmp(taint, "0") == 0 ? "" : taint, u.release,
                                       /* the kernel's build number, as dump_stack() cuts it */
                                       (int) strcspn(u.version, " "), u.version, hw);
                stack = fault_stack_to_json(m->engine, inj->info.function, ev);
                for (size_t i = 0; stack && i < json_object_array_length(stack) && n < sizeof(rec); i++)
                        n += (size_t) snprintf(rec + n, sizeof(rec) - n, " %s\n",
                                               json_object_get_string(json_object_array_get_idx(stack, i)));
                if (n < sizeof(rec))
                        n += (size_t) snprintf(rec + n, sizeof(rec) - n, " </TASK>\n");
        }
        if (n >= sizeof(rec))
                n = sizeof(rec) - 1;
        /* One write is one record. The trailing newline is the kernel's to
         * drop; an inner one is kept, and dmesg shows the lines. */
        fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return log_debug_errno(-errno, "Cannot open /dev/kmsg, ignoring: %m");
        if (write(fd, rec, n) < 0)
                return log_debug_errno(-errno, "Cannot write a fault record to /dev/kmsg, ignoring: %m");
        return 1;
}
