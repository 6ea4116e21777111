/* SPDX-License-Identifier: MIT */
#pragma once

/* The site cache (site-cache.c): emptied sites lingering, still attached,
 * and the fmod_ret programs this engine loaded, attached or detached and
 * kept for reuse. Its public side is engine.h's engine_set_site_cache()
 * and friends; this is what site.c and arm.c ask of it. */

#include <stdbool.h>

#include "engine.h"
#include "site.h"

struct inject_bpf;

/* Re-attaches and pins, as dir, a program we keep for (function, b).
 * Returns false when a program must be loaded instead: none is kept, or
 * the kernel refused to re-attach it (that is logged, and it is freed). */
bool site_cache_reattach(Engine *e, const char *function, Backend b, const char *dir);
/* Takes p, a program just attached for (function, b), and its site's maps
 * m, to be kept when the site is retired; frees them (they stay attached
 * and pinned) when the cache is off. */
void site_cache_own(Engine *e, const char *function, Backend b, struct inject_bpf *p, SiteMaps *m);
/* The site (function, b) was unpinned: our program for it, if any, is
 * detached now. Keeps it for reuse, with its index: true. Or frees it:
 * false, and the caller frees the index. */
bool site_cache_put(Engine *e, const char *function, Backend b);
/* Marks held[i] for the index i of each program we keep, attached or not. */
void site_cache_held(Engine *e, bool *held);
/* Frees every program, attached or not (pinned ones stay attached). */
void site_cache_free_all(Engine *e);

/* The site s was emptied (its last injection removed, under the lock):
 * true when it lingers, still attached, and the caller leaves it pinned;
 * false when it is to be retired now (no linger, or no memory). */
bool site_linger(Engine *e, const Site *s);
/* An arm found the site s pinned with nothing armed: a lingering one,
 * which is re-used and no longer lingers. */
void site_linger_reuse(Engine *e, const Site *s);
/* The site s, pinned with nothing armed, must go now (another backend is
 * about to serve its function): retired, and no longer lingering. */
int site_linger_cut(Engine *e, Site *s);
