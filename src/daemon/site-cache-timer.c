/* SPDX-License-Identifier: MIT */
/* The upkeep of the engine's site cache, on a timer of the manager's event
 * loop (Manager.site_cache_timer, freed with the manager). Its own file so
 * that the table (injection.c), Cancel (manage.c) and the request path,
 * which empty sites, reach it without climbing back into manager.c. */

#include <time.h>

#include "log.h"
#include "site-cache-timer.h"
#include "time-util.h"

static int on_site_cache_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        site_cache_timer_schedule(userdata);
        return 0;
}

void site_cache_timer_schedule(Manager *m) {
        uint64_t next = engine_site_cache_expire(m->engine);
        int r;

        if (next == UINT64_MAX) {
                if (m->site_cache_timer)
                        (void) sd_event_source_set_enabled(m->site_cache_timer, SD_EVENT_OFF);
                return;
        }
        /* A second late costs nothing; it lets the kernel batch wake-ups. */
        if (m->site_cache_timer) {
                r = sd_event_source_set_time(m->site_cache_timer, next / 1000);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->site_cache_timer, SD_EVENT_ONESHOT);
        } else
                r = sd_event_add_time(m->event, &m->site_cache_timer, CLOCK_BOOTTIME, next / 1000, USEC_PER_SEC,
                                      on_site_cache_timer, m);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule the expiry of cached sites, they stay until the next "
                                  "injection ends, ignoring: %m");
}
