/* SPDX-License-Identifier: MIT */
/* The authorization step of the request path (request-pipeline.c): rate,
 * policy, limits, and the polkit action to ask for. Privileged callers
 * pass the rate and the per-user limit, never the global one; the last
 * reserved_active of the global one are theirs alone, so that users
 * together cannot lock them out. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "authorize.h"
#include "injection.h"
#include "polkit.h"
#include "time-util.h"

struct RateEntry {
        uid_t uid;
        uint64_t window;        /* minute number */
        unsigned count;
};

static bool rate_ok(Manager *m, const Caller *c) {
        uint64_t minute = now_nsec(CLOCK_BOOTTIME) / (60ULL * 1000000000ULL);
        struct RateEntry *e = NULL;

        if (c->privileged || m->options.rate_per_minute == 0)
                return true;
        for (size_t i = 0; i < m->n_rates; i++)
                if (m->rates[i].uid == c->uid)
                        e = &m->rates[i];
        if (!e) {
                struct RateEntry *v = realloc(m->rates, (m->n_rates + 1) * sizeof(*v));
                if (!v)
                        return false;
                m->rates = v;
                e = &m->rates[m->n_rates++];
                *e = (struct RateEntry) { .uid = c->uid, .window = minute };
        }
        if (e->window != minute) {
                e->window = minute;
                e->count = 0;
        }
        return ++e->count <= m->options.rate_per_minute;
}

int authorize_rate(Manager *m, const Caller *c, InjectError *err) {
        if (!rate_ok(m, c))
                return inject_error_set(err, -EBUSY, INJECT_ERROR_LIMIT,
                                        "Too many requests: at most %u injections per minute per user",
                                        m->options.rate_per_minute);
        return 0;
}

/* The verdict of a rule that names the foreign target itself, if any. */
static int authorize_explicit(Manager *m, const Caller *c, const InjectRequest *req, const ScopeResolution *scope,
                              const PolicyVerdict *verdict, PolicyVerdict *ret) {
        InjectError ignored = {};
        int r;

        if (!scope->foreign || c->privileged)
                return 0;
        if (scope->kind == INJECT_SCOPE_GLOBAL) {
                /* Only a rule naming "global" got this far. */
                *ret = (PolicyVerdict) { .rule = strdup(verdict->rule), .max_duration_usec = verdict->max_duration_usec,
                                         .max_active = verdict->max_active };
                return ret->rule ? 0 : -ENOMEM;
        }
        r = policy_glue_check(m->policy, c, req, scope->kind, true, ret, &ignored);
        if (r == -ENOMEM)
                return r;
        return 0;       /* refused: no rule names it, ret stays empty */
}

int authorize_global_limit(Manager *m, const Caller *c, InjectError *err) {
        unsigned all = manager_count_active(m, 0, true);
        unsigned reserved = m->options.reserved_active < m->options.max_active ? m->options.reserved_active : 0;

        if (all >= m->options.max_active)
                return inject_error_set(err, -EUSERS, INJECT_ERROR_LIMIT,
                                        "The daemon holds its maximum of %u active injections",
                                        m->options.max_active);
        if (!c->privileged && all >= m->options.max_active - reserved)
                return inject_error_set(err, -EUSERS, INJECT_ERROR_LIMIT,
                                        "The daemon holds %u active injections; the last %u of its %u are kept "
                                        "for privileged callers", all, reserved, m->options.max_active);
        return 0;
}

int authorize_observe(Manager *m, const Caller *c, unsigned mine, unsigned all, InjectError *err) {
        unsigned max = m->options.max_observe, reserved = MANAGER_OBSERVE_RESERVED < max ? MANAGER_OBSERVE_RESERVED : 0;

        if (!c->privileged) {
                if (mine >= m->options.max_observe_per_user)
                        return inject_error_set(err, -EUSERS, INJECT_ERROR_LIMIT,
                                                "You have %u Observe sessions; at most %u per user "
                                                "(--max-observe-per-user)", mine, m->options.max_observe_per_user);
        }
        if (all >= max)
                return inject_error_set(err, -EUSERS, INJECT_ERROR_LIMIT,
                                        "The daemon holds its maximum of %u Observe sessions (--max-observe)", max);
        if (!c->privileged && all >= max - reserved)
                return inject_error_set(err, -EUSERS, INJECT_ERROR_LIMIT,
                                        "The daemon holds %u Observe sessions; the last %u of its %u (--max-observe) "
                                        "are kept for privileged callers", all, reserved, max);
        return 0;
}

int authorize_request(Manager *m, const Caller *c, const InjectRequest *req, const ScopeResolution *scope,
                      PolicyVerdict *verdict, PolicyVerdict *explicit, InjectError *err) {
        unsigned active;
        int r;

        r = policy_glue_check(m->policy, c, req, scope->kind, false, verdict, err);
        if (r < 0)
                return r;
        r = authorize_explicit(m, c, req, scope, verdict, explicit);
        if (r < 0)
                return r;
        active = manager_count_active(m, c->uid, false);
        if (!c->privileged && verdict->max_active && active >= verdict->max_active)
                return inject_error_set(err, -EUSERS, INJECT_ERROR_LIMIT,
                                        "You have %u active injections; rule '%s' allows at most %u",
                                        active, verdict->rule, verdict->max_active);
        return authorize_global_limit(m, c, err);
}

bool authorize_polkit_vouches(const Caller *c, const PolkitResult *res) {
        return res->allowed && res->how && strcmp(res->how, POLKIT_HOW_POLKIT) == 0 &&
               (c->uid != 0 || c->privileged);
}

const char *authorize_polkit_action(const ScopeResolution *scope) {
        /* Failing tasks that are not the caller's own is a separate grant. */
        return scope->foreign ? POLKIT_ACTION_INJECT_GLOBAL : POLKIT_ACTION_INJECT;
}

PolkitSubject authorize_polkit_subject(const Caller *c) {
        return (PolkitSubject) {
                .kind = c->transport == TRANSPORT_BUS ? POLKIT_SUBJECT_BUS_NAME : POLKIT_SUBJECT_PROCESS,
                .bus_name = c->bus_name,
                .pid = c->pid,
                .uid = c->uid,
                .start_time = c->start_ticks,
        };
}
