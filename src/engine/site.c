/* SPDX-License-Identifier: MIT */
/* Sites: creating a (function, backend)'s maps and publishing them in the
 * outer maps, attaching the shared kprobe program to it (or loading an
 * fmod_ret copy for it), pinning it, opening a pinned one, and keeping its
 * site map in step with its slots. The one file that includes
 * inject.skel.h. */

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cleanup.h"
#include "engine-internal.h"
#include "guards.h"
#include "scope-device.h"
#include "inject.skel.h"
#include "log.h"
#include "pin.h"
#include "site-cache.h"
#include "site.h"
#include "time-util.h"

void site_close(Site *s) {
        free(s->dir);
        s->dir = NULL;
        s->scopes_fd = safe_close(s->scopes_fd);
        s->slots_fd = safe_close(s->slots_fd);
        s->site_fd = safe_close(s->site_fd);
}

void site_closep(Site *s) {
        site_close(s);
}

/* bpffs refuses dots in names, and function names may hold them (.isra). */
int site_dir_name(Engine *e, const char *function, Backend b, char **ret) {
        _cleanup_free_ char *n = NULL;

        if (asprintf(&n, "%s/%s-%s", e->sites_dir, backend_to_string(b), function) < 0)
                return -ENOMEM;
        for (char *p = n + strlen(e->sites_dir) + 1; *p; p++)
                if (*p == '.')
                        *p = '%';
        *ret = TAKE_PTR(n);
        return 0;
}

static int map_value_size(int fd) {
        struct bpf_map_info info = {};
        uint32_t len = sizeof(info);

        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return negative_errno();
        return (int) info.value_size;
}

static int slots_map_size(int fd, uint32_t *ret) {
        struct bpf_map_info info = {};
        uint32_t len = sizeof(info);

        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return negative_errno();
        if (info.value_size != sizeof(struct inject_slot) || info.max_entries == 0)
                return -EBADMSG;        /* not a slots map of ours */
        *ret = info.max_entries;
        return 0;
}

#ifndef ENOTSUPP
#define ENOTSUPP 524    /* the kernel's own, not in libc's headers */
#endif

/* A batch of an array map copies whole values (their size rounded up to 8
 * bytes, which struct inject_slot is). The kernel says ENOENT once it has
 * passed the last key, with what it copied in count. */
_Static_assert(sizeof(struct inject_slot) % 8 == 0, "a batch copies values padded to 8 bytes");

int slots_read(int slots_fd, uint32_t n, struct inject_slot *v) {
        _cleanup_free_ uint32_t *keys = NULL;
        uint32_t done = 0, next = 0;
        bool first = true;

        keys = calloc(n, sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        while (done < n) {
                LIBBPF_OPTS(bpf_map_batch_opts, opts);
                uint32_t count = n - done;
                int r;

                r = bpf_map_lookup_batch(slots_fd, first ? NULL : &next, &next, keys + done, v + done, &count,
                                         &opts);
                first = false;
                if (r < 0 && errno != ENOENT) {
                        if (done == 0 && (errno == EINVAL || errno == ENOTSUPP || errno == EOPNOTSUPP))
                                break;          /* a kernel without batches */
                        return negative_errno();
                }
                done += count;
                if (r < 0 || count == 0)
                        break;
        }
        if (done == n)
                return 0;
        for (uint32_t i = 0; i < n; i++)
                if (bpf_map_lookup_elem(slots_fd, &i, &v[i]) < 0)
                        return negative_errno();
        return 0;
}

int site_read_slots(const Site *s, struct inject_slot **ret) {
        _cleanup_free_ struct inject_slot *v = NULL;
        int r;

        v = calloc(s->n_slots, sizeof(*v));
        if (!v)
                return -ENOMEM;
        r = slots_read(s->slots_fd, s->n_slots, v);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(v);
        return 0;
}

/* The layout of a site's info map since the shared kprobe program gave it
 * an index: the fields after guard_bootstrap_cache came later, last, so a
 * site pinned before them has a smaller map, which reads as its start with
 * the rest 0 (no device argument, no device scope). A smaller map is a site
 * pinned by a build from before the index (the pin layout changed with the
 * shared program): reading it as ours would take index 0 for its own. A
 * larger one is a newer build's, whose fields we would not keep in step. */
#define SITE_INFO_MIN_SIZE offsetof(struct inject_site_info, device_arg)

int site_info_read(int site_fd, struct inject_site_info *ret) {
        struct inject_site_info info = {};      /* what a smaller map does not hold reads as 0 */
        uint32_t zero = 0;
        int r;

        r = map_value_size(site_fd);
        if (r < 0)
                return r;
        if ((size_t) r < SITE_INFO_MIN_SIZE || (size_t) r > sizeof(info))
                return -EPROTO;
        /* The kernel copies value_size bytes, no more than info holds. */
        if (bpf_map_lookup_elem(site_fd, &zero, &info) < 0)
                return negative_errno();
        *ret = info;
        return 0;
}

int site_open(const char *dir, Site *ret) {
        _cleanup_(site_closep) Site s = SITE_NULL;
        static const char *const names[] = { "scopes", "slots", "site" };
        int *fds[] = { &s.scopes_fd, &s.slots_fd, &s.site_fd };
        char p[PATH_MAX];
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
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                r = pin_path(p, sizeof(p), dir, names[i]);
                if (r < 0)
                        return r;
                *fds[i] = bpf_obj_get(p);
                if (*fds[i] < 0)
                        return negative_errno();
        }
        r = site_info_read(s.site_fd, &s.info);
        if (r < 0)
                return r;
        r = slots_map_size(s.slots_fd, &s.n_slots);
        if (r < 0)
                return r;

        *ret = s;
        s = SITE_NULL;
        return 0;
}

/* Empties a site's info of injections, keeping what the site is. */
int site_info_reset(int site_fd) {
        struct inject_site_info info;
        uint32_t zero = 0;
        int r;

        r = site_info_read(site_fd, &info);
        if (r < 0)
                return r;
        info.cgroup_levels = info.n_process = info.n_global = info.n_device = info.n_live = info.n_callers = 0;
        if (bpf_map_update_elem(site_fd, &zero, &info, BPF_ANY) < 0)
                return negative_errno();
        return 0;
}

int site_program_probe_fmod_ret(const char *target) {
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

/* Closes our fds only; a pinned link keeps an attached program alive. */
void site_program_free(struct inject_bpf *p) {
        inject_bpf__destroy(p);
}

/* Whether two map fds name the same kernel map. */
bool site_same_map(int a, int b) {
        struct bpf_map_info ia = {}, ib = {};
        __u32 la = sizeof(ia), lb = sizeof(ib);

        if (a < 0 || b < 0)
                return false;
        if (bpf_obj_get_info_by_fd(a, &ia, &la) < 0 || bpf_obj_get_info_by_fd(b, &ib, &lb) < 0)
                return false;
        return ia.id == ib.id;
}

bool site_program_maps_current(Engine *e, const struct inject_bpf *p) {
        return site_same_map(bpf_map__fd(p->maps.events), e->events_fd) &&
               site_same_map(bpf_map__fd(p->maps.task_tags), e->tags_fd) &&
               site_same_map(bpf_map__fd(p->maps.site_scopes), e->outer_fd[SITE_MAP_SCOPES]) &&
               site_same_map(bpf_map__fd(p->maps.site_slots), e->outer_fd[SITE_MAP_SLOTS]) &&
               site_same_map(bpf_map__fd(p->maps.site_infos), e->outer_fd[SITE_MAP_INFO]);
}

/* 0 on a kernel before 5.16, which does not know the field and leaves it
 * as we zeroed it. */
static uint32_t program_verified_insns(const struct bpf_program *prog) {
        struct bpf_prog_info info = {};
        uint32_t len = sizeof(info);

        if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) < 0)
                return 0;
        return info.verified_insns;
}

/* Opens and loads (verifies) one copy of the program: the kprobe one,
 * shared by every kprobe site (function NULL), or an fmod_ret one for
 * function, serving the site at index. Its load shows in e->phases. */
static int site_program_load(Engine *e, const char *function, Backend b, uint32_t index, struct inject_bpf **ret,
                             InjectError *err) {
        struct inject_bpf *skel;
        struct bpf_program *prog;
        const char *libbpf_last, *what = function ?: "every function";
        uint64_t t0, t1;
        int r;

        t0 = now_usec(CLOCK_MONOTONIC);
        skel = inject_bpf__open();
        if (!skel)
                return negative_errno();
        skel->rodata->site_index = index;

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
        if (r >= 0)
                r = bpf_map__reuse_fd(skel->maps.site_scopes, e->outer_fd[SITE_MAP_SCOPES]);
        if (r >= 0)
                r = bpf_map__reuse_fd(skel->maps.site_slots, e->outer_fd[SITE_MAP_SLOTS]);
        if (r >= 0)
                r = bpf_map__reuse_fd(skel->maps.site_infos, e->outer_fd[SITE_MAP_INFO]);
        if (r < 0)
                goto fail;

        /* The verifier's statistics, for whoever tunes the program's cost. */
        static char vlog[4096];
        if (getenv("INJECTD_DEBUG_VERIFIER")) {
                vlog[0] = 0;
                (void) bpf_program__set_log_buf(prog, vlog, sizeof(vlog));
                (void) bpf_program__set_log_level(prog, 4);
        }
        t1 = now_usec(CLOCK_MONOTONIC);
        r = inject_bpf__load(skel);
        e->phases.load_usec += t1 - t0;
        e->phases.verify_usec += now_usec(CLOCK_MONOTONIC) - t1;
        if (getenv("INJECTD_DEBUG_VERIFIER"))
                fprintf(stderr, "verifier (%s, %s): %s\n", backend_to_string(b), what, vlog);
        if (r < 0) {
                libbpf_last = engine_libbpf_error();
                inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                 "The kernel refused to load the %s program for %s%s%s: %s%s%s",
                                 backend_to_string(b), function ? "'" : "", what, function ? "'" : "", strerror(-r),
                                 libbpf_last[0] ? " (libbpf: " : "", libbpf_last[0] ? libbpf_last : "");
                if (libbpf_last[0])
                        strncat(err->message, ")", sizeof(err->message) - strlen(err->message) - 1);
                goto fail;
        }

        e->phases.verified_insns = program_verified_insns(prog);
        e->stats.loads++;
        *ret = skel;
        return 0;

fail:
        inject_bpf__destroy(skel);
        return r;
}

/* The kprobe program every kprobe site runs: loaded and verified once, on
 * first use (engine_preload() makes that the daemon's start), and again
 * only should the shared maps it was loaded with no longer be the pinned
 * ones (another engine pinned new ones while none of ours was pinned). */
static int site_kprobe_program(Engine *e, struct inject_bpf **ret, InjectError *err) {
        EnginePhases saved = e->phases;
        int r;

        if (e->kprobe_program && site_program_maps_current(e, e->kprobe_program)) {
                *ret = e->kprobe_program;
                return 0;
        }
        if (e->kprobe_program)
                log_info("The shared kprobe program uses shared maps that are no longer pinned; loading it afresh.");
        site_program_free(e->kprobe_program);
        e->kprobe_program = NULL;

        e->phases = (EnginePhases) {};
        r = site_program_load(e, NULL, BACKEND_KPROBE, 0, &e->kprobe_program, err);
        e->stats.kprobe_program = e->phases;
        saved.load_usec += e->phases.load_usec;
        saved.verify_usec += e->phases.verify_usec;
        saved.verified_insns = e->phases.verified_insns;
        e->phases = saved;
        if (r < 0)
                return r;
        *ret = e->kprobe_program;
        return 0;
}

int site_kprobe_preload(Engine *e) {
        struct inject_bpf *p;
        InjectError err = {};
        int r;

        r = engine_pin_shared(e);
        if (r >= 0)
                r = site_kprobe_program(e, &p, &err);
        if (r < 0)
                log_debug_errno(r, "Cannot load the kprobe program now, the first kprobe request will: %s",
                                err.name ? err.message : strerror(-r));
        engine_gc_root(e);
        return r;
}

void site_maps_close(SiteMaps *m) {
        m->scopes = safe_close(m->scopes);
        m->slots = safe_close(m->slots);
        m->site = safe_close(m->site);
}

static uint32_t map_id(int fd) {
        struct bpf_map_info info = {};
        uint32_t len = sizeof(info);

        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return 0;
        return info.id;
}

/* The id of the info map at index in the outer map, 0 when none is.
 * Linux up to 6.7 waits for an RCU grace period after every system call on
 * a map of maps, lookups included (maybe_wait_bpf_programs()): tens of
 * milliseconds under emulation. So the outer maps are looked up only to
 * make sure of a cached program's index, and never scanned. */
static uint32_t site_index_owner(Engine *e, uint32_t index) {
        uint32_t id = 0;

        if (bpf_map_lookup_elem(e->outer_fd[SITE_MAP_INFO], &index, &id) < 0)
                return 0;
        return id;
}

bool site_maps_published(Engine *e, const SiteMaps *m) {
        uint32_t id = map_id(m->site);

        return id != 0 && site_index_owner(e, m->index) == id;
}

/* Info first: the program stops there, before it would look at the others. */
static void site_index_clear(Engine *e, uint32_t index) {
        for (int i = _SITE_MAP_MAX - 1; i >= 0; i--)
                (void) bpf_map_delete_elem(e->outer_fd[i], &index);
}

void site_maps_unpublish(Engine *e, const SiteMaps *m) {
        /* Only our own: the index may be another site's by now. */
        if (m->site >= 0 && site_maps_published(e, m))
                site_index_clear(e, m->index);
}

/* Calls f with the path of each entry of the sites directory, complete
 * sites or not, until f returns nonzero (< 0: an error). */
typedef int (*sites_dir_fn)(Engine *e, const char *dir, void *userdata);

static int sites_dir_foreach(Engine *e, sites_dir_fn f, void *userdata) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        d = opendir(e->sites_dir);
        if (!d)
                return errno == ENOENT ? 0 : negative_errno();
        while ((de = readdir(d))) {
                char dir[PATH_MAX];

                if (de->d_name[0] == '.' || pin_path(dir, sizeof(dir), e->sites_dir, de->d_name) < 0)
                        continue;
                r = f(e, dir, userdata);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return 0;
}

static int index_held_fn(Engine *e, const char *dir, void *userdata) {
        struct inject_site_info info;
        _cleanup_close_ int fd = -1;
        bool *held = userdata;
        char p[PATH_MAX];

        /* Its site map alone: a half-built site may still be attached. */
        if (pin_path(p, sizeof(p), dir, "site") < 0)
                return 0;
        fd = bpf_obj_get(p);
        if (fd >= 0 && site_info_read(fd, &info) >= 0 && info.index < INJECT_MAX_SITES)
                held[info.index] = true;
        return 0;
}

/* The indices held: by the pinned sites (read from their site maps), and by
 * this engine's cached programs. A pinned site's index is never taken by
 * another, so a site being retired may clear its own without looking. An
 * index published by an engine that crashed before it pinned the site is
 * free, and overwritten when it is taken: the lowest free one is, so such
 * leftovers are few and soon replaced. Another engine's cached programs are
 * not seen: one whose index is taken finds out before it is re-attached
 * (site_maps_published()), and then loads afresh. */
static int site_indices_held(Engine *e, bool *held) {
        int r;

        r = sites_dir_foreach(e, index_held_fn, held);
        if (r < 0)
                return r;
        site_cache_held(e, held);
        return 0;
}

/* Creates a site's maps, with its identity in its info, and publishes them
 * at a free index of the outer maps (site_indices_held()). The caller holds
 * the engine lock, so no other engine looks for a free index at the same
 * time. */
static int site_maps_new(Engine *e, const char *function, Backend b, SiteMaps *ret, InjectError *err) {
        _cleanup_(site_maps_close) SiteMaps m = SITE_MAPS_NULL;
        LIBBPF_OPTS(bpf_map_create_opts, slots_opts, .map_flags = BPF_F_INNER_MAP);
        struct inject_site_info info = { .backend = b };
        uint64_t bootstrap_cache = 0;
        const Guard *guard;
        _cleanup_free_ bool *held = NULL;
        uint32_t zero = 0, index;
        int fds[_SITE_MAP_MAX];
        int r;

        guard = guard_find(function);
        r = guard_resolve(guard, NULL, &bootstrap_cache);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                        "Cannot find the kernel's kmem_cache bootstrap cache in /proc/kallsyms, "
                                        "which '%s' must never fail: %s", function, strerror(-r));

        held = calloc(INJECT_MAX_SITES, sizeof(*held));
        if (!held)
                return -ENOMEM;
        r = site_indices_held(e, held);
        if (r < 0)
                return r;
        for (index = 0; index < INJECT_MAX_SITES && held[index]; index++)
                ;
        if (index == INJECT_MAX_SITES)
                return inject_error_set(err, -EUSERS, INJECT_ERROR_TOO_MANY,
                                        "%d functions already have injections armed", INJECT_MAX_SITES);
        m.index = index;

        /* The scopes hash holds at most one entry per slot. */
        m.n_slots = e->max_slots;
        m.scopes = bpf_map_create(BPF_MAP_TYPE_HASH, "scopes", sizeof(struct inject_scope_key),
                                  sizeof(struct inject_scope_val), m.n_slots, NULL);
        if (m.scopes < 0)
                return negative_errno();
        m.slots = bpf_map_create(BPF_MAP_TYPE_ARRAY, "slots", sizeof(uint32_t), sizeof(struct inject_slot), m.n_slots,
                                 &slots_opts);
        if (m.slots < 0)
                return negative_errno();
        m.site = bpf_map_create(BPF_MAP_TYPE_ARRAY, "site", sizeof(uint32_t), sizeof(info), 1, NULL);
        if (m.site < 0)
                return negative_errno();

        strncpy(info.function, function, INJECT_FUNC_LEN - 1);
        info.index = m.index;
        info.guard = guard ? guard->kind : INJECT_GUARD_NONE;
        info.guard_bootstrap_cache = bootstrap_cache;
        info.device_arg = device_arg_for(function);
        if (bpf_map_update_elem(m.site, &zero, &info, BPF_ANY) < 0)
                return negative_errno();

        fds[SITE_MAP_SCOPES] = m.scopes;
        fds[SITE_MAP_SLOTS] = m.slots;
        fds[SITE_MAP_INFO] = m.site;
        for (int i = 0; i < _SITE_MAP_MAX; i++)
                if (bpf_map_update_elem(e->outer_fd[i], &m.index, &fds[i], BPF_ANY) < 0) {
                        r = negative_errno();
                        site_index_clear(e, m.index);
                        return r;
                }

        *ret = m;
        m = SITE_MAPS_NULL;
        return 0;
}

int site_program_attach(Engine *e, struct inject_bpf *skel, const char *function, Backend b, const SiteMaps *m,
                        const char *dir, InjectError *err) {
        LIBBPF_OPTS(bpf_kprobe_opts, kopts, .bpf_cookie = m->index);
        struct bpf_link *link;
        const char *failed;
        int r;

        if (b == BACKEND_KPROBE)
                link = bpf_program__attach_kprobe_opts(skel->progs.inject_kprobe, function, &kopts);
        else
                link = bpf_program__attach_trace(skel->progs.inject_fmod_ret);
        if (!link) {
                r = negative_errno();
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                        "The kernel refused to attach %s to '%s': %s", backend_to_string(b), function,
                                        strerror(-r));
        }

        r = pin_dir_create(e->pin_root, dir, (const Pin[]) {
                                   { "scopes", m->scopes },
                                   { "slots", m->slots },
                                   { "site", m->site },
                                   { "link", bpf_link__fd(link) },
                           }, 4, &failed);
        if (r < 0 && failed)
                inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot pin '%s/%s': %s", dir, failed,
                                 strerror(-r));
        /* Pinned: closing our link fd leaves the program attached. Not
         * pinned: it detaches. */
        bpf_link__destroy(link);
        return r;
}

int site_create(Engine *e, const char *function, Backend b, const char *dir, Site *ret, InjectError *err) {
        _cleanup_(site_maps_close) SiteMaps m = SITE_MAPS_NULL;
        struct inject_bpf *skel = NULL;
        uint64_t t;
        int r;

        r = engine_pin_shared(e);
        if (r < 0)
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED,
                                        "Cannot create the maps every site shares in '%s': %s", e->pin_root,
                                        strerror(-r));
        if (mkdir(e->sites_dir, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        engine_index_bump_now(e);

        t = now_usec(CLOCK_MONOTONIC);
        if (b == BACKEND_FMOD_RET && site_cache_reattach(e, function, b, dir)) {
                e->phases.attach_usec += now_usec(CLOCK_MONOTONIC) - t;
                goto pinned;
        }

        /* The site's maps are part of attaching it: with kprobe, they and
         * the attach are all a new site costs. */
        t = now_usec(CLOCK_MONOTONIC);
        r = site_maps_new(e, function, b, &m, err);
        e->phases.attach_usec += now_usec(CLOCK_MONOTONIC) - t;
        if (r < 0)
                goto fail;
        if (b == BACKEND_KPROBE)
                r = site_kprobe_program(e, &skel, err);
        else
                r = site_program_load(e, function, b, m.index, &skel, err);
        if (r < 0)
                goto fail;
        t = now_usec(CLOCK_MONOTONIC);
        r = site_program_attach(e, skel, function, b, &m, dir, err);
        e->phases.attach_usec += now_usec(CLOCK_MONOTONIC) - t;
        if (r < 0)
                goto fail;
        /* A kprobe site is its pins, on the shared program: nothing to
         * keep. An fmod_ret site's program and maps are kept for reuse. */
        if (b == BACKEND_FMOD_RET) {
                site_cache_own(e, function, b, skel, &m);
                m = SITE_MAPS_NULL;
        }

pinned:
        r = site_open(dir, ret);
        if (r >= 0)
                engine_index_add_site(e, ret);
        else
                engine_index_invalidate(e);     /* pinned, and not known */
        return r;

fail:
        if (m.site >= 0)        /* published just now, under the lock */
                site_index_clear(e, m.index);
        if (b == BACKEND_FMOD_RET)
                site_program_free(skel);
        engine_gc_root(e);
        return r;
}

int site_recount(Site *s) {
        _cleanup_free_ struct inject_slot *v = NULL;
        struct inject_site_info info = s->info;
        uint32_t zero = 0;
        int r;

        r = site_read_slots(s, &v);
        if (r < 0)
                return r;
        info.cgroup_levels = info.n_process = info.n_global = info.n_device = info.n_live = info.n_callers = 0;
        for (uint32_t i = 0; i < s->n_slots; i++) {
                const struct inject_slot slot = v[i];

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
                case INJECT_SCOPE_DEVICE:
                        info.n_device++;
                        break;
                }
        }
        if (bpf_map_update_elem(s->site_fd, &zero, &info, BPF_ANY) < 0)
                return negative_errno();
        s->info = info;
        return 0;
}

/* An fmod_ret site's program is then kept for reuse (site_cache_put()),
 * its index with it; a kprobe site's index is free again. */
int site_retire(Engine *e, Site *s) {
        char function[INJECT_FUNC_LEN];
        int r;

        memcpy(function, s->info.function, INJECT_FUNC_LEN);
        function[INJECT_FUNC_LEN - 1] = 0;
        r = pin_dir_remove(s->dir);
        if (r >= 0)
                engine_index_remove_site(e, s->dir);
        /* Only once the link pin is gone is the program surely detached. */
        /* Its index is its own (site_indices_held()): no need to look. */
        if (r >= 0 && !(s->info.backend == BACKEND_FMOD_RET && site_cache_put(e, function, s->info.backend)) &&
            s->info.index < INJECT_MAX_SITES)
                site_index_clear(e, s->info.index);
        engine_gc_root(e);
        return r;
}

/* A process scope is found by its root's tag (inject.h), not its pid. */
void slot_scope_key(const struct inject_slot *slot, struct inject_scope_key *ret) {
        *ret = (struct inject_scope_key) {
                .kind = slot->scope_kind,
                .id = slot->scope_kind == INJECT_SCOPE_PROCESS ? slot->scope_tag : slot->scope_id,
        };
}

/* First its scope entry, so no new call reaches it, then its slot. */
int site_remove_slot(Engine *e, Site *s, uint32_t idx, bool linger) {
        struct inject_scope_key key;
        struct inject_slot slot;
        int r;

        if (bpf_map_lookup_elem(s->slots_fd, &idx, &slot) < 0)
                return negative_errno();
        slot_scope_key(&slot, &key);
        if (bpf_map_delete_elem(s->scopes_fd, &key) < 0 && errno != ENOENT)
                return negative_errno();
        engine_index_remove(e, slot.id);
        memset(&slot, 0, sizeof(slot));
        if (bpf_map_update_elem(s->slots_fd, &idx, &slot, BPF_ANY) < 0) {
                /* Still taken, and no longer reachable: read the pins again. */
                engine_index_invalidate(e);
                return negative_errno();
        }
        r = site_recount(s);
        if (r < 0)
                return r;
        if (s->info.n_live == 0 && !(linger && site_linger(e, s)))
                r = site_retire(e, s);
        return r;
}

static int retire_empty_fn(Engine *e, Site *s, void *userdata) {
        int r;

        r = site_recount(s);
        if (r >= 0 && s->info.n_live == 0) {
                log_info("Detaching the site '%s': nothing is armed there (it was lingering when the "
                         "previous engine ended).", s->dir);
                r = site_retire(e, s);
        }
        return r < 0 ? r : 0;
}

int site_retire_empty(Engine *e) {
        /* Half-built ones are site_foreach_slot()'s. */
        return site_foreach(e, retire_empty_fn, false, NULL);
}

static InjectionState slot_state(const struct inject_slot *slot, uint64_t now) {
        if (slot->times && slot->injected >= slot->times)
                return INJECTION_EXHAUSTED;
        if (now >= slot->deadline_ns)
                return INJECTION_EXPIRED;
        return INJECTION_ACTIVE;
}

void site_injection_info(const Site *s, const struct inject_slot *slot, uint64_t now, InjectionInfo *ret) {
        *ret = (InjectionInfo) {
                .id = slot->id,
                .backend = s->info.backend,
                .state = slot_state(slot, now),
                .slot = *slot,
        };
        memcpy(ret->function, s->info.function, INJECT_FUNC_LEN);
        ret->function[INJECT_FUNC_LEN - 1] = 0;
}

struct site_open_ctx {
        site_fn f;
        bool want_broken;
        void *userdata;
};

static int site_open_fn(Engine *e, const char *dir, void *userdata) {
        _cleanup_(site_closep) Site s = SITE_NULL;
        struct site_open_ctx *c = userdata;
        int r;

        r = site_open(dir, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (!c->want_broken)
                        return 0;
                s.dir = strdup(dir);
                if (!s.dir)
                        return -ENOMEM;
        }
        return c->f(e, &s, c->userdata);
}

int site_foreach(Engine *e, site_fn f, bool want_broken, void *userdata) {
        struct site_open_ctx c = { .f = f, .want_broken = want_broken, .userdata = userdata };

        return sites_dir_foreach(e, site_open_fn, &c);
}

struct site_slot_ctx {
        site_slot_fn f;
        void *userdata;
};

int site_each_slot(Engine *e, Site *s, site_slot_fn f, void *userdata) {
        _cleanup_free_ struct inject_slot *v = NULL;
        int r;

        r = site_read_slots(s, &v);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < s->n_slots; i++) {
                if (!v[i].id)
                        continue;
                r = f(e, s, i, &v[i], userdata);
                if (r != 0)
                        return r;
                if (s->scopes_fd < 0)   /* f removed the whole site */
                        break;
        }
        return 0;
}

static int site_slots_fn(Engine *e, Site *s, void *userdata) {
        struct site_slot_ctx *c = userdata;

        if (s->site_fd < 0)
                return c->f(e, s, UINT32_MAX, NULL, c->userdata);
        return site_each_slot(e, s, c->f, c->userdata);
}

int site_foreach_slot(Engine *e, site_slot_fn f, bool want_broken, void *userdata) {
        struct site_slot_ctx c = { .f = f, .userdata = userdata };

        return site_foreach(e, site_slots_fn, want_broken, &c);
}
