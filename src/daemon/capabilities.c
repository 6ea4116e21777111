/* SPDX-License-Identifier: MIT */
/* The capabilities document (GetCapabilities on both APIs): what this
 * kernel offers and why, how many functions each backend can fail, and
 * what the policy lets this caller do. docs/dbus-api.md describes it. */

#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include "errno-name.h"
#include "manager.h"
#include "policy-check.h"
#include "policy.h"
#include "probe.h"

static json_object *strv_json(const char *const *v, size_t n) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++)
                json_object_array_add(a, json_object_new_string(v[i]));
        return a;
}

/* {available, reason, missing_config[], needs_config[]}; an unavailable
 * feature also keeps the keys of the first version of this document:
 * errno (its name) and needs (the options, one string). */
static json_object *finding_json(const KernelProbe *p, ProbeFeature f) {
        const ProbeFinding *x = kernel_probe_get(p, f);
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "available", json_object_new_boolean(x->error == 0));
        json_object_object_add(o, "reason", json_object_new_string(x->reason));
        json_object_object_add(o, "missing_config", strv_json(x->missing, x->n_missing));
        json_object_object_add(o, "needs_config", strv_json(x->needs, x->n_needs));
        if (x->error < 0) {
                char needs[512] = "";
                size_t l = 0;

                json_object_object_add(o, "errno", json_object_new_string(errno_to_name(-x->error) ?: "?"));
                for (size_t i = 0; i < x->n_needs && l < sizeof(needs); i++)
                        l += (size_t) snprintf(needs + l, sizeof(needs) - l, "%s%s", i ? ", " : "", x->needs[i]);
                if (needs[0])
                        json_object_object_add(o, "needs", json_object_new_string(needs));
        }
        return o;
}

static json_object *config_json(const KernelProbe *p) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "readable", json_object_new_boolean(kconfig_readable(p->config)));
        if (kconfig_readable(p->config))
                json_object_object_add(o, "source", json_object_new_string(p->config->source));
        else if (p->config && p->config->tried)
                json_object_object_add(o, "tried", json_object_new_string(p->config->tried));
        return o;
}

/* How many functions each backend can fail, and how many of them the
 * policy lets this caller fail. */
static json_object *functions_json(Manager *m, const Caller *c, unsigned *ret_kprobe, unsigned *ret_fmod_ret) {
        const FunctionTable *t;
        unsigned n_kprobe = 0, n_fmod_ret = 0, n_any = 0, n_allowed = 0, n_listed = 0, n_lsm = 0;
        json_object *o;

        if (engine_functions(m->engine, &t) < 0)
                t = NULL;
        for (size_t i = 0; t && i < t->n; i++) {
                const InjectableFunction *f = &t->funcs[i];
                unsigned mask = engine_function_backends(m->engine, f);

                n_listed += f->listed;
                n_lsm += f->type == FUNC_TYPE_LSM;
                n_kprobe += !!(mask & (1u << BACKEND_KPROBE));
                n_fmod_ret += !!(mask & (1u << BACKEND_FMOD_RET));
                if (mask) {
                        n_any++;
                        if (c->uid == 0 || policy_glue_function_allowed(m->policy, c, f->name))
                                n_allowed++;
                }
        }
        *ret_kprobe = n_kprobe;
        *ret_fmod_ret = n_fmod_ret;

        o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "injectable", json_object_new_int64(n_any));
        json_object_object_add(o, "kprobe", json_object_new_int64(n_kprobe));
        json_object_object_add(o, "fmod_ret", json_object_new_int64(n_fmod_ret));
        json_object_object_add(o, "listed", json_object_new_int64(n_listed));
        json_object_object_add(o, "lsm_hooks", json_object_new_int64(n_lsm));
        json_object_object_add(o, "allowed", json_object_new_int64(n_allowed));
        return o;
}

static json_object *rule_json(const PolicyRule *r) {
        json_object *o = json_object_new_object(), *a;

        if (!o)
                return NULL;
        json_object_object_add(o, "name", json_object_new_string(r->name));
        json_object_object_add(o, "functions", strv_json((const char *const *) r->functions, r->n_functions));
        a = json_object_new_array();
        if (r->any_errno)
                json_object_array_add(a, json_object_new_string("*"));
        for (size_t i = 0; i < r->n_errors; i++) {
                const char *n = errno_to_name(r->errors[i]);

                json_object_array_add(a, n ? json_object_new_string(n) : json_object_new_int(r->errors[i]));
        }
        json_object_object_add(o, "errors", a);
        if (r->n_retvals > 0) {
                a = json_object_new_array();
                for (size_t i = 0; i < r->n_retvals; i++)
                        json_object_array_add(a, json_object_new_int64(r->retvals[i]));
                json_object_object_add(o, "retvals", a);
        }
        a = json_object_new_array();
        for (PolicyScope s = 0; s < _POLICY_SCOPE_MAX; s++)
                if (r->scopes & (1u << s))
                        json_object_array_add(a, json_object_new_string(policy_scope_to_string(s)));
        json_object_object_add(o, "scopes", a);
        json_object_object_add(o, "max_duration_usec", json_object_new_uint64(r->max_duration_usec));
        json_object_object_add(o, "max_active", json_object_new_int64(r->max_active));
        return o;
}

/* The rules in force for this caller. Root is exempt from the JSON policy
 * (policy-glue.c): it says so instead of listing rules. */
static json_object *policy_json(Manager *m, const Caller *c) {
        _cleanup_free_ const PolicyRule **rules = NULL;
        json_object *o = json_object_new_object(), *a;
        size_t n = 0;

        if (!o)
                return NULL;
        json_object_object_add(o, "uid", json_object_new_int64(c->uid));
        if (c->user_name)
                json_object_object_add(o, "user", json_object_new_string(c->user_name));
        json_object_object_add(o, "root", json_object_new_boolean(c->uid == 0));
        if (c->uid == 0) {
                json_object_object_add(o, "max_duration_usec", json_object_new_uint64(ROOT_DEFAULT_DURATION_USEC));
                return o;
        }
        a = json_object_new_array();
        if (m->policy &&
            policy_rules_for(m->policy, &(PolicySubject) {
                                     .uid = c->uid,
                                     .gid = c->gid,
                                     .groups = c->groups,
                                     .n_groups = c->n_groups > 0 ? (size_t) c->n_groups : 0,
                                     .user_name = c->user_name,
                             }, &rules, &n) >= 0)
                for (size_t i = 0; i < n; i++)
                        json_object_array_add(a, rule_json(rules[i]));
        json_object_object_add(o, "rules", a);
        return o;
}

int manager_capabilities_json(Manager *m, const Caller *c, json_object **ret) {
        json_object *o, *b, *l, *f, *fn;
        const KernelProbe *p;
        unsigned n_kprobe = 0, n_fmod_ret = 0;
        struct utsname u;

        p = engine_probe(m->engine);
        if (!p)
                return -ENOMEM;
        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        if (uname(&u) >= 0)
                json_object_object_add(o, "kernel", json_object_new_string(u.release));
        json_object_object_add(o, "kernel_config", config_json(p));
        if (p->lockdown[0]) {
                json_object *ld = json_object_new_object();

                json_object_object_add(ld, "mode", json_object_new_string(p->lockdown));
                json_object_object_add(ld, "source", json_object_new_string(p->lockdown_source));
                /* Without securityfs, only the least it can be is known. */
                json_object_object_add(ld, "exact", json_object_new_boolean(p->lockdown_exact));
                json_object_object_add(o, "lockdown", ld);
        }
        json_object_object_add(o, "injection", finding_json(p, PROBE_INJECTION));

        fn = functions_json(m, c, &n_kprobe, &n_fmod_ret);
        b = json_object_new_object();
        json_object_object_add(b, "kprobe", finding_json(p, PROBE_BACKEND_KPROBE));
        json_object_object_add(json_object_object_get(b, "kprobe"), "functions", json_object_new_int64(n_kprobe));
        json_object_object_add(b, "fmod_ret", finding_json(p, PROBE_BACKEND_FMOD_RET));
        json_object_object_add(json_object_object_get(b, "fmod_ret"), "functions", json_object_new_int64(n_fmod_ret));
        json_object_object_add(o, "backends", b);

        f = json_object_new_object();
        for (ProbeFeature i = 0; i < PROBE_FIRST_DERIVED; i++)
                json_object_object_add(f, probe_feature_to_string(i), finding_json(p, i));
        json_object_object_add(o, "features", f);
        /* The first version's top-level features, kept for its readers. */
        json_object_object_add(o, "bpf", finding_json(p, PROBE_BPF));
        json_object_object_add(o, "tracing", finding_json(p, PROBE_TRACING));
        json_object_object_add(o, "btf", finding_json(p, PROBE_BTF));
        json_object_object_add(o, "error_injection_list", finding_json(p, PROBE_ERROR_INJECTION_LIST));

        json_object_object_add(o, "functions", fn);
        json_object_object_add(o, "policy", policy_json(m, c));

        l = json_object_new_object();
        json_object_object_add(l, "max_duration_usec", json_object_new_uint64(ENGINE_MAX_DURATION_USEC));
        json_object_object_add(l, "max_active", json_object_new_int64(m->options.max_active));
        json_object_object_add(l, "max_per_function", json_object_new_int64(INJECT_MAX_SLOTS));
        json_object_object_add(l, "rate_per_minute", json_object_new_int64(m->options.rate_per_minute));
        json_object_object_add(l, "max_callers", json_object_new_int64(INJECT_MAX_CALLERS));
        json_object_object_add(o, "limits", l);
        json_object_object_add(o, "polkit", json_object_new_string(polkit_mode_to_string(m->options.polkit_mode)));
        {
                unsigned active = 0;

                for (size_t i = 0; i < m->n_injections; i++)
                        active += m->injections[i]->owner_uid == c->uid;
                json_object_object_add(o, "active_injections", json_object_new_int64(active));
        }
        *ret = o;
        return 0;
}
