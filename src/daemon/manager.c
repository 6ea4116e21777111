/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "duration.h"
#include "audit.h"
#include "bus-api.h"
#include "scope-resolve.h"
#include "cleanup.h"
#include "errno-name.h"
#include "json-util.h"
#include "log.h"
#include "manager.h"
#include "parse-util.h"
#include "policy-check.h"
#include "scope.h"
#include "time-util.h"

static const char *const reason_table[_REMOVE_REASON_MAX] = {
        [REMOVE_CANCELLED] = "cancelled",
        [REMOVE_EXPIRED] = "expired",
        [REMOVE_EXHAUSTED] = "exhausted",
        [REMOVE_OWNER_GONE] = "owner-gone",
        [REMOVE_DAEMON_ERROR] = "daemon-error",
};

const char *remove_reason_to_string(RemoveReason r) {
        return r >= 0 && r < _REMOVE_REASON_MAX ? reason_table[r] : NULL;
}

struct Watcher {
        struct Watcher *next;
        VarlinkConn *conn;
        Caller caller;
        bool all;               /* may see every injection (manage) */
        uint64_t ids[64];
        size_t n_ids;
};

struct RateEntry {
        uid_t uid;
        uint64_t window;        /* minute number */
        unsigned count;
};

struct PendingRequest {
        PendingRequest *next;
        Manager *manager;
        Caller caller;
        InjectRequest req;
        ScopeResolution scope;
        PolicyVerdict verdict;
        PolkitCheck *check;
        VarlinkConn *owner_conn;
        manager_inject_cb cb;
        void *userdata;
};

/* ---- the injection table ----------------------------------------------- */

static Injection *injection_free(Injection *inj) {
        if (!inj)
                return NULL;
        sd_event_source_disable_unref(inj->timer);
        sd_event_source_disable_unref(inj->owner_watch);
        sd_bus_slot_unref(inj->name_watch);
        free(inj->owner_bus_name);
        free(inj->rule);
        free(inj->scope_desc);
        free(inj->polkit_how);
        free(inj);
        return NULL;
}

Injection *manager_find(Manager *m, uint64_t id) {
        for (size_t i = 0; i < m->n_injections; i++)
                if (m->injections[i]->id == id)
                        return m->injections[i];
        return NULL;
}

static unsigned count_active(Manager *m, uid_t uid, bool any_uid) {
        unsigned n = 0;

        for (size_t i = 0; i < m->n_injections; i++)
                if (any_uid || m->injections[i]->owner_uid == uid)
                        n++;
        return n;
}

static void state_path(const Injection *inj, char *buf, size_t n) {
        snprintf(buf, n, MANAGER_STATE_DIR "/%s.json", inj->id_str);
}

/* What the engine's pins do not know: who asked, and on what terms. */
static int injection_save(Injection *inj) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        char p[256], tmp[272];
        const char *s;
        FILE *f;

        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "id", json_object_new_string(inj->id_str));
        json_object_object_add(o, "owner_uid", json_object_new_int64(inj->owner_uid));
        json_object_object_add(o, "owner_pid", json_object_new_int64(inj->owner_pid));
        json_object_object_add(o, "owner_start", json_object_new_uint64(inj->owner_start));
        json_object_object_add(o, "transport", json_object_new_string(transport_to_string(inj->transport)));
        json_object_object_add(o, "detach", json_object_new_boolean(inj->detach));
        json_object_object_add(o, "rule", json_object_new_string(inj->rule ?: ""));
        json_object_object_add(o, "scope", json_object_new_string(inj->scope_desc ?: ""));
        json_object_object_add(o, "polkit", json_object_new_string(inj->polkit_how ?: ""));
        json_object_object_add(o, "created_usec", json_object_new_uint64(inj->created_usec));
        json_object_object_add(o, "expires_usec", json_object_new_uint64(inj->expires_usec));
        if (inj->owner_bus_name)
                json_object_object_add(o, "owner_bus_name", json_object_new_string(inj->owner_bus_name));

        (void) mkdir("/run/injectd", 0755);
        if (mkdir(MANAGER_STATE_DIR, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        state_path(inj, p, sizeof(p));
        snprintf(tmp, sizeof(tmp), "%s.tmp", p);
        f = fopen(tmp, "we");
        if (!f)
                return negative_errno();
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        fputs(s, f);
        if (fclose(f) != 0 || rename(tmp, p) < 0) {
                int r = negative_errno();
                (void) unlink(tmp);
                return r;
        }
        return 0;
}

static int injection_load(Injection *inj) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *buf = NULL;
        char p[256];
        const char *s;
        uint64_t u;
        FILE *f;
        size_t n;
        bool b;

        state_path(inj, p, sizeof(p));
        f = fopen(p, "re");
        if (!f)
                return negative_errno();
        buf = malloc(65536);
        n = buf ? fread(buf, 1, 65535, f) : 0;
        fclose(f);
        if (!buf)
                return -ENOMEM;
        if (json_parse_strict(buf, n, JSON_PARSE_OBJECT, &o) < 0)
                return -EBADMSG;
        if (json_get_u64(o, "owner_uid", 0, UINT32_MAX - 1, &u) < 0)
                return -EBADMSG;
        inj->owner_uid = (uint32_t) u;
        if (json_get_u64(o, "owner_pid", 0, INT32_MAX, &u) >= 0)
                inj->owner_pid = (pid_t) u;
        (void) json_get_u64(o, "owner_start", 0, UINT64_MAX, &inj->owner_start);
        if (json_get_bool(o, "detach", &b) >= 0)
                inj->detach = b;
        if (json_get_string(o, "transport", &s) >= 0)
                inj->transport = strcmp(s, "varlink") == 0 ? TRANSPORT_VARLINK : TRANSPORT_BUS;
        if (json_get_string(o, "owner_bus_name", &s) >= 0)
                inj->owner_bus_name = strdup(s);
        if (json_get_string(o, "rule", &s) >= 0)
                inj->rule = strdup(s);
        if (json_get_string(o, "scope", &s) >= 0)
                inj->scope_desc = strdup(s);
        if (json_get_string(o, "polkit", &s) >= 0)
                inj->polkit_how = strdup(s);
        (void) json_get_u64(o, "created_usec", 0, UINT64_MAX, &inj->created_usec);
        (void) json_get_u64(o, "expires_usec", 0, UINT64_MAX, &inj->expires_usec);
        return 0;
}

static void injection_unsave(Injection *inj) {
        char p[256];

        state_path(inj, p, sizeof(p));
        (void) unlink(p);
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Injection *inj = userdata;

        (void) manager_remove(inj->manager, inj, REMOVE_EXPIRED);
        return 0;
}

static int injection_arm_timer(Injection *inj) {
        /* The BPF program stops at the deadline by itself; this timer only
         * cleans up, so the same clock: CLOCK_BOOTTIME, immune to date. */
        return sd_event_add_time(inj->manager->event, &inj->timer, CLOCK_BOOTTIME,
                                 inj->info.slot.deadline_ns / 1000, 0, on_deadline, inj);
}

static int on_owner_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Injection *inj = userdata;

        (void) manager_remove(inj->manager, inj, REMOVE_OWNER_GONE);
        return 0;
}

static int on_name_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Injection *inj = userdata;
        const char *name, *old, *new;

        if (sd_bus_message_read(msg, "sss", &name, &old, &new) < 0)
                return 0;
        if (!*new)
                (void) manager_remove(inj->manager, inj, REMOVE_OWNER_GONE);
        return 0;
}

/* An injection ends with its requester, unless it asked to detach: with its
 * bus connection or Varlink connection, or, after a daemon restart, with its
 * process (a pidfd, which a recycled pid cannot fool). */
static int injection_watch_owner(Injection *inj) {
        Manager *m = inj->manager;
        int fd, r;

        if (inj->detach)
                return 0;
        if (inj->owner_bus_name && m->bus) {
                char match[256];

                snprintf(match, sizeof(match),
                         "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                         "member='NameOwnerChanged',arg0='%s'", inj->owner_bus_name);
                r = sd_bus_add_match(m->bus, &inj->name_watch, match, on_name_owner_changed, inj);
                if (r < 0)
                        return r;
                /* It may have gone before the match was in place. */
                r = sd_bus_get_name_creds(m->bus, inj->owner_bus_name, 0, NULL);
                if (r == -ENXIO || r == -ESRCH)
                        return -ESRCH;
                return 0;
        }
        if (inj->owner_conn)
                return 0;       /* manager_owner_disconnected() */
        if (inj->owner_pid <= 0 || scope_process_alive(inj->owner_pid, inj->owner_start) <= 0)
                return -ESRCH;
        fd = (int) syscall(SYS_pidfd_open, inj->owner_pid, 0);
        if (fd < 0)
                return errno == ESRCH ? -ESRCH : negative_errno();
        r = sd_event_add_io(m->event, &inj->owner_watch, fd, EPOLLIN, on_owner_exit, inj);
        if (r < 0) {
                close(fd);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(inj->owner_watch, true);
        /* The pidfd was opened after the start time was compared: compare again. */
        if (scope_process_alive(inj->owner_pid, inj->owner_start) <= 0)
                return -ESRCH;
        return 0;
}

static int manager_add(Manager *m, Injection *inj) {
        Injection **v;

        v = realloc(m->injections, (m->n_injections + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        m->injections = v;
        m->injections[m->n_injections++] = inj;
        return 0;
}

int manager_refresh(Manager *m, Injection *inj) {
        InjectionInfo info;
        int r;

        r = engine_get(m->engine, inj->id, &info);
        if (r < 0)
                return r;
        inj->info = info;
        return 0;
}

static void watchers_send(Manager *m, Injection *inj, json_object *event);

static int on_site_cache_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        manager_site_cache_schedule(userdata);
        return 0;
}

/* Frees the cached sites whose grace period is over and sets the timer for
 * the next one; called after anything that may have detached a site. */
void manager_site_cache_schedule(Manager *m) {
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

int manager_remove(Manager *m, Injection *inj, RemoveReason reason) {
        InjectError err = {};
        InjectionInfo final;
        json_object *ev;
        int r;

        r = engine_disarm(m->engine, inj->id, &final, &err);
        if (r >= 0)
                inj->info = final;
        else if (r != -ENOENT)
                log_error_errno(r, "Failed to disarm %s: %s", inj->id_str, err.message);

        audit_log(LOG_INFO, &(AuditRecord) {
                        .event = "removed", .id = inj->id, .owner_uid = &inj->owner_uid,
                        .function = inj->info.function, .value = (const int64_t *) &inj->info.slot.retval,
                        .scope = inj->scope_desc, .reason = remove_reason_to_string(reason),
                  }, "Injection %s on '%s' removed (%s): seen %llu, matched %llu, injected %llu",
                  inj->id_str, inj->info.function, remove_reason_to_string(reason),
                  (unsigned long long) inj->info.slot.seen, (unsigned long long) inj->info.slot.matched,
                  (unsigned long long) inj->info.slot.injected);

        ev = json_object_new_object();
        json_object_object_add(ev, "type", json_object_new_string("removed"));
        json_object_object_add(ev, "id", json_object_new_string(inj->id_str));
        json_object_object_add(ev, "reason", json_object_new_string(remove_reason_to_string(reason)));
        json_object_object_add(ev, "injection", injection_to_json(inj));
        watchers_send(m, inj, ev);
        json_object_put(ev);

        bus_injection_removed(m, inj, reason);
        injection_unsave(inj);

        for (size_t i = 0; i < m->n_injections; i++)
                if (m->injections[i] == inj) {
                        m->injections[i] = m->injections[--m->n_injections];
                        break;
                }
        injection_free(inj);
        manager_site_cache_schedule(m);
        return r < 0 && r != -ENOENT ? r : 0;
}

/* ---- JSON views -------------------------------------------------------- */

json_object *injection_to_json(Injection *inj) {
        const struct inject_slot *s = &inj->info.slot;
        json_object *o = json_object_new_object();
        const char *ename = s->retval < 0 ? errno_to_name((int) -s->retval) : NULL;
        uint64_t now = now_nsec(CLOCK_BOOTTIME);

        json_object_object_add(o, "id", json_object_new_string(inj->id_str));
        json_object_object_add(o, "function", json_object_new_string(inj->info.function));
        json_object_object_add(o, "backend", json_object_new_string(backend_to_string(inj->info.backend)));
        json_object_object_add(o, "value", json_object_new_int64(s->retval));
        if (ename)
                json_object_object_add(o, "error", json_object_new_string(ename));
        json_object_object_add(o, "scope", json_object_new_string(inj->scope_desc ?: ""));
        json_object_object_add(o, "owner_uid", json_object_new_int64(inj->owner_uid));
        json_object_object_add(o, "created_usec", json_object_new_uint64(inj->created_usec));
        json_object_object_add(o, "expires_usec", json_object_new_uint64(inj->expires_usec));
        json_object_object_add(o, "remaining_usec",
                               json_object_new_uint64(s->deadline_ns > now ? (s->deadline_ns - now) / 1000 : 0));
        json_object_object_add(o, "state", json_object_new_string(injection_state_to_string(inj->info.state)));
        json_object_object_add(o, "detach", json_object_new_boolean(inj->detach));
        if (s->comm[0])
                json_object_object_add(o, "comm", json_object_new_string(s->comm));
        if (s->after)
                json_object_object_add(o, "after", json_object_new_uint64(s->after));
        if (s->every > 1)
                json_object_object_add(o, "every", json_object_new_uint64(s->every));
        if (s->times)
                json_object_object_add(o, "times", json_object_new_uint64(s->times));
        if (s->probability_ppm < INJECT_PPM)
                json_object_object_add(o, "probability", json_object_new_double(s->probability_ppm / 10000.0));
        if (s->n_callers) {
                json_object *a = json_object_new_array();

                for (uint32_t i = 0; i < s->n_callers && i < INJECT_MAX_CALLERS; i++) {
                        const char *n = engine_symbol_name(inj->manager->engine, s->callers[i].start);
                        json_object_array_add(a, json_object_new_string(n ?: "?"));
                }
                json_object_object_add(o, "callers", a);
        }
        json_object_object_add(o, "rule", json_object_new_string(inj->rule ?: ""));
        json_object_object_add(o, "calls_seen", json_object_new_uint64(s->seen));
        json_object_object_add(o, "calls_matched", json_object_new_uint64(s->matched));
        json_object_object_add(o, "faults_injected", json_object_new_uint64(s->injected));
        return o;
}

bool manager_may_see(Manager *m, const Caller *c, const Injection *inj) {
        return c->uid == 0 || inj->owner_uid == c->uid;
}

int manager_list_json(Manager *m, const Caller *c, bool all, json_object **ret, InjectError *err) {
        json_object *a;

        if (all && c->uid != 0)
                return inject_error_set(err, -EPERM, INJECT_ERROR_NOT_AUTHORIZED,
                                        "Listing every user's injections needs root");
        a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_injections; i++) {
                Injection *inj = m->injections[i];

                if (!all && inj->owner_uid != c->uid)
                        continue;
                (void) manager_refresh(m, inj);
                json_object_array_add(a, injection_to_json(inj));
        }
        *ret = a;
        return 0;
}

/* manager_capabilities_json() is in capabilities.c. */

int manager_functions_json(Manager *m, const Caller *c, const char *glob, json_object **ret) {
        const FunctionTable *t;
        json_object *a;
        int r;

        r = engine_functions(m->engine, &t);
        if (r < 0)
                return r;
        a = json_object_new_array();
        for (size_t i = 0; i < t->n; i++) {
                const InjectableFunction *f = &t->funcs[i];
                json_object *o, *bk;
                unsigned mask;

                if (glob && *glob && fnmatch(glob, f->name, 0) != 0)
                        continue;
                mask = engine_function_backends(m->engine, f);
                o = json_object_new_object();
                json_object_object_add(o, "name", json_object_new_string(f->name));
                if (f->module)
                        json_object_object_add(o, "module", json_object_new_string(f->module));
                json_object_object_add(o, "type", json_object_new_string(func_type_to_string(f->type)));
                bk = json_object_new_array();
                if (mask & (1u << BACKEND_KPROBE))
                        json_object_array_add(bk, json_object_new_string("kprobe"));
                if (mask & (1u << BACKEND_FMOD_RET))
                        json_object_array_add(bk, json_object_new_string("fmod_ret"));
                json_object_object_add(o, "backends", bk);
                json_object_object_add(o, "allowed", json_object_new_boolean(
                                                       c->uid == 0 || policy_glue_function_allowed(m->policy, c, f->name)));
                json_object_array_add(a, o);
        }
        *ret = a;
        return 0;
}

/* ---- events ------------------------------------------------------------ */

static void watchers_send(Manager *m, Injection *inj, json_object *event) {
        _cleanup_(json_object_putp) json_object *p = json_object_new_object();

        if (!p)
                return;
        json_object_object_add(p, "event", json_object_get(event));
        for (struct Watcher *w = m->watchers; w; w = w->next) {
                bool want = w->n_ids == 0;

                if (!w->all && inj->owner_uid != w->caller.uid)
                        continue;
                for (size_t i = 0; i < w->n_ids; i++)
                        if (w->ids[i] == inj->id)
                                want = true;
                if (want)
                        (void) varlink_notify(w->conn, p);
        }
}

/* The failed call's kernel stack as symbols, innermost first. The frames
 * above the failed function (the BPF program and, for fmod_ret, its
 * trampoline) are ours, not the caller's: they are left out. */
static json_object *fault_stack(Manager *m, const Injection *inj, const struct inject_event *ev) {
        json_object *a = json_object_new_array();
        uint32_t n = ev->n_stack < INJECT_STACK_DEPTH ? ev->n_stack : INJECT_STACK_DEPTH, first = 0;
        size_t fn_len = strlen(inj->info.function);
        char sym[INJECT_STACK_DEPTH][256];

        for (uint32_t i = 0; i < n; i++)
                if (ev->stack[i] == 0 || engine_symbolize(m->engine, ev->stack[i], sym[i], sizeof(sym[i])) < 0) {
                        n = i;
                        break;
                }
        for (uint32_t i = 0; i < n; i++)
                if (strncmp(sym[i], inj->info.function, fn_len) == 0 && sym[i][fn_len] == '+') {
                        first = i;
                        break;
                }
        for (uint32_t i = first; a && i < n; i++)
                json_object_array_add(a, json_object_new_string(sym[i]));
        return a;
}

static int on_ring_event(void *ctx, void *data, size_t size) {
        Manager *m = ctx;
        const struct inject_event *ev = data;
        Injection *inj;
        json_object *o;
        char comm[INJECT_COMM_LEN + 1] = {};

        if (size < sizeof(*ev))
                return 0;
        inj = manager_find(m, ev->inj_id);
        if (!inj)
                return 0;
        /* A process names itself: keep its comm printable ASCII, which is
         * valid UTF-8 for both buses and safe on a terminal. */
        memcpy(comm, ev->comm, INJECT_COMM_LEN);
        for (char *ch = comm; *ch; ch++)
                if (*ch < 0x20 || *ch > 0x7e)
                        *ch = '?';

        o = json_object_new_object();
        json_object_object_add(o, "type", json_object_new_string("fault"));
        json_object_object_add(o, "id", json_object_new_string(inj->id_str));
        json_object_object_add(o, "time_ns", json_object_new_uint64(ev->time_ns));
        json_object_object_add(o, "pid", json_object_new_int(ev->pid));
        json_object_object_add(o, "tgid", json_object_new_int(ev->tgid));
        json_object_object_add(o, "comm", json_object_new_string(comm));
        json_object_object_add(o, "function", json_object_new_string(inj->info.function));
        json_object_object_add(o, "value", json_object_new_int64(ev->retval));
        json_object_object_add(o, "stack", fault_stack(m, inj, ev));
        watchers_send(m, inj, o);
        json_object_put(o);
        bus_injection_fault(m, inj, ev, comm);

        /* The last allowed fault ends the injection. */
        if (inj->info.slot.times && manager_refresh(m, inj) >= 0 && inj->info.slot.injected >= inj->info.slot.times)
                (void) manager_remove(m, inj, REMOVE_EXHAUSTED);
        return 0;
}

static int on_ring_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        (void) ring_buffer__consume(m->events);
        return 0;
}

static int manager_open_events(Manager *m) {
        int fd, r;

        if (m->events)
                return 0;
        fd = engine_events_fd(m->engine);
        if (fd < 0)
                return fd;
        m->events = ring_buffer__new(fd, on_ring_event, m, NULL);
        if (!m->events)
                return negative_errno();
        r = sd_event_add_io(m->event, &m->events_source, ring_buffer__epoll_fd(m->events), EPOLLIN,
                            on_ring_readable, m);
        return r;
}

/* ---- the request path -------------------------------------------------- */

static void pending_unlink(Manager *m, PendingRequest *p) {
        for (PendingRequest **pp = &m->pending; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        break;
                }
}

static void pending_free(PendingRequest *p) {
        if (!p)
                return;
        polkit_check_free(p->check);
        caller_done(&p->caller);
        request_done(&p->req);
        policy_verdict_done(&p->verdict);
        free(p);
}

void pending_request_cancel(PendingRequest *p) {
        if (!p)
                return;
        pending_unlink(p->manager, p);
        pending_free(p);
}

static void refuse(Manager *m, const Caller *c, const InjectRequest *req, const char *scope, const char *rule,
                   const char *polkit, const InjectError *err) {
        audit_log(LOG_NOTICE, &(AuditRecord) {
                        .event = "decision", .caller = c, .function = req ? req->function : NULL,
                        .value = req ? &req->retval : NULL, .scope = scope, .result = "denied", .rule = rule,
                        .polkit = polkit, .reason = err->name,
                  }, "Refused injection for uid %u: %s", (unsigned) c->uid, err->message);
}

static bool rate_ok(Manager *m, uid_t uid) {
        uint64_t minute = now_nsec(CLOCK_BOOTTIME) / (60ULL * 1000000000ULL);
        struct RateEntry *e = NULL;

        if (uid == 0 || m->options.rate_per_minute == 0)
                return true;
        for (size_t i = 0; i < m->n_rates; i++)
                if (m->rates[i].uid == uid)
                        e = &m->rates[i];
        if (!e) {
                struct RateEntry *v = realloc(m->rates, (m->n_rates + 1) * sizeof(*v));
                if (!v)
                        return false;
                m->rates = v;
                e = &m->rates[m->n_rates++];
                *e = (struct RateEntry) { .uid = uid, .window = minute };
        }
        if (e->window != minute) {
                e->window = minute;
                e->count = 0;
        }
        return ++e->count <= m->options.rate_per_minute;
}

static void finish_inject(PendingRequest *p, const char *polkit_how) {
        Manager *m = p->manager;
        InjectError err = {};
        InjectSpec spec;
        InjectionInfo info;
        Injection *inj = NULL;
        uint64_t duration;
        int r;

        duration = p->req.duration_usec ?: p->verdict.max_duration_usec;
        spec = (InjectSpec) {
                .function = p->req.function,
                .backend = p->req.backend,
                .retval = p->req.retval,
                .duration_usec = duration,
                .scope = p->scope.kind,
                .cgroup_id = p->scope.cgroup_id,
                .cgroup_level = p->scope.cgroup_level,
                .pid = p->scope.pid,
                .comm = p->req.comm,
                .callers = (const char *const *) p->req.callers,
                .n_callers = p->req.n_callers,
                .after = p->req.after,
                .every = p->req.every,
                .times = p->req.times,
                .probability_ppm = p->req.probability_ppm,
                /* Root, and a holder of inject-global, may fail anyone's
                 * tasks; everyone else only tasks fully running as them. */
                .owner_uid = p->caller.uid == 0 || p->scope.foreign ? INJECT_UID_ANY : p->caller.uid,
        };

        /* A D-Bus requester that left while polkit decided gets nothing
         * armed (a Varlink one is dropped by manager_owner_disconnected()). */
        if (!p->req.detach && p->caller.bus_name && m->bus &&
            sd_bus_get_name_creds(m->bus, p->caller.bus_name, 0, NULL) < 0) {
                inject_error_set(&err, -ECONNRESET, INJECT_ERROR_INVALID_ARGUMENT,
                                 "The requester disconnected before the answer");
                refuse(m, &p->caller, &p->req, p->scope.desc, p->verdict.rule, polkit_how, &err);
                p->cb(m, NULL, &err, p->userdata);
                return;
        }

        r = manager_open_events(m);
        if (r < 0)
                log_warning_errno(r, "Cannot read injected-fault events, ignoring: %m");

        r = engine_arm(m->engine, &spec, &info, &err);
        /* It may have re-attached a cached site, or retired one it failed to arm. */
        manager_site_cache_schedule(m);
        if (r < 0) {
                if (!err.name)
                        inject_error_set(&err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot arm: %s", strerror(-r));
                refuse(m, &p->caller, &p->req, p->scope.desc, p->verdict.rule, polkit_how, &err);
                p->cb(m, NULL, &err, p->userdata);
                return;
        }

        inj = calloc(1, sizeof(*inj));
        if (!inj) {
                (void) engine_disarm(m->engine, info.id, NULL, NULL);
                inject_error_set(&err, -ENOMEM, INJECT_ERROR_KERNEL_REFUSED, "Out of memory");
                p->cb(m, NULL, &err, p->userdata);
                return;
        }
        *inj = (Injection) {
                .manager = m,
                .id = info.id,
                .owner_uid = p->caller.uid,
                .owner_pid = p->caller.pid,
                .owner_start = p->caller.start_ticks,
                .transport = p->caller.transport,
                .owner_bus_name = p->caller.bus_name ? strdup(p->caller.bus_name) : NULL,
                .owner_conn = p->owner_conn,
                .detach = p->req.detach,
                .rule = strdup(p->verdict.rule ?: ""),
                .scope_desc = strdup(p->scope.desc),
                .polkit_how = strdup(polkit_how ?: ""),
                .info = info,
                .created_usec = now_usec(CLOCK_REALTIME),
        };
        inj->expires_usec = inj->created_usec + duration;
        snprintf(inj->id_str, sizeof(inj->id_str), "%016" PRIx64, inj->id);
        snprintf(inj->object_path, sizeof(inj->object_path), "/org/injectd/Injector1/injection/_%s", inj->id_str);

        r = manager_add(m, inj);
        if (r >= 0)
                r = injection_save(inj);
        if (r >= 0)
                r = injection_arm_timer(inj);
        if (r >= 0) {
                r = injection_watch_owner(inj);
                if (r == -ESRCH) {
                        /* Gone while we were deciding. */
                        inject_error_set(&err, r, INJECT_ERROR_INVALID_ARGUMENT, "The requester has gone");
                        (void) manager_remove(m, inj, REMOVE_OWNER_GONE);
                        p->cb(m, NULL, &err, p->userdata);
                        return;
                }
        }
        if (r < 0) {
                inject_error_set(&err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot track the injection: %s",
                                 strerror(-r));
                (void) manager_remove(m, inj, REMOVE_DAEMON_ERROR);
                p->cb(m, NULL, &err, p->userdata);
                return;
        }

        audit_log(LOG_INFO, &(AuditRecord) {
                        .event = "armed", .caller = &p->caller, .id = inj->id, .function = inj->info.function,
                        .value = (const int64_t *) &inj->info.slot.retval, .scope = inj->scope_desc, .result = "allowed",
                        .rule = inj->rule, .polkit = polkit_how,
                  }, "Armed %s: '%s' returns %lld for %s, %s backend, for %llus (uid %u, rule '%s', %s)",
                  inj->id_str, inj->info.function, (long long) inj->info.slot.retval, inj->scope_desc,
                  backend_to_string(inj->info.backend), (unsigned long long) (duration / 1000000),
                  (unsigned) p->caller.uid, inj->rule, polkit_how ?: "-");

        {
                json_object *ev = json_object_new_object();

                json_object_object_add(ev, "type", json_object_new_string("added"));
                json_object_object_add(ev, "id", json_object_new_string(inj->id_str));
                json_object_object_add(ev, "injection", injection_to_json(inj));
                watchers_send(m, inj, ev);
                json_object_put(ev);
        }
        bus_injection_added(m, inj);
        p->cb(m, inj, NULL, p->userdata);
}

static void on_polkit_result(const PolkitResult *res, void *userdata) {
        PendingRequest *p = userdata;
        Manager *m = p->manager;
        InjectError err = {};

        pending_unlink(m, p);
        if (!res->allowed) {
                if (res->error < 0)
                        inject_error_set(&err, res->error, INJECT_ERROR_AUTH_UNAVAILABLE,
                                         "polkit could not be asked, and --polkit=required: %s",
                                         res->error_message ?: strerror(-res->error));
                else
                        inject_error_set(&err, -EACCES, INJECT_ERROR_NOT_AUTHORIZED,
                                         "polkit did not authorize %s%s", p->scope.foreign ?
                                         POLKIT_ACTION_INJECT_GLOBAL : POLKIT_ACTION_INJECT,
                                         res->challenge ? " (interactive authentication could; ask with "
                                         "interactive authorization allowed)" : "");
                refuse(m, &p->caller, &p->req, p->scope.desc, p->verdict.rule, res->how, &err);
                p->cb(m, NULL, &err, p->userdata);
        } else
                finish_inject(p, res->how);
        pending_free(p);
}

int manager_inject(Manager *m, const Caller *c, json_object *request, int cgroup_fd, VarlinkConn *owner_conn,
                   manager_inject_cb cb, void *userdata, PendingRequest **ret) {
        PendingRequest *p;
        InjectError err = {};
        unsigned active;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->manager = m;
        p->cb = cb;
        p->userdata = userdata;
        p->owner_conn = owner_conn;
        p->req = INJECT_REQUEST_NULL;
        r = caller_copy(c, &p->caller);
        if (r < 0) {
                free(p);
                return r;
        }

        audit_log(LOG_INFO, &(AuditRecord) { .event = "request", .caller = c },
                  "Injection requested by uid %u (pid %d, %s): %s", (unsigned) c->uid, (int) c->pid,
                  transport_to_string(c->transport),
                  request ? json_object_to_json_string_ext(request, JSON_C_TO_STRING_PLAIN) : "(none)");

        r = request_from_json(request, &p->req, &err);
        if (r >= 0 && cgroup_fd >= 0) {
                if (p->req.scope != REQUEST_SCOPE_OWN_CGROUP && p->req.scope != REQUEST_SCOPE_CGROUP)
                        r = inject_error_set(&err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                             "A cgroup fd only goes with scope \"cgroup\"");
                else {
                        p->req.scope = REQUEST_SCOPE_CGROUP;
                        p->req.cgroup_fd = fcntl(cgroup_fd, F_DUPFD_CLOEXEC, 3);
                        if (p->req.cgroup_fd < 0)
                                r = negative_errno();
                }
        }
        if (r >= 0)
                r = engine_check(m->engine, &(InjectSpec) { .function = p->req.function, .retval = p->req.retval,
                                                            .backend = p->req.backend }, &err);
        if (r >= 0 && !rate_ok(m, c->uid))
                r = inject_error_set(&err, -EBUSY, INJECT_ERROR_LIMIT,
                                     "Too many requests: at most %u injections per minute per user",
                                     m->options.rate_per_minute);
        if (r >= 0)
                r = resolve_scope(c, &p->req, &p->scope, &err);
        if (r >= 0)
                r = policy_glue_check(m->policy, c, &p->req, p->scope.kind, &p->verdict, &err);
        if (r >= 0) {
                active = count_active(m, c->uid, false);
                if (c->uid != 0 && p->verdict.max_active && active >= p->verdict.max_active)
                        r = inject_error_set(&err, -EUSERS, INJECT_ERROR_LIMIT,
                                             "You have %u active injections; rule '%s' allows at most %u",
                                             active, p->verdict.rule, p->verdict.max_active);
                else if (count_active(m, 0, true) >= m->options.max_active)
                        r = inject_error_set(&err, -EUSERS, INJECT_ERROR_LIMIT,
                                             "The daemon holds its maximum of %u active injections",
                                             m->options.max_active);
        }
        if (r < 0) {
                if (!err.name)
                        inject_error_set(&err, r, INJECT_ERROR_INVALID_ARGUMENT, "%s", strerror(-r));
                refuse(m, c, p->req.function ? &p->req : NULL, p->scope.desc[0] ? p->scope.desc : NULL,
                       p->verdict.rule, NULL, &err);
                cb(m, NULL, &err, userdata);
                pending_free(p);
                if (ret)
                        *ret = NULL;
                return 0;
        }

        audit_log(LOG_INFO, &(AuditRecord) {
                        .event = "decision", .caller = c, .function = p->req.function, .value = &p->req.retval,
                        .scope = p->scope.desc, .result = "policy-allowed", .rule = p->verdict.rule,
                  }, "Policy allows uid %u to fail '%s' with %lld for %s (rule '%s'); asking polkit for %s",
                  (unsigned) c->uid, p->req.function, (long long) p->req.retval, p->scope.desc, p->verdict.rule,
                  p->scope.foreign ? POLKIT_ACTION_INJECT_GLOBAL : POLKIT_ACTION_INJECT);

        p->next = m->pending;
        m->pending = p;
        if (ret)
                *ret = p;
        r = polkit_check_async(m->polkit,
                               &(PolkitSubject) {
                                       .kind = c->transport == TRANSPORT_BUS ? POLKIT_SUBJECT_BUS_NAME :
                                                                               POLKIT_SUBJECT_PROCESS,
                                       .bus_name = c->bus_name,
                                       .pid = c->pid,
                                       .uid = c->uid,
                                       .start_time = c->start_ticks,
                               },
                               p->scope.foreign ? POLKIT_ACTION_INJECT_GLOBAL : POLKIT_ACTION_INJECT, NULL,
                               p->req.interactive, on_polkit_result, p, &p->check);
        if (r < 0) {
                pending_unlink(m, p);
                if (ret)
                        *ret = NULL;
                inject_error_set(&err, r, INJECT_ERROR_AUTH_UNAVAILABLE, "Cannot ask polkit: %s", strerror(-r));
                refuse(m, c, &p->req, p->scope.desc, p->verdict.rule, NULL, &err);
                cb(m, NULL, &err, userdata);
                pending_free(p);
        }
        return 0;
}

/* ---- cancel and reload ------------------------------------------------- */

typedef struct ManageCheck {
        Manager *manager;
        Caller caller;
        uint64_t id;            /* 0: reload */
        manager_done_cb cb;
        void *userdata;
} ManageCheck;

static void do_manage(ManageCheck *mc) {
        Manager *m = mc->manager;
        InjectError err = {};
        Injection *inj;
        int r;

        if (mc->id == 0) {
                r = manager_reload_policy(m);
                if (r < 0)
                        inject_error_set(&err, r, INJECT_ERROR_NOT_ALLOWED, "Reloading the policy failed: %s",
                                         strerror(-r));
                mc->cb(m, r < 0 ? &err : NULL, mc->userdata);
                return;
        }
        inj = manager_find(m, mc->id);
        if (!inj) {
                inject_error_set(&err, -ENOENT, INJECT_ERROR_NO_SUCH_INJECTION, "No injection %016" PRIx64, mc->id);
                mc->cb(m, &err, mc->userdata);
                return;
        }
        audit_log(LOG_INFO, &(AuditRecord) { .event = "cancel", .caller = &mc->caller, .id = inj->id,
                                             .function = inj->info.function },
                  "Injection %s cancelled by uid %u", inj->id_str, (unsigned) mc->caller.uid);
        r = manager_remove(m, inj, REMOVE_CANCELLED);
        if (r < 0)
                inject_error_set(&err, r, INJECT_ERROR_KERNEL_REFUSED, "Disarming failed: %s", strerror(-r));
        mc->cb(m, r < 0 ? &err : NULL, mc->userdata);
}

static void on_manage_result(const PolkitResult *res, void *userdata) {
        ManageCheck *mc = userdata;
        InjectError err = {};

        if (res->allowed && strcmp(res->how, POLKIT_HOW_POLKIT) == 0)
                do_manage(mc);
        else {
                /* Managing others' injections is never granted by default. */
                inject_error_set(&err, -EACCES, INJECT_ERROR_NOT_AUTHORIZED,
                                 "This needs %s, which polkit did not grant%s", POLKIT_ACTION_MANAGE,
                                 res->error < 0 ? " (polkit is unavailable)" : "");
                audit_log(LOG_NOTICE, &(AuditRecord) { .event = "decision", .caller = &mc->caller, .id = mc->id,
                                                       .result = "denied", .polkit = res->how,
                                                       .reason = err.name }, "%s", err.message);
                mc->cb(mc->manager, &err, mc->userdata);
        }
        caller_done(&mc->caller);
        free(mc);
}

static int manage(Manager *m, const Caller *c, uint64_t id, bool interactive, manager_done_cb cb, void *userdata) {
        ManageCheck *mc;
        int r;

        mc = calloc(1, sizeof(*mc));
        if (!mc)
                return -ENOMEM;
        *mc = (ManageCheck) { .manager = m, .id = id, .cb = cb, .userdata = userdata };
        r = caller_copy(c, &mc->caller);
        if (r < 0) {
                free(mc);
                return r;
        }
        if (c->uid == 0 || (id && manager_find(m, id) && manager_find(m, id)->owner_uid == c->uid)) {
                do_manage(mc);
                caller_done(&mc->caller);
                free(mc);
                return 0;
        }
        return polkit_check_async(m->polkit,
                                  &(PolkitSubject) {
                                          .kind = c->transport == TRANSPORT_BUS ? POLKIT_SUBJECT_BUS_NAME :
                                                                                  POLKIT_SUBJECT_PROCESS,
                                          .bus_name = c->bus_name, .pid = c->pid, .uid = c->uid,
                                          .start_time = c->start_ticks,
                                  },
                                  POLKIT_ACTION_MANAGE, NULL, interactive, on_manage_result, mc, NULL);
}

int manager_cancel(Manager *m, const Caller *c, const char *id_str, bool interactive, manager_done_cb cb,
                   void *userdata) {
        InjectError err = {};
        Injection *inj;
        uint64_t id;

        if (parse_injection_id(id_str, &id) < 0) {
                inject_error_set(&err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                 "'%.32s' is not an injection id (16 hex digits)", id_str ?: "");
                cb(m, &err, userdata);
                return 0;
        }
        inj = manager_find(m, id);
        if (!inj) {
                inject_error_set(&err, -ENOENT, INJECT_ERROR_NO_SUCH_INJECTION, "No injection %s", id_str);
                cb(m, &err, userdata);
                return 0;
        }
        /* Its owner and root may; anyone else needs org.injectd.manage. */
        return manage(m, c, id, interactive, cb, userdata);
}

int manager_reload_policy_as(Manager *m, const Caller *c, bool interactive, manager_done_cb cb, void *userdata) {
        return manage(m, c, 0, interactive, cb, userdata);
}

int manager_reload_policy(Manager *m) {
        Policy *p = NULL;
        int r;

        r = policy_glue_load(m->options.policy_dirs, &p);
        if (r < 0)
                return log_error_errno(r, "Failed to load the policy, keeping the previous one: %m");
        policy_glue_free(m->policy);
        m->policy = p;
        /* Detached programs kept for functions the new policy may no longer
         * grant serve nobody; the reload is when an admin expects the daemon
         * to let go of what it no longer needs. */
        engine_site_cache_flush(m->engine);
        manager_site_cache_schedule(m);
        log_info("Policy loaded.");
        return 0;
}

/* ---- watchers ---------------------------------------------------------- */

int manager_add_watcher(Manager *m, VarlinkConn *c, const Caller *caller, json_object *ids) {
        struct Watcher *w;
        size_t n = ids ? json_object_array_length(ids) : 0;
        int r;

        /* Asking for ids and naming none valid must not widen to "all". */
        if (ids && (n == 0 || n > ELEMENTSOF(w->ids)))
                return -EINVAL;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (parse_injection_id(json_object_get_string(json_object_array_get_idx(ids, i)), &w->ids[w->n_ids++]) < 0) {
                        free(w);
                        return -EINVAL;
                }
        r = caller_copy(caller, &w->caller);
        if (r < 0) {
                free(w);
                return r;
        }
        w->conn = varlink_conn_ref(c);
        w->all = caller->uid == 0;      /* root sees every injection's events */
        w->next = m->watchers;
        m->watchers = w;
        return 0;
}

void manager_remove_watcher(Manager *m, VarlinkConn *c) {
        for (struct Watcher **pp = &m->watchers; *pp;) {
                struct Watcher *w = *pp;

                if (w->conn == c) {
                        *pp = w->next;
                        varlink_conn_unref(w->conn);
                        caller_done(&w->caller);
                        free(w);
                } else
                        pp = &w->next;
        }
}

void manager_owner_disconnected(Manager *m, VarlinkConn *c) {
        manager_remove_watcher(m, c);
        /* A request still waiting for polkit ends with its requester,
         * unless it asked to detach: it is answered (the answer goes
         * nowhere) so the front end lets go of the connection. */
        for (PendingRequest *p = m->pending, *next; p; p = next) {
                next = p->next;
                if (p->owner_conn != c)
                        continue;
                p->owner_conn = NULL;
                if (!p->req.detach) {
                        InjectError err = {};

                        inject_error_set(&err, -ECONNRESET, INJECT_ERROR_INVALID_ARGUMENT,
                                         "The requester disconnected before the answer");
                        pending_unlink(m, p);
                        p->cb(m, NULL, &err, p->userdata);
                        pending_free(p);
                }
        }
        for (size_t i = 0; i < m->n_injections;) {
                Injection *inj = m->injections[i];

                if (inj->owner_conn == c) {
                        inj->owner_conn = NULL;
                        if (!inj->detach) {
                                (void) manager_remove(m, inj, REMOVE_OWNER_GONE);
                                continue;       /* the array shrank into slot i */
                        }
                }
                i++;
        }
}

/* ---- life cycle -------------------------------------------------------- */

static int adopt(Manager *m) {
        _cleanup_free_ AdoptResult *v = NULL;
        size_t n = 0;
        int r;

        r = engine_adopt(m->engine, &v, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to adopt pinned injections: %m");

        for (size_t i = 0; i < n; i++) {
                Injection *inj;

                if (v[i].action != ADOPT_KEPT) {
                        char p[256];

                        snprintf(p, sizeof(p), MANAGER_STATE_DIR "/%016" PRIx64 ".json", v[i].info.id);
                        (void) unlink(p);
                        audit_log(LOG_INFO, &(AuditRecord) { .event = "removed", .id = v[i].info.id,
                                                             .function = v[i].info.function,
                                                             .reason = adopt_action_to_string(v[i].action) },
                                  "Dropped pinned injection %016" PRIx64 " on '%s' at start: %s", v[i].info.id,
                                  v[i].info.function, adopt_action_to_string(v[i].action));
                        continue;
                }
                inj = calloc(1, sizeof(*inj));
                if (!inj)
                        return log_oom();
                inj->manager = m;
                inj->id = v[i].info.id;
                inj->info = v[i].info;
                snprintf(inj->id_str, sizeof(inj->id_str), "%016" PRIx64, inj->id);
                snprintf(inj->object_path, sizeof(inj->object_path), "/org/injectd/Injector1/injection/_%s",
                         inj->id_str);
                r = manager_add(m, inj);
                if (r < 0) {
                        injection_free(inj);
                        return log_oom();
                }
                r = injection_load(inj);
                if (r < 0) {
                        log_warning_errno(r, "No owner record for pinned injection %s, removing it: %m",
                                          inj->id_str);
                        (void) manager_remove(m, inj, REMOVE_OWNER_GONE);
                        continue;
                }
                r = injection_arm_timer(inj);
                if (r >= 0)
                        r = injection_watch_owner(inj);
                if (r == -ESRCH) {
                        (void) manager_remove(m, inj, REMOVE_OWNER_GONE);
                        continue;
                }
                if (r < 0) {
                        log_error_errno(r, "Cannot track adopted injection %s, removing it: %m", inj->id_str);
                        (void) manager_remove(m, inj, REMOVE_DAEMON_ERROR);
                        continue;
                }
                audit_log(LOG_INFO, &(AuditRecord) { .event = "adopted", .id = inj->id, .owner_uid = &inj->owner_uid,
                                                     .function = inj->info.function, .scope = inj->scope_desc },
                          "Adopted injection %s on '%s' (%llu faults so far)", inj->id_str, inj->info.function,
                          (unsigned long long) inj->info.slot.injected);
        }

        /* Owner records whose pins are gone. */
        {
                _cleanup_(closedirp) DIR *d = opendir(MANAGER_STATE_DIR);
                struct dirent *de;

                while (d && (de = readdir(d))) {
                        uint64_t id;
                        char name[17] = {};

                        if (de->d_name[0] == '.' || strlen(de->d_name) != 21)
                                continue;
                        memcpy(name, de->d_name, 16);
                        if (parse_injection_id(name, &id) < 0 || manager_find(m, id))
                                continue;
                        (void) unlinkat(dirfd(d), de->d_name, 0);
                }
        }
        return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload_policy(userdata);
        return 0;
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        manager_stop(m);
        return sd_event_exit(m->event, 0);
}

void manager_stop(Manager *m) {
        /* Nothing will be armed again: free each program as its site goes,
         * rather than empty its maps for a reuse that will not come. */
        engine_set_site_cache(m->engine, 0, 0);
        if (m->options.keep_on_exit) {
                log_info("Stopping, keeping %zu injection(s) armed (--keep-on-exit).", m->n_injections);
                return;
        }
        while (m->n_injections > 0)
                (void) manager_remove(m, m->injections[0], REMOVE_CANCELLED);
}

int manager_new(const ManagerOptions *o, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->options = *o;
        if (!m->options.max_active)
                m->options.max_active = MANAGER_MAX_ACTIVE_DEFAULT;
        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        r = engine_new(o->pin_root, &m->engine);
        if (r < 0)
                return r;
        engine_set_site_cache(m->engine, o->site_cache_usec, o->site_cache_max);
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        while (m->pending) {
                PendingRequest *p = m->pending;
                m->pending = p->next;
                pending_free(p);
        }
        while (m->watchers)
                manager_remove_watcher(m, m->watchers->conn);
        for (size_t i = 0; i < m->n_injections; i++)
                injection_free(m->injections[i]);
        free(m->injections);
        free(m->rates);
        sd_event_source_disable_unref(m->events_source);
        ring_buffer__free(m->events);
        sd_event_source_disable_unref(m->sighup);
        sd_event_source_disable_unref(m->sigterm);
        sd_event_source_disable_unref(m->sigint);
        sd_event_source_disable_unref(m->site_cache_timer);
        varlink_server_free(m->varlink);
        polkit_context_free(m->polkit);
        bus_subscribers_free(m);
        sd_bus_flush_close_unref(m->bus);
        policy_glue_free(m->policy);
        engine_free(m->engine);
        sd_event_unref(m->event);
        free(m);
        return NULL;
}

int manager_start(Manager *m) {
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(negative_errno(), "Failed to block signals: %m");
        r = sd_event_add_signal(m->event, &m->sighup, SIGHUP, on_sighup, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &m->sigterm, SIGTERM, on_sigterm, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &m->sigint, SIGINT, on_sigterm, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch signals: %m");

        r = policy_glue_load(m->options.policy_dirs, &m->policy);
        if (r < 0)
                log_warning_errno(r, "No policy loaded, every unprivileged request will be refused: %m");

        r = bus_start(m);
        if (r < 0)
                return r;
        r = polkit_context_new(m->event, m->bus, m->options.polkit_mode, &m->polkit);
        if (r < 0)
                return log_error_errno(r, "Failed to set up polkit: %m");
        r = varlink_api_start(m);
        if (r < 0)
                return r;

        r = adopt(m);
        if (r < 0)
                return r;
        if (m->n_injections > 0) {
                r = manager_open_events(m);
                if (r < 0)
                        log_warning_errno(r, "Cannot read injected-fault events, ignoring: %m");
                for (size_t i = 0; i < m->n_injections; i++)
                        bus_injection_added(m, m->injections[i]);
        }
        return 0;
}
