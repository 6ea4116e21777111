/* SPDX-License-Identifier: MIT */
/* Observe mode (observe.h): the one file that includes observe.bpf.c's
 * skeleton. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "observe.skel.h"
#include "scope-roots.h"
#include "scope.h"
#include "strv.h"
#include "engine-observe.h"

/* ftrace's list of what it can trace: kprobe.multi attaches through
 * ftrace, and refuses the whole set for one function it cannot trace. */
static const char *const filter_functions_paths[] = {
        "/sys/kernel/tracing/available_filter_functions",
        "/sys/kernel/debug/tracing/available_filter_functions",
};

typedef struct NameSet {
        char **v;
        size_t n;
} NameSet;

static void name_set_done(NameSet *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        *s = (NameSet) {};
}

struct EngineObserve {
        Engine *engine;
        pid_t pid;
        uint64_t start_ticks;
        bool root_added;
        struct observe_bpf *skel;
        struct bpf_link *link;
        ObserveSkipped *skipped;
        size_t n_skipped;
        size_t n_attached;
        NameSet attached;       /* the names attached, sorted: what a count is reported as */
};

DEFINE_TRIVIAL_CLEANUP_FUNC(struct observe_bpf *, observe_bpf__destroy);

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The functions ftrace can trace, sorted; -ENOENT when no tracefs is
 * readable (then nothing is filtered, and the kernel's refusal, if any,
 * says why). Lines are "name" or "name [module]". */
static int traceable_functions(NameSet *ret) {
        _cleanup_(name_set_done) NameSet s = {};
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0, size = 0;
        ssize_t len;

        for (size_t i = 0; !f && i < sizeof(filter_functions_paths) / sizeof(filter_functions_paths[0]); i++)
                f = fopen(filter_functions_paths[i], "re");
        if (!f)
                return -ENOENT;
        while ((len = getline(&line, &size, f)) > 0) {
                line[strcspn(line, " \t\n")] = 0;
                if (!line[0])
                        continue;
                if (s.n == cap) {
                        char **v = realloc(s.v, (cap = cap ? cap * 2 : 4096) * sizeof(*v));

                        if (!v)
                                return -ENOMEM;
                        s.v = v;
                }
                s.v[s.n] = strdup(line);
                if (!s.v[s.n])
                        return -ENOMEM;
                s.n++;
        }
        qsort(s.v, s.n, sizeof(*s.v), cmp_str);
        *ret = s;
        s = (NameSet) {};
        return 0;
}

static bool name_set_has(const NameSet *s, const char *name) {
        return s->n && bsearch(&name, s->v, s->n, sizeof(*s->v), cmp_str);
}

static int skip(EngineObserve *o, const char *name, const char *reason) {
        ObserveSkipped *v = realloc(o->skipped, (o->n_skipped + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        o->skipped = v;
        v[o->n_skipped].name = strdup(name);
        if (!v[o->n_skipped].name)
                return -ENOMEM;
        v[o->n_skipped++].reason = reason;
        return 0;
}

EngineObserve *engine_observe_free(EngineObserve *o) {
        if (!o)
                return NULL;
        bpf_link__destroy(o->link);
        observe_bpf__destroy(o->skel);
        if (o->root_added && engine_lock(o->engine) >= 0) {
                (void) scope_roots_remove_observer(o->engine, o->pid, o->start_ticks);
                /* Nothing of ours left in bpffs when no site is. */
                if (o->engine->n_observe_roots == 0)
                        engine_gc_root(o->engine);
                engine_unlock(o->engine);
        }
        for (size_t i = 0; i < o->n_skipped; i++)
                free(o->skipped[i].name);
        free(o->skipped);
        name_set_done(&o->attached);
        free(o);
        return NULL;
}

/* Which of the functions asked for can be attached: names in *ret
 * (borrowed from functions[]), the rest recorded as skipped. */
static int choose_functions(Engine *e, EngineObserve *o, const char *const *functions, size_t n,
                            const char ***ret, size_t *ret_n, InjectError *err) {
        _cleanup_(name_set_done) NameSet traceable = {};
        _cleanup_free_ const char **syms = NULL;
        const FunctionTable *t;
        size_t k = 0;
        bool filter;
        int r;

        r = engine_functions(e, &t);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_UNAVAILABLE, "Cannot read the injectable functions: %s",
                                        strerror(-r));
        r = traceable_functions(&traceable);
        if (r < 0 && r != -ENOENT)
                return inject_error_set(err, r, INJECT_ERROR_UNAVAILABLE, "Cannot read ftrace's functions: %s",
                                        strerror(-r));
        filter = r >= 0;
        syms = calloc(n ?: 1, sizeof(*syms));
        if (!syms)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const InjectableFunction *f = function_table_find(t, functions[i]);
                const char *why = NULL;

                /* What Inject serves: the listed functions, and the LSM
                 * hooks (fmod_ret), which ftrace traces like any other. */
                if (!f || (!f->listed && f->type != FUNC_TYPE_LSM))
                        why = "not on the kernel's error-injection list, nor an LSM hook";
                else if (f->module)
                        why = "in a module: only vmlinux functions are observed";
                else if (filter && !name_set_has(&traceable, f->name))
                        why = "not traceable by ftrace (its file is built without it), which kprobe.multi needs";
                else if (k >= OBSERVE_MAX_FUNCTIONS)
                        why = "beyond the " "4096" " functions one observation attaches to";
                else {
                        /* Each once: kprobe.multi refuses a repeated symbol. */
                        bool dup = false;

                        for (size_t j = 0; j < k && !dup; j++)
                                dup = strcmp(syms[j], f->name) == 0;
                        if (!dup)
                                syms[k++] = f->name;
                        continue;
                }
                r = skip(o, functions[i], why);
                if (r < 0)
                        return r;
        }
        if (k == 0)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_NOT_INJECTABLE,
                                        "None of the %zu functions can be observed on this kernel%s%s", n,
                                        o->n_skipped ? ": the first one is " : "",
                                        o->n_skipped ? o->skipped[0].reason : "");
        *ret = TAKE_PTR(syms);
        *ret_n = k;
        return 0;
}

_Static_assert(OBSERVE_MAX_FUNCTIONS == 4096, "the message in choose_functions() says 4096");

int engine_observe_start(Engine *e, pid_t pid, uint64_t start_ticks, uint32_t uid, const char *const *functions,
                         size_t n, EngineObserve **ret, InjectError *err) {
        LIBBPF_OPTS(bpf_kprobe_multi_opts, opts);
        _cleanup_(engine_observe_freep) EngineObserve *o = NULL;
        _cleanup_free_ const char **syms = NULL;
        pid_t tgid;
        uint64_t ticks, tag = 0;
        size_t n_syms = 0;
        int r, tags_fd;

        r = scope_process(pid, &tgid, &ticks);
        if (r < 0 || (start_ticks && ticks != start_ticks))
                return inject_error_set(err, -ESRCH, INJECT_ERROR_BAD_SCOPE, "No process with pid %d", (int) pid);
        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        *o = (EngineObserve) { .engine = e, .pid = tgid, .start_ticks = ticks };

        r = choose_functions(e, o, functions, n, &syms, &n_syms, err);
        if (r < 0)
                return r;

        o->skel = observe_bpf__open();
        if (!o->skel)
                return inject_error_set(err, negative_errno(), INJECT_ERROR_KERNEL_REFUSED,
                                        "Cannot open the observe program: %s", engine_libbpf_error());

        r = engine_lock(e);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_UNAVAILABLE, "Cannot lock the engine: %s", strerror(-r));
        /* Tagged before the program loads: it must share the tags map, and
         * the tag is read-only data. The tree may make calls between the
         * tagging and the attach; the caller starts what it observes after
         * this returns. */
        /* The tags map and the pin root, as the first arm makes them. */
        r = engine_pin_shared(e);
        if (r >= 0)
                r = scope_roots_add_observer(e, tgid, ticks, &tag);
        if (r >= 0) {
                o->root_added = true;
                tags_fd = engine_tags_fd(e);
                r = tags_fd < 0 ? tags_fd : bpf_map__reuse_fd(o->skel->maps.task_tags, tags_fd);
        }
        engine_unlock(e);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot tag process %d's tree: %s",
                                        (int) tgid, strerror(-r));

        o->skel->rodata->observe_tag = tag;
        o->skel->rodata->observe_uid = uid;
        /* Sized to the request: one count per function attached, and the
         * stack budget (observe.h). Preallocated, so this is what the
         * observation costs the daemon's memory cgroup from its load on. */
        r = bpf_map__set_max_entries(o->skel->maps.counts, (uint32_t) n_syms);
        if (r >= 0)
                r = bpf_map__set_max_entries(o->skel->maps.stacks, OBSERVE_MAX_STACKS);
        if (r >= 0)
                r = bpf_map__set_max_entries(o->skel->maps.pairs, OBSERVE_MAX_PAIRS);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot size the observe maps: %s",
                                        strerror(-r));
        r = observe_bpf__load(o->skel);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "The kernel refused the observe program: %s%s%s",
                                        strerror(-r), *engine_libbpf_error() ? ": " : "", engine_libbpf_error());
        opts.syms = syms;
        opts.cnt = n_syms;
        o->link = bpf_program__attach_kprobe_multi_opts(o->skel->progs.observe_call, NULL, &opts);
        if (!o->link) {
                r = negative_errno();
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                        "The kernel refused to attach to %zu functions at once (kprobe.multi, "
                                        "Linux 5.18+ with CONFIG_FPROBE): %s", n_syms, strerror(-r));
        }
        o->n_attached = n_syms;
        o->attached.v = calloc(n_syms, sizeof(*o->attached.v));
        if (!o->attached.v)
                return -ENOMEM;
        for (; o->attached.n < n_syms; o->attached.n++)
                if (!(o->attached.v[o->attached.n] = strdup(syms[o->attached.n])))
                        return -ENOMEM;
        qsort(o->attached.v, o->attached.n, sizeof(*o->attached.v), cmp_str);
        *ret = TAKE_PTR(o);
        return 0;
}

const ObserveSkipped *engine_observe_skipped(EngineObserve *o, size_t *ret_n) {
        *ret_n = o->n_skipped;
        return o->skipped;
}

size_t engine_observe_n_attached(EngineObserve *o) {
        return o->n_attached;
}

pid_t engine_observe_pid(EngineObserve *o) {
        return o->pid;
}

void observe_functions_free(ObserveFunction *v, size_t n) {
        for (size_t i = 0; v && i < n; i++) {
                for (size_t j = 0; j < v[i].n_stacks; j++)
                        strv_free(v[i].stacks[j].frames);
                free(v[i].stacks);
        }
        free(v);
}

static int cmp_function(const void *a, const void *b) {
        return strcmp(((const ObserveFunction *) a)->name, ((const ObserveFunction *) b)->name);
}

static int cmp_stack(const void *a, const void *b) {
        const ObserveStack *x = a, *y = b;

        return x->first_call < y->first_call ? -1 : x->first_call > y->first_call;
}

/* The name ip is reported as: the one attached at its address. One
 * address has several names (aliases: a system call's __x64_sys_,
 * __ia32_sys_ and __do_sys_ names are one function), and the
 * error-injection list names it by one of them, which is the name that was
 * asked for, attached, and which Inject knows it by; the kallsyms lookup
 * alone would give whichever alias sorts last. */
static const char *ip_name(const EngineObserve *o, const Kallsyms *k, uint64_t ip) {
        const KSym *s = k ? kallsyms_lookup_addr(k, ip) : NULL;
        size_t first, end;

        if (!s)
                return NULL;
        /* The aliases are neighbours in the table, which is sorted by address. */
        for (first = (size_t) (s - k->syms); first > 0 && k->syms[first - 1].addr == s->addr; first--)
                ;
        for (end = (size_t) (s - k->syms) + 1; end < k->n && k->syms[end].addr == s->addr; end++)
                ;
        for (size_t i = first; i < end; i++)
                if (!k->syms[i].module && name_set_has(&o->attached, k->syms[i].name))
                        return k->syms[i].name;
        return s->name;
}

/* The function names of stack_id's frames, innermost first (what
 * explore's --through matches); NULL when out of memory. A frame with no
 * symbol is left out: its address is not the caller's to see. */
static char **stack_frames(int stacks_fd, const Kallsyms *k, int64_t stack_id) {
        uint64_t ips[OBSERVE_STACK_DEPTH] = {};
        char **v = calloc(OBSERVE_STACK_DEPTH + 1, sizeof(char *));
        size_t n = 0;
        __u32 id = (__u32) stack_id;

        if (!v)
                return NULL;
        if (!k || bpf_map_lookup_elem(stacks_fd, &id, ips) < 0)
                return v;
        for (size_t i = 0; i < OBSERVE_STACK_DEPTH && ips[i]; i++) {
                const KSym *s = kallsyms_lookup_addr(k, ips[i]);

                if (!s)
                        continue;
                v[n] = strdup(s->name);
                if (!v[n]) {
                        strv_free(v);
                        return NULL;
                }
                n++;
        }
        return v;
}

static ObserveFunction *find_ip(ObserveFunction *v, const uint64_t *ips, size_t n, uint64_t ip) {
        for (size_t i = 0; i < n; i++)
                if (ips[i] == ip)
                        return &v[i];
        return NULL;
}

int engine_observe_read(EngineObserve *o, ObserveFunction **ret, size_t *ret_n) {
        ObserveFunction *v = NULL;
        _cleanup_free_ uint64_t *ips = NULL;
        const Kallsyms *k = NULL;
        int counts_fd = bpf_map__fd(o->skel->maps.counts), pairs_fd = bpf_map__fd(o->skel->maps.pairs),
            stacks_fd = bpf_map__fd(o->skel->maps.stacks);
        struct observe_pair_key pk, last_pk, *prev_pk = NULL;
        uint64_t ip, last_ip, *prev = NULL;
        size_t n = 0;
        int r = 0;

        (void) engine_load_kallsyms(o->engine, &k);
        v = calloc(OBSERVE_MAX_FUNCTIONS, sizeof(*v));
        ips = calloc(OBSERVE_MAX_FUNCTIONS, sizeof(*ips));
        if (!v || !ips) {
                free(v);
                return -ENOMEM;
        }
        while (n < OBSERVE_MAX_FUNCTIONS && bpf_map_get_next_key(counts_fd, prev, &ip) == 0) {
                struct observe_count c;
                const char *name;

                last_ip = ip;
                prev = &last_ip;
                if (bpf_map_lookup_elem(counts_fd, &ip, &c) < 0)
                        continue;
                ips[n] = ip;
                name = ip_name(o, k, ip);
                if (name)
                        snprintf(v[n].name, sizeof(v[n].name), "%s", name);
                else
                        snprintf(v[n].name, sizeof(v[n].name), "0x%llx", (unsigned long long) ip);
                v[n].calls = c.calls;
                v[n].stack_errors = c.stack_errors;
                n++;
        }
        while (bpf_map_get_next_key(pairs_fd, prev_pk, &pk) == 0) {
                struct observe_pair p;
                ObserveFunction *f;
                ObserveStack *st;
                last_pk = pk;
                prev_pk = &last_pk;
                if (bpf_map_lookup_elem(pairs_fd, &pk, &p) < 0 || !(f = find_ip(v, ips, n, pk.ip)))
                        continue;
                st = realloc(f->stacks, (f->n_stacks + 1) * sizeof(*st));
                if (!st) {
                        r = -ENOMEM;
                        break;
                }
                f->stacks = st;
                st = &st[f->n_stacks++];
                *st = (ObserveStack) {
                        .first_call = p.first_call, .last_call = p.last_call, .calls = p.calls,
                        .sample_stride = p.shift < 63 ? 1ULL << p.shift : 0,
                        .n_samples = p.n_samples < OBSERVE_SAMPLES ? p.n_samples : OBSERVE_SAMPLES,
                        .frames = stack_frames(stacks_fd, k, pk.stack_id),
                };
                memcpy(st->samples, p.samples, sizeof(st->samples));
                if (!st->frames) {
                        r = -ENOMEM;
                        break;
                }
        }
        if (r < 0) {
                observe_functions_free(v, n);
                return r;
        }
        for (size_t i = 0; i < n; i++)
                if (v[i].n_stacks > 1)  /* none: no array at all, which qsort() may not be given */
                        qsort(v[i].stacks, v[i].n_stacks, sizeof(*v[i].stacks), cmp_stack);
        qsort(v, n, sizeof(*v), cmp_function);
        *ret = v;
        *ret_n = n;
        return 0;
}
