/* SPDX-License-Identifier: MIT */
#pragma once

/* A site: one copy of bpf/inject.bpf.c loaded for a (function, backend),
 * attached, and pinned with its maps as <pin_root>/sites/<backend>-<function>;
 * its injections are entries in those maps. site.c is the one file that
 * loads the program: the others see a loaded one only as a struct
 * inject_bpf pointer and the fds of its maps. */

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
 * half-built (it has no link). */
int site_open(const char *dir, Site *ret);
/* Attaches and pins a program for (function, b) as dir: a cached one when
 * the site cache holds one, a freshly loaded one otherwise. */
int site_create(Engine *e, const char *function, Backend b, const char *dir, Site *ret, InjectError *err);
/* Reads all n slots of a slots map into v: in one batch where the kernel
 * can (5.6+), one lookup per slot where it cannot. */
int slots_read(int slots_fd, uint32_t n, struct inject_slot *v);
/* The site's slots, all s->n_slots of them (free the array). */
int site_read_slots(const Site *s, struct inject_slot **ret);
/* Writes the site map from the slots: which kinds of scope exist. */
int site_recount(Site *s);
/* Unpins a site with nothing armed, which detaches its program. */
int site_retire(Engine *e, Site *s);
/* Takes one injection out of a site; retires the site when it was the last. */
int site_remove_slot(Engine *e, Site *s, uint32_t idx);

/* The key of a slot's entry in the site's scopes map. */
void slot_scope_key(const struct inject_slot *slot, struct inject_scope_key *ret);
void site_injection_info(const Site *s, const struct inject_slot *slot, uint64_t now, InjectionInfo *ret);

/* Calls f for every live slot of every complete site, from a snapshot of
 * each site's slots read in one batch. f returns < 0 to
 * stop with an error, > 0 to stop with success, 0 to go on; it may close
 * the site (site_close()) after removing its last slot. Half-built sites
 * are passed with slot index UINT32_MAX and slot NULL (only when
 * want_broken). */
typedef int (*site_slot_fn)(Engine *e, Site *s, uint32_t idx, const struct inject_slot *slot, void *userdata);
int site_foreach_slot(Engine *e, site_slot_fn f, bool want_broken, void *userdata);

/* A loaded program's maps; the fds stay the program's. */
typedef struct SiteMaps {
        int scopes;
        int slots;
        int site;
        int events;
        int task_tags;
        uint32_t n_slots;       /* the slots map's max_entries */
} SiteMaps;

void site_program_maps(const struct inject_bpf *p, SiteMaps *ret);
/* Attaches a loaded program and pins its maps and link as dir. */
int site_program_attach(Engine *e, struct inject_bpf *p, const char *function, Backend b, const char *dir,
                        InjectError *err);
void site_program_free(struct inject_bpf *p);
/* Writes a site map's identity, with nothing armed. */
int site_info_reset(int site_fd, Backend b, const char *function);
/* Whether our program loads as fmod_ret against target (loaded, never
 * attached). */
int site_program_probe_fmod_ret(const char *target);
