/* SPDX-License-Identifier: MIT */
/* The JSON views of injections, functions and faults: the same documents
 * for both front ends (D-Bus returns them as strings). */

#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "errno-name.h"
#include "manager.h"
#include "policy-check.h"
#include "time-util.h"

json_object *injection_to_json(Injection *inj) {
        const struct inject_slot *s = &inj->info.slot;
        json_object *o = json_object_new_object();
        const char *ename = s->retval < 0 ? errno_to_name((int) -s->retval) : NULL;
        uint64_t now = now_nsec(CLOCK_BOOTTIME);

        json_object_object_add(o, "id", json_object_new_string(inj->id_str));
        json_object_object_add(o, "function", json_object_new_string(inj->info.function));
        json_object_object_add(o, "backend", json_object_new_string(backend_to_string(inj->info.backend)));
        json_object_object_add(o, "value", json_object_new_int64(s->retval));
        if (ename)
                json_object_object_add(o, "error", json_object_new_string(ename));
        json_object_object_add(o, "scope", json_object_new_string(inj->scope_desc ?: ""));
        json_object_object_add(o, "owner_uid", json_object_new_int64(inj->owner_uid));
        json_object_object_add(o, "created_usec", json_object_new_uint64(inj->created_usec));
        json_object_object_add(o, "expires_usec", json_object_new_uint64(inj->expires_usec));
        json_object_object_add(o, "remaining_usec",
                               json_object_new_uint64(s->deadline_ns > now ? (s->deadline_ns - now) / 1000 : 0));
        json_object_object_add(o, "state", json_object_new_string(injection_state_to_string(inj->info.state)));
        json_object_object_add(o, "detach", json_object_new_boolean(inj->detach));
        if (s->comm[0])
                json_object_object_add(o, "comm", json_object_new_string(s->comm));
        if (s->after)
                json_object_object_add(o, "after", json_object_new_uint64(s->after));
        if (s->every > 1)
                json_object_object_add(o, "every", json_object_new_uint64(s->every));
        if (s->times)
                json_object_object_add(o, "times", json_object_new_uint64(s->times));
        if (s->probability_ppm < INJECT_PPM)
                json_object_object_add(o, "probability", json_object_new_double(s->probability_ppm / 10000.0));
        if (s->n_callers) {
                json_object *a = json_object_new_array();

                for (uint32_t i = 0; i < s->n_callers && i < INJECT_MAX_CALLERS; i++) {
                        const char *n = engine_symbol_name(inj->manager->engine, s->callers[i].start);
                        json_object_array_add(a, json_object_new_string(n ?: "?"));
                }
                json_object_object_add(o, "callers", a);
        }
        json_object_object_add(o, "rule", json_object_new_string(inj->rule ?: ""));
        json_object_object_add(o, "calls_seen", json_object_new_uint64(s->seen));
        json_object_object_add(o, "calls_matched", json_object_new_uint64(s->matched));
        json_object_object_add(o, "faults_injected", json_object_new_uint64(s->injected));
        return o;
}

bool manager_may_see(Manager *m, const Caller *c, const Injection *inj) {
        return c->uid == 0 || inj->owner_uid == c->uid;
}

int manager_list_json(Manager *m, const Caller *c, bool all, json_object **ret, InjectError *err) {
        json_object *a;

        if (all && c->uid != 0)
                return inject_error_set(err, -EPERM, INJECT_ERROR_NOT_AUTHORIZED,
                                        "Listing every user's injections needs root");
        a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_injections; i++) {
                Injection *inj = m->injections[i];

                if (!all && inj->owner_uid != c->uid)
                        continue;
                (void) manager_refresh(m, inj);
                json_object_array_add(a, injection_to_json(inj));
        }
        *ret = a;
        return 0;
}

/* manager_capabilities_json() is in capabilities.c. */
int manager_functions_json(Manager *m, const Caller *c, const char *glob, json_object **ret) {
        const FunctionTable *t;
        json_object *a;
        int r;

        r = engine_functions(m->engine, &t);
        if (r < 0)
                return r;
        a = json_object_new_array();
        for (size_t i = 0; i < t->n; i++) {
                const InjectableFunction *f = &t->funcs[i];
                json_object *o, *bk;
                unsigned mask;

                if (glob && *glob && fnmatch(glob, f->name, 0) != 0)
                        continue;
                mask = engine_function_backends(m->engine, f);
                o = json_object_new_object();
                json_object_object_add(o, "name", json_object_new_string(f->name));
                if (f->module)
                        json_object_object_add(o, "module", json_object_new_string(f->module));
                json_object_object_add(o, "type", json_object_new_string(func_type_to_string(f->type)));
                bk = json_object_new_array();
                if (mask & (1u << BACKEND_KPROBE))
                        json_object_array_add(bk, json_object_new_string("kprobe"));
                if (mask & (1u << BACKEND_FMOD_RET))
                        json_object_array_add(bk, json_object_new_string("fmod_ret"));
                json_object_object_add(o, "backends", bk);
                json_object_object_add(o, "allowed", json_object_new_boolean(
                                                       c->uid == 0 || policy_glue_function_allowed(m->policy, c, f->name)));
                json_object_array_add(a, o);
        }
        *ret = a;
        return 0;
}

/* The failed call's kernel stack as symbols, innermost first. The frames
 * above the failed function (the BPF program and, for fmod_ret, its
 * trampoline) are ours, not the caller's: they are left out. */
static json_object *fault_stack(Engine *e, const Injection *inj, const struct inject_event *ev) {
        json_object *a = json_object_new_array();
        uint32_t n = ev->n_stack < INJECT_STACK_DEPTH ? ev->n_stack : INJECT_STACK_DEPTH, first = 0;
        size_t fn_len = strlen(inj->info.function);
        char sym[INJECT_STACK_DEPTH][256];

        for (uint32_t i = 0; i < n; i++)
                if (ev->stack[i] == 0 || engine_symbolize(e, ev->stack[i], sym[i], sizeof(sym[i])) < 0) {
                        n = i;
                        break;
                }
        for (uint32_t i = 0; i < n; i++)
                if (strncmp(sym[i], inj->info.function, fn_len) == 0 && sym[i][fn_len] == '+') {
                        first = i;
                        break;
                }
        for (uint32_t i = first; a && i < n; i++)
                json_object_array_add(a, json_object_new_string(sym[i]));
        return a;
}

json_object *injection_fault_to_json(Injection *inj, const struct inject_event *ev, const char *comm) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "type", json_object_new_string("fault"));
        json_object_object_add(o, "id", json_object_new_string(inj->id_str));
        json_object_object_add(o, "time_ns", json_object_new_uint64(ev->time_ns));
        json_object_object_add(o, "pid", json_object_new_int(ev->pid));
        json_object_object_add(o, "tgid", json_object_new_int(ev->tgid));
        json_object_object_add(o, "comm", json_object_new_string(comm));
        json_object_object_add(o, "function", json_object_new_string(inj->info.function));
        json_object_object_add(o, "value", json_object_new_int64(ev->retval));
        json_object_object_add(o, "stack", fault_stack(inj->manager->engine, inj, ev));
        return o;
}
