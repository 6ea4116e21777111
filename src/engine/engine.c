/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "time-util.h"
#include "cleanup.h"
#include "engine.h"
#include "inject.skel.h"
#include "kallsyms.h"
#include "log.h"
#include "pin.h"
#include "probe.h"
#include "scope.h"
#include "scope-tags.h"

typedef struct OwnedSite OwnedSite;
static OwnedSite *owned_site_free(Engine *e, OwnedSite *o);

struct Engine {
        char *pin_root;
        char *sites_dir;
        char *events_path;
        char *tags_path;
        int lock_fd;
        int events_fd;
        int tags_fd;
        uint64_t ns_per_tick;
        FunctionTable *functions;
        Kallsyms *kallsyms;
        EngineCaps caps;
        bool caps_done;
        KernelProbe *probe;

        OwnedSite *owned;               /* sites we loaded: attached, or cached */
        unsigned n_cached;              /* ... of which detached, kept for reuse */
        uint64_t cache_grace_usec;
        unsigned cache_max;
        EngineSiteStats stats;
};

/* An open site: the fds of its pinned maps. */
typedef struct Site {
        char *dir;
        int scopes_fd;
        int slots_fd;
        int site_fd;
        struct inject_site_info info;
} Site;

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

static void site_close(Site *s) {
        free(s->dir);
        s->dir = NULL;
        s->scopes_fd = safe_close(s->scopes_fd);
        s->slots_fd = safe_close(s->slots_fd);
        s->site_fd = safe_close(s->site_fd);
}

static void site_closep(Site *s) {
        site_close(s);
}

#define SITE_NULL ((Site) { .scopes_fd = -1, .slots_fd = -1, .site_fd = -1 })

Engine *engine_free(Engine *e) {
        if (!e)
                return NULL;
        free(e->pin_root);
        free(e->sites_dir);
        free(e->events_path);
        free(e->tags_path);
        safe_close(e->lock_fd);
        safe_close(e->events_fd);
        safe_close(e->tags_fd);
        function_table_free(e->functions);
        kallsyms_free(e->kallsyms);
        kernel_probe_free(e->probe);
        while (e->owned)
                owned_site_free(e, e->owned);
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
        e->cache_grace_usec = ENGINE_SITE_CACHE_GRACE_DEFAULT_USEC;
        e->cache_max = ENGINE_SITE_CACHE_MAX_DEFAULT;
        e->pin_root = strdup(pin_root ?: ENGINE_PIN_ROOT);
        if (!e->pin_root ||
            asprintf(&e->sites_dir, "%s/sites", e->pin_root) < 0 ||
            asprintf(&e->events_path, "%s/events", e->pin_root) < 0 ||
            asprintf(&e->tags_path, "%s/task-tags", e->pin_root) < 0)
                return -ENOMEM;
        hz = sysconf(_SC_CLK_TCK);
        e->ns_per_tick = 1000000000ULL / (hz > 0 ? (uint64_t) hz : 100);
        libbpf_set_print(libbpf_print);

        *ret = TAKE_PTR(e);
        return 0;
}

/* Serializes every change to the pins, between engines in any process. */
static int engine_lock(Engine *e) {
        if (e->lock_fd < 0) {
                if (mkdir(ENGINE_STATE_DIR, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                e->lock_fd = open(ENGINE_STATE_DIR "/engine.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
                if (e->lock_fd < 0)
                        return negative_errno();
        }
        if (flock(e->lock_fd, LOCK_EX) < 0)
                return negative_errno();
        return 0;
}

static void engine_unlock(Engine *e) {
        if (e->lock_fd >= 0)
                (void) flock(e->lock_fd, LOCK_UN);
}

static void engine_unlockp(Engine **e) {
        if (*e)
                engine_unlock(*e);
}

/* ---- capabilities ------------------------------------------------------ */

/* Loads (but does not attach) our own program as fmod_ret on target. */
static int probe_fmod_ret(Engine *e, const char *target) {
        struct inject_bpf *skel;
        int r;

        skel = inject_bpf__open();
        if (!skel)
                return negative_errno();
        (void) bpf_program__set_autoload(skel->progs.inject_kprobe, false);
        r = bpf_program__set_attach_target(skel->progs.inject_fmod_ret, 0, target);
        if (r == 0)
                r = inject_bpf__load(skel);
        inject_bpf__destroy(skel);
        return r < 0 ? r : 0;
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
                        r = probe_fmod_ret(e, "security_file_open");
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

/* ---- sites ------------------------------------------------------------- */

/* bpffs refuses dots in names, and function names may hold them (.isra). */
static int site_dir_name(Engine *e, const char *function, Backend b, char **ret) {
        _cleanup_free_ char *n = NULL;

        if (asprintf(&n, "%s/%s-%s", e->sites_dir, backend_to_string(b), function) < 0)
                return -ENOMEM;
        for (char *p = n + strlen(e->sites_dir) + 1; *p; p++)
                if (*p == '.')
                        *p = '%';
        *ret = TAKE_PTR(n);
        return 0;
}

static int site_open(const char *dir, Site *ret) {
        _cleanup_(site_closep) Site s = SITE_NULL;
        char p[PATH_MAX];
        uint32_t zero = 0;
        int r;

        s.dir = strdup(dir);
        if (!s.dir)
                return -ENOMEM;
        /* The link must be there too, or the site is half-built. */
        r = pin_path(p, sizeof(p), dir, "link");
        if (r < 0)
                return r;
        if (access(p, F_OK) < 0)
                return -ENOLINK;
#define OPEN_PIN(field, name)                                   \
        r = pin_path(p, sizeof(p), dir, name);                  \
        if (r < 0)                                              \
                return r;                                       \
        s.field = bpf_obj_get(p);                               \
        if (s.field < 0)                                        \
                return negative_errno();
        OPEN_PIN(scopes_fd, "scopes");
        OPEN_PIN(slots_fd, "slots");
        OPEN_PIN(site_fd, "site");
#undef OPEN_PIN
        if (bpf_map_lookup_elem(s.site_fd, &zero, &s.info) < 0)
                return negative_errno();

        *ret = s;
        s = SITE_NULL;
        return 0;
}

/* Once no site is left, nothing of ours stays in bpffs. */
static void engine_gc_root(Engine *e) {
        if (rmdir(e->sites_dir) < 0 && errno != ENOENT)
                return;         /* still has sites */
        (void) unlink(e->events_path);
        (void) scope_tags_remove(e->pin_root);
        (void) unlink(e->tags_path);
        (void) rmdir(e->pin_root);
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

/* The task storage of process-scope tags, shared like the ring buffer, so
 * every site and the tagging programs see the same tags. The pinned map
 * wins over the one we kept: another engine (injectd-engine beside the
 * daemon, say) may have created and pinned one since we last looked. */
static int engine_tags_fd(Engine *e) {
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

/* Makes sure the shared ring buffer and tags are pinned (they may have been
 * unpinned when the last site went, while we kept their fds). */
static int engine_pin_events(Engine *e) {
        int fd, r;

        fd = engine_events_fd(e);
        if (fd < 0)
                return fd;
        r = engine_tags_fd(e);
        if (r < 0)
                return r;
        if (mkdir(e->pin_root, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        if (bpf_obj_pin(fd, e->events_path) < 0 && errno != EEXIST) {
                r = negative_errno();
                return r;
        }
        if (bpf_obj_pin(e->tags_fd, e->tags_path) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

/* ---- loading, attaching and the site cache ----------------------------- */

/* Loading a site means verifying its program: hundreds of milliseconds
 * under emulation, most of a cold request. So a site this engine loaded
 * keeps its skeleton (the verified program and its maps) in e->owned. When
 * the site's last injection ends, the site is unpinned, which detaches the
 * program (callers of the function pay nothing), but the skeleton stays
 * for a grace period: the next request on the same (function, backend)
 * re-attaches it instead of loading it again. Only this process can
 * re-attach it, so a restarted daemon starts with an empty cache; what is
 * pinned is adopted as before. */
struct OwnedSite {
        OwnedSite *prev, *next;         /* e->owned, most recently used first */
        char function[INJECT_FUNC_LEN];
        Backend backend;
        struct inject_bpf *skel;
        bool detached;                  /* not pinned: a cached entry */
        uint64_t detached_ns;           /* CLOCK_BOOTTIME, when detached is set */
};

static bool site_cache_enabled(const Engine *e) {
        return e->cache_grace_usec > 0 && e->cache_max > 0;
}

static OwnedSite *owned_site_free(Engine *e, OwnedSite *o) {
        if (!o)
                return NULL;
        if (o->prev)
                o->prev->next = o->next;
        else if (e->owned == o)
                e->owned = o->next;
        if (o->next)
                o->next->prev = o->prev;
        if (o->detached)
                e->n_cached--;
        /* Closes our fds only; a pinned link keeps an attached program alive. */
        inject_bpf__destroy(o->skel);
        free(o);
        return NULL;
}

static void owned_site_to_front(Engine *e, OwnedSite *o) {
        if (e->owned == o)
                return;
        if (o->prev)
                o->prev->next = o->next;
        if (o->next)
                o->next->prev = o->prev;
        o->prev = NULL;
        o->next = e->owned;
        if (e->owned)
                e->owned->prev = o;
        e->owned = o;
}

static OwnedSite *owned_site_find(Engine *e, const char *function, Backend b) {
        for (OwnedSite *o = e->owned; o; o = o->next)
                if (o->backend == b && strncmp(o->function, function, INJECT_FUNC_LEN) == 0)
                        return o;
        return NULL;
}

static int owned_site_add(Engine *e, const char *function, Backend b, struct inject_bpf *skel) {
        OwnedSite *o;

        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        strncpy(o->function, function, INJECT_FUNC_LEN - 1);
        o->backend = b;
        o->skel = skel;
        o->next = e->owned;
        if (e->owned)
                e->owned->prev = o;
        e->owned = o;
        return 0;
}

/* Writes the site's identity, with nothing armed: how a fresh program's
 * site map starts, and what a detached one returns to. */
static int site_info_reset(int site_fd, Backend b, const char *function) {
        struct inject_site_info info = { .backend = b };
        uint32_t zero = 0;

        strncpy(info.function, function, INJECT_FUNC_LEN - 1);
        if (bpf_map_update_elem(site_fd, &zero, &info, BPF_ANY) < 0)
                return negative_errno();
        return 0;
}

/* Empties a site's maps: no scope, no slot, nothing counted. A re-attached
 * program must start exactly as a freshly loaded one, so no scope of an
 * earlier injection can ever match (each scope entry also names its
 * injection's id, which a new injection never reuses). */
static int site_maps_reset(int scopes_fd, int slots_fd, int site_fd, Backend b, const char *function) {
        struct inject_scope_key key;
        const struct inject_slot empty = {};

        /* Deleting the key we just got makes the next "first key" lookup
         * start over, so this ends when the hash is empty. */
        while (bpf_map_get_next_key(scopes_fd, NULL, &key) == 0)
                if (bpf_map_delete_elem(scopes_fd, &key) < 0 && errno != ENOENT)
                        return negative_errno();
        if (errno != ENOENT)
                return negative_errno();

        for (uint32_t i = 0; i < INJECT_MAX_SLOTS; i++) {
                struct inject_slot slot;

                if (bpf_map_lookup_elem(slots_fd, &i, &slot) < 0)
                        return negative_errno();
                if (memcmp(&slot, &empty, sizeof(slot)) != 0 &&
                    bpf_map_update_elem(slots_fd, &i, &empty, BPF_ANY) < 0)
                        return negative_errno();
        }

        return site_info_reset(site_fd, b, function);
}

static int owned_site_reset(OwnedSite *o) {
        struct inject_bpf *s = o->skel;

        return site_maps_reset(bpf_map__fd(s->maps.scopes), bpf_map__fd(s->maps.slots), bpf_map__fd(s->maps.site),
                               o->backend, o->function);
}

/* Frees the least recently used cached entries beyond the cap. */
static void site_cache_trim(Engine *e) {
        OwnedSite *o, *prev;

        if (e->n_cached <= e->cache_max)
                return;
        for (o = e->owned; o && o->next; o = o->next)
                ;
        for (; o && e->n_cached > e->cache_max; o = prev) {
                prev = o->prev;
                if (!o->detached)
                        continue;
                owned_site_free(e, o);
                e->stats.evicted++;
        }
}

/* Marks a program of ours as detached, with its maps emptied. Fails, and
 * then must be freed, when the maps cannot be emptied: a program whose maps
 * may still hold a scope is never reused. */
static int owned_site_detach(Engine *e, OwnedSite *o) {
        int r;

        r = owned_site_reset(o);
        if (r < 0)
                return r;
        if (!o->detached) {
                o->detached = true;
                e->n_cached++;
        }
        o->detached_ns = now_nsec(CLOCK_BOOTTIME);
        return 0;
}

/* The site (function, b) is no longer pinned: our program for it, if we
 * own one, is detached now. Keep it for reuse, or free it. */
static void site_cache_put(Engine *e, const char *function, Backend b) {
        OwnedSite *o = owned_site_find(e, function, b);

        if (!o)
                return;
        if (!site_cache_enabled(e) || owned_site_detach(e, o) < 0) {
                owned_site_free(e, o);
                return;
        }
        owned_site_to_front(e, o);
        site_cache_trim(e);
}

/* An entry we think is attached whose site is no longer pinned was
 * detached behind our back (another engine removed its last injection):
 * count it as cached from now on, so that it expires. */
static void site_cache_notice_detached(Engine *e) {
        OwnedSite *o, *n;

        for (o = e->owned; o; o = n) {
                _cleanup_free_ char *dir = NULL;
                char p[PATH_MAX];

                n = o->next;
                if (o->detached)
                        continue;
                if (site_dir_name(e, o->function, o->backend, &dir) < 0 ||
                    pin_path(p, sizeof(p), dir, "link") < 0 || access(p, F_OK) >= 0 || errno != ENOENT)
                        continue;
                if (!site_cache_enabled(e) || owned_site_detach(e, o) < 0)
                        owned_site_free(e, o);
        }
        site_cache_trim(e);
}

void engine_set_site_cache(Engine *e, uint64_t grace_usec, unsigned max_sites) {
        e->cache_grace_usec = grace_usec;
        e->cache_max = max_sites;
        if (!site_cache_enabled(e))
                engine_site_cache_flush(e);
        else
                site_cache_trim(e);
}

uint64_t engine_site_cache_expire(Engine *e) {
        uint64_t now = now_nsec(CLOCK_BOOTTIME), next = UINT64_MAX, grace_ns = e->cache_grace_usec * 1000;
        OwnedSite *o, *n;

        site_cache_notice_detached(e);
        for (o = e->owned; o; o = n) {
                n = o->next;
                if (!o->detached)
                        continue;
                if (now - o->detached_ns >= grace_ns) {
                        owned_site_free(e, o);
                        e->stats.expired++;
                } else if (o->detached_ns + grace_ns < next)
                        next = o->detached_ns + grace_ns;
        }
        return next;
}

void engine_site_cache_flush(Engine *e) {
        OwnedSite *o, *n;

        for (o = e->owned; o; o = n) {
                n = o->next;
                if (o->detached)
                        owned_site_free(e, o);
        }
}

void engine_site_stats(Engine *e, EngineSiteStats *ret) {
        *ret = e->stats;
        ret->n_cached = e->n_cached;
        ret->n_owned = 0;
        for (OwnedSite *o = e->owned; o; o = o->next)
                ret->n_owned++;
}

/* Opens and loads (verifies) one copy of the program for function and b. */
static int site_load(Engine *e, const char *function, Backend b, struct inject_bpf **ret, InjectError *err) {
        struct inject_bpf *skel;
        struct bpf_program *prog;
        int r;

        skel = inject_bpf__open();
        if (!skel)
                return negative_errno();
        strncpy((char *) skel->rodata->function_name, function, INJECT_FUNC_LEN - 1);

        prog = b == BACKEND_KPROBE ? skel->progs.inject_kprobe : skel->progs.inject_fmod_ret;
        (void) bpf_program__set_autoload(b == BACKEND_KPROBE ? skel->progs.inject_fmod_ret : skel->progs.inject_kprobe,
                                         false);
        if (b == BACKEND_FMOD_RET) {
                r = bpf_program__set_attach_target(prog, 0, function);
                if (r < 0) {
                        inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                         "Cannot find '%s' in the kernel's BTF for fmod_ret: %s", function, strerror(-r));
                        goto fail;
                }
        }
        r = bpf_map__reuse_fd(skel->maps.events, e->events_fd);
        if (r >= 0)
                r = bpf_map__reuse_fd(skel->maps.task_tags, e->tags_fd);
        if (r < 0)
                goto fail;

        /* The verifier's statistics, for whoever tunes the program's cost. */
        static char vlog[4096];
        if (getenv("INJECTD_DEBUG_VERIFIER")) {
                vlog[0] = 0;
                (void) bpf_program__set_log_buf(prog, vlog, sizeof(vlog));
                (void) bpf_program__set_log_level(prog, 4);
        }
        r = inject_bpf__load(skel);
        if (getenv("INJECTD_DEBUG_VERIFIER"))
                fprintf(stderr, "verifier (%s, %s): %s\n", backend_to_string(b), function, vlog);
        if (r < 0) {
                inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                 "The kernel refused to load the %s program for '%s': %s%s%s",
                                 backend_to_string(b), function, strerror(-r),
                                 libbpf_last[0] ? " (libbpf: " : "", libbpf_last[0] ? libbpf_last : "");
                if (libbpf_last[0])
                        strncat(err->message, ")", sizeof(err->message) - strlen(err->message) - 1);
                goto fail;
        }

        /* Fresh maps are zeroed: only the site's identity is written. */
        r = site_info_reset(bpf_map__fd(skel->maps.site), b, function);
        if (r < 0)
                goto fail;
        e->stats.loads++;
        *ret = skel;
        return 0;

fail:
        inject_bpf__destroy(skel);
        return r;
}

/* Attaches a loaded program and pins its maps and link as final_dir. */
static int site_attach(Engine *e, struct inject_bpf *skel, const char *function, Backend b, const char *final_dir,
                       InjectError *err) {
        struct bpf_link *link;
        const char *failed;
        int r;

        if (b == BACKEND_KPROBE)
                link = bpf_program__attach_kprobe_opts(skel->progs.inject_kprobe, function, NULL);
        else
                link = bpf_program__attach_trace(skel->progs.inject_fmod_ret);
        if (!link) {
                r = negative_errno();
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                        "The kernel refused to attach %s to '%s': %s", backend_to_string(b), function,
                                        strerror(-r));
        }

        r = pin_dir_create(e->pin_root, final_dir, (const Pin[]) {
                                   { "scopes", bpf_map__fd(skel->maps.scopes) },
                                   { "slots", bpf_map__fd(skel->maps.slots) },
                                   { "site", bpf_map__fd(skel->maps.site) },
                                   { "link", bpf_link__fd(link) },
                           }, 4, &failed);
        if (r < 0 && failed)
                inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot pin '%s/%s': %s", final_dir, failed,
                                 strerror(-r));
        /* Pinned: closing our link fd leaves the program attached. Not
         * pinned: it detaches. */
        bpf_link__destroy(link);
        return r;
}

/* Whether two map fds name the same kernel map. */
static bool same_map(int a, int b) {
        struct bpf_map_info ia = {}, ib = {};
        __u32 la = sizeof(ia), lb = sizeof(ib);

        if (bpf_obj_get_info_by_fd(a, &ia, &la) < 0 || bpf_obj_get_info_by_fd(b, &ib, &lb) < 0)
                return false;
        return ia.id == ib.id;
}

/* A cached program keeps the shared maps it was loaded with. Should
 * another engine have pinned new ones meanwhile (injectd-engine beside the
 * daemon), the cached program would read tags and write events nobody
 * else sees: it must not be re-attached. */
static bool owned_site_maps_current(const Engine *e, const OwnedSite *o) {
        return same_map(bpf_map__fd(o->skel->maps.events), e->events_fd) &&
               same_map(bpf_map__fd(o->skel->maps.task_tags), e->tags_fd);
}

static int site_create(Engine *e, const char *function, Backend b, const char *final_dir, Site *ret, InjectError *err) {
        struct inject_bpf *skel = NULL;
        OwnedSite *o;
        int r;

        r = engine_pin_events(e);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                        "Cannot create the event ring buffer in '%s': %s", e->pin_root, strerror(-r));
        if (mkdir(e->sites_dir, 0700) < 0 && errno != EEXIST)
                return negative_errno();

        /* A program we loaded earlier for this site is not pinned, since the
         * site is not: it is detached, and its maps were emptied when it was. */
        o = owned_site_find(e, function, b);
        if (o) {
                if (!o->detached)
                        site_cache_put(e, function, b);
                o = owned_site_find(e, function, b);
        }
        if (o && !owned_site_maps_current(e, o)) {
                log_info("The cached %s program for '%s' uses shared maps that are no longer pinned; "
                         "loading it afresh.", backend_to_string(b), function);
                owned_site_free(e, o);
                o = NULL;
        }
        if (o) {
                InjectError ignored = {};

                /* Should the kernel refuse to re-attach it, load afresh: that
                 * either works or says why with its own error. */
                r = site_attach(e, o->skel, function, b, final_dir, &ignored);
                if (r < 0) {
                        log_warning_errno(r, "Cannot re-attach the cached %s program for '%s', loading it "
                                          "afresh: %s", backend_to_string(b), function,
                                          ignored.name ? ignored.message : strerror(-r));
                        owned_site_free(e, o);
                        e->stats.reattach_failures++;
                } else {
                        o->detached = false;
                        e->n_cached--;
                        owned_site_to_front(e, o);
                        e->stats.reattaches++;
                        return site_open(final_dir, ret);
                }
        }

        r = site_load(e, function, b, &skel, err);
        if (r < 0)
                goto fail;
        r = site_attach(e, skel, function, b, final_dir, err);
        if (r < 0)
                goto fail;
        if (site_cache_enabled(e) && owned_site_add(e, function, b, skel) >= 0)
                skel = NULL;
        /* Otherwise pinned and attached: closing our fds changes nothing. */
        inject_bpf__destroy(skel);
        return site_open(final_dir, ret);

fail:
        inject_bpf__destroy(skel);
        engine_gc_root(e);
        return r;
}

static int site_recount(Site *s) {
        struct inject_site_info info = s->info;
        uint32_t zero = 0;

        info.cgroup_levels = info.n_process = info.n_global = info.n_live = info.n_callers = 0;
        for (uint32_t i = 0; i < INJECT_MAX_SLOTS; i++) {
                struct inject_slot slot;

                if (bpf_map_lookup_elem(s->slots_fd, &i, &slot) < 0)
                        return negative_errno();
                if (!slot.id)
                        continue;
                info.n_live++;
                if (slot.n_callers)
                        info.n_callers++;
                switch (slot.scope_kind) {
                case INJECT_SCOPE_CGROUP:
                        info.cgroup_levels |= 1u << slot.cgroup_level;
                        break;
                case INJECT_SCOPE_PROCESS:
                        info.n_process++;
                        break;
                case INJECT_SCOPE_GLOBAL:
                        info.n_global++;
                        break;
                }
        }
        if (bpf_map_update_elem(s->site_fd, &zero, &info, BPF_ANY) < 0)
                return negative_errno();
        s->info = info;
        return 0;
}

/* A site with nothing armed: unpinning it detaches its program; ours is
 * then kept for reuse (site_cache_put). */
static int site_retire(Engine *e, Site *s) {
        char function[INJECT_FUNC_LEN];
        int r;

        memcpy(function, s->info.function, INJECT_FUNC_LEN);
        function[INJECT_FUNC_LEN - 1] = 0;
        r = pin_dir_remove(s->dir);
        /* Only once the link pin is gone is our program surely detached. */
        if (r >= 0)
                site_cache_put(e, function, s->info.backend);
        engine_gc_root(e);
        return r;
}

/* A process scope is found by its root's tag (inject.h), not its pid. */
static void slot_scope_key(const struct inject_slot *slot, struct inject_scope_key *k) {
        *k = (struct inject_scope_key) {
                .kind = slot->scope_kind,
                .id = slot->scope_kind == INJECT_SCOPE_PROCESS ? slot->scope_tag : slot->scope_id,
        };
}

/* Takes one injection out of a site: first its scope entry (so no new call
 * reaches it), then its slot. Removes the site when it was the last. */
static int site_remove_slot(Engine *e, Site *s, uint32_t idx) {
        struct inject_scope_key key;
        struct inject_slot slot;
        int r;

        if (bpf_map_lookup_elem(s->slots_fd, &idx, &slot) < 0)
                return negative_errno();
        slot_scope_key(&slot, &key);
        if (bpf_map_delete_elem(s->scopes_fd, &key) < 0 && errno != ENOENT)
                return negative_errno();
        memset(&slot, 0, sizeof(slot));
        if (bpf_map_update_elem(s->slots_fd, &idx, &slot, BPF_ANY) < 0)
                return negative_errno();
        r = site_recount(s);
        if (r < 0)
                return r;
        if (s->info.n_live == 0)
                r = site_retire(e, s);
        return r;
}

static InjectionState slot_state(const struct inject_slot *slot, uint64_t now) {
        if (slot->times && slot->injected >= slot->times)
                return INJECTION_EXHAUSTED;
        if (now >= slot->deadline_ns)
                return INJECTION_EXPIRED;
        return INJECTION_ACTIVE;
}

static void fill_info(const Site *s, const struct inject_slot *slot, uint64_t now, InjectionInfo *ret) {
        *ret = (InjectionInfo) {
                .id = slot->id,
                .backend = s->info.backend,
                .state = slot_state(slot, now),
                .slot = *slot,
        };
        memcpy(ret->function, s->info.function, INJECT_FUNC_LEN);
        ret->function[INJECT_FUNC_LEN - 1] = 0;
}

/* Calls f for every live slot of every complete site. f returns < 0 to stop
 * with an error, > 0 to stop with success, 0 to go on. Half-built sites are
 * passed with slot index UINT32_MAX (only when want_broken). */
typedef int (*slot_fn)(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata);

static int foreach_slot(Engine *e, slot_fn f, bool want_broken, void *userdata) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        d = opendir(e->sites_dir);
        if (!d)
                return errno == ENOENT ? 0 : negative_errno();
        while ((de = readdir(d))) {
                _cleanup_(site_closep) Site s = SITE_NULL;
                char dir[PATH_MAX];

                if (de->d_name[0] == '.')
                        continue;
                if (pin_path(dir, sizeof(dir), e->sites_dir, de->d_name) < 0)
                        continue;
                r = site_open(dir, &s);
                if (r < 0) {
                        if (!want_broken)
                                continue;
                        s.dir = strdup(dir);
                        if (!s.dir)
                                return -ENOMEM;
                        r = f(e, &s, UINT32_MAX, NULL, userdata);
                        if (r != 0)
                                return r < 0 ? r : 0;
                        continue;
                }
                for (uint32_t i = 0; i < INJECT_MAX_SLOTS; i++) {
                        struct inject_slot slot;

                        if (bpf_map_lookup_elem(s.slots_fd, &i, &slot) < 0)
                                return negative_errno();
                        if (!slot.id)
                                continue;
                        r = f(e, &s, i, &slot, userdata);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                return 0;
                        if (s.scopes_fd < 0)    /* f removed the whole site */
                                break;
                }
        }
        return 0;
}

/* ---- process-scope tags ------------------------------------------------ */

/* The live process-scope roots, one per tag, from every site's slots: what
 * the kernel's roots map must hold (scope-tags.h). */
struct roots_ctx {
        ScopeRoot *v;
        size_t n;
};

static void roots_ctx_done(struct roots_ctx *c) {
        free(c->v);
}

static int roots_fn(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata) {
        struct roots_ctx *c = userdata;
        ScopeRoot root, *v;

        if (slot->scope_kind != INJECT_SCOPE_PROCESS || !slot->scope_tag)
                return 0;
        root = (ScopeRoot) { .tgid = slot->scope_id, .start_ticks = slot->start_ticks, .tag = slot->scope_tag };
        for (size_t i = 0; i < c->n; i++) {
                if (c->v[i].tgid != root.tgid)
                        continue;
                /* The roots map holds one root per pid: when a dead root's
                 * injection outlives it and its pid is reused by a new root,
                 * the one that runs is what new tasks must be tagged for. */
                if (c->v[i].tag != root.tag && scope_process_alive(root.tgid, root.start_ticks) > 0)
                        c->v[i] = root;
                return 0;
        }
        v = realloc(c->v, (c->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->v = v;
        c->v[c->n++] = root;
        return 0;
}

static int engine_collect_roots(Engine *e, struct roots_ctx *ret) {
        struct roots_ctx c = {};
        int r;

        r = foreach_slot(e, roots_fn, false, &c);
        if (r < 0) {
                free(c.v);
                return r;
        }
        *ret = c;
        return 0;
}

static int engine_apply_roots(Engine *e, const struct roots_ctx *c) {
        int fd = -1;

        if (c->n > 0) {
                fd = engine_tags_fd(e);
                if (fd < 0)
                        return fd;
        }
        return scope_tags_apply(e->pin_root, fd, e->ns_per_tick, c->v, c->n);
}

/* Brings the kernel's tags in step with the live process scopes. Returns
 * > 0 when that many tasks sit in more nested process scopes than a tag
 * holds. */
static int engine_sync_tags(Engine *e) {
        struct roots_ctx c;
        int r;

        r = engine_collect_roots(e, &c);
        if (r < 0)
                return r;
        r = engine_apply_roots(e, &c);
        free(c.v);
        return r;
}

/* Gives a new process-scope slot its root's tag, shared by every injection
 * on that root, so the tasks tagged for one are in scope for all; a new
 * root gets the injection's own id, which no task carries yet. Leaves in
 * ret the roots the kernel must hold once the slot is written. */
static int engine_root_tag(Engine *e, struct inject_slot *slot, struct roots_ctx *ret) {
        struct roots_ctx c;
        ScopeRoot *v;
        int r;

        r = engine_collect_roots(e, &c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c.n; i++)
                if (c.v[i].tgid == slot->scope_id && c.v[i].start_ticks == slot->start_ticks) {
                        slot->scope_tag = c.v[i].tag;
                        *ret = c;
                        return 0;
                }
        slot->scope_tag = slot->id;
        /* Replaces a dead root of the same pid, as roots_fn would. */
        for (size_t i = 0; i < c.n; i++)
                if (c.v[i].tgid == slot->scope_id) {
                        c.v[i] = (ScopeRoot) { slot->scope_id, slot->start_ticks, slot->scope_tag };
                        *ret = c;
                        return 0;
                }
        v = realloc(c.v, (c.n + 1) * sizeof(*v));
        if (!v) {
                free(c.v);
                return -ENOMEM;
        }
        c.v = v;
        c.v[c.n++] = (ScopeRoot) { slot->scope_id, slot->start_ticks, slot->scope_tag };
        *ret = c;
        return 0;
}

/* ---- arm --------------------------------------------------------------- */

static int kallsyms_ensure(Engine *e) {
        if (e->kallsyms)
                return 0;
        return kallsyms_load(NULL, &e->kallsyms);
}

const char *engine_symbol_name(Engine *e, uint64_t addr) {
        const KSym *s;

        if (kallsyms_ensure(e) < 0)
                return NULL;
        s = kallsyms_lookup_addr(e->kallsyms, addr);
        return s && s->addr == addr ? s->name : NULL;
}

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
                /* fmod_ret is the cheaper trampoline; kprobe is the one that can return 0. */
                if ((m & (1u << BACKEND_FMOD_RET)) && spec->retval != 0) {
                        *ret = BACKEND_FMOD_RET;
                        return 0;
                }
                if (m & (1u << BACKEND_KPROBE)) {
                        *ret = BACKEND_KPROBE;
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
        default:
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE,
                                        "An injection needs a scope (cgroup, process or global); an empty scope "
                                        "never means everything");
        }
}

static int fill_filters(Engine *e, const InjectSpec *spec, struct inject_slot *slot, InjectError *err) {
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
                r = kallsyms_ensure(e);
                if (r < 0)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_FILTER,
                                                "Cannot read kernel symbols for caller filters: %s",
                                                r == -EPERM ? "addresses are hidden (kptr_restrict)" : strerror(-r));
        }
        for (size_t i = 0; i < spec->n_callers; i++) {
                const KSym *s = kallsyms_find(e->kallsyms, spec->callers[i]);

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

int engine_check(Engine *e, const InjectSpec *spec, InjectError *err) {
        const InjectableFunction *f = NULL;
        Backend b;
        int r;

        r = check_function(e, spec, &f, err);
        if (r < 0)
                return r;
        return choose_backend(e, f, spec, &b, err);
}

int engine_arm(Engine *e, const InjectSpec *spec, InjectionInfo *ret, InjectError *err) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        _cleanup_(site_closep) Site s = SITE_NULL;
        _cleanup_free_ char *dir = NULL;
        struct inject_scope_key key;
        struct inject_scope_val val;
        struct inject_slot slot = {};
        const InjectableFunction *f = NULL;
        uint32_t idx = UINT32_MAX;
        _cleanup_(roots_ctx_done) struct roots_ctx roots = {};
        uint64_t now, id;
        Backend b = BACKEND_AUTO;
        bool process;
        int r;

        /* Everything that can be refused is refused before anything loads. */
        r = check_function(e, spec, &f, err);
        if (r < 0)
                return r;
        r = choose_backend(e, f, spec, &b, err);
        if (r < 0)
                return r;
        if (spec->duration_usec == 0 || spec->duration_usec > ENGINE_MAX_DURATION_USEC)
                return inject_error_set(err, -ERANGE, INJECT_ERROR_BAD_DURATION,
                                        "The duration must be more than 0 and at most 7 days");
        r = fill_scope(e, spec, &slot, err);
        if (r < 0)
                return r;
        r = fill_filters(e, spec, &slot, err);
        if (r < 0)
                return r;
        r = pin_check_bpffs(e->pin_root);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_UNAVAILABLE, "No bpffs is mounted above '%s': %s",
                                        e->pin_root, strerror(-r));
        r = new_id(&id);
        if (r < 0)
                return r;
        slot.id = id;
        slot.retval = spec->retval;

        r = engine_lock(e);
        if (r < 0)
                return r;
        locked = e;

        r = site_dir_name(e, f->name, b, &dir);
        if (r < 0)
                return r;
        r = site_open(dir, &s);
        if (r == -ENOLINK || r == -ENOENT) {
                if (r == -ENOLINK)      /* half-built leftovers: start over */
                        (void) pin_dir_remove(dir);
                r = site_create(e, f->name, b, dir, &s, err);
        }
        if (r < 0)
                return err && err->name ? r : inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                                               "Cannot set up '%s': %s", f->name, strerror(-r));

        for (uint32_t i = 0; i < INJECT_MAX_SLOTS; i++) {
                struct inject_slot cur;

                if (bpf_map_lookup_elem(s.slots_fd, &i, &cur) < 0)
                        return negative_errno();
                if (!cur.id) {
                        idx = i;
                        break;
                }
        }
        if (idx == UINT32_MAX)
                return inject_error_set(err, -EUSERS, INJECT_ERROR_TOO_MANY,
                                        "'%s' already has %d injections armed", f->name, INJECT_MAX_SLOTS);
        if (slot.scope_kind == INJECT_SCOPE_PROCESS) {
                r = engine_root_tag(e, &slot, &roots);
                if (r < 0)
                        return r;
        }

        now = now_nsec(CLOCK_BOOTTIME);
        slot.created_ns = now;
        slot.deadline_ns = now + spec->duration_usec * 1000;
        if (bpf_map_update_elem(s.slots_fd, &idx, &slot, BPF_ANY) < 0) {
                r = negative_errno();
                goto undo_slot;
        }
        /* The scope's tasks are tagged before its scope entry makes the
         * injection reachable. */
        if (slot.scope_kind == INJECT_SCOPE_PROCESS) {
                r = engine_apply_roots(e, &roots);
                if (r > 0) {
                        r = inject_error_set(err, -E2BIG, INJECT_ERROR_BAD_SCOPE,
                                             "Process %llu would put %d task(s) in more than %d nested process "
                                             "scopes", (unsigned long long) slot.scope_id, r, INJECT_MAX_TAGS);
                        goto undo_slot;
                }
                if (r < 0) {
                        inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                         "Cannot tag the processes of the scope: %s%s%s%s", strerror(-r),
                                         libbpf_last[0] ? " (libbpf: " : "", libbpf_last, libbpf_last[0] ? ")" : "");
                        goto undo_slot;
                }
        }
        slot_scope_key(&slot, &key);
        val = (struct inject_scope_val) { .slot = idx, .inj_id = slot.id, .start_ticks = slot.start_ticks };
        if (bpf_map_update_elem(s.scopes_fd, &key, &val, BPF_NOEXIST) < 0) {
                r = negative_errno();
                if (r == -EEXIST)
                        inject_error_set(err, r, INJECT_ERROR_SCOPE_TAKEN,
                                         "'%s' (%s) already has an injection with this scope; cancel it first",
                                         f->name, backend_to_string(b));
                goto undo_slot;
        }
        r = site_recount(&s);
        if (r < 0) {
                (void) bpf_map_delete_elem(s.scopes_fd, &key);
                goto undo_slot;
        }

        if (ret)
                fill_info(&s, &slot, now, ret);
        return 0;

undo_slot:
        process = slot.scope_kind == INJECT_SCOPE_PROCESS;
        memset(&slot, 0, sizeof(slot));
        (void) bpf_map_update_elem(s.slots_fd, &idx, &slot, BPF_ANY);
        if (process)
                (void) engine_sync_tags(e);     /* drops the root if it was new */
        if (site_recount(&s) >= 0 && s.info.n_live == 0)
                (void) site_retire(e, &s);
        return err && err->name ? r : inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                                       "Cannot arm '%s': %s", f->name, strerror(-r));
}

/* ---- inspect and disarm ------------------------------------------------ */

struct find_ctx {
        uint64_t id;
        bool remove;
        bool found;
        InjectionInfo info;
};

static int find_fn(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata) {
        struct find_ctx *c = userdata;
        int r;

        if (slot->id != c->id)
                return 0;
        fill_info(s, slot, now_nsec(CLOCK_BOOTTIME), &c->info);
        c->found = true;
        if (c->remove) {
                r = site_remove_slot(e, s, idx);
                if (r < 0)
                        return r;
        }
        return 1;
}

int engine_get(Engine *e, uint64_t id, InjectionInfo *ret) {
        struct find_ctx c = { .id = id };
        int r;

        r = foreach_slot(e, find_fn, false, &c);
        if (r < 0)
                return r;
        if (!c.found)
                return -ENOENT;
        *ret = c.info;
        return 0;
}

int engine_disarm(Engine *e, uint64_t id, InjectionInfo *ret_final, InjectError *err) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        struct find_ctx c = { .id = id, .remove = true };
        int r;

        r = engine_lock(e);
        if (r < 0)
                return r;
        locked = e;
        r = foreach_slot(e, find_fn, false, &c);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot disarm %016llx: %s",
                                        (unsigned long long) id, strerror(-r));
        if (!c.found)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_NO_SUCH_INJECTION,
                                        "No injection with id %016llx", (unsigned long long) id);
        /* Its root's tags stay on tasks, matching nothing, until the next
         * tagging pass or the tasks' end; with no root left the fork program
         * detaches. A failure here only keeps it attached until the next
         * arm, disarm or adoption tries again. */
        if (c.info.slot.scope_kind == INJECT_SCOPE_PROCESS)
                (void) engine_sync_tags(e);
        if (ret_final)
                *ret_final = c.info;
        return 0;
}

struct list_ctx {
        InjectionInfo *v;
        size_t n;
};

static int list_fn(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata) {
        struct list_ctx *c = userdata;
        InjectionInfo *v;

        v = realloc(c->v, (c->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->v = v;
        fill_info(s, slot, now_nsec(CLOCK_BOOTTIME), &c->v[c->n++]);
        return 0;
}

int engine_list(Engine *e, InjectionInfo **ret, size_t *ret_n) {
        struct list_ctx c = {};
        int r;

        r = foreach_slot(e, list_fn, false, &c);
        if (r < 0) {
                free(c.v);
                return r;
        }
        *ret = c.v;
        *ret_n = c.n;
        return 0;
}

/* ---- adopt ------------------------------------------------------------- */

struct adopt_ctx {
        AdoptResult *v;
        size_t n;
        uint64_t now;
};

static int adopt_fn(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata) {
        struct adopt_ctx *c = userdata;
        AdoptAction action = ADOPT_KEPT;
        AdoptResult *v;
        int r;

        if (!slot) {    /* a half-built site: nothing in it was ever armed */
                (void) pin_dir_remove(s->dir);
                return 0;
        }

        if (slot->times && slot->injected >= slot->times)
                action = ADOPT_EXHAUSTED;
        else if (c->now >= slot->deadline_ns)
                action = ADOPT_EXPIRED;
        else if (slot->scope_kind == INJECT_SCOPE_PROCESS &&
                 scope_process_alive((pid_t) slot->scope_id, slot->start_ticks) == 0)
                action = ADOPT_ORPHANED;
        else if (slot->scope_kind == INJECT_SCOPE_CGROUP && scope_cgroup_alive(slot->scope_id) == 0)
                action = ADOPT_ORPHANED;

        v = realloc(c->v, (c->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->v = v;
        fill_info(s, slot, c->now, &c->v[c->n].info);
        c->v[c->n++].action = action;

        if (action == ADOPT_KEPT)
                return 0;
        r = site_remove_slot(e, s, idx);
        if (r < 0)
                return r;
        if (s->info.n_live == 0)
                site_close(s);  /* tells foreach_slot the site is gone */
        return 0;
}

static void remove_tmp_dirs(Engine *e) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        d = opendir(e->pin_root);
        if (!d)
                return;
        while ((de = readdir(d))) {
                char p[PATH_MAX];

                if (strncmp(de->d_name, PIN_TMP_PREFIX, strlen(PIN_TMP_PREFIX)) != 0)
                        continue;
                if (pin_path(p, sizeof(p), e->pin_root, de->d_name) >= 0)
                        (void) pin_dir_remove(p);
        }
}

int engine_adopt(Engine *e, AdoptResult **ret, size_t *ret_n) {
        _cleanup_(engine_unlockp) Engine *locked = NULL;
        struct adopt_ctx c = { .now = now_nsec(CLOCK_BOOTTIME) };
        int r;

        r = engine_lock(e);
        if (r < 0)
                return r;
        locked = e;

        remove_tmp_dirs(e);
        r = foreach_slot(e, adopt_fn, true, &c);
        if (r >= 0)
                /* Roots of injections that did not survive go; the tags of
                 * surviving ones are pinned and were kept up to date by the
                 * pinned fork program all along. */
                r = engine_sync_tags(e);
        if (r < 0) {
                free(c.v);
                return r;
        }
        /* Sites whose slots are all empty serve nobody. */
        engine_gc_root(e);
        *ret = c.v;
        *ret_n = c.n;
        return 0;
}

int engine_symbolize(Engine *e, uint64_t addr, char *buf, size_t size) {
        int r = kallsyms_ensure(e);

        return kallsyms_format_addr(r >= 0 ? e->kallsyms : NULL, addr, buf, size);
}
