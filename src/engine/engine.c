/* SPDX-License-Identifier: MIT */
/* The engine's life cycle, what the kernel offers it, and the pins every
 * site shares. Sites are site.c, the cache of their programs site-cache.c;
 * arm.c, disarm.c and adopt.c are the operations. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "kallsyms.h"
#include "pin.h"
#include "probe.h"
#include "scope-tags.h"
#include "site-cache.h"
#include "site.h"
#include "time-util.h"

static const char *const backend_table[_BACKEND_MAX] = {
        [BACKEND_AUTO] = "auto",
        [BACKEND_KPROBE] = "kprobe",
        [BACKEND_FMOD_RET] = "fmod_ret",
};

const char *backend_to_string(Backend b) {
        return b >= 0 && b < _BACKEND_MAX ? backend_table[b] : NULL;
}

int backend_from_string(const char *s) {
        for (int i = 0; i < _BACKEND_MAX; i++)
                if (strcmp(backend_table[i], s) == 0)
                        return i;
        return -EINVAL;
}

static const char *const state_table[_INJECTION_STATE_MAX] = {
        [INJECTION_ACTIVE] = "active",
        [INJECTION_EXPIRED] = "expired",
        [INJECTION_EXHAUSTED] = "exhausted",
};

const char *injection_state_to_string(InjectionState s) {
        return s >= 0 && s < _INJECTION_STATE_MAX ? state_table[s] : NULL;
}

static const char *const adopt_table[_ADOPT_ACTION_MAX] = {
        [ADOPT_KEPT] = "adopted",
        [ADOPT_EXPIRED] = "expired",
        [ADOPT_EXHAUSTED] = "exhausted",
        [ADOPT_ORPHANED] = "orphaned",
};

const char *adopt_action_to_string(AdoptAction a) {
        return a >= 0 && a < _ADOPT_ACTION_MAX ? adopt_table[a] : NULL;
}

/* libbpf's own chatter: kept for the error we report, shown only on request. */
static char libbpf_last[512];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap) {
        va_list aq;

        if (level != LIBBPF_DEBUG) {
                va_copy(aq, ap);
                (void) vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, aq);
                va_end(aq);
                libbpf_last[strcspn(libbpf_last, "\n")] = 0;
        }
        if (getenv("INJECTD_DEBUG_LIBBPF"))
                return vfprintf(stderr, fmt, ap);
        return 0;
}

const char *engine_libbpf_error(void) {
        return libbpf_last;
}

Engine *engine_free(Engine *e) {
        if (!e)
                return NULL;
        /* A lingering site holds nothing armed: nobody would detach it. */
        engine_set_site_linger(e, 0);
        free(e->pin_root);
        free(e->sites_dir);
        free(e->events_path);
        free(e->tags_path);
        for (int i = 0; i < _SITE_MAP_MAX; i++) {
                free(e->outer_path[i]);
                safe_close(e->outer_fd[i]);
        }
        safe_close(e->lock_fd);
        safe_close(e->events_fd);
        safe_close(e->tags_fd);
        function_table_free(e->functions);
        kallsyms_cache_done(&e->kallsyms);
        kernel_probe_free(e->probe);
        engine_task_ns_free(e);
        free(e->observe_roots);
        free(e->arming_roots);
        site_cache_free_all(e);
        site_program_free(e->kprobe_program);
        scope_tags_program_free(e->tags_program);
        slot_index_done(&e->index);
        free(e);
        return NULL;
}

int engine_new(const char *pin_root, Engine **ret) {
        _cleanup_(engine_freep) Engine *e = NULL;
        long hz;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->lock_fd = e->events_fd = e->tags_fd = -1;
        for (int i = 0; i < _SITE_MAP_MAX; i++)
                e->outer_fd[i] = -1;
        e->cache_grace_usec = ENGINE_SITE_CACHE_GRACE_DEFAULT_USEC;
        e->cache_max = ENGINE_SITE_CACHE_MAX_DEFAULT;
        e->max_slots = INJECT_MAX_SLOTS;
        e->kallsyms.min_interval_usec = ENGINE_KALLSYMS_REFRESH_USEC;
        e->pin_root = strdup(pin_root ?: ENGINE_PIN_ROOT);
        if (!e->pin_root ||
            asprintf(&e->sites_dir, "%s/sites", e->pin_root) < 0 ||
            asprintf(&e->events_path, "%s/events", e->pin_root) < 0 ||
            asprintf(&e->tags_path, "%s/task-tags", e->pin_root) < 0 ||
            asprintf(&e->outer_path[SITE_MAP_SCOPES], "%s/site-scopes", e->pin_root) < 0 ||
            asprintf(&e->outer_path[SITE_MAP_SLOTS], "%s/site-slots", e->pin_root) < 0 ||
            asprintf(&e->outer_path[SITE_MAP_INFO], "%s/site-infos", e->pin_root) < 0)
                return -ENOMEM;
        hz = sysconf(_SC_CLK_TCK);
        e->ns_per_tick = 1000000000ULL / (hz > 0 ? (uint64_t) hz : 100);
        libbpf_set_print(libbpf_print);

        *ret = TAKE_PTR(e);
        return 0;
}

int engine_set_max_per_function(Engine *e, uint32_t n) {
        if (n == 0 || n > ENGINE_MAX_SLOTS_LIMIT)
                return -ERANGE;
        e->max_slots = n;
        return 0;
}

uint32_t engine_max_per_function(Engine *e) {
        return e->max_slots;
}

int engine_preload(Engine *e) {
        const KernelProbe *p;
        int fd, r;

        /* A kernel that can inject nothing gets nothing loaded: the
         * tagging programs may load where no site can (lockdown refuses
         * trampolines, not raw tracepoints). */
        p = engine_probe(e);
        if (!p)
                return -ENOMEM;
        if (!kernel_probe_available(p, PROBE_INJECTION))
                return 0;
        fd = engine_tags_fd(e);
        r = fd < 0 ? fd : scope_tags_prepare(&e->tags_program, fd, e->ns_per_tick);
        /* Each is loaded without the other, should one fail. */
        if (e->caps.override == 0) {
                _cleanup_(engine_unlockp) Engine *locked = NULL;
                int k;

                /* It pins the shared maps, which takes the lock. */
                k = engine_lock(e);
                if (k >= 0) {
                        locked = e;
                        k = site_kprobe_preload(e);
                }
                if (r >= 0)
                        r = k;
        }
        return r;
}

int engine_lock(Engine *e) {
        int r;

        r = engine_lock_open(e);
        if (r < 0)
                return r;
        if (flock(e->lock_fd, LOCK_EX) < 0)
                return negative_errno();
        e->locked = true;
        return 0;
}

void engine_unlock(Engine *e) {
        if (e->lock_fd < 0)
                return;
        engine_index_bump(e);
        e->locked = e->index_synced = false;
        (void) flock(e->lock_fd, LOCK_UN);
}

void engine_unlockp(Engine **e) {
        if (*e)
                engine_unlock(*e);
}

/* The findings come from probe.c; the fmod_ret one is confirmed with our
 * own program, which is what an injection will load. */
int engine_caps(Engine *e, const EngineCaps **ret) {
        const FunctionTable *t = NULL;
        int r;

        if (!e->caps_done) {
                EngineCaps *c = &e->caps;
                KernelProbe *p;

                (void) engine_functions(e, &t);
                r = kernel_probe_run(t, &e->probe);
                if (r < 0) {
                        /* Callers may ignore the error: leave nothing undefined. */
                        *c = (EngineCaps) { r, r, r, r, r, r };
                        *ret = c;
                        return r;
                }
                p = e->probe;
                if (kernel_probe_available(p, PROBE_FMOD_RET_LSM)) {
                        r = site_program_probe_fmod_ret("security_file_open");
                        if (r < 0)
                                kernel_probe_set(p, PROBE_FMOD_RET_LSM, r, "injectd's own program does not load "
                                                 "against security_file_open: %s", libbpf_last[0] ?
                                                 libbpf_last : strerror(-r));
                }
                c->bpf = kernel_probe_get(p, PROBE_BPF)->error;
                c->tracing = kernel_probe_get(p, PROBE_TRACING)->error;
                c->override = kernel_probe_get(p, PROBE_BACKEND_KPROBE)->error;
                c->fmod_ret = kernel_probe_get(p, PROBE_BACKEND_FMOD_RET)->error;
                c->btf = kernel_probe_get(p, PROBE_BTF)->error;
                c->list = kernel_probe_get(p, PROBE_ERROR_INJECTION_LIST)->error;
                e->caps_done = true;
        }
        *ret = &e->caps;
        return 0;
}

const KernelProbe *engine_probe(Engine *e) {
        const EngineCaps *c;

        return engine_caps(e, &c) >= 0 ? e->probe : NULL;
}

int engine_functions(Engine *e, const FunctionTable **ret) {
        int r;

        if (!e->functions) {
                r = function_table_load(NULL, NULL, &e->functions);
                if (r < 0)
                        return r;
        }
        *ret = e->functions;
        return 0;
}

unsigned engine_function_backends(Engine *e, const InjectableFunction *f) {
        const EngineCaps *c;
        unsigned m = 0;

        (void) engine_caps(e, &c);
        if (f->listed && !f->module && c->override == 0)
                m |= 1u << BACKEND_KPROBE;
        if (f->listed && f->module && c->override == 0)
                m |= 1u << BACKEND_KPROBE;
        /* fmod_ret cannot return 0, so a NULL-type function is kprobe-only. */
        if (f->in_btf && c->fmod_ret == 0 && f->type != FUNC_TYPE_NULL)
                m |= 1u << BACKEND_FMOD_RET;
        return m;
}

int engine_load_kallsyms(Engine *e, const Kallsyms **ret) {
        return kallsyms_cache_get(&e->kallsyms, now_usec(CLOCK_MONOTONIC), ret);
}

int engine_refresh_symbols(Engine *e) {
        return kallsyms_cache_refresh(&e->kallsyms, now_usec(CLOCK_MONOTONIC));
}

const char *engine_symbol_name(Engine *e, uint64_t addr) {
        const Kallsyms *k;
        const KSym *s;

        if (engine_load_kallsyms(e, &k) < 0)
                return NULL;
        s = kallsyms_lookup_addr(k, addr);
        return s && s->addr == addr ? s->name : NULL;
}

int engine_symbolize(Engine *e, uint64_t addr, char *buf, size_t size) {
        const Kallsyms *k;
        int r;

        r = engine_load_kallsyms(e, &k);
        if (r < 0)
                return r == -ENOENT ? -ENODATA : r;
        return kallsyms_format_addr(k, addr, buf, size);
}

int engine_events_fd(Engine *e) {
        int fd;

        if (e->events_fd >= 0)
                return e->events_fd;
        fd = bpf_obj_get(e->events_path);
        if (fd < 0) {
                if (errno != ENOENT)
                        return negative_errno();
                fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "inject_events", 0, 0, INJECT_EVENTS_SIZE, NULL);
                if (fd < 0)
                        return negative_errno();
        }
        e->events_fd = fd;
        return fd;
}

/* The pinned map wins over the one we kept: another engine (injectd-engine
 * beside the daemon, say) may have created and pinned one since we last
 * looked. */
int engine_tags_fd(Engine *e) {
        int fd;

        fd = bpf_obj_get(e->tags_path);
        if (fd < 0) {
                if (errno != ENOENT)
                        return negative_errno();
                if (e->tags_fd >= 0)
                        return e->tags_fd;
                fd = scope_tags_map_new();
                if (fd < 0)
                        return fd;
        }
        safe_close(e->tags_fd);
        e->tags_fd = fd;
        return fd;
}

/* The template of an outer map's inner maps (engine-internal.h): every
 * inner map must match it, the same type, sizes and flags. The slots
 * arrays are inner maps (BPF_F_INNER_MAP), so sites may differ in their
 * number of slots. */
static int inner_map_new(SiteMapKind k) {
        static const struct {
                enum bpf_map_type type;
                uint32_t key_size, value_size, flags;
        } inner[_SITE_MAP_MAX] = {
                [SITE_MAP_SCOPES] = { BPF_MAP_TYPE_HASH, sizeof(struct inject_scope_key),
                                      sizeof(struct inject_scope_val), 0 },
                [SITE_MAP_SLOTS] = { BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), sizeof(struct inject_slot),
                                     BPF_F_INNER_MAP },
                [SITE_MAP_INFO] = { BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), sizeof(struct inject_site_info), 0 },
        };
        LIBBPF_OPTS(bpf_map_create_opts, io, .map_flags = inner[k].flags);
        int fd;

        fd = bpf_map_create(inner[k].type, NULL, inner[k].key_size, inner[k].value_size, 1, &io);
        return fd < 0 ? negative_errno() : fd;
}

static int outer_map_new(SiteMapKind k) {
        static const char *const names[_SITE_MAP_MAX] = {
                [SITE_MAP_SCOPES] = "site_scopes",
                [SITE_MAP_SLOTS] = "site_slots",
                [SITE_MAP_INFO] = "site_infos",
        };
        LIBBPF_OPTS(bpf_map_create_opts, o);
        _cleanup_close_ int tmpl = -1;
        int fd;

        tmpl = inner_map_new(k);
        if (tmpl < 0)
                return tmpl;
        o.inner_map_fd = tmpl;
        fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, names[k], sizeof(uint32_t), sizeof(uint32_t),
                            INJECT_MAX_SITES, &o);
        return fd < 0 ? negative_errno() : fd;
}

/* Whether one pinned outer map takes this build's inner maps: an inner map
 * of ours is put at a free index and taken out again. The kernel refuses
 * it (EINVAL) when the map was made by a build whose structures differ (an
 * older, smaller site info): no site of ours could then be published. No
 * site uses a free index, so no program looks there meanwhile. */
static int outer_map_fits(int outer_fd, SiteMapKind k) {
        _cleanup_close_ int inner = -1;
        uint32_t id;

        inner = inner_map_new(k);
        if (inner < 0)
                return inner;
        for (uint32_t i = INJECT_MAX_SITES; i-- > 0;) {
                if (bpf_map_lookup_elem(outer_fd, &i, &id) == 0)
                        continue;
                if (errno != ENOENT)
                        return negative_errno();
                /* An array of maps takes BPF_ANY only (else EINVAL, as for a misfit). */
                if (bpf_map_update_elem(outer_fd, &i, &inner, BPF_ANY) < 0)
                        return errno == EINVAL ? 0 : negative_errno();
                (void) bpf_map_delete_elem(outer_fd, &i);
                return 1;
        }
        return 1;       /* full: nothing to tell by, and nothing of ours would fit anyway */
}

int engine_pinned_layout_fits(Engine *e) {
        for (int i = 0; i < _SITE_MAP_MAX; i++) {
                _cleanup_close_ int fd = bpf_obj_get(e->outer_path[i]);
                int r;

                if (fd < 0) {
                        if (errno == ENOENT)
                                continue;
                        return negative_errno();
                }
                r = outer_map_fits(fd, i);
                if (r <= 0)
                        return r;
        }
        return 1;
}

int engine_pins_remove_all(Engine *e) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int n = 0;

        d = opendir(e->sites_dir);
        while (d && (de = readdir(d))) {
                char p[PATH_MAX];

                if (de->d_name[0] == '.')
                        continue;
                if (pin_path(p, sizeof(p), e->sites_dir, de->d_name) >= 0 && pin_dir_remove(p) >= 0)
                        n++;
        }
        engine_gc_root(e);
        /* What we hold of the old maps is not ours to reuse either. */
        for (int i = 0; i < _SITE_MAP_MAX; i++)
                e->outer_fd[i] = safe_close(e->outer_fd[i]);
        e->tags_fd = safe_close(e->tags_fd);
        return n;
}

/* As for the tags, the pinned maps win over the ones we kept: they are the
 * ones the pinned sites are in. */
static int engine_outer_fds(Engine *e) {
        for (int i = 0; i < _SITE_MAP_MAX; i++) {
                int fd = bpf_obj_get(e->outer_path[i]);

                if (fd < 0) {
                        if (errno != ENOENT)
                                return negative_errno();
                        if (e->outer_fd[i] >= 0)
                                continue;
                        fd = outer_map_new(i);
                        if (fd < 0)
                                return fd;
                }
                safe_close(e->outer_fd[i]);
                e->outer_fd[i] = fd;
        }
        return 0;
}

/* They may have been unpinned when the last site went, while we kept their
 * fds. */
int engine_pin_shared(Engine *e) {
        int fd, r;

        fd = engine_events_fd(e);
        if (fd < 0)
                return fd;
        r = engine_tags_fd(e);
        if (r < 0)
                return r;
        r = engine_outer_fds(e);
        if (r < 0)
                return r;
        if (mkdir(e->pin_root, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        if (bpf_obj_pin(fd, e->events_path) < 0 && errno != EEXIST)
                return negative_errno();
        if (bpf_obj_pin(e->tags_fd, e->tags_path) < 0 && errno != EEXIST)
                return negative_errno();
        for (int i = 0; i < _SITE_MAP_MAX; i++)
                if (bpf_obj_pin(e->outer_fd[i], e->outer_path[i]) < 0 && errno != EEXIST)
                        return negative_errno();
        return 0;
}

void engine_gc_root(Engine *e) {
        if (rmdir(e->sites_dir) < 0 && errno != ENOENT)
                return;         /* still has sites */
        (void) unlink(e->events_path);
        for (int i = 0; i < _SITE_MAP_MAX; i++)
                (void) unlink(e->outer_path[i]);
        (void) scope_tags_remove(e->pin_root);
        (void) unlink(e->tags_path);
        (void) rmdir(e->pin_root);
}
