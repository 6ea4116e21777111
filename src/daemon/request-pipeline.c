/* SPDX-License-Identifier: MIT */
/* The path of an Inject request, one step per function:
 *   parse → resolve the scope → authorize (authorize.c) → polkit → arm → track.
 * Every refusal is logged as a decision and answered through the request's
 * callback, exactly once. An arm whose process scope has a tree to tag is
 * walked a bounded number of processes per turn of the event loop
 * (MANAGER_ARM_STEP_PROCESSES, arm_stepper), the request waiting in
 * m->pending meanwhile, so that no request holds the loop (issue 29). */

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "authorize.h"
#include "fault-events.h"
#include "injection-store.h"
#include "injection.h"
#include "log.h"
#include "manage.h"
#include "manager-listeners.h"
#include "request-pipeline.h"
#include "request.h"
#include "scope-resolve.h"
#include "site-cache-timer.h"
#include "time-util.h"

struct PendingRequest {
        PendingRequest *next;
        Manager *manager;
        Caller caller;
        InjectRequest req;
        ScopeResolution scope;
        PolicyVerdict verdict;
        PolicyVerdict explicit;         /* a foreign scope: the rule naming it, if any */
        PolkitCheck *check;
        EngineArm *arm;                 /* under way: its tree is being tagged */
        char *polkit_how;               /* ... and how polkit said yes */
        uint64_t duration;
        void *owner;            /* the front end's handle on the requester */
        manager_inject_cb cb;
        void *userdata;
};

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
        /* An arm not finished is undone: nothing of it was reachable. */
        engine_arm_free(p->arm);
        free(p->polkit_how);
        caller_done(&p->caller);
        request_done(&p->req);
        policy_verdict_done(&p->verdict);
        policy_verdict_done(&p->explicit);
        free(p);
}

void pending_request_cancel(PendingRequest *p) {
        if (!p)
                return;
        pending_unlink(p->manager, p);
        pending_free(p);
}

void pending_requests_free(Manager *m) {
        while (m->pending) {
                PendingRequest *p = m->pending;

                m->pending = p->next;
                pending_free(p);
        }
}

/* Answers p with err, after the audit trail says why. */
static void refuse(PendingRequest *p, const char *polkit, const InjectError *err) {
        const InjectRequest *req = p->req.function ? &p->req : NULL;

        audit_log(LOG_NOTICE, &(AuditRecord) {
                        .event = "decision", .caller = &p->caller, .function = req ? req->function : NULL,
                        .value = req ? &req->retval : NULL, .scope = p->scope.desc[0] ? p->scope.desc : NULL,
                        .result = "denied", .rule = p->verdict.rule, .polkit = polkit, .reason = err->name,
                        .cgroup = p->caller.cgroup,
                  }, "Refused injection for uid %u: %s", (unsigned) p->caller.uid, err->message);
        p->cb(p->manager, NULL, err, p->userdata);
}

/* A device as its kernel name from here on, however the caller wrote it:
 * the policy's "devices" match that name. */
static int device_name_settle(PendingRequest *p) {
        char *name;

        if (p->scope.kind != INJECT_SCOPE_DEVICE)
                return 0;
        name = strdup(p->scope.device);
        if (!name)
                return -ENOMEM;
        free(p->req.device);
        p->req.device = name;
        return 0;
}

/* Step 1: the request as the front end passed it, and whether this kernel
 * can fail that function that way at all. */
/* The fd the request names by index key, duplicated into *ret. */
static int take_fd(const int *fds, size_t n_fds, const char *key, int index, int *ret, InjectError *err) {
        if (index < 0)
                return 0;
        if ((size_t) index >= n_fds || fds[index] < 0)
                return inject_error_set(err, -EBADF, INJECT_ERROR_INVALID_ARGUMENT,
                                        "'%s' names file descriptor %d, but the call brought %zu", key, index, n_fds);
        *ret = fcntl(fds[index], F_DUPFD_CLOEXEC, 3);
        return *ret < 0 ? negative_errno() : 0;
}

static int parse(PendingRequest *p, json_object *request, const int *fds, size_t n_fds, InjectError *err) {
        int r;

        r = request_from_json(request, &p->req, err);
        if (r < 0)
                return r;
        r = take_fd(fds, n_fds, "cgroup_fd", p->req.cgroup_fd_index, &p->req.cgroup_fd, err);
        if (r >= 0)
                r = take_fd(fds, n_fds, "pidfd", p->req.pidfd_index, &p->req.pidfd, err);
        if (r >= 0)
                r = take_fd(fds, n_fds, "backing_fd", p->req.backing_fd_index, &p->req.backing_fd, err);
        if (r < 0)
                return r;
        /* Said now rather than found out at the first fault: a unit may
         * give the daemon no /dev/kmsg (PrivateDevices=yes, DeviceAllow=). */
        if (p->req.kernel_log && access("/dev/kmsg", W_OK) < 0)
                return inject_error_set(err, -errno, INJECT_ERROR_UNAVAILABLE,
                                        "Kernel log records need /dev/kmsg, which this daemon cannot write (%m; "
                                        "its unit must allow it: DeviceAllow=/dev/kmsg w)");
        return engine_check(p->manager->engine, &(InjectSpec) { .function = p->req.function,
                                                                .retval = p->req.retval,
                                                                .backend = p->req.backend,
                                                                .arg_filters = p->req.arg_filters }, err);
}

/* Step 5: the engine arms it: begun now; a process scope's tree is then
 * tagged in steps (arm_step()) before arm_finish(). */
static int arm_begin(PendingRequest *p, uint64_t duration, InjectError *err) {
        Manager *m = p->manager;
        int r;

        r = manager_open_events(m);
        if (r < 0)
                log_warning_errno(r, "Cannot read injected-fault events, ignoring: %m");

        r = engine_arm_begin(m->engine, &(InjectSpec) {
                                .function = p->req.function,
                                .backend = p->req.backend,
                                .retval = p->req.retval,
                                .duration_usec = duration,
                                .scope = p->scope.kind,
                                .cgroup_id = p->scope.cgroup_id,
                                .cgroup_level = p->scope.cgroup_level,
                                .pid = p->scope.pid,
                                .diskseq = p->scope.diskseq,
                                .comm = p->req.comm,
                                .callers = (const char *const *) p->req.callers,
                                .n_callers = p->req.n_callers,
                                .after = p->req.after,
                                .every = p->req.every,
                                .times = p->req.times,
                                .probability_ppm = p->req.probability_ppm,
                                .arg_filters = p->req.arg_filters,
                                /* Root, and a holder of inject-global, may fail anyone's
                                 * tasks; everyone else only tasks fully running as them.
                                 * A device's I/O is failed whoever does it (the flusher,
                                 * an interrupt): the device is what the caller owns. */
                                .owner_uid = p->caller.privileged || p->scope.foreign ||
                                                     p->scope.kind == INJECT_SCOPE_DEVICE ? INJECT_UID_ANY
                                                                                          : p->caller.uid,
                        }, &p->arm, err);
        /* It may have re-attached a cached site, or retired one it failed to arm. */
        site_cache_timer_schedule(m);
        if (r < 0 && !err->name)
                inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot arm: %s", strerror(-r));
        return r;
}

static int arm_finish(PendingRequest *p, InjectionInfo *ret, InjectError *err) {
        Manager *m = p->manager;
        int r;

        r = engine_arm_finish(p->arm, ret, err);
        p->arm = engine_arm_free(p->arm);       /* undoes it, had it failed */
        site_cache_timer_schedule(m);
        if (r < 0 && !err->name)
                inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot arm: %s", strerror(-r));
        if (r < 0)
                return r;
        /* The engine reads the process's start time when it arms, after
         * polkit: the process that was checked may have exited meanwhile,
         * and its pid gone to another one. */
        if (p->scope.kind == INJECT_SCOPE_PROCESS && ret->slot.start_ticks != p->scope.start_ticks) {
                (void) engine_disarm(m->engine, ret->id, NULL, NULL);
                return inject_error_set(err, -ESRCH, INJECT_ERROR_BAD_SCOPE,
                                        "Process %d exited before the injection was armed", (int) p->scope.pid);
        }
        return 0;
}

/* Step 6: the table takes it, with its record, its deadline and its
 * requester's lifetime. On failure it is disarmed again. */
static int track(PendingRequest *p, const InjectionInfo *info, uint64_t duration, const char *polkit_how,
                 Injection **ret, InjectError *err) {
        Manager *m = p->manager;
        Injection *inj;
        int r;

        r = injection_add(m, info, &inj);
        if (r < 0) {
                (void) engine_disarm(m->engine, info->id, NULL, NULL);
                return inject_error_set(err, -ENOMEM, INJECT_ERROR_KERNEL_REFUSED, "Out of memory");
        }
        inj->owner_uid = p->caller.uid;
        inj->owner_privileged = p->caller.privileged;
        inj->owner_pid = p->caller.pid;
        inj->owner_start = p->caller.start_ticks;
        inj->transport = p->caller.transport;
        inj->detach = p->req.detach;
        inj->kernel_log = p->req.kernel_log;
        inj->rule = strdup(p->verdict.rule ?: "");
        inj->scope_desc = strdup(p->scope.desc);
        inj->polkit_how = strdup(polkit_how ?: "");
        inj->created_usec = now_usec(CLOCK_REALTIME);
        inj->expires_usec = inj->created_usec + duration;

        r = injection_store_save(inj, &p->caller);
        if (r >= 0)
                r = injection_arm_timer(inj);
        if (r >= 0)
                r = injection_follow_owner(inj, &p->caller, p->owner);
        if (r == -ESRCH) {
                /* Gone while we were deciding. */
                (void) manager_remove(m, inj, REMOVE_OWNER_GONE);
                return inject_error_set(err, r, INJECT_ERROR_INVALID_ARGUMENT, "The requester has gone");
        }
        if (r < 0) {
                (void) manager_remove(m, inj, REMOVE_DAEMON_ERROR);
                return inject_error_set(err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot track the injection: %s",
                                        strerror(-r));
        }
        *ret = inj;
        return 0;
}

static bool requester_left(PendingRequest *p) {
        const OwnerTracker *t = manager_owner_tracker(p->manager, p->caller.transport);

        return !p->req.detach && t && t->gone && t->gone(p->manager, &p->caller, p->owner, t->userdata);
}

/* Step 6 after step 5 is done: p is answered either way, and the caller
 * frees it. */
static void arm_complete(PendingRequest *p) {
        Manager *m = p->manager;
        InjectError err = {};
        InjectionInfo info;
        Injection *inj;
        const char *polkit_how = p->polkit_how;

        if (arm_finish(p, &info, &err) < 0)
                return refuse(p, polkit_how, &err);
        if (track(p, &info, p->duration, polkit_how, &inj, &err) < 0) {
                p->cb(m, NULL, &err, p->userdata);
                return;
        }

        audit_log(LOG_INFO, &(AuditRecord) {
                        .event = "armed", .caller = &p->caller, .id = inj->id, .function = inj->info.function,
                        .value = (const int64_t *) &inj->info.slot.retval, .scope = inj->scope_desc, .result = "allowed",
                        .rule = inj->rule, .polkit = polkit_how,
                  }, "Armed %s: '%s' returns %lld for %s, %s backend, for %llus (uid %u, rule '%s', %s)",
                  inj->id_str, inj->info.function, (long long) inj->info.slot.retval, inj->scope_desc,
                  backend_to_string(inj->info.backend), (unsigned long long) (p->duration / 1000000),
                  (unsigned) p->caller.uid, inj->rule, polkit_how ?: "-");
        manager_publish_added(m, inj);
        p->cb(m, inj, NULL, p->userdata);
}

/* One step of the first arm under way, which then goes to the list's end:
 * the arms take turns. Returns whether any arm is still walking. */
static bool arm_step_next(Manager *m) {
        PendingRequest *p = NULL, **pp;
        InjectError err = {};
        int r;

        for (pp = &m->pending; *pp; pp = &(*pp)->next)
                if ((*pp)->arm) {
                        p = *pp;
                        break;
                }
        if (!p)
                return false;
        r = engine_arm_step(p->arm, MANAGER_ARM_STEP_PROCESSES, &err);
        if (r > 0) {
                /* Its next step after the others' (the list's end). */
                *pp = p->next;
                p->next = NULL;
                while (*pp)
                        pp = &(*pp)->next;
                *pp = p;
        } else {
                pending_unlink(m, p);
                if (r < 0) {
                        if (!err.name)
                                inject_error_set(&err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot arm: %s",
                                                 strerror(-r));
                        p->arm = engine_arm_free(p->arm);
                        site_cache_timer_schedule(m);
                        refuse(p, p->polkit_how, &err);
                } else
                        arm_complete(p);
                pending_free(p);
        }
        for (p = m->pending; p; p = p->next)
                if (p->arm)
                        return true;
        return false;
}

/* The walks go a step per turn of the loop from two sources. The stepper
 * has idle priority: whatever else is ready (a request, a reply from
 * polkit, a fault event) goes first, so a walk of any size delays another
 * request by one step at most. But a daemon that always has something
 * ready never reaches idle (vm-daemon-crash's 20 clients kept every arm
 * walking, unanswered): the nudge, of the requests' priority, steps every
 * MANAGER_ARM_NUDGE_USEC whatever else waits, one source among the others. */
static int on_arm_step(sd_event_source *s, void *userdata) {
        return arm_step_next(userdata) ? sd_event_source_set_enabled(s, SD_EVENT_ONESHOT) : 0;
}

static int on_arm_nudge(sd_event_source *s, uint64_t usec, void *userdata) {
        int r;

        if (!arm_step_next(userdata))
                return 0;
        r = sd_event_source_set_time_relative(s, MANAGER_ARM_NUDGE_USEC);
        return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int arm_stepper_start(Manager *m) {
        int r;

        if (!m->arm_stepper) {
                r = sd_event_add_defer(m->event, &m->arm_stepper, on_arm_step, m);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(m->arm_stepper, "arm-stepper");
                r = sd_event_source_set_priority(m->arm_stepper, SD_EVENT_PRIORITY_IDLE);
                if (r < 0)
                        return r;
        }
        if (!m->arm_nudge) {
                r = sd_event_add_time_relative(m->event, &m->arm_nudge, CLOCK_MONOTONIC, MANAGER_ARM_NUDGE_USEC,
                                               1, on_arm_nudge, m);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(m->arm_nudge, "arm-nudge");
        } else {
                r = sd_event_source_set_time_relative(m->arm_nudge, MANAGER_ARM_NUDGE_USEC);
                if (r < 0)
                        return r;
        }
        r = sd_event_source_set_enabled(m->arm_nudge, SD_EVENT_ONESHOT);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(m->arm_stepper, SD_EVENT_ONESHOT);
}

/* Steps 5 and 6, once polkit said yes. Returns true when p waits on, in
 * m->pending, for its walk: then the stepper answers and frees it. */
static bool arm_and_track(PendingRequest *p, const char *polkit_how) {
        Manager *m = p->manager;
        InjectError err = {};
        int r;

        p->duration = p->req.duration_usec ?: p->verdict.max_duration_usec;

        /* A requester that left while polkit decided gets nothing armed. */
        if (requester_left(p)) {
                inject_error_set(&err, -ECONNRESET, INJECT_ERROR_INVALID_ARGUMENT,
                                 "The requester disconnected before the answer");
                refuse(p, polkit_how, &err);
                return false;
        }
        if (polkit_how) {
                p->polkit_how = strdup(polkit_how);
                if (!p->polkit_how) {
                        inject_error_set(&err, -ENOMEM, INJECT_ERROR_KERNEL_REFUSED, "Out of memory");
                        refuse(p, polkit_how, &err);
                        return false;
                }
        }
        if (arm_begin(p, p->duration, &err) < 0) {
                refuse(p, polkit_how, &err);
                return false;
        }
        if (engine_arm_walking(p->arm)) {
                /* Its tree is tagged from the loop; the requester leaving,
                 * or the daemon stopping, meanwhile ends it (pending_free()
                 * undoes the arm). */
                r = arm_stepper_start(m);
                if (r >= 0) {
                        log_debug("Arming for uid %u: tagging the tree of process %d, %d processes a step",
                                  (unsigned) p->caller.uid, (int) p->scope.pid, MANAGER_ARM_STEP_PROCESSES);
                        p->next = m->pending;
                        m->pending = p;
                        return true;
                }
                p->arm = engine_arm_free(p->arm);
                inject_error_set(&err, r, INJECT_ERROR_KERNEL_REFUSED, "Cannot arm: %s", strerror(-r));
                refuse(p, polkit_how, &err);
                return false;
        }
        arm_complete(p);
        return false;
}

static void on_polkit_result(const PolkitResult *res, void *userdata) {
        PendingRequest *p = userdata;
        InjectError err = {};

        pending_unlink(p->manager, p);
        if (res->allowed && p->scope.foreign && !authorize_polkit_vouches(&p->caller, res)) {
                /* No polkit yes of its own: a fallback, or polkit's blanket yes
                 * for uid 0. A target not the caller's then needs a rule that
                 * names it, and that rule's limits apply. */
                if (!p->explicit.rule) {
                        inject_error_set(&err, -EACCES, INJECT_ERROR_NOT_AUTHORIZED,
                                         "%s is not yours%s%s: it needs %s from polkit (%s did not count), or a "
                                         "policy rule naming scope \"%s\"", p->scope.desc,
                                         p->scope.why[0] ? " because " : "", p->scope.why,
                                         POLKIT_ACTION_INJECT_GLOBAL, res->how,
                                         p->scope.kind == INJECT_SCOPE_GLOBAL ? "global" :
                                         p->scope.kind == INJECT_SCOPE_PROCESS ? "foreign-process" :
                                         p->scope.kind == INJECT_SCOPE_DEVICE ? "foreign-device" : "foreign-cgroup");
                        refuse(p, res->how, &err);
                        pending_free(p);
                        return;
                }
                policy_verdict_done(&p->verdict);
                p->verdict = p->explicit;
                p->explicit = (PolicyVerdict) {};
        }
        if (res->allowed) {
                /* Its answer is in: the check goes now, whatever follows. */
                polkit_check_free(p->check);
                p->check = NULL;
                if (arm_and_track(p, res->how))
                        return;
        } else {
                if (res->error < 0)
                        inject_error_set(&err, res->error, INJECT_ERROR_AUTH_UNAVAILABLE,
                                         "polkit could not be asked, and --polkit=required: %s",
                                         res->error_message ?: strerror(-res->error));
                else
                        inject_error_set(&err, -EACCES, INJECT_ERROR_NOT_AUTHORIZED,
                                         "polkit did not authorize %s%s%s%s%s%s", authorize_polkit_action(&p->scope),
                                         p->scope.why[0] ? ", which " : "", p->scope.why[0] ? p->scope.desc : "",
                                         p->scope.why[0] ? " needs because " : "", p->scope.why,
                                         res->challenge ? " (interactive authentication could; ask with "
                                         "interactive authorization allowed)" : "");
                refuse(p, res->how, &err);
        }
        pending_free(p);
}

/* Step 4: polkit, asynchronously; the request waits in m->pending. */
static int ask_polkit(PendingRequest *p, InjectError *err) {
        Manager *m = p->manager;
        PolkitSubject subject = authorize_polkit_subject(&p->caller);
        int r;

        p->next = m->pending;
        m->pending = p;
        r = polkit_check_async(m->polkit, &subject, authorize_polkit_action(&p->scope), NULL, p->req.interactive,
                               on_polkit_result, p, &p->check);
        if (r < 0) {
                pending_unlink(m, p);
                return inject_error_set(err, r, INJECT_ERROR_AUTH_UNAVAILABLE, "Cannot ask polkit: %s",
                                        strerror(-r));
        }
        return 0;
}

int manager_inject(Manager *m, const Caller *c, json_object *request, const int *fds, size_t n_fds, void *owner,
                   manager_inject_cb cb, void *userdata, PendingRequest **ret) {
        PendingRequest *p;
        InjectError err = {};
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        *p = (PendingRequest) { .manager = m, .cb = cb, .userdata = userdata, .owner = owner,
                                .req = INJECT_REQUEST_NULL };
        r = caller_copy(c, &p->caller);
        if (r < 0) {
                free(p);
                return r;
        }

        audit_log(LOG_INFO, &(AuditRecord) { .event = "request", .caller = c },
                  "Injection requested by uid %u (pid %d, %s): %s", (unsigned) c->uid, (int) c->pid,
                  transport_to_string(c->transport),
                  request ? json_object_to_json_string_ext(request, JSON_C_TO_STRING_PLAIN) : "(none)");

        /* The rate first: a malformed request costs the daemon its parsing
         * and the engine's check, so it counts like any other. */
        r = authorize_rate(m, c, &err);
        if (r >= 0)
                r = parse(p, request, fds, n_fds, &err);
        if (r >= 0)
                r = resolve_scope(m->engine, c, &p->req, &p->scope, &err);
        if (r >= 0)
                r = device_name_settle(p);
        if (r >= 0)
                r = authorize_request(m, c, &p->req, &p->scope, &p->verdict, &p->explicit, &err);
        if (r < 0) {
                if (!err.name)
                        inject_error_set(&err, r, INJECT_ERROR_INVALID_ARGUMENT, "%s", strerror(-r));
                refuse(p, NULL, &err);
                pending_free(p);
                if (ret)
                        *ret = NULL;
                return 0;
        }

        audit_log(LOG_INFO, &(AuditRecord) {
                        .event = "decision", .caller = c, .function = p->req.function, .value = &p->req.retval,
                        .scope = p->scope.desc, .result = "policy-allowed", .rule = p->verdict.rule,
                        .cgroup = c->cgroup,
                  }, "Policy allows uid %u%s%s%s to fail '%s' with %lld for %s (rule '%s'); asking polkit for %s",
                  (unsigned) c->uid, p->verdict.by_cgroup ? " from cgroup '" : "",
                  p->verdict.by_cgroup ? c->cgroup : "", p->verdict.by_cgroup ? "'" : "",
                  p->req.function, (long long) p->req.retval, p->scope.desc, p->verdict.rule,
                  authorize_polkit_action(&p->scope));

        if (ret)
                *ret = p;
        r = ask_polkit(p, &err);
        if (r < 0) {
                if (ret)
                        *ret = NULL;
                refuse(p, NULL, &err);
                pending_free(p);
        }
        return 0;
}

void manager_requests_abort(Manager *m) {
        manage_checks_abort(m);
        /* Answered while the front ends still stand, so that each request
         * lets go of what its front end holds for it (a bus message, a
         * connection) and its caller hears why. */
        while (m->pending) {
                PendingRequest *p = m->pending;
                InjectError err = {};

                inject_error_set(&err, -ESHUTDOWN, INJECT_ERROR_UNAVAILABLE,
                                 "injectd is stopping; nothing was armed, ask again once it is back");
                pending_unlink(m, p);
                if (p->arm)
                        refuse(p, p->polkit_how, &err);
                else
                        p->cb(m, NULL, &err, p->userdata);
                pending_free(p);
        }
}

void manager_requester_gone(Manager *m, void *owner) {
        if (!owner)
                return;
        manage_checks_requester_gone(m, owner);
        /* A request still waiting for polkit ends with its requester,
         * unless it asked to detach: it is answered (the answer goes
         * nowhere) so the front end lets go of the connection. */
        for (PendingRequest *p = m->pending, *next; p; p = next) {
                next = p->next;
                if (p->owner != owner)
                        continue;
                p->owner = NULL;
                if (!p->req.detach) {
                        InjectError err = {};

                        inject_error_set(&err, -ECONNRESET, INJECT_ERROR_INVALID_ARGUMENT,
                                         "The requester disconnected before the answer");
                        pending_unlink(m, p);
                        if (p->arm)
                                /* Mid-walk: a decision taken back, said as one;
                                 * pending_free() undoes the arm. */
                                refuse(p, p->polkit_how, &err);
                        else
                                p->cb(m, NULL, &err, p->userdata);
                        pending_free(p);
                }
        }
}
