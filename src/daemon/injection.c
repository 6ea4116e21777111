/* SPDX-License-Identifier: MIT */
/* The injection table: entries, their deadline timers, their requesters'
 * lifetimes, and the one way out, manager_remove(). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "injection-store.h"
#include "injection.h"
#include "log.h"
#include "manager-listeners.h"
#include "scope.h"
#include "site-cache-timer.h"

static const char *const reason_table[_REMOVE_REASON_MAX] = {
        [REMOVE_CANCELLED] = "cancelled",
        [REMOVE_EXPIRED] = "expired",
        [REMOVE_EXHAUSTED] = "exhausted",
        [REMOVE_OWNER_GONE] = "owner-gone",
        [REMOVE_DAEMON_ERROR] = "daemon-error",
};

const char *remove_reason_to_string(RemoveReason r) {
        return r >= 0 && r < _REMOVE_REASON_MAX ? reason_table[r] : NULL;
}

Injection *injection_free(Injection *inj) {
        if (!inj)
                return NULL;
        sd_event_source_disable_unref(inj->timer);
        sd_event_source_disable_unref(inj->owner_watch);
        free(inj->rule);
        free(inj->scope_desc);
        free(inj->polkit_how);
        free(inj);
        return NULL;
}

int injection_add(Manager *m, const InjectionInfo *info, Injection **ret) {
        Injection **v, *inj;

        inj = calloc(1, sizeof(*inj));
        if (!inj)
                return -ENOMEM;
        v = realloc(m->injections, (m->n_injections + 1) * sizeof(*v));
        if (!v) {
                free(inj);
                return -ENOMEM;
        }
        m->injections = v;
        inj->manager = m;
        inj->id = info->id;
        inj->info = *info;
        snprintf(inj->id_str, sizeof(inj->id_str), "%016" PRIx64, inj->id);
        m->injections[m->n_injections++] = inj;
        *ret = inj;
        return 0;
}

Injection *manager_find(Manager *m, uint64_t id) {
        for (size_t i = 0; i < m->n_injections; i++)
                if (m->injections[i]->id == id)
                        return m->injections[i];
        return NULL;
}

unsigned manager_count_active(Manager *m, uid_t uid, bool any_uid) {
        unsigned n = 0;

        for (size_t i = 0; i < m->n_injections; i++)
                if (any_uid || m->injections[i]->owner_uid == uid)
                        n++;
        return n;
}

int manager_refresh(Manager *m, Injection *inj) {
        InjectionInfo info;
        int r;

        r = engine_get(m->engine, inj->id, &info);
        if (r < 0)
                return r;
        inj->info = info;
        return 0;
}

int manager_refresh_many(Manager *m, const size_t *which, size_t n) {
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_free_ InjectionInfo *infos = NULL;
        _cleanup_free_ int *rs = NULL;
        int r;

        if (n == 0)
                return 0;
        ids = calloc(n, sizeof(*ids));
        infos = calloc(n, sizeof(*infos));
        rs = calloc(n, sizeof(*rs));
        if (!ids || !infos || !rs)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++)
                ids[k] = m->injections[which[k]]->id;
        r = engine_get_many(m->engine, ids, n, infos, rs);
        if (r < 0)
                return r;
        for (size_t k = 0; k < n; k++)
                if (rs[k] >= 0)
                        m->injections[which[k]]->info = infos[k];
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Injection *inj = userdata;

        (void) manager_remove(inj->manager, inj, REMOVE_EXPIRED);
        return 0;
}

int injection_arm_timer(Injection *inj) {
        /* The BPF program stops at the deadline by itself; this timer only
         * cleans up, so the same clock: CLOCK_BOOTTIME, immune to date. */
        return sd_event_add_time(inj->manager->event, &inj->timer, CLOCK_BOOTTIME,
                                 inj->info.slot.deadline_ns / 1000, 0, on_deadline, inj);
}

static int on_owner_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Injection *inj = userdata;

        manager_owner_gone(inj->manager, inj);
        return 0;
}

/* A pidfd, which a recycled pid cannot fool: for requesters no front end
 * follows, as a Varlink one after a daemon restart. */
static int injection_watch_process(Injection *inj) {
        int fd, r;

        if (inj->owner_pid <= 0 || scope_process_alive(inj->owner_pid, inj->owner_start) <= 0)
                return -ESRCH;
        fd = (int) syscall(SYS_pidfd_open, inj->owner_pid, 0);
        if (fd < 0)
                return errno == ESRCH ? -ESRCH : negative_errno();
        r = sd_event_add_io(inj->manager->event, &inj->owner_watch, fd, EPOLLIN, on_owner_exit, inj);
        if (r < 0) {
                close(fd);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(inj->owner_watch, true);
        /* The pidfd was opened after the start time was compared: compare again. */
        if (scope_process_alive(inj->owner_pid, inj->owner_start) <= 0)
                return -ESRCH;
        return 0;
}

/* An injection ends with its requester, unless it asked to detach: with
 * what its front end follows (its bus name, its connection) or, when none
 * does, with its process. */
int injection_follow_owner(Injection *inj, const Caller *c, void *owner) {
        const OwnerTracker *t = manager_owner_tracker(inj->manager, inj->transport);
        int r = 0;

        if (t && t->track) {
                /* Called for detached ones too: a front end still addresses
                 * their signals to the requester. */
                r = t->track(inj->manager, inj, c, owner, t->userdata);
                if (r < 0)
                        return r;
        }
        if (inj->detach || r > 0)
                return 0;
        return injection_watch_process(inj);
}

void manager_owner_gone(Manager *m, Injection *inj) {
        if (!inj->detach)
                (void) manager_remove(m, inj, REMOVE_OWNER_GONE);
}

int manager_remove(Manager *m, Injection *inj, RemoveReason reason) {
        InjectError err = {};
        InjectionInfo final;
        int r;

        r = engine_disarm(m->engine, inj->id, &final, &err);
        if (r >= 0)
                inj->info = final;
        else if (r != -ENOENT)
                log_error_errno(r, "Failed to disarm %s: %s", inj->id_str, err.message);

        audit_log(LOG_INFO, &(AuditRecord) {
                        .event = "removed", .id = inj->id, .owner_uid = &inj->owner_uid,
                        .function = inj->info.function, .value = (const int64_t *) &inj->info.slot.retval,
                        .scope = inj->scope_desc, .reason = remove_reason_to_string(reason),
                  }, "Injection %s on '%s' removed (%s): seen %llu, matched %llu, injected %llu, guarded %llu",
                  inj->id_str, inj->info.function, remove_reason_to_string(reason),
                  (unsigned long long) inj->info.slot.seen, (unsigned long long) inj->info.slot.matched,
                  (unsigned long long) inj->info.slot.injected, (unsigned long long) inj->info.slot.guarded);

        manager_publish_removed(m, inj, reason);
        injection_store_remove(inj->id);

        for (size_t i = 0; i < m->n_injections; i++)
                if (m->injections[i] == inj) {
                        m->injections[i] = m->injections[--m->n_injections];
                        break;
                }
        injection_free(inj);
        site_cache_timer_schedule(m);
        return r < 0 && r != -ENOENT ? r : 0;
}
