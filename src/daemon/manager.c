/* SPDX-License-Identifier: MIT */
/* The manager's life cycle: new, start (signals, policy, polkit, adoption
 * of what a previous daemon left pinned), stop, free. The request path is
 * request-pipeline.c, the table injection.c, the site cache's timer
 * site-cache-timer.c; the front ends are started by injectd.c and hear
 * from the core through manager-listeners.c. */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>

#include <bpf/libbpf.h>

#include "audit.h"
#include "cleanup.h"
#include "fault-events.h"
#include "injection-store.h"
#include "injection.h"
#include "log.h"
#include "manager-listeners.h"
#include "manage.h"
#include "manager.h"
#include "policy-check.h"
#include "request-pipeline.h"

/* One pinned injection the engine kept: its record says whose it is, and
 * it is followed again as if just armed. */
static int adopt_one(Manager *m, const InjectionInfo *info) {
        _cleanup_(caller_done) Caller owner = {};
        Injection *inj;
        int r;

        r = injection_add(m, info, &inj);
        if (r < 0)
                return log_oom();
        r = injection_store_load(inj, &owner);
        if (r < 0) {
                log_warning_errno(r, "No owner record for pinned injection %s, removing it: %m", inj->id_str);
                (void) manager_remove(m, inj, REMOVE_OWNER_GONE);
                return 0;
        }
        r = injection_arm_timer(inj);
        if (r >= 0)
                r = injection_follow_owner(inj, &owner, NULL);
        if (r == -ESRCH) {
                (void) manager_remove(m, inj, REMOVE_OWNER_GONE);
                return 0;
        }
        if (r < 0) {
                log_error_errno(r, "Cannot track adopted injection %s, removing it: %m", inj->id_str);
                (void) manager_remove(m, inj, REMOVE_DAEMON_ERROR);
                return 0;
        }
        audit_log(LOG_INFO, &(AuditRecord) { .event = "adopted", .id = inj->id, .owner_uid = &inj->owner_uid,
                                             .function = inj->info.function, .scope = inj->scope_desc },
                  "Adopted injection %s on '%s' (%llu faults so far)", inj->id_str, inj->info.function,
                  (unsigned long long) inj->info.slot.injected);
        return 0;
}

static bool injection_alive(uint64_t id, void *userdata) {
        return manager_find(userdata, id);
}

static int adopt(Manager *m) {
        _cleanup_free_ AdoptResult *v = NULL;
        size_t n = 0;
        int r;

        r = engine_adopt(m->engine, &v, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to adopt pinned injections: %m");

        for (size_t i = 0; i < n; i++) {
                if (v[i].action == ADOPT_KEPT) {
                        r = adopt_one(m, &v[i].info);
                        if (r < 0)
                                return r;
                        continue;
                }
                injection_store_remove(v[i].info.id);
                audit_log(LOG_INFO, &(AuditRecord) { .event = "removed", .id = v[i].info.id,
                                                     .function = v[i].info.function,
                                                     .reason = adopt_action_to_string(v[i].action) },
                          "Dropped pinned injection %016" PRIx64 " on '%s' at start: %s", v[i].info.id,
                          v[i].info.function, adopt_action_to_string(v[i].action));
        }
        /* Owner records whose pins are gone. */
        injection_store_prune(injection_alive, m);
        return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload_policy(userdata);
        return 0;
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        manager_stop(m);
        return sd_event_exit(m->event, 0);
}

void manager_stop(Manager *m) {
        /* Nothing will be armed again: detach each site as it empties, and
         * the lingering ones now, and free each program as its site goes,
         * rather than empty its maps for a reuse that will not come. */
        engine_set_site_linger(m->engine, 0);
        engine_set_site_cache(m->engine, 0, 0);
        if (m->options.keep_on_exit) {
                log_info("Stopping, keeping %zu injection(s) armed (--keep-on-exit).", m->n_injections);
                return;
        }
        while (m->n_injections > 0)
                (void) manager_remove(m, m->injections[0], REMOVE_CANCELLED);
}

static int on_event_exit(sd_event_source *s, void *userdata) {
        manager_requests_abort(userdata);
        return 0;
}

int manager_new(const ManagerOptions *o, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->options = *o;
        if (!m->options.max_active)
                m->options.max_active = MANAGER_MAX_ACTIVE_DEFAULT;
        if (!m->options.max_observe)
                m->options.max_observe = MANAGER_MAX_OBSERVE_DEFAULT;
        if (!m->options.max_observe_per_user)
                m->options.max_observe_per_user = MANAGER_MAX_OBSERVE_PER_USER_DEFAULT;
        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        /* Before sd-bus's own exit handler (priority 0) flushes and closes
         * the bus: the answers go out with that flush. */
        r = sd_event_add_exit(m->event, &m->exit_source, on_event_exit, m);
        if (r >= 0)
                r = sd_event_source_set_priority(m->exit_source, SD_EVENT_PRIORITY_IMPORTANT);
        if (r < 0)
                return r;
        r = engine_new(o->pin_root, &m->engine);
        if (r < 0)
                return r;
        engine_set_site_linger(m->engine, o->site_linger_usec);
        engine_set_site_cache(m->engine, o->site_cache_usec, o->site_cache_max);
        /* 0: the engine's default. */
        r = o->max_per_function ? engine_set_max_per_function(m->engine, o->max_per_function) : 0;
        if (r < 0)
                return log_error_errno(r, "Invalid number of injections per function %" PRIu32 ": %m",
                                       o->max_per_function);
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        pending_requests_free(m);
        sd_event_source_disable_unref(m->arm_stepper);
        sd_event_source_disable_unref(m->arm_nudge);
        manage_checks_free(m);
        for (size_t i = 0; i < m->n_injections; i++)
                injection_free(m->injections[i]);
        free(m->injections);
        free(m->rates);
        free(m->kmsg_rates);
        sd_event_source_disable_unref(m->events_source);
        ring_buffer__free(m->events);
        sd_event_source_disable_unref(m->sighup);
        sd_event_source_disable_unref(m->sigterm);
        sd_event_source_disable_unref(m->sigint);
        sd_event_source_disable_unref(m->exit_source);
        sd_event_source_disable_unref(m->site_cache_timer);
        free(m->listeners);
        polkit_context_free(m->polkit);
        policy_glue_free(m->policy);
        engine_free(m->engine);
        sd_event_unref(m->event);
        free(m);
        return NULL;
}

int manager_start(Manager *m, sd_bus *bus) {
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(negative_errno(), "Failed to block signals: %m");
        r = sd_event_add_signal(m->event, &m->sighup, SIGHUP, on_sighup, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &m->sigterm, SIGTERM, on_sigterm, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &m->sigint, SIGINT, on_sigterm, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch signals: %m");

        r = policy_glue_load(m->options.policy_dirs, &m->policy);
        if (r < 0)
                log_warning_errno(r, "No policy loaded, every unprivileged request will be refused: %m");

        r = polkit_context_new(m->event, bus, m->options.polkit_mode, &m->polkit);
        if (r < 0)
                return log_error_errno(r, "Failed to set up polkit: %m");

        r = adopt(m);
        if (r < 0)
                return r;
        /* tags.bpf.c and the kprobe program every kprobe site shares,
         * loaded and verified once for our lifetime: no request pays for
         * them. */
        r = engine_preload(m->engine);
        if (r < 0)
                log_debug_errno(r, "Cannot load the shared programs now, the first request that needs one will: %m");
        if (m->n_injections > 0) {
                r = manager_open_events(m);
                if (r < 0)
                        log_warning_errno(r, "Cannot read injected-fault events, ignoring: %m");
                for (size_t i = 0; i < m->n_injections; i++)
                        manager_publish_added(m, m->injections[i]);
        }
        return 0;
}
