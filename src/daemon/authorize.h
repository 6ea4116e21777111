/* SPDX-License-Identifier: MIT */
#pragma once

/* Who may have what, decided in one place: the per-user request rate, the
 * policy's verdict, the per-user and global limits on active injections,
 * and which polkit action the request then needs. */

#include "manager-types.h"
#include "policy-check.h"
#include "polkit.h"
#include "scope-resolve.h"

/* Counts one Inject call of c's user; -EBUSY past the per-minute rate.
 * Called before the request is examined further, so that malformed and
 * refused requests count too. */
int authorize_rate(Manager *m, const Caller *c, InjectError *err);

/* The daemon-wide limit on active injections, of which the last
 * reserved_active are kept for privileged callers. */
int authorize_global_limit(Manager *m, const Caller *c, InjectError *err);

/* Whether c may start one more Observe session, holding mine (of c's
 * unprivileged uid) of all running (observe_session_count()): its user's
 * share (--max-observe-per-user; privileged callers have none) and the
 * daemon's (--max-observe, of which the last MANAGER_OBSERVE_RESERVED are
 * kept for privileged callers). -EUSERS (LimitExceeded) saying which limit. */
int authorize_observe(Manager *m, const Caller *c, unsigned mine, unsigned all, InjectError *err);

/* The policy's verdict on req for scope, then the limits. verdict is
 * filled as far as the decision went (its rule names a refusal's rule).
 * For a foreign scope, explicit gets the verdict of a rule that names it
 * ("foreign-process", "foreign-cgroup", "global"), which is what counts
 * when polkit's answer does not (authorize_polkit_vouches()); its rule
 * stays NULL if no rule does. */
int authorize_request(Manager *m, const Caller *c, const InjectRequest *req, const ScopeResolution *scope,
                      PolicyVerdict *verdict, PolicyVerdict *explicit, InjectError *err);

/* Whether res is a yes that polkit itself gave for c: not a fallback of
 * --polkit=auto or off, and not for an unprivileged uid 0, whom polkitd
 * authorizes for everything (root in a container is uid 0 too). */
bool authorize_polkit_vouches(const Caller *c, const PolkitResult *res);

/* The polkit action a request for scope needs. */
const char *authorize_polkit_action(const ScopeResolution *scope);

/* The requester as polkit knows it: its bus name on D-Bus, its process
 * (with its start time) on Varlink. */
PolkitSubject authorize_polkit_subject(const Caller *c);
