/* SPDX-License-Identifier: MIT */

/* Decisions: which enabled rules name a subject, whether one of them
 * allows a request, and if none does, the most specific reason and a
 * sentence for the requester. */

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "errno-name.h"
#include "policy-cgroup.h"
#include "policy-model.h"

static const char *const policy_denial_error_table[_POLICY_DENIAL_MAX] = {
        [POLICY_DENIAL_NONE]     = NULL,
        [POLICY_DENIAL_USER]     = POLICY_ERROR_USER_NOT_IN_POLICY,
        [POLICY_DENIAL_FUNCTION] = POLICY_ERROR_FUNCTION_NOT_ALLOWED,
        [POLICY_DENIAL_VALUE]    = POLICY_ERROR_ERROR_NOT_ALLOWED,
        [POLICY_DENIAL_SCOPE]    = POLICY_ERROR_SCOPE_NOT_ALLOWED,
        [POLICY_DENIAL_DURATION] = POLICY_ERROR_DURATION_TOO_LONG,
        [POLICY_DENIAL_KERNEL_LOG] = POLICY_ERROR_KERNEL_LOG_NOT_ALLOWED,
};

const char *policy_denial_to_error_name(PolicyDenial d) {
        if ((unsigned) d >= _POLICY_DENIAL_MAX)
                return NULL;
        return policy_denial_error_table[d];
}

static bool rule_names_subject(const PolicyRule *r, const PolicySubject *s) {
        if (r->all_users)
                return true;

        for (size_t i = 0; i < r->n_uids; i++)
                if (r->uids[i] == s->uid)
                        return true;

        for (size_t i = 0; i < r->n_gids; i++) {
                if (r->gids[i] == s->gid)
                        return true;
                for (size_t k = 0; k < s->n_groups; k++)
                        if (r->gids[i] == s->groups[k])
                                return true;
        }

        return false;
}

/* Whether the subject's cgroup is one r names. A cgroup we cannot match
 * (unknown, or not canonical) grants nothing and is refused by every deny
 * rule that names cgroups: an unclear answer never widens what is allowed. */
static bool rule_matches_cgroup(const PolicyRule *r, const PolicySubject *s) {
        if (r->n_cgroups == 0)
                return true;
        if (!s->cgroup || !policy_cgroup_path_is_canonical(s->cgroup))
                return r->deny;

        for (size_t i = 0; i < r->n_cgroups; i++)
                if (policy_cgroup_match(r->cgroups[i], s->cgroup))
                        return true;
        return false;
}

bool policy_rule_applies(const PolicyRule *r, const PolicySubject *s) {
        if (!r || !s || !r->enabled)
                return false;
        return rule_names_subject(r, s) && rule_matches_cgroup(r, s);
}

int policy_rules_for(const Policy *p, const PolicySubject *s, const PolicyRule ***ret, size_t *ret_n) {
        const PolicyRule **a = NULL;
        size_t n = 0;

        if (!p || !s || !ret || !ret_n)
                return -EINVAL;

        for (size_t i = 0; i < p->n_rules; i++) {
                const PolicyRule **b;

                if (p->rules[i]->deny || !policy_rule_applies(p->rules[i], s))
                        continue;

                b = reallocarray(a, n + 1, sizeof(*a));
                if (!b) {
                        free(a);
                        return -ENOMEM;
                }
                a = b;
                a[n++] = p->rules[i];
        }

        *ret = a;
        *ret_n = n;
        return 0;
}

static bool rule_matches_function(const PolicyRule *r, const char *function) {
        for (size_t i = 0; i < r->n_functions; i++)
                if (fnmatch(r->functions[i], function, 0) == 0)
                        return true;
        return false;
}

static bool request_is_errno(const PolicyRequest *q) {
        return q->is_errno && q->retval >= -ERRNO_MAX && q->retval <= -1;
}

static bool rule_allows_value(const PolicyRule *r, const PolicyRequest *q) {
        if (request_is_errno(q)) {
                if (r->any_errno)
                        return true;
                for (size_t i = 0; i < r->n_errors; i++)
                        if (r->errors[i] == (int) -q->retval)
                                return true;
        }

        for (size_t i = 0; i < r->n_retvals; i++)
                if (r->retvals[i] == q->retval)
                        return true;

        return false;
}

/* Whether one of r's "devices" patterns matches the disk's name. */
static bool rule_names_device(const PolicyRule *r, const char *device) {
        if (!device)
                return false;
        for (size_t i = 0; i < r->n_devices; i++)
                if (fnmatch(r->devices[i], device, 0) == 0)
                        return true;
        return false;
}

/* How far r goes along with q: the first check it fails, or NONE. */
static PolicyDenial rule_evaluate(const PolicyRule *r, const PolicyRequest *q) {
        if (!rule_matches_function(r, q->function))
                return POLICY_DENIAL_FUNCTION;
        if (!rule_allows_value(r, q))
                return POLICY_DENIAL_VALUE;
        if (!(r->scopes & (1u << q->scope)))
                return POLICY_DENIAL_SCOPE;
        if (q->scope == POLICY_SCOPE_FOREIGN_DEVICE && !rule_names_device(r, q->device))
                return POLICY_DENIAL_SCOPE;
        if (q->duration_usec > r->max_duration_usec)
                return POLICY_DENIAL_DURATION;
        if (q->kernel_log && !r->kernel_log)
                return POLICY_DENIAL_KERNEL_LOG;
        return POLICY_DENIAL_NONE;
}

/* Appends to buf[0..n) at *l, truncating with "..." if full. */
_printf_(4, 5)
static void append(char *buf, size_t n, size_t *l, const char *fmt, ...) {
        va_list ap;
        int k;

        if (*l >= n - 1)
                return;

        va_start(ap, fmt);
        k = vsnprintf(buf + *l, n - *l, fmt, ap);
        va_end(ap);

        if (k < 0)
                return;
        if ((size_t) k >= n - *l) {
                *l = n - 1;
                if (n >= 4)
                        memcpy(buf + n - 4, "...", 4);
                return;
        }
        *l += (size_t) k;
}

static void format_values(const PolicyRule *r, char *buf, size_t n) {
        size_t l = 0;

        buf[0] = '\0';
        if (r->any_errno)
                append(buf, n, &l, "any error");
        for (size_t i = 0; i < r->n_errors; i++) {
                const char *name = errno_to_name(r->errors[i]);

                if (name)
                        append(buf, n, &l, "%s%s", l > 0 ? ", " : "", name);
                else
                        append(buf, n, &l, "%s%d", l > 0 ? ", " : "", r->errors[i]);
        }
        for (size_t i = 0; i < r->n_retvals; i++)
                append(buf, n, &l, "%sretval %" PRId64, l > 0 ? ", " : "", r->retvals[i]);
}

static void format_scopes(unsigned scopes, char *buf, size_t n) {
        size_t l = 0;

        buf[0] = '\0';
        for (int i = 0; i < _POLICY_SCOPE_MAX; i++)
                if (scopes & (1u << i))
                        append(buf, n, &l, "%s%s", l > 0 ? ", " : "", policy_scope_to_string(i));
}

static const char *subject_label(const PolicySubject *s, char *buf, size_t n) {
        if (s->user_name)
                (void) snprintf(buf, n, "user '%s'", s->user_name);
        else
                (void) snprintf(buf, n, "uid %u", (unsigned) s->uid);
        return buf;
}

static const char *cgroup_label(const PolicySubject *s) {
        return s->cgroup ?: "(unknown)";
}

static void decision_describe(PolicyDecision *d, const PolicyRule *rule, const PolicySubject *s,
                              const PolicyRequest *q) {
        char who[96], list[256];
        const char *ename;

        switch (d->denial) {
        case POLICY_DENIAL_NONE:
                (void) snprintf(d->message, sizeof(d->message), "Allowed by policy rule '%s'.", rule->name);
                break;

        case POLICY_DENIAL_USER:
                if (d->by_cgroup)
                        (void) snprintf(d->message, sizeof(d->message),
                                        "No policy rule lets %s inject faults from cgroup '%s'.",
                                        subject_label(s, who, sizeof(who)), cgroup_label(s));
                else
                        (void) snprintf(d->message, sizeof(d->message),
                                        "No policy rule lets %s inject faults.", subject_label(s, who, sizeof(who)));
                break;

        case POLICY_DENIAL_FUNCTION:
                if (rule && rule->deny && rule->n_cgroups > 0)
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' denies %s making '%s' fail from cgroup '%s'.",
                                        rule->name, subject_label(s, who, sizeof(who)), q->function,
                                        cgroup_label(s));
                else if (rule && rule->deny)
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' denies %s making '%s' fail.",
                                        rule->name, subject_label(s, who, sizeof(who)), q->function);
                else if (d->by_cgroup)
                        (void) snprintf(d->message, sizeof(d->message),
                                        "No policy rule lets %s make '%s' fail from cgroup '%s'.",
                                        subject_label(s, who, sizeof(who)), q->function, cgroup_label(s));
                else
                        (void) snprintf(d->message, sizeof(d->message),
                                        "No policy rule lets %s make '%s' fail.",
                                        subject_label(s, who, sizeof(who)), q->function);
                break;

        case POLICY_DENIAL_VALUE:
                format_values(rule, list, sizeof(list));
                ename = request_is_errno(q) ? errno_to_name((int) -q->retval) : NULL;
                if (request_is_errno(q) && ename)
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' does not allow error %s for '%s' (allowed: %s).",
                                        rule->name, ename, q->function, list);
                else if (request_is_errno(q))
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' does not allow error %" PRId64 " for '%s' (allowed: %s).",
                                        rule->name, -q->retval, q->function, list);
                else
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' does not allow return value %" PRId64 " for '%s' (allowed: %s).",
                                        rule->name, q->retval, q->function, list);
                break;

        case POLICY_DENIAL_SCOPE:
                if (rule->scopes & (1u << q->scope)) {  /* a device its "devices" do not name */
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' does not grant device '%s' for '%s' (its \"devices\" "
                                        "do not name it), and it is not yours (a loop device on a file you own).",
                                        rule->name, q->device ?: "?", q->function);
                        break;
                }
                format_scopes(rule->scopes, list, sizeof(list));
                (void) snprintf(d->message, sizeof(d->message),
                                "Policy rule '%s' does not allow scope '%s' for '%s' (allowed: %s).",
                                rule->name, policy_scope_to_string(q->scope), q->function, list);
                break;

        case POLICY_DENIAL_DURATION:
                (void) snprintf(d->message, sizeof(d->message),
                                "Duration %s exceeds the limit of %s set by policy rule '%s'.",
                                FORMAT_DURATION(q->duration_usec), FORMAT_DURATION(rule->max_duration_usec),
                                rule->name);
                break;

        case POLICY_DENIAL_KERNEL_LOG:
                (void) snprintf(d->message, sizeof(d->message),
                                "Policy rule '%s' does not allow kernel log records of the faults of '%s' "
                                "(it would need \"kernel-log\": true).", rule->name, q->function);
                break;

        default:
                d->message[0] = '\0';
        }
}

/* The first enabled deny rule that applies to s and names function. */
static const PolicyRule *deny_rule_for(const Policy *p, const PolicySubject *s, const char *function) {
        for (size_t i = 0; i < p->n_rules; i++)
                if (p->rules[i]->deny && policy_rule_applies(p->rules[i], s) &&
                    rule_matches_function(p->rules[i], function))
                        return p->rules[i];
        return NULL;
}

int policy_check(const Policy *p, const PolicySubject *s, const PolicyRequest *q, PolicyDecision *ret) {
        PolicyDenial best = POLICY_DENIAL_USER;
        const PolicyRule *best_rule = NULL, *deny;
        /* Rules that name the subject but not from its cgroup: any, and
         * any for this function. A refusal then says where. */
        bool cgroup_excluded = false, cgroup_excluded_function = false;
        PolicyDecision d = {};

        if (!p || !s || !q || !ret || !q->function || q->function[0] == '\0' ||
            (unsigned) q->scope >= _POLICY_SCOPE_MAX)
                return -EINVAL;

        /* Deny beats allow, wherever either stands in the order. */
        deny = deny_rule_for(p, s, q->function);
        if (deny) {
                best = POLICY_DENIAL_FUNCTION;
                best_rule = deny;
        }

        for (size_t i = 0; !deny && i < p->n_rules; i++) {
                const PolicyRule *r = p->rules[i];
                PolicyDenial e;

                if (r->deny || !r->enabled || !rule_names_subject(r, s))
                        continue;
                if (!rule_matches_cgroup(r, s)) {
                        cgroup_excluded = true;
                        cgroup_excluded_function = cgroup_excluded_function || rule_matches_function(r, q->function);
                        continue;
                }

                e = rule_evaluate(r, q);
                if (e == POLICY_DENIAL_NONE) {
                        best = e;
                        best_rule = r;
                        break;
                }

                if (!best_rule || e > best ||
                    /* Of the rules that fail on duration only, name the
                     * most generous: it says how long one may ask for. */
                    (e == best && e == POLICY_DENIAL_DURATION &&
                     r->max_duration_usec > best_rule->max_duration_usec)) {
                        best = e;
                        best_rule = r;
                }
        }

        d.denial = best;
        d.allowed = best == POLICY_DENIAL_NONE;
        d.error_name = policy_denial_to_error_name(best);

        /* Only these name one rule; for the others no single rule refused. */
        if (best_rule && (best != POLICY_DENIAL_FUNCTION || best_rule->deny))
                (void) snprintf(d.rule, sizeof(d.rule), "%s", best_rule->name);
        if (d.rule[0])
                d.by_cgroup = best_rule->n_cgroups > 0;
        else
                d.by_cgroup = (best == POLICY_DENIAL_USER && cgroup_excluded) ||
                              (best == POLICY_DENIAL_FUNCTION && cgroup_excluded_function);

        if (d.allowed) {
                d.max_active = best_rule->max_active;
                d.max_duration_usec = best_rule->max_duration_usec;
        } else if (best == POLICY_DENIAL_DURATION)
                d.max_duration_usec = best_rule->max_duration_usec;

        decision_describe(&d, best_rule, s, q);

        *ret = d;
        return 0;
}

bool policy_function_allowed(const Policy *p, const PolicySubject *s, const char *function) {
        if (!p || !s || !function || deny_rule_for(p, s, function))
                return false;

        for (size_t i = 0; i < p->n_rules; i++)
                if (!p->rules[i]->deny && policy_rule_applies(p->rules[i], s) &&
                    rule_matches_function(p->rules[i], function))
                        return true;

        return false;
}
