/* SPDX-License-Identifier: MIT */
/* The Varlink Watch side channel of run and sweep (event-watcher.h). */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "event-watcher.h"
#include "json-build.h"
#include "json-util.h"
#include "time-util.h"
#include "transport.h"
#include "varlink.h"

struct EventWatcher {
        VarlinkClient *client;
        pthread_t thread;
        bool started;
        pthread_mutex_t lock;
        pthread_cond_t changed; /* broadcast on each event kept, and when the stream ends */
        bool ended;             /* the stream is over: nothing more will come */
        json_object *removed;   /* id → last injection document */
        json_object *faults;    /* id → first fault event */
        json_object *n_faults;  /* id → fault events seen */
        json_object *params;    /* of the Watch call: the ids followed, or NULL */
        int ready[2];           /* the thread writes a byte once "watching", or on its end */
        int notify;             /* an eventfd, added to on each fault and removed event, and at the end */
};

static void notify(EventWatcher *w) {
        (void) eventfd_write(w->notify, 1);
}

static int on_reply(VarlinkClient *c, json_object *params, const char *error, bool continues, void *userdata) {
        EventWatcher *w = userdata;
        json_object *event, *doc;
        const char *type, *id;
        int r = 0;

        if (error || json_get_object(params, "event", &event) < 0 || json_get_string(event, "type", &type) < 0)
                return 1;
        if (strcmp(type, "watching") == 0) {
                (void) write(w->ready[1], "x", 1);
                return 0;
        }
        if (json_get_string(event, "id", &id) < 0)
                return 0;

        pthread_mutex_lock(&w->lock);
        if (strcmp(type, "removed") == 0 && json_get_object(event, "injection", &doc) >= 0)
                r = json_add_ref(w->removed, id, doc);
        else if (strcmp(type, "fault") == 0) {
                json_object *n = json_object_object_get(w->n_faults, id);

                if (n)
                        json_object_set_int64(n, json_object_get_int64(n) + 1);
                else
                        r = json_add_i64(w->n_faults, id, 1);
                if (r >= 0 && !json_object_object_get(w->faults, id))
                        r = json_add_ref(w->faults, id, event);
        }
        pthread_cond_broadcast(&w->changed);
        pthread_mutex_unlock(&w->lock);
        notify(w);
        /* Out of memory: stop following, as when the daemon goes away,
         * rather than go on recording some events and not others. */
        return r < 0;
}

static void *watch_thread(void *userdata) {
        EventWatcher *w = userdata;

        (void) varlink_client_call_more(w->client, "org.injectd.Injector.Watch", w->params, on_reply, w);
        pthread_mutex_lock(&w->lock);
        w->ended = true;
        pthread_cond_broadcast(&w->changed);
        pthread_mutex_unlock(&w->lock);
        notify(w);
        (void) write(w->ready[1], "", 1);
        return NULL;
}

int event_watcher_start(const char *path, const char *id, EventWatcher **ret) {
        return event_watcher_start_ids(path, id ? &id : NULL, id ? 1 : 0, ret);
}

int event_watcher_start_ids(const char *path, const char *const *ids, size_t n_ids, EventWatcher **ret) {
        _cleanup_(event_watcher_freep) EventWatcher *w = NULL;
        pthread_condattr_t attr;
        sigset_t all, old_mask;
        char c;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->ready[0] = w->ready[1] = w->notify = -1;
        pthread_mutex_init(&w->lock, NULL);
        /* Waits are bounded on CLOCK_MONOTONIC: a wall-clock step must
         * neither cut them short nor stretch them. */
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&w->changed, &attr);
        pthread_condattr_destroy(&attr);
        w->removed = json_object_new_object();
        w->faults = json_object_new_object();
        w->n_faults = json_object_new_object();
        if (!w->removed || !w->faults || !w->n_faults)
                return -ENOMEM;
        if (n_ids > 0) {
                _cleanup_json_ json_object *a = json_new_strv(ids, n_ids);

                if (!a || json_build_object(&w->params, JSON_PAIR_REF("ids", a), JSON_BUILD_END) < 0)
                        return -ENOMEM;
        }
        if (pipe2(w->ready, O_CLOEXEC) < 0)
                return -errno;
        w->notify = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->notify < 0)
                return -errno;
        r = varlink_client_connect(path ?: INJECTD_VARLINK_ADDRESS, &w->client);
        if (r < 0)
                return r;
        varlink_client_set_timeout(w->client, VARLINK_TIMEOUT_INFINITY);
        /* The thread takes no signals: run and sweep wait for theirs in
         * the main thread (ppoll(), waitpid()), which a handler run
         * here instead would not wake. */
        sigfillset(&all);
        (void) pthread_sigmask(SIG_SETMASK, &all, &old_mask);
        r = -pthread_create(&w->thread, NULL, watch_thread, w);
        (void) pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
        if (r < 0)
                return r;
        w->started = true;
        if (read(w->ready[0], &c, 1) != 1 || c != 'x')
                return -ECONNRESET;     /* the stream ended before it began */
        *ret = TAKE_PTR(w);
        return 0;
}

EventWatcher *event_watcher_free(EventWatcher *w) {
        if (!w)
                return NULL;
        if (w->started) {
                (void) shutdown(varlink_client_get_fd(w->client), SHUT_RDWR);
                (void) pthread_join(w->thread, NULL);
        }
        w->client = varlink_client_free(w->client);
        json_object_put(w->removed);
        json_object_put(w->faults);
        json_object_put(w->n_faults);
        json_object_put(w->params);
        (void) safe_close(w->ready[0]);
        (void) safe_close(w->ready[1]);
        (void) safe_close(w->notify);
        pthread_cond_destroy(&w->changed);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
}

static json_object *lookup(EventWatcher *w, json_object *table, const char *id) {
        json_object *o;

        pthread_mutex_lock(&w->lock);
        o = json_object_get(json_object_object_get(table, id));
        pthread_mutex_unlock(&w->lock);
        return o;
}

/* Sleeps on the condition until the entry for id is in table, the stream
 * ends, or timeout_usec have passed: no polling, and a daemon that goes
 * away wakes the waiter at once. */
static json_object *wait_for(EventWatcher *w, json_object *table, const char *id, uint64_t timeout_usec) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        struct timespec ts = {
                .tv_sec = (time_t) (deadline / USEC_PER_SEC),
                .tv_nsec = (long) (deadline % USEC_PER_SEC) * 1000L,
        };
        json_object *o;

        pthread_mutex_lock(&w->lock);
        while (!(o = json_object_object_get(table, id)) && !w->ended)
                if (pthread_cond_timedwait(&w->changed, &w->lock, &ts) == ETIMEDOUT)
                        break;
        o = json_object_get(o);
        pthread_mutex_unlock(&w->lock);
        return o;
}

json_object *event_watcher_removed(EventWatcher *w, const char *id) {
        return w ? lookup(w, w->removed, id) : NULL;
}

json_object *event_watcher_first_fault(EventWatcher *w, const char *id) {
        return w ? lookup(w, w->faults, id) : NULL;
}

json_object *event_watcher_wait_removed(EventWatcher *w, const char *id, uint64_t timeout_usec) {
        return w ? wait_for(w, w->removed, id, timeout_usec) : NULL;
}

json_object *event_watcher_wait_first_fault(EventWatcher *w, const char *id, uint64_t timeout_usec) {
        return w ? wait_for(w, w->faults, id, timeout_usec) : NULL;
}

void event_watcher_forget(EventWatcher *w, const char *id) {
        if (!w)
                return;
        pthread_mutex_lock(&w->lock);
        json_object_object_del(w->removed, id);
        json_object_object_del(w->faults, id);
        json_object_object_del(w->n_faults, id);
        pthread_mutex_unlock(&w->lock);
}

int event_watcher_fd(EventWatcher *w) {
        return w->notify;
}

uint64_t event_watcher_fault_count(EventWatcher *w, const char *id) {
        int64_t n;

        pthread_mutex_lock(&w->lock);
        n = json_object_get_int64(json_object_object_get(w->n_faults, id));
        pthread_mutex_unlock(&w->lock);
        return n > 0 ? (uint64_t) n : 0;
}

bool event_watcher_ended(EventWatcher *w) {
        bool ended;

        pthread_mutex_lock(&w->lock);
        ended = w->ended;
        pthread_mutex_unlock(&w->lock);
        return ended;
}
