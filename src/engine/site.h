/* SPDX-License-Identifier: MIT */
#pragma once

/* A site: a (function, backend)'s maps (inject.h), published at its index
 * in the outer maps, with bpf/inject.bpf.c attached to the function (the
 * one kprobe program every kprobe site shares, with the index as its
 * cookie, or an fmod_ret copy of its own), pinned as
 * <pin_root>/sites/<backend>-<function>; its injections are entries in
 * those maps. site.c is the one file that loads the program: the others
 * see a loaded one only as a struct inject_bpf pointer. */

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "inject-error.h"
#include "inject.h"

struct inject_bpf;

/* An open pinned site: the fds of its pinned maps. */
typedef struct Site {
        char *dir;
        int scopes_fd;
        int slots_fd;
        int site_fd;
        uint32_t n_slots;       /* its slots map's max_entries */
        struct inject_site_info info;
} Site;

#define SITE_NULL ((Site) { .scopes_fd = -1, .slots_fd = -1, .site_fd = -1 })

void site_close(Site *s);
void site_closep(Site *s);

/* The directory the site of (function, b) is pinned as. */
int site_dir_name(Engine *e, const char *function, Backend b, char **ret);
/* -ENOENT when nothing is pinned as dir, -ENOLINK when the site there is
 * half-built (it has no link), -EPROTO when another version of injectd
 * pinned it (site_info_read()). */
int site_open(const char *dir, Site *ret);
/* Reads a site's info map. One pinned by an older build, before the
 * fields at the struct's end, is smaller: they read as 0 (and writing the
 * struct back, the kernel takes only what the map holds). -EPROTO when it
 * is not a layout this build knows. */
int site_info_read(int site_fd, struct inject_site_info *ret);
/* Creates, attaches and pins the site (function, b) as dir: for kprobe,
 * new maps and the shared program (no verification); for fmod_ret, a
 * cached program when the site cache holds one, a freshly loaded one
 * otherwise. */
int site_create(Engine *e, const char *function, Backend b, const char *dir, Site *ret, InjectError *err);
/* Reads all n slots of a slots map into v: in one batch where the kernel
 * can (5.6+), one lookup per slot where it cannot. */
int slots_read(int slots_fd, uint32_t n, struct inject_slot *v);
/* The site's slots, all s->n_slots of them (free the array). */
int site_read_slots(const Site *s, struct inject_slot **ret);
/* Writes the site map from the slots: which kinds of scope exist. */
int site_recount(Site *s);
/* Unpins a site with nothing armed, which detaches its program, and frees
 * its index (an fmod_ret site the cache keeps keeps it). */
int site_retire(Engine *e, Site *s);
/* Takes one injection out of a site. When it was the last, the site
 * lingers (site_linger()) if linger says it may, and is retired otherwise. */
int site_remove_slot(Engine *e, Site *s, uint32_t idx, bool linger);
/* Retires every complete pinned site with nothing armed: after a crash,
 * the sites that were lingering then. */
int site_retire_empty(Engine *e);

/* The key of a slot's entry in the site's scopes map. */
void slot_scope_key(const struct inject_slot *slot, struct inject_scope_key *ret);
void site_injection_info(const Site *s, const struct inject_slot *slot, uint64_t now, InjectionInfo *ret);

/* Calls f for every pinned site, opened (site_open()). f returns < 0 to
 * stop with an error, > 0 to stop with success, 0 to go on. A site that
 * does not open (half-built, or another version's) is passed unopened,
 * only its dir set and its fds -1, and only when want_broken. */
typedef int (*site_fn)(Engine *e, Site *s, void *userdata);
int site_foreach(Engine *e, site_fn f, bool want_broken, void *userdata);
/* Calls f for every live slot of every complete site, from a snapshot of
 * each site's slots read in one batch, as site_foreach() calls its f; f may
 * close the site (site_close()) after removing its last slot. A site that
 * does not open is passed with slot index UINT32_MAX and slot NULL. */
typedef int (*site_slot_fn)(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata);
int site_foreach_slot(Engine *e, site_slot_fn f, bool want_broken, void *userdata);
/* The same for the live slots of one open site. */
int site_each_slot(Engine *e, Site *s, site_slot_fn f, void *userdata);

/* A site's own maps, the inner maps at its index of the outer maps. */
typedef struct SiteMaps {
        int scopes;
        int slots;
        int site;
        uint32_t n_slots;       /* the slots map's max_entries */
        uint32_t index;         /* in the outer maps; the kprobe link's cookie */
} SiteMaps;

#define SITE_MAPS_NULL ((SiteMaps) { .scopes = -1, .slots = -1, .site = -1 })

void site_maps_close(SiteMaps *m);
/* Whether m is still what the outer maps hold at its index. */
bool site_maps_published(Engine *e, const SiteMaps *m);
/* Takes m out of the outer maps, if it is still there. */
void site_maps_unpublish(Engine *e, const SiteMaps *m);

/* Whether two map fds name the same kernel map. */
bool site_same_map(int a, int b);
/* Whether a loaded program uses the engine's shared maps (the ring
 * buffer, the tags, the outer maps) and not ones no longer pinned. */
bool site_program_maps_current(Engine *e, const struct inject_bpf *p);
/* Attaches a loaded program to the site m (a kprobe with m's index as its
 * cookie) and pins m and the link as dir. */
int site_program_attach(Engine *e, struct inject_bpf *p, const char *function, Backend b, const SiteMaps *m,
                        const char *dir, InjectError *err);
void site_program_free(struct inject_bpf *p);
/* Empties a site map of injections, keeping the site's identity. */
int site_info_reset(int site_fd);
/* Whether our program loads as fmod_ret against target (loaded, never
 * attached). */
int site_program_probe_fmod_ret(const char *target);
/* Loads the shared kprobe program now, so that no request pays for its
 * verification. */
int site_kprobe_preload(Engine *e);
