/* SPDX-License-Identifier: MIT */
/* The front ends register here what they want to hear (ManagerListener) and
 * how they follow their requesters (OwnerTracker); the core calls back
 * through these alone, so it never names a front end. */

#include <errno.h>
#include <stdlib.h>

#include "manager-listeners.h"

int manager_add_listener(Manager *m, const ManagerListener *l) {
        const ManagerListener **v;

        v = realloc(m->listeners, (m->n_listeners + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        m->listeners = v;
        m->listeners[m->n_listeners++] = l;
        return 0;
}

void manager_remove_listener(Manager *m, const ManagerListener *l) {
        for (size_t i = 0; i < m->n_listeners; i++)
                if (m->listeners[i] == l) {
                        for (size_t j = i + 1; j < m->n_listeners; j++)
                                m->listeners[j - 1] = m->listeners[j];
                        m->n_listeners--;
                        return;
                }
}

void manager_set_owner_tracker(Manager *m, Transport t, const OwnerTracker *tracker) {
        if (t >= 0 && t < _TRANSPORT_MAX)
                m->trackers[t] = tracker;
}

const OwnerTracker *manager_owner_tracker(Manager *m, Transport t) {
        return t >= 0 && t < _TRANSPORT_MAX ? m->trackers[t] : NULL;
}

void manager_publish_added(Manager *m, Injection *inj) {
        for (size_t i = 0; i < m->n_listeners; i++)
                if (m->listeners[i]->added)
                        m->listeners[i]->added(m, inj, m->listeners[i]->userdata);
}

void manager_publish_removed(Manager *m, Injection *inj, RemoveReason reason) {
        for (size_t i = 0; i < m->n_listeners; i++)
                if (m->listeners[i]->removed)
                        m->listeners[i]->removed(m, inj, reason, m->listeners[i]->userdata);
}

void manager_publish_fault(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm) {
        for (size_t i = 0; i < m->n_listeners; i++)
                if (m->listeners[i]->fault)
                        m->listeners[i]->fault(m, inj, ev, comm, m->listeners[i]->userdata);
}
