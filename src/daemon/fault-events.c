/* SPDX-License-Identifier: MIT */
/* Injected faults, as the BPF program reports them in its ring buffer,
 * become ManagerListener.fault() calls. */

#include <string.h>

#include <bpf/libbpf.h>

#include "cleanup.h"
#include "fault-events.h"
#include "manager-listeners.h"

static int on_ring_event(void *ctx, void *data, size_t size) {
        Manager *m = ctx;
        const struct inject_event *ev = data;
        Injection *inj;
        char comm[INJECT_COMM_LEN + 1] = {};

        if (size < sizeof(*ev))
                return 0;
        inj = manager_find(m, ev->inj_id);
        if (!inj)
                return 0;
        /* A process names itself: keep its comm printable ASCII, which is
         * valid UTF-8 for both buses and safe on a terminal. */
        memcpy(comm, ev->comm, INJECT_COMM_LEN);
        for (char *ch = comm; *ch; ch++)
                if (*ch < 0x20 || *ch > 0x7e)
                        *ch = '?';

        manager_publish_fault(m, inj, ev, comm);

        /* The last allowed fault ends the injection. */
        if (inj->info.slot.times && manager_refresh(m, inj) >= 0 && inj->info.slot.injected >= inj->info.slot.times)
                (void) manager_remove(m, inj, REMOVE_EXHAUSTED);
        return 0;
}

static int on_ring_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        (void) ring_buffer__consume(m->events);
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
