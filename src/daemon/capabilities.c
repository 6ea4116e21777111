/* SPDX-License-Identifier: MIT */
/* The capabilities document (GetCapabilities on both APIs): what this
 * kernel offers and why, how many functions each backend can fail, and
 * what the policy lets this caller do. docs/dbus-api.md describes it. */

#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include "errno-name.h"
#include "json-build.h"
#include "json-util.h"
#include "manager.h"
#include "policy-check.h"
#include "policy.h"
#include "probe.h"

/* Each *_json() below returns a new object, or NULL when out of memory,
 * like json-c's constructors, so that they nest in json_build_object(),
 * which turns a NULL into -ENOMEM. */

/* {available, reason, missing_config[], needs_config[]}; an unavailable
 * feature also keeps the keys of the first version of this document:
 * errno (its name) and needs (the options, one string). */
static json_object *finding_json(const KernelProbe *p, ProbeFeature f) {
        const ProbeFinding *x = kernel_probe_get(p, f);
        char needs[512] = "";
        json_object *o = NULL;

        for (size_t i = 0, l = 0; x->error < 0 && i < x->n_needs && l < sizeof(needs); i++)
                l += (size_t) snprintf(needs + l, sizeof(needs) - l, "%s%s", i ? ", " : "", x->needs[i]);

        if (json_build_object(&o,
                              JSON_PAIR_BOOL("available", x->error == 0),
                              JSON_PAIR_STRING("reason", x->reason),
                              JSON_PAIR_OBJECT("missing_config", json_new_strv((const char *const *) x->missing, x->n_missing)),
                              JSON_PAIR_OBJECT("needs_config", json_new_strv((const char *const *) x->needs, x->n_needs)),
                              JSON_PAIR_IF(x->error < 0, JSON_PAIR_STRING("errno", errno_to_name(-x->error) ?: "?")),
                              JSON_PAIR_IF(needs[0], JSON_PAIR_STRING("needs", needs)),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

/* A backend's finding, with how many functions it can fail. */
static json_object *backend_json(const KernelProbe *p, ProbeFeature f, unsigned n_functions) {
        json_object *o = finding_json(p, f);

        if (o && json_add_u64(o, "functions", n_functions) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static json_object *config_json(const KernelProbe *p) {
        bool readable = kconfig_readable(p->config);
        const char *tried = !readable && p->config ? p->config->tried : NULL;
        json_object *o = NULL;

        if (json_build_object(&o,
                              JSON_PAIR_BOOL("readable", readable),
                              JSON_PAIR_IF(readable, JSON_PAIR_STRING("source", readable ? p->config->source : NULL)),
                              JSON_PAIR_IF(tried, JSON_PAIR_STRING("tried", tried)),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

static json_object *lockdown_json(const KernelProbe *p) {
        json_object *o = NULL;

        if (json_build_object(&o,
                              JSON_PAIR_STRING("mode", p->lockdown),
                              JSON_PAIR_STRING("source", p->lockdown_source),
                              /* Without securityfs, only the least it can be is known. */
                              JSON_PAIR_BOOL("exact", p->lockdown_exact),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

/* How many functions each backend can fail, and how many of them the
 * policy lets this caller fail. */
static json_object *functions_json(Manager *m, const Caller *c, unsigned *ret_kprobe, unsigned *ret_fmod_ret) {
        const FunctionTable *t;
        unsigned n_kprobe = 0, n_fmod_ret = 0, n_any = 0, n_allowed = 0, n_listed = 0, n_lsm = 0;
        json_object *o = NULL;

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
                        if (c->privileged || policy_glue_function_allowed(m->policy, c, f->name))
                                n_allowed++;
                }
        }
        *ret_kprobe = n_kprobe;
        *ret_fmod_ret = n_fmod_ret;

        if (json_build_object(&o,
                              JSON_PAIR_U64("injectable", n_any),
                              JSON_PAIR_U64("kprobe", n_kprobe),
                              JSON_PAIR_U64("fmod_ret", n_fmod_ret),
                              JSON_PAIR_U64("listed", n_listed),
                              JSON_PAIR_U64("lsm_hooks", n_lsm),
                              JSON_PAIR_U64("allowed", n_allowed),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

static json_object *rule_errors_json(const PolicyRule *r) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        if (r->any_errno && json_append_string(a, "*") < 0)
                return NULL;
        for (size_t i = 0; i < r->n_errors; i++) {
                const char *n = errno_to_name(r->errors[i]);

                if (json_append(a, n ? json_object_new_string(n) : json_object_new_int(r->errors[i])) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

static json_object *rule_retvals_json(const PolicyRule *r) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (size_t i = 0; i < r->n_retvals; i++)
                if (json_append(a, json_object_new_int64(r->retvals[i])) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static json_object *rule_scopes_json(const PolicyRule *r) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (PolicyScope s = 0; s < _POLICY_SCOPE_MAX; s++)
                if ((r->scopes & (1u << s)) && json_append_string(a, policy_scope_to_string(s)) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static json_object *rule_json(const PolicyRule *r) {
        json_object *o = NULL;

        if (json_build_object(&o,
                              JSON_PAIR_STRING("name", r->name),
                              JSON_PAIR_IF(r->n_cgroups > 0,
                                           JSON_PAIR_OBJECT("cgroups", json_new_strv((const char *const *) r->cgroups,
                                                                                     r->n_cgroups))),
                              JSON_PAIR_OBJECT("functions", json_new_strv((const char *const *) r->functions, r->n_functions)),
                              JSON_PAIR_OBJECT("errors", rule_errors_json(r)),
                              JSON_PAIR_IF(r->n_retvals > 0, JSON_PAIR_OBJECT("retvals", rule_retvals_json(r))),
                              JSON_PAIR_OBJECT("scopes", rule_scopes_json(r)),
                              JSON_PAIR_U64("max_duration_usec", r->max_duration_usec),
                              JSON_PAIR_I64("max_active", r->max_active),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

/* The rules in force for this caller. */
static json_object *rules_json(Manager *m, const Caller *c) {
        _cleanup_free_ const PolicyRule **rules = NULL;
        _cleanup_json_ json_object *a = json_object_new_array();
        size_t n = 0;

        if (!a)
                return NULL;
        if (m->policy &&
            policy_rules_for(m->policy, &(PolicySubject) {
                                     .uid = c->uid,
                                     .gid = c->gid,
                                     .groups = c->groups,
                                     .n_groups = c->n_groups > 0 ? (size_t) c->n_groups : 0,
                                     .user_name = c->user_name,
                                     .cgroup = c->cgroup,
                             }, &rules, &n) >= 0)
                for (size_t i = 0; i < n; i++)
                        if (json_append(a, rule_json(rules[i])) < 0)
                                return NULL;
        return TAKE_PTR(a);
}

/* What the policy lets this caller do. Root is exempt from the JSON policy
 * (policy-check.c): it says so instead of listing rules. */
static json_object *policy_json(Manager *m, const Caller *c) {
        bool root = c->privileged;
        json_object *o = NULL;

        if (json_build_object(&o,
                              JSON_PAIR_I64("uid", c->uid),
                              JSON_PAIR_IF(c->user_name, JSON_PAIR_STRING("user", c->user_name)),
                              JSON_PAIR_IF(c->cgroup, JSON_PAIR_STRING("cgroup", c->cgroup)),
                              JSON_PAIR_BOOL("root", root),
                              JSON_PAIR_IF(root, JSON_PAIR_U64("max_duration_usec", ROOT_DEFAULT_DURATION_USEC)),
                              JSON_PAIR_IF(!root, JSON_PAIR_OBJECT("rules", root ? NULL : rules_json(m, c))),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

static json_object *features_json(const KernelProbe *p) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        for (ProbeFeature i = 0; i < PROBE_FIRST_DERIVED; i++)
                if (json_add(o, probe_feature_to_string(i), finding_json(p, i)) < 0)
                        return NULL;
        return TAKE_PTR(o);
}

static json_object *backends_json(const KernelProbe *p, unsigned n_kprobe, unsigned n_fmod_ret) {
        json_object *o = NULL;

        if (json_build_object(&o,
                              JSON_PAIR_OBJECT("kprobe", backend_json(p, PROBE_BACKEND_KPROBE, n_kprobe)),
                              JSON_PAIR_OBJECT("fmod_ret", backend_json(p, PROBE_BACKEND_FMOD_RET, n_fmod_ret)),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

static json_object *limits_json(Manager *m) {
        json_object *o = NULL;

        if (json_build_object(&o,
                              JSON_PAIR_U64("max_duration_usec", ENGINE_MAX_DURATION_USEC),
                              JSON_PAIR_I64("max_active", m->options.max_active),
                              JSON_PAIR_I64("max_per_function", engine_max_per_function(m->engine)),
                              JSON_PAIR_I64("rate_per_minute", m->options.rate_per_minute),
                              JSON_PAIR_I64("max_callers", INJECT_MAX_CALLERS),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

static json_object *phases_json(const EnginePhases *p) {
        json_object *o = NULL;

        if (json_build_object(&o,
                              JSON_PAIR_U64("load_usec", p->load_usec),
                              JSON_PAIR_U64("verify_usec", p->verify_usec),
                              JSON_PAIR_U64("attach_usec", p->attach_usec),
                              JSON_PAIR_U64("tag_usec", p->tag_usec),
                              JSON_PAIR_U64("tag_tasks", p->tag_tasks),
                              JSON_PAIR_U64("total_usec", p->total_usec),
                              JSON_PAIR_U64("verified_insns", p->verified_insns),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

/* The engine's statistics since the daemon started: where arms spend
 * their time, what the site cache saved. Counts and durations of every
 * user's requests together, nothing that names a request or its user. */
static json_object *engine_json(Manager *m) {
        EngineSiteStats st;
        json_object *o = NULL;

        engine_site_stats(m->engine, &st);
        if (json_build_object(&o,
                              JSON_PAIR_U64("arms", st.arms),
                              JSON_PAIR_OBJECT("last_arm", phases_json(&st.last_arm)),
                              JSON_PAIR_OBJECT("arm_total", phases_json(&st.arm_total)),
                              JSON_PAIR_OBJECT("kprobe_program", phases_json(&st.kprobe_program)),
                              JSON_PAIR_U64("programs_loaded", st.loads),
                              JSON_PAIR_U64("programs_reattached", st.reattaches),
                              JSON_PAIR_U64("programs_cached", st.n_cached),
                              JSON_PAIR_U64("sites_lingering", st.n_lingering),
                              JSON_PAIR_U64("linger_reuses", st.linger_reuses),
                              JSON_PAIR_U64("lingers_ended", st.lingers_ended),
                              JSON_PAIR_U64("index_rebuilds", st.index_rebuilds),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

int manager_capabilities_json(Manager *m, const Caller *c, json_object **ret) {
        unsigned n_kprobe = 0, n_fmod_ret = 0, active = 0;
        _cleanup_json_ json_object *fn = NULL;
        const KernelProbe *p;
        struct utsname u;
        bool have_uname;

        p = engine_probe(m->engine);
        if (!p)
                return -ENOMEM;

        /* First: it counts what each backend can fail, for "backends". */
        fn = functions_json(m, c, &n_kprobe, &n_fmod_ret);
        if (!fn)
                return -ENOMEM;

        for (size_t i = 0; i < m->n_injections; i++)
                active += injection_owned_by(m->injections[i], c);
        have_uname = uname(&u) >= 0;

        return json_build_object(
                        ret,
                        JSON_PAIR_IF(have_uname, JSON_PAIR_STRING("kernel", u.release)),
                        JSON_PAIR_OBJECT("kernel_config", config_json(p)),
                        JSON_PAIR_IF(p->lockdown[0], JSON_PAIR_OBJECT("lockdown", p->lockdown[0] ? lockdown_json(p) : NULL)),
                        JSON_PAIR_OBJECT("injection", finding_json(p, PROBE_INJECTION)),
                        JSON_PAIR_OBJECT("backends", backends_json(p, n_kprobe, n_fmod_ret)),
                        JSON_PAIR_OBJECT("features", features_json(p)),
                        /* The first version's top-level features, kept for its readers. */
                        JSON_PAIR_OBJECT("bpf", finding_json(p, PROBE_BPF)),
                        JSON_PAIR_OBJECT("tracing", finding_json(p, PROBE_TRACING)),
                        JSON_PAIR_OBJECT("btf", finding_json(p, PROBE_BTF)),
                        JSON_PAIR_OBJECT("error_injection_list", finding_json(p, PROBE_ERROR_INJECTION_LIST)),
                        JSON_PAIR_OBJECT("functions", TAKE_PTR(fn)),
                        JSON_PAIR_OBJECT("policy", policy_json(m, c)),
                        JSON_PAIR_OBJECT("limits", limits_json(m)),
                        JSON_PAIR_STRING("polkit", polkit_mode_to_string(m->options.polkit_mode)),
                        JSON_PAIR_U64("active_injections", active),
                        JSON_PAIR_OBJECT("engine", engine_json(m)),
                        JSON_BUILD_END);
}
