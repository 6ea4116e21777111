/* SPDX-License-Identifier: MIT */
/* Arming: everything that can be refused is checked first (the function,
 * the value, the backend, the scope, the filters), before anything loads;
 * then the site is opened or created, the injection gets a slot, its
 * process scope's tasks are tagged, and last its scope entry makes it
 * reachable. A refusal or a failure leaves nothing behind. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <bpf/bpf.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "kallsyms.h"
#include "log.h"
#include "pin.h"
#include "probe.h"
#include "scope-device.h"
#include "scope-roots.h"
#include "scope.h"
#include "site-cache.h"
#include "site.h"
#include "time-util.h"

/* Why a backend cannot serve anything here, with the CONFIG options missing. */
static const char *backend_reason(Engine *e, ProbeFeature f, char *buf, size_t n) {
        const KernelProbe *p = engine_probe(e);

        if (!p)
                return "the kernel could not be probed";
        return kernel_probe_describe(p, f, buf, n);
}

static int choose_backend(Engine *e, const InjectableFunction *f, const InjectSpec *spec, Backend *ret,
                          InjectError *err) {
        const EngineCaps *c;
        char kb[512], fb[512];
        unsigned m;

        (void) engine_caps(e, &c);
        m = engine_function_backends(e, f);

        switch (spec->backend) {
        case BACKEND_KPROBE:
                if (!f->listed)
                        return inject_error_set(err, -EOPNOTSUPP, INJECT_ERROR_BACKEND_UNAVAILABLE,
                                                "The kprobe backend cannot serve '%s': kprobe override only works on "
                                                "functions on the kernel's error-injection list%s",
                                                f->name, f->type == FUNC_TYPE_LSM ?
                                                "; it is an LSM hook, use the fmod_ret backend" : "");
                if (c->override < 0)
                        return inject_error_set(err, -EOPNOTSUPP, INJECT_ERROR_BACKEND_UNAVAILABLE,
                                                "The kprobe backend is unavailable: %s",
                                                backend_reason(e, PROBE_BACKEND_KPROBE, kb, sizeof(kb)));
                *ret = BACKEND_KPROBE;
                return 0;
        case BACKEND_FMOD_RET:
                if (f->type == FUNC_TYPE_NULL || spec->retval == 0)
                        return inject_error_set(err, -EOPNOTSUPP, INJECT_ERROR_BACKEND_UNAVAILABLE,
                                                "The fmod_ret backend cannot make '%s' return 0 (a zero return "
                                                "means \"run the function\"); use the kprobe backend", f->name);
                if (!f->in_btf)
                        return inject_error_set(err, -EOPNOTSUPP, INJECT_ERROR_BACKEND_UNAVAILABLE,
                                                "The fmod_ret backend cannot serve '%s': it is not in vmlinux BTF%s",
                                                f->name, f->module ? " (module functions are kprobe-only)" : "");
                if (c->fmod_ret < 0)
                        return inject_error_set(err, -EOPNOTSUPP, INJECT_ERROR_BACKEND_UNAVAILABLE,
                                                "The fmod_ret backend is unavailable: %s",
                                                backend_reason(e, PROBE_BACKEND_FMOD_RET, fb, sizeof(fb)));
                *ret = BACKEND_FMOD_RET;
                return 0;
        default:
                /* kprobe first: its program is loaded and verified once for
                 * the engine's lifetime and shared by every function (found
                 * through the attach cookie), so a first request on a
                 * function is only an attach. An fmod_ret program is
                 * verified against its target's BTF, one per function: a
                 * first request would verify one (hundreds of milliseconds
                 * under emulation). A call costs each backend little over
                 * its own empty program (docs/performance.md), so the
                 * trampoline's cheaper call does not outweigh that. fmod_ret
                 * then serves what kprobes cannot: LSM hooks and other
                 * functions off the error-injection list, and kernels
                 * without kprobe override. */
                if (m & (1u << BACKEND_KPROBE)) {
                        *ret = BACKEND_KPROBE;
                        return 0;
                }
                if ((m & (1u << BACKEND_FMOD_RET)) && spec->retval != 0) {
                        *ret = BACKEND_FMOD_RET;
                        return 0;
                }
                return inject_error_set(err, -EOPNOTSUPP, INJECT_ERROR_BACKEND_UNAVAILABLE,
                                        "No backend can make '%s' return %lld on this kernel: kprobe override: "
                                        "%.200s; fmod_ret: %.200s", f->name, (long long) spec->retval,
                                        !f->listed ? "not on the error-injection list" :
                                        c->override < 0 ? backend_reason(e, PROBE_BACKEND_KPROBE, kb, sizeof(kb)) :
                                        "available",
                                        spec->retval == 0 ? "cannot return 0" :
                                        c->fmod_ret < 0 ? backend_reason(e, PROBE_BACKEND_FMOD_RET, fb, sizeof(fb)) :
                                        !f->in_btf ? "not in BTF" : "available");
        }
}

static int check_function(Engine *e, const InjectSpec *spec, const InjectableFunction **ret, InjectError *err) {
        const InjectableFunction *f;
        const FunctionTable *t;
        const KernelProbe *p;
        int r;

        if (!spec->function || !*spec->function || strlen(spec->function) >= INJECT_FUNC_LEN)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_NOT_INJECTABLE,
                                        "A function name of 1 to %d characters is required", INJECT_FUNC_LEN - 1);
        r = engine_functions(e, &t);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_UNAVAILABLE,
                                        "Cannot list the kernel's injectable functions: %s", strerror(-r));
        p = engine_probe(e);
        if (!p)
                return inject_error_set(err, -ENOMEM, INJECT_ERROR_UNAVAILABLE, "Cannot probe the kernel");
        /* A kernel that can inject nothing says so, whatever was asked for. */
        if (!kernel_probe_available(p, PROBE_INJECTION))
                return kernel_probe_refuse_unavailable(p, err);
        f = function_table_find(t, spec->function);
        if (!f)
                return kernel_probe_refuse_not_injectable(p, t, spec->function, err);
        if (!func_type_accepts(f->type, spec->retval))
                return inject_error_set(err, -ERANGE, INJECT_ERROR_BAD_VALUE,
                                        "'%s' is of type %s: the injected value must be %s, not %lld",
                                        f->name, func_type_to_string(f->type), func_type_range(f->type),
                                        (long long) spec->retval);
        *ret = f;
        return 0;
}

static int fill_scope(Engine *e, const InjectSpec *spec, struct inject_slot *slot, InjectError *err) {
        uint64_t start = 0;
        pid_t tgid = 0;
        int r;

        slot->scope_kind = spec->scope;
        switch (spec->scope) {
        case INJECT_SCOPE_CGROUP:
                if (!spec->cgroup_id)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE, "The cgroup id must not be 0");
                if (spec->cgroup_level >= INJECT_MAX_CGROUP_LEVEL)
                        return inject_error_set(err, -E2BIG, INJECT_ERROR_BAD_SCOPE,
                                                "The cgroup is %u levels deep; at most %d are supported",
                                                spec->cgroup_level, INJECT_MAX_CGROUP_LEVEL - 1);
                slot->scope_id = spec->cgroup_id;
                slot->cgroup_level = spec->cgroup_level;
                return 0;
        case INJECT_SCOPE_PROCESS:
                if (spec->pid <= 0)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE,
                                                "A process scope needs a pid > 0, not %d", (int) spec->pid);
                r = scope_process(spec->pid, &tgid, &start);
                if (r < 0)
                        return inject_error_set(err, r == -ENOENT ? -ESRCH : r, INJECT_ERROR_BAD_SCOPE,
                                                "No process with pid %d: %s", (int) spec->pid, strerror(-r));
                slot->scope_id = (uint64_t) tgid;
                slot->start_ticks = start;
                return 0;
        case INJECT_SCOPE_GLOBAL:
                slot->scope_id = 0;
                return 0;
        case INJECT_SCOPE_DEVICE:
                if (device_arg_for(spec->function) == INJECT_DEVICE_ARG_NONE)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE,
                                                "'%s' takes no device scope: its arguments name no block device "
                                                "(device scopes apply to %s)", spec->function,
                                                device_scope_functions);
                if (!spec->diskseq)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE,
                                                "A device scope needs the disk's diskseq, not 0");
                slot->scope_id = spec->diskseq;
                return 0;
        default:
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE,
                                        "An injection needs a scope (cgroup, process, device or global); an empty "
                                        "scope never means everything");
        }
}

static int fill_filters(Engine *e, const InjectSpec *spec, struct inject_slot *slot, InjectError *err) {
        const Kallsyms *k = NULL;
        int r;

        if (spec->comm && strlen(spec->comm) >= INJECT_COMM_LEN)
                return inject_error_set(err, -ENAMETOOLONG, INJECT_ERROR_BAD_FILTER,
                                        "comm '%s' is longer than the kernel's %d characters", spec->comm,
                                        INJECT_COMM_LEN - 1);
        if (spec->comm)
                strncpy(slot->comm, spec->comm, INJECT_COMM_LEN - 1);

        if (spec->n_callers > INJECT_MAX_CALLERS)
                return inject_error_set(err, -E2BIG, INJECT_ERROR_BAD_FILTER,
                                        "At most %d caller filters are supported, got %zu", INJECT_MAX_CALLERS,
                                        spec->n_callers);
        if (spec->n_callers > 0) {
                r = engine_load_kallsyms(e, &k);
                if (r < 0)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_FILTER,
                                                "Cannot read kernel symbols for caller filters: %s",
                                                r == -EPERM ? "addresses are hidden (kptr_restrict)" : strerror(-r));
        }
        for (size_t i = 0; i < spec->n_callers; i++) {
                const KSym *s = kallsyms_find(k, spec->callers[i]);

                /* A module loaded since the symbols were read. */
                if (!s && engine_refresh_symbols(e) > 0 && engine_load_kallsyms(e, &k) >= 0)
                        s = kallsyms_find(k, spec->callers[i]);

                if (!s || !s->size)
                        return inject_error_set(err, -ENOENT, INJECT_ERROR_BAD_FILTER,
                                                "Caller '%s' is not a kernel function in /proc/kallsyms",
                                                spec->callers[i]);
                slot->callers[i] = (struct inject_caller) { .start = s->addr, .end = s->addr + s->size };
        }
        slot->n_callers = spec->n_callers;

        if (spec->probability_ppm > INJECT_PPM)
                return inject_error_set(err, -ERANGE, INJECT_ERROR_BAD_FILTER,
                                        "Probability must be at most 100%%");
        slot->probability_ppm = spec->probability_ppm ?: INJECT_PPM;
        slot->after = spec->after;
        slot->every = spec->every ?: 1;
        slot->times = spec->times;
        slot->owner_uid = spec->owner_uid;

        r = arg_filters_check(spec->function, &spec->arg_filters, NULL, err);
        if (r < 0)
                return r;
        arg_filters_fill(&spec->arg_filters, slot);
        return 0;
}

static int new_id(uint64_t *ret) {
        uint64_t id = 0;

        while (!id)
                if (getrandom(&id, sizeof(id), 0) != sizeof(id))
                        return negative_errno();
        *ret = id;
        return 0;
}

/* The index says which slot is free; the slot itself confirms it, since
 * the pins are the truth and an index that disagrees is read again. */
static int find_free_slot(Engine *e, const Site *s, uint32_t *ret) {
        struct inject_slot cur;
        uint32_t idx;
        int r;

        for (unsigned attempt = 0;; attempt++) {
                r = engine_index_sync(e);
                if (r < 0)
                        return r;
                r = slot_index_free_slot(&e->index, s->dir, s->n_slots, &idx);
                if (r < 0)
                        return r;
                if (bpf_map_lookup_elem(s->slots_fd, &idx, &cur) < 0)
                        return negative_errno();
                if (!cur.id) {
                        *ret = idx;
                        return 0;
                }
                if (attempt > 0)
                        return -EBUSY;
                engine_index_invalidate(e);
        }
}

/* Per request in the debug log, and in the stats for the daemon to show. */
static void arm_phases_record(Engine *e, const char *function, Backend b, uint64_t id, uint64_t start) {
        EnginePhases *p = &e->phases, *sum = &e->stats.arm_total;

        p->total_usec = now_usec(CLOCK_MONOTONIC) - start;
        log_debug("Armed %016" PRIx64 " on '%s' (%s) in %" PRIu64 " us: load %" PRIu64 " us, verify %" PRIu64
                  " us (%" PRIu32 " instructions), attach %" PRIu64 " us, tag %" PRIu64 " us",
                  id, function, backend_to_string(b), p->total_usec, p->load_usec, p->verify_usec,
                  p->verified_insns, p->attach_usec, p->tag_usec);
        e->stats.arms++;
        e->stats.last_arm = *p;
        sum->load_usec += p->load_usec;
        sum->verify_usec += p->verify_usec;
        sum->attach_usec += p->attach_usec;
        sum->tag_usec += p->tag_usec;
        sum->tag_tasks += p->tag_tasks;
        sum->total_usec += p->total_usec;
        if (p->verified_insns > sum->verified_insns)
                sum->verified_insns = p->verified_insns;
}

/* One backend serves a function at a time. Seen on Linux 6.1: with an
 * fmod_ret program attached to a function, a kprobe's bpf_override_return
 * on the same function failed none of its calls (vm-attack-filecaps, once
 * an emptied fmod_ret site lingered), because the trampoline, not the
 * kprobe, decides where the call goes. So, under the lock, before b's site
 * is opened: a site of another backend with nothing armed (lingering, or
 * left by another engine) is detached first; one with injections armed
 * decides the backend of an auto request, and refuses a request that
 * named the other backend, saying so. The index knows every complete site,
 * lingering ones too, so a function with no site of another backend (most
 * arms) costs no system call here; the index synced now serves
 * find_free_slot() at no cost. */
static int settle_other_backends(Engine *e, const InjectableFunction *f, const InjectSpec *spec, Backend *b,
                                 InjectError *err) {
        int r;

        r = engine_index_sync(e);
        if (r < 0)
                return r;
        for (Backend o = BACKEND_KPROBE; o < _BACKEND_MAX; o++) {
                _cleanup_(site_closep) Site s = SITE_NULL;
                _cleanup_free_ char *dir = NULL;
                InjectSpec as_o = *spec;

                if (o == *b)
                        continue;
                r = site_dir_name(e, f->name, o, &dir);
                if (r < 0)
                        return r;
                if (!slot_index_site(&e->index, dir))
                        continue;       /* none, or half-built: nothing attached to share with */
                if (site_open(dir, &s) < 0) {
                        engine_index_invalidate(e);     /* gone under us: read the pins again */
                        continue;
                }
                r = site_recount(&s);
                if (r < 0)
                        return r;
                if (s.info.n_live == 0) {
                        r = site_linger_cut(e, &s);
                        if (r < 0)
                                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                                        "Cannot detach the empty %s site of '%s' before arming it "
                                                        "through %s: %s", backend_to_string(o), f->name,
                                                        backend_to_string(*b), strerror(-r));
                        continue;
                }
                as_o.backend = o;
                if (spec->backend == BACKEND_AUTO && choose_backend(e, f, &as_o, b, NULL) >= 0)
                        return 0;
                return inject_error_set(err, -EBUSY, INJECT_ERROR_BACKEND_UNAVAILABLE,
                                        "'%s' has injections armed through the %s backend, and the %s backend "
                                        "cannot serve it beside them (only one backend takes effect on a "
                                        "function); ask for the %s backend, or wait until they end",
                                        f->name, backend_to_string(o), backend_to_string(*b),
                                        backend_to_string(o));
        }
        return 0;
}

int engine_check(Engine *e, const InjectSpec *spec, InjectError *err) {
        const InjectableFunction *f = NULL;
        Backend b;
        int r;

        r = check_function(e, spec, &f, err);
        if (r < 0)
                return r;
        r = choose_backend(e, f, spec, &b, err);
        if (r < 0)
                return r;
        return arg_filters_check(f->name, &spec->arg_filters, NULL, err);
}

/* An arm under way: everything but its process scope's walk done, its
 * slot written (so the site holds it, and no other arm takes the slot),
 * its root live (e->arming_roots), and no scope entry yet, so nothing
 * reaches it. The lock is held only inside each call. */
struct EngineArm {
        Engine *e;
        Site s;
        const InjectableFunction *f;
        Backend b;
        struct inject_slot slot;
        uint32_t idx;
        ScopeRoot root;                 /* a process scope's, while in e->arming_roots */
        bool arming;
        ScopeTagsWalk *walk;            /* NULL: nothing (left) to walk */
        uint64_t duration_usec;
        uint64_t start;
        EnginePhases phases;
        bool slot_written, armed;
};

/* Takes back what an arm under way put in place: its slot emptied, its
 * root dropped unless something else still has it (its tags stay on tasks,
 * matching nothing), its site retired if it holds nothing else. */
static void arm_undo(EngineArm *a) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        Engine *e = a->e;
        struct inject_slot zero = {};

        if (!a->slot_written && !a->arming)
                return;         /* refused before anything was written */
        if (engine_lock(e) >= 0)
                locked = e;
        if (a->slot_written)
                (void) bpf_map_update_elem(a->s.slots_fd, &a->idx, &zero, BPF_ANY);
        if (a->arming) {
                scope_roots_arming_remove(e, &a->root);
                a->arming = false;
        }
        if (a->slot.scope_kind == INJECT_SCOPE_PROCESS && a->slot_written)
                (void) scope_roots_sync(e);
        if (a->slot_written && site_recount(&a->s) >= 0 && a->s.info.n_live == 0)
                (void) site_retire(e, &a->s);
        a->slot_written = false;
}

EngineArm *engine_arm_free(EngineArm *a) {
        if (!a)
                return NULL;
        if (!a->armed)
                arm_undo(a);
        a->walk = scope_tags_walk_free(a->walk);
        site_close(&a->s);
        free(a);
        return NULL;
}

/* The error of a tagging that failed or would not hold. */
static int arm_tag_error(EngineArm *a, int r, InjectError *err) {
        const char *lb = engine_libbpf_error();

        if (r > 0)
                return inject_error_set(err, -E2BIG, INJECT_ERROR_BAD_SCOPE,
                                        "Process %llu would put %d task(s) in more than %d nested process "
                                        "scopes", (unsigned long long) a->slot.scope_id, r, INJECT_MAX_TAGS);
        return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                "Cannot tag the processes of the scope: %s%s%s%s", strerror(-r),
                                lb[0] ? " (libbpf: " : "", lb, lb[0] ? ")" : "");
}

int engine_arm_begin(Engine *e, const InjectSpec *spec, EngineArm **ret, InjectError *err) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        _cleanup_(engine_arm_freep) EngineArm *a = NULL;
        _cleanup_free_ char *dir = NULL;
        _cleanup_(scope_root_set_done) ScopeRootSet roots = {};
        uint64_t now, id, t;
        uint32_t also = 0;
        int r;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        *a = (EngineArm) { .e = e, .s = SITE_NULL, .idx = UINT32_MAX, .b = BACKEND_AUTO,
                           .start = now_usec(CLOCK_MONOTONIC), .duration_usec = spec->duration_usec };

        /* Everything that can be refused is refused before anything loads. */
        r = check_function(e, spec, &a->f, err);
        if (r < 0)
                return r;
        r = choose_backend(e, a->f, spec, &a->b, err);
        if (r < 0)
                return r;
        if (spec->duration_usec == 0 || spec->duration_usec > ENGINE_MAX_DURATION_USEC)
                return inject_error_set(err, -ERANGE, INJECT_ERROR_BAD_DURATION,
                                        "The duration must be more than 0 and at most 7 days");
        r = fill_scope(e, spec, &a->slot, err);
        if (r < 0)
                return r;
        r = fill_filters(e, spec, &a->slot, err);
        if (r < 0)
                return r;
        r = pin_check_bpffs(e->pin_root);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_UNAVAILABLE, "No bpffs is mounted above '%s': %s",
                                        e->pin_root, strerror(-r));
        r = new_id(&id);
        if (r < 0)
                return r;
        a->slot.id = id;
        a->slot.retval = spec->retval;

        e->phases = (EnginePhases) {};
        r = engine_lock(e);
        if (r < 0)
                return r;
        locked = e;

        r = settle_other_backends(e, a->f, spec, &a->b, err);
        if (r < 0)
                return r;
        r = site_dir_name(e, a->f->name, a->b, &dir);
        if (r < 0)
                return r;
        r = site_open(dir, &a->s);
        if (r >= 0 && a->s.info.n_live == 0)
                /* Pinned with nothing armed: a lingering site, attached
                 * still, which spares this arm the attach. */
                site_linger_reuse(e, &a->s);
        if (r == -ENOLINK || r == -ENOENT) {
                if (r == -ENOLINK)      /* half-built leftovers: start over */
                        (void) pin_dir_remove(dir);
                r = site_create(e, a->f->name, a->b, dir, &a->s, err);
        }
        if (r < 0) {
                a->armed = true;        /* nothing of ours to undo */
                return err && err->name ? r : inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                                               "Cannot set up '%s': %s", a->f->name, strerror(-r));
        }

        r = find_free_slot(e, &a->s, &a->idx);
        if (r == -ENOSPC) {
                a->armed = true;
                return inject_error_set(err, -EUSERS, INJECT_ERROR_TOO_MANY,
                                        "'%s' already has %" PRIu32 " injections armed", a->f->name, a->s.n_slots);
        }
        if (r >= 0 && a->slot.scope_kind == INJECT_SCOPE_PROCESS) {
                t = now_usec(CLOCK_MONOTONIC);
                r = scope_roots_tag_slot(e, &a->slot, &roots);
                e->phases.tag_usec += now_usec(CLOCK_MONOTONIC) - t;
        }
        if (r < 0) {
                a->armed = true;
                return r;
        }

        now = now_nsec(CLOCK_BOOTTIME);
        a->slot.created_ns = now;
        a->slot.deadline_ns = now + spec->duration_usec * 1000;
        if (bpf_map_update_elem(a->s.slots_fd, &a->idx, &a->slot, BPF_ANY) < 0) {
                r = negative_errno();
                goto fail;
        }
        a->slot_written = true;

        /* The scope's tasks are tagged before its scope entry makes the
         * injection reachable: the roots map and the fork program now, the
         * walk in steps. */
        if (a->slot.scope_kind == INJECT_SCOPE_PROCESS) {
                a->root = (ScopeRoot) { (uint32_t) a->slot.scope_id, a->slot.start_ticks, a->slot.scope_tag };
                /* Another arm on this root may be walking it still: this
                 * one walks it too, rather than answer before it is done. */
                if (scope_roots_arming_has(e, &a->root))
                        also = a->root.tgid;
                r = scope_roots_arming_add(e, &a->root);
                if (r < 0)
                        goto fail;
                a->arming = true;
                t = now_usec(CLOCK_MONOTONIC);
                r = scope_roots_begin(e, &roots, also, &a->walk);
                e->phases.tag_usec += now_usec(CLOCK_MONOTONIC) - t;
                if (r < 0) {
                        r = arm_tag_error(a, r, err);
                        goto fail;
                }
        }
        a->phases = e->phases;
        *ret = TAKE_PTR(a);
        return 0;

fail:
        locked = NULL;
        engine_unlock(e);
        return err && err->name ? r : inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot arm '%s': %s",
                                                       a->f->name, strerror(-r));
}

int engine_arm_step(EngineArm *a, size_t budget, InjectError *err) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        size_t visited = 0;
        uint64_t t;
        int r;

        if (!a->walk)
                return 0;
        r = engine_lock(a->e);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot lock the engine: %s",
                                        strerror(-r));
        locked = a->e;
        t = now_usec(CLOCK_MONOTONIC);
        r = scope_tags_walk_step(a->walk, budget, &visited);
        a->phases.tag_usec += now_usec(CLOCK_MONOTONIC) - t;
        a->phases.tag_tasks += visited;
        if (r < 0)
                return arm_tag_error(a, r, err);
        if (r > 0)
                return 1;
        r = scope_tags_walk_over(a->walk);
        a->walk = scope_tags_walk_free(a->walk);
        if (r > 0)
                return arm_tag_error(a, r, err);
        return 0;
}

int engine_arm_finish(EngineArm *a, InjectionInfo *ret, InjectError *err) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        Engine *e = a->e;
        struct inject_scope_key key;
        struct inject_scope_val val;
        int r;

        if (a->armed)
                return -EALREADY;
        if (a->walk)
                return -EINPROGRESS;
        r = engine_lock(e);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot lock the engine: %s",
                                        strerror(-r));
        locked = e;

        slot_scope_key(&a->slot, &key);
        val = (struct inject_scope_val) { .slot = a->idx, .inj_id = a->slot.id, .start_ticks = a->slot.start_ticks };
        if (bpf_map_update_elem(a->s.scopes_fd, &key, &val, BPF_NOEXIST) < 0) {
                r = negative_errno();
                if (r == -EEXIST)
                        return inject_error_set(err, r, INJECT_ERROR_SCOPE_TAKEN,
                                                "'%s' (%s) already has an injection with this scope; cancel it "
                                                "first", a->f->name, backend_to_string(a->b));
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot arm '%s': %s", a->f->name,
                                        strerror(-r));
        }
        r = site_recount(&a->s);
        if (r < 0) {
                (void) bpf_map_delete_elem(a->s.scopes_fd, &key);
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot arm '%s': %s", a->f->name,
                                        strerror(-r));
        }
        /* Armed: its slot names its root from now on. */
        a->armed = true;
        if (a->arming) {
                scope_roots_arming_remove(e, &a->root);
                a->arming = false;
        }

        engine_index_add(e, a->s.dir, a->s.n_slots, &a->slot, a->idx);
        e->phases = a->phases;
        arm_phases_record(e, a->f->name, a->b, a->slot.id, a->start);
        if (ret)
                site_injection_info(&a->s, &a->slot, a->slot.created_ns, ret);
        return 0;
}

bool engine_arm_walking(const EngineArm *a) {
        return a && a->walk;
}

int engine_arm(Engine *e, const InjectSpec *spec, InjectionInfo *ret, InjectError *err) {
        _cleanup_(engine_arm_freep) EngineArm *a = NULL;
        int r;

        r = engine_arm_begin(e, spec, &a, err);
        if (r < 0)
                return r;
        do
                r = engine_arm_step(a, SIZE_MAX, err);
        while (r > 0);
        if (r < 0)
                return r;
        return engine_arm_finish(a, ret, err);
}
