/* SPDX-License-Identifier: MIT */
#pragma once

/* The timer of the engine's site cache: lingering sites detached and cached
 * programs freed when their time is over (site-cache-timer.c). */

#include "manager-types.h"

/* Detaches the lingering sites whose linger is over, frees the cached
 * programs whose grace period is over, and sets the timer for the next
 * one; called after anything that may have emptied or detached a site. */
void site_cache_timer_schedule(Manager *m);
