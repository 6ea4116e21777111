/* SPDX-License-Identifier: MIT */
/* Cancel and ReloadPolicy: what an injection's owner and root may do
 * directly, and anyone else only with org.injectd.manage, which polkit
 * must grant itself (the fallbacks of --polkit=auto never do). */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "authorize.h"
#include "injection-json.h"
#include "injection.h"
#include "log.h"
#include "manage.h"
#include "parse-util.h"
#include "policy-check.h"
#include "site-cache-timer.h"

/* A Cancel or ReloadPolicy waiting for polkit. It is the manager's (in
 * m->manage_checks) until answered, so that it ends with its requester:
 * a caller that left gets no check sent on its behalf and holds no place
 * in polkit's queue (the same rule as Inject's, request-pipeline.c). */
struct ManageCheck {
        Manager *manager;
        Caller caller;
        uint64_t id;            /* 0: reload */
        PolkitCheck *check;
        void *owner;            /* the front end's handle on the requester */
        manager_done_cb cb;
        void *userdata;
        ManageCheck *next;
};

static void manage_check_unlink(ManageCheck *mc) {
        for (ManageCheck **pp = &mc->manager->manage_checks; *pp; pp = &(*pp)->next)
                if (*pp == mc) {
                        *pp = mc->next;
                        break;
                }
}

static void manage_check_free(ManageCheck *mc) {
        /* Before its callback, this cancels the check in polkit too. */
        polkit_check_free(mc->check);
        caller_done(&mc->caller);
        free(mc);
}

/* Answers mc with an error and frees it (it is unlinked already). */
static void manage_check_fail(ManageCheck *mc, int error, const char *name, const char *message) {
        InjectError err = {};

        inject_error_set(&err, error, name, "%s", message);
        mc->cb(mc->manager, &err, mc->userdata);
        manage_check_free(mc);
}

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

        manage_check_unlink(mc);

        if (authorize_polkit_vouches(&mc->caller, res))
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
        manage_check_free(mc);
}

static int manage(Manager *m, const Caller *c, uint64_t id, bool interactive, void *owner, manager_done_cb cb,
                  void *userdata) {
        PolkitSubject subject = authorize_polkit_subject(c);
        ManageCheck *mc;
        Injection *inj;
        int r;

        mc = calloc(1, sizeof(*mc));
        if (!mc)
                return -ENOMEM;
        *mc = (ManageCheck) { .manager = m, .id = id, .owner = owner, .cb = cb, .userdata = userdata };
        r = caller_copy(c, &mc->caller);
        if (r < 0) {
                free(mc);
                return r;
        }
        inj = id ? manager_find(m, id) : NULL;
        if (c->privileged || (inj && injection_owned_by(inj, c))) {
                do_manage(mc);
                caller_done(&mc->caller);
                free(mc);
                return 0;
        }
        r = polkit_check_async(m->polkit, &subject, POLKIT_ACTION_MANAGE, NULL, interactive, on_manage_result, mc,
                               &mc->check);
        if (r < 0) {
                caller_done(&mc->caller);
                free(mc);
                return r;
        }
        mc->next = m->manage_checks;
        m->manage_checks = mc;
        return 0;
}

void manage_checks_requester_gone(Manager *m, void *owner) {
        for (ManageCheck *mc = m->manage_checks, *next; mc; mc = next) {
                next = mc->next;
                if (mc->owner != owner)
                        continue;
                log_debug("Dropping the %s of uid %u waiting for polkit: its requester left.",
                          mc->id ? "Cancel" : "ReloadPolicy", (unsigned) mc->caller.uid);
                manage_check_unlink(mc);
                /* The answer goes nowhere; the front end lets go of the call. */
                manage_check_fail(mc, -ECONNRESET, INJECT_ERROR_INVALID_ARGUMENT,
                                  "The requester disconnected before the answer");
        }
}

void manage_checks_abort(Manager *m) {
        while (m->manage_checks) {
                ManageCheck *mc = m->manage_checks;

                m->manage_checks = mc->next;
                manage_check_fail(mc, -ESHUTDOWN, INJECT_ERROR_UNAVAILABLE,
                                  "injectd is stopping; nothing was done, ask again once it is back");
        }
}

void manage_checks_free(Manager *m) {
        while (m->manage_checks) {
                ManageCheck *mc = m->manage_checks;

                m->manage_checks = mc->next;
                manage_check_free(mc);
        }
}
int manager_cancel(Manager *m, const Caller *c, const char *id_str, bool interactive, void *owner, manager_done_cb cb,
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
        return manage(m, c, id, interactive, owner, cb, userdata);
}

int manager_reload_policy_as(Manager *m, const Caller *c, bool interactive, void *owner, manager_done_cb cb,
                             void *userdata) {
        return manage(m, c, 0, interactive, owner, cb, userdata);
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
        site_cache_timer_schedule(m);
        log_info("Policy loaded.");
        return 0;
}

