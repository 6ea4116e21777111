/* SPDX-License-Identifier: MIT */
#pragma once

/* A side channel for `run` and `sweep`: a Varlink Watch on a connection of
 * its own, in a thread, that keeps what the main transport cannot give
 * once CMD has exited. An injection that ends during the run (times=N:
 * "exhausted") is gone from ListInjections; its final counters come with
 * the "removed" event. The failed calls' kernel stacks come only with
 * "fault" events. Events come for injections armed over either API, so
 * this works with the D-Bus transport too. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cleanup.h"

typedef struct EventWatcher EventWatcher;

/* Connects to the Varlink socket at path (NULL: the default) and returns
 * once the stream is on, so that nothing armed afterwards is missed. With
 * id, only that injection's events come (Watch's "ids"). */
int event_watcher_start(const char *path, const char *id, EventWatcher **ret);
/* The same for the n_ids (1 to 64) injections of ids: what a client that
 * armed them wants. A watch of every injection of the user costs each of
 * n concurrent clients the events of all n: n² in all, in the daemon and
 * in the clients' memory (docs/performance.md, target 9). */
int event_watcher_start_ids(const char *path, const char *const *ids, size_t n_ids, EventWatcher **ret);
EventWatcher *event_watcher_free(EventWatcher *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(EventWatcher *, event_watcher_free)

/* The injection document of the "removed" event for id, a new reference,
 * or NULL when none has come (yet). */
json_object *event_watcher_removed(EventWatcher *w, const char *id);

/* The first fault event for id (a new reference), or NULL. */
json_object *event_watcher_first_fault(EventWatcher *w, const char *id);

/* As the two above, but waiting for the event: until it comes, the
 * stream ends (the daemon went away), or timeout_usec (CLOCK_MONOTONIC)
 * have passed. w may be NULL: returns NULL at once. */
json_object *event_watcher_wait_removed(EventWatcher *w, const char *id, uint64_t timeout_usec);
json_object *event_watcher_wait_first_fault(EventWatcher *w, const char *id, uint64_t timeout_usec);

/* Drops what was kept for id. */
void event_watcher_forget(EventWatcher *w, const char *id);

/* An eventfd (non-blocking) that becomes readable on each fault and
 * removed event kept, and when the stream ends: for poll(), in a thread
 * that must also wake on signals. Reading it (clearing it) is the
 * caller's. */
int event_watcher_fd(EventWatcher *w);

/* Fault events seen for id so far (those --event-rate passed on). */
uint64_t event_watcher_fault_count(EventWatcher *w, const char *id);

/* Whether the stream is over (the daemon went away). */
bool event_watcher_ended(EventWatcher *w);
