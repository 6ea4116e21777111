/* SPDX-License-Identifier: MIT */
/* The JSON views of injections, functions and faults: the same documents
 * for both front ends (D-Bus returns them as strings). */

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "errno-name.h"
#include "fault-stack.h"
#include "guards.h"
#include "injection-json.h"
#include "injection.h"
#include "json-build.h"
#include "json-util.h"
#include "scope-device.h"
#include "policy-check.h"
#include "time-util.h"

/* The symbols of the slot's caller filter, or NULL when out of memory. */
static json_object *injection_callers(Injection *inj) {
        const struct inject_slot *s = &inj->info.slot;
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (uint32_t i = 0; i < s->n_callers && i < INJECT_MAX_CALLERS; i++) {
                const char *n = engine_symbol_name(inj->manager->engine, s->callers[i].start);

                if (json_append_string(a, n ?: "?") < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

json_object *injection_to_json(Injection *inj) {
        const struct inject_slot *s = &inj->info.slot;
        const char *ename = s->retval < 0 ? errno_to_name((int) -s->retval) : NULL;
        uint64_t now = now_nsec(CLOCK_BOOTTIME);
        json_object *o;
        int r;

        r = json_build_object(&o,
                              JSON_PAIR_STRING("id", inj->id_str),
                              JSON_PAIR_STRING("function", inj->info.function),
                              JSON_PAIR_STRING("backend", backend_to_string(inj->info.backend)),
                              JSON_PAIR_I64("value", s->retval),
                              JSON_PAIR_IF(ename, JSON_PAIR_STRING("error", ename)),
                              JSON_PAIR_STRING("scope", inj->scope_desc ?: ""),
                              JSON_PAIR_I64("owner_uid", inj->owner_uid),
                              JSON_PAIR_U64("created_usec", inj->created_usec),
                              JSON_PAIR_U64("expires_usec", inj->expires_usec),
                              JSON_PAIR_U64("remaining_usec", s->deadline_ns > now ? (s->deadline_ns - now) / 1000 : 0),
                              JSON_PAIR_STRING("state", injection_state_to_string(inj->info.state)),
                              JSON_PAIR_BOOL("detach", inj->detach),
                              JSON_PAIR_IF(s->comm[0], JSON_PAIR_STRING("comm", s->comm)),
                              JSON_PAIR_IF(s->after, JSON_PAIR_U64("after", s->after)),
                              JSON_PAIR_IF(s->every > 1, JSON_PAIR_U64("every", s->every)),
                              JSON_PAIR_IF(s->times, JSON_PAIR_U64("times", s->times)),
                              JSON_PAIR_IF(s->probability_ppm < INJECT_PPM,
                                           JSON_PAIR_DOUBLE("probability", s->probability_ppm / 10000.0)),
                              JSON_PAIR_IF(s->n_callers,
                                           JSON_PAIR_OBJECT("callers", s->n_callers ? injection_callers(inj) : NULL)),
                              JSON_PAIR_IF(s->arg_filters & INJECT_FILTER_GFP_WAIT,
                                           JSON_PAIR_BOOL("ignore_gfp_wait", true)),
                              JSON_PAIR_IF(s->arg_filters & INJECT_FILTER_GFP_HIGHMEM,
                                           JSON_PAIR_BOOL("ignore_gfp_highmem", true)),
                              JSON_PAIR_IF(s->arg_filters & INJECT_FILTER_MIN_ORDER,
                                           JSON_PAIR_U64("min_order", s->min_order)),
                              JSON_PAIR_IF(s->arg_filters & INJECT_FILTER_MIN_SIZE,
                                           JSON_PAIR_U64("min_size", s->min_size)),
                              JSON_PAIR_IF(s->arg_filters & INJECT_FILTER_CACHE,
                                           JSON_PAIR_STRING("cache", s->cache)),
                              JSON_PAIR_IF(inj->kernel_log, JSON_PAIR_U64("kernel_log", inj->kernel_log)),
                              JSON_PAIR_STRING("rule", inj->rule ?: ""),
                              JSON_PAIR_U64("calls_seen", s->seen),
                              JSON_PAIR_U64("calls_matched", s->matched),
                              JSON_PAIR_U64("faults_injected", s->injected),
                              JSON_PAIR_U64("calls_guarded", s->guarded),
                              JSON_PAIR_U64("events_suppressed", inj->events_suppressed),
                              JSON_BUILD_END);
        if (r < 0)
                return NULL;
        return o;
}

/* The conditions under which the function is never failed, or NULL when
 * out of memory. */
static json_object *function_guards(const Guard *g) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (const char *const *c = g->conditions; *c; c++)
                if (json_append_string(a, *c) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

/* The argument filters that apply to a function (arg-filters.h), by name
 * and meaning, or NULL when out of memory. */
static json_object *function_filters(uint32_t mask) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (size_t i = 0; i < arg_filter_names_n; i++) {
                json_object *o;

                if (!(mask & arg_filter_names[i].flag))
                        continue;
                if (json_build_object(&o,
                                      JSON_PAIR_STRING("name", arg_filter_names[i].name),
                                      JSON_PAIR_STRING("description", arg_filter_names[i].description),
                                      JSON_BUILD_END) < 0 ||
                    json_append(a, o) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

bool injection_owned_by(const Injection *inj, const Caller *c) {
        return inj->owner_uid == c->uid && (c->privileged || !inj->owner_privileged);
}

bool manager_may_see(Manager *m, const Caller *c, const Injection *inj) {
        return c->privileged || injection_owned_by(inj, c);
}

int manager_list_json(Manager *m, const Caller *c, bool all, json_object **ret, InjectError *err) {
        _cleanup_json_ json_object *a = NULL;
        _cleanup_free_ size_t *ids = NULL;
        size_t n = 0;
        int r;

        if (all && !c->privileged)
                return inject_error_set(err, -EPERM, INJECT_ERROR_NOT_AUTHORIZED,
                                        "Listing every user's injections needs a privileged caller");
        a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        ids = calloc(m->n_injections ?: 1, sizeof(*ids));
        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_injections; i++)
                if (all || injection_owned_by(m->injections[i], c))
                        ids[n++] = i;
        /* The counters, fresh, in one read per site (engine_get_many()):
         * reopening each one's site took ~11 system calls an injection. */
        (void) manager_refresh_many(m, ids, n);
        for (size_t k = 0; k < n; k++) {
                r = json_append(a, injection_to_json(m->injections[ids[k]]));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

/* manager_capabilities_json() is in capabilities.c. */
int manager_functions_json(Manager *m, const Caller *c, const char *glob, json_object **ret) {
        const FunctionTable *t;
        _cleanup_json_ json_object *a = NULL;
        int r;

        r = engine_functions(m->engine, &t);
        if (r < 0)
                return r;
        a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++) {
                const InjectableFunction *f = &t->funcs[i];
                const Guard *g = guard_find(f->name);
                _cleanup_json_ json_object *bk = NULL;
                json_object *o;
                unsigned mask;

                if (glob && *glob && fnmatch(glob, f->name, 0) != 0)
                        continue;
                mask = engine_function_backends(m->engine, f);
                bk = json_object_new_array();
                if (!bk)
                        return -ENOMEM;
                if (mask & (1u << BACKEND_KPROBE)) {
                        r = json_append_string(bk, "kprobe");
                        if (r < 0)
                                return r;
                }
                if (mask & (1u << BACKEND_FMOD_RET)) {
                        r = json_append_string(bk, "fmod_ret");
                        if (r < 0)
                                return r;
                }
                r = json_build_object(&o,
                                      JSON_PAIR_STRING("name", f->name),
                                      JSON_PAIR_IF(f->module, JSON_PAIR_STRING("module", f->module)),
                                      JSON_PAIR_STRING("type", func_type_to_string(f->type)),
                                      JSON_PAIR_OBJECT("backends", TAKE_PTR(bk)),
                                      JSON_PAIR_IF(g, JSON_PAIR_OBJECT("guards", g ? function_guards(g) : NULL)),
                                      JSON_PAIR_IF(g && g->filters,
                                                   JSON_PAIR_OBJECT("filters", g ? function_filters(g->filters) : NULL)),
                                      JSON_PAIR_IF(device_arg_for(f->name) != INJECT_DEVICE_ARG_NONE,
                                                   JSON_PAIR_BOOL("device_scope", true)),
                                      JSON_PAIR_BOOL("allowed",
                                                     c->privileged || policy_glue_function_allowed(m->policy, c, f->name)),
                                      JSON_BUILD_END);
                if (r < 0)
                        return r;
                r = json_append(a, o);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

json_object *injection_fault_to_json(Injection *inj, const struct inject_event *ev, const char *comm) {
        json_object *o;
        int r;

        r = json_build_object(&o,
                              JSON_PAIR_STRING("type", "fault"),
                              JSON_PAIR_STRING("id", inj->id_str),
                              JSON_PAIR_U64("time_ns", ev->time_ns),
                              JSON_PAIR_I64("pid", ev->pid),
                              JSON_PAIR_I64("tgid", ev->tgid),
                              JSON_PAIR_STRING("comm", comm),
                              JSON_PAIR_STRING("function", inj->info.function),
                              JSON_PAIR_I64("value", ev->retval),
                              JSON_PAIR_OBJECT("stack", fault_stack_to_json(inj->manager->engine, inj->info.function, ev)),
                              JSON_BUILD_END);
        if (r < 0)
                return NULL;
        return o;
}
