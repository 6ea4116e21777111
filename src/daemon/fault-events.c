/* SPDX-License-Identifier: MIT */
/* Injected faults, as the BPF program reports them in its ring buffer,
 * become ManagerListener.fault() calls: at most options.event_rate per
 * injection per second (the rest are counted in events_suppressed), and at
 * most MANAGER_EVENTS_PER_TURN per event loop turn, so that a user failing
 * a hot call on every CPU cannot keep the loop from answering anyone
 * else. The counters are the BPF program's and stay exact either way. */

#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "cleanup.h"
#include "fault-events.h"
#include "fault-kmsg.h"
#include "fault-redact.h"
#include "injection.h"
#include "log.h"
#include "manager-listeners.h"
#include "time-util.h"

/* Returned by the ring buffer callback to stop reading for this turn. */
#define EVENTS_TURN_DONE (-EAGAIN)

bool fault_event_admit(Injection *inj, unsigned rate, uint64_t now) {
        uint64_t interval, burst;

        if (rate == 0)
                return true;

        /* A token bucket of one second's worth of events, kept as the time
         * at which it would be full again (GCRA): an event is let through
         * if that is at most a second ahead of now. */
        interval = USEC_PER_SEC / rate ?: 1;
        burst = USEC_PER_SEC;
        if (inj->events_tokens_usec < now)
                inj->events_tokens_usec = now;
        if (inj->events_tokens_usec + interval > now + burst) {
                inj->events_suppressed++;
                return false;
        }
        inj->events_tokens_usec += interval;
        return true;
}

static int on_ring_event(void *ctx, void *data, size_t size) {
        Manager *m = ctx;
        const struct inject_event *ev = data;
        Injection *inj;
        struct inject_event shown = {};
        bool has_task;
        char comm[INJECT_COMM_LEN + 1] = {};

        /* An older program's record (adopted pins) ends before uid. */
        if (size < INJECT_EVENT_MIN_SIZE)
                return 0;
        has_task = size >= sizeof(*ev);
        m->events_this_turn++;
        inj = manager_find(m, ev->inj_id);
        if (!inj)
                goto next;
        /* A process names itself: keep its comm printable ASCII, which is
         * valid UTF-8 for both buses and safe on a terminal and in the
         * kernel log. */
        memcpy(comm, ev->comm, INJECT_COMM_LEN);
        for (char *ch = comm; *ch; ch++)
                if (*ch < 0x20 || *ch > 0x7e)
                        *ch = '?';
        /* Its own rate limit, the kernel's: not the events'. */
        (void) fault_kmsg_write(m, inj, ev, comm);
        if (!fault_event_admit(inj, m->options.event_rate, now_usec(CLOCK_MONOTONIC)))
                goto check_times;

        /* What the subscribers see: another user's task that a device
         * scope failed is not theirs to see (fault-redact.h). The kernel
         * log above is the administrator's and keeps it. */
        memcpy(&shown, ev, has_task ? sizeof(shown) : INJECT_EVENT_MIN_SIZE);
        if (fault_event_redact(inj, &shown, has_task))
                comm[0] = 0;
        manager_publish_fault(m, inj, &shown, comm);

check_times:
        /* The last allowed fault ends the injection, whether or not its
         * event was passed on. */
        if (inj->info.slot.times && manager_refresh(m, inj) >= 0 && inj->info.slot.injected >= inj->info.slot.times)
                (void) manager_remove(m, inj, REMOVE_EXHAUSTED);
next:
        /* This event is consumed either way; the rest wait for the next
         * turn (the ring buffer's fd stays readable). */
        return m->events_this_turn >= MANAGER_EVENTS_PER_TURN ? EVENTS_TURN_DONE : 0;
}

static int on_ring_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        int r;

        m->events_this_turn = 0;
        r = ring_buffer__consume(m->events);
        if (r < 0 && r != EVENTS_TURN_DONE)
                log_debug_errno(r, "Failed to read fault events, ignoring: %m");
        return 0;
}

int manager_open_events(Manager *m) {
        int fd;

        if (m->events)
                return 0;
        fd = engine_events_fd(m->engine);
        if (fd < 0)
                return fd;
        m->events = ring_buffer__new(fd, on_ring_event, m, NULL);
        if (!m->events)
                return negative_errno();
        return sd_event_add_io(m->event, &m->events_source, ring_buffer__epoll_fd(m->events), EPOLLIN,
                               on_ring_readable, m);
}
