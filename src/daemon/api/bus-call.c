/* SPDX-License-Identifier: MIT */
/* A method call the core answers later (Inject, Cancel, ReloadPolicy):
 * the message to answer and its requester's record, and Cancel and
 * ReloadPolicy, which the manager object and the injection objects both
 * serve. */

#include <errno.h>
#include <stdlib.h>

#include "bus-call.h"
#include "bus-requester.h"
#include "bus-util.h"
#include "log.h"
#include "manager.h"

BusCall *bus_call_free(BusCall *call) {
        if (!call)
                return NULL;
        sd_bus_message_unref(call->message);
        bus_requester_unref(call->requester);
        free(call);
        return NULL;
}

/* The requester's record, or NULL when it cannot be followed (the bus
 * refused another match): the request then goes on, and only
 * OwnerTracker.gone, after polkit, notices a requester that left. */
static BusRequester *call_requester(BusApi *b, sd_bus_message *m) {
        const char *sender = sd_bus_message_get_sender(m);
        BusRequester *rq = NULL;
        int r;

        if (!sender)
                return NULL;
        r = bus_requester_get(b, sender, &rq);
        if (r < 0) {
                log_debug_errno(r, "Cannot follow requester '%s' while polkit decides, ignoring: %m", sender);
                return NULL;
        }
        return rq;
}

int bus_call_new(BusApi *b, sd_bus_message *m, BusCall **ret) {
        BusCall *call;

        call = calloc(1, sizeof(*call));
        if (!call)
                return -ENOMEM;
        *call = (BusCall) { .message = sd_bus_message_ref(m), .requester = b ? call_requester(b, m) : NULL };
        *ret = call;
        return 0;
}

static void on_manage_done(Manager *mgr, const InjectError *err, void *userdata) {
        BusCall *call = userdata;

        bus_reply_done(mgr, err, sd_bus_message_ref(call->message));
        bus_call_free(call);
}

int bus_call_manage(BusApi *b, sd_bus_message *m, Manager *mgr, const char *id, sd_bus_error *error) {
        _cleanup_(bus_requester_unrefp) BusRequester *rq = NULL;
        bool interactive = sd_bus_message_get_allow_interactive_authorization(m) > 0;
        BusCall *call;
        Caller c;
        int r;

        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        /* As Inject's: a call waiting for polkit ends with its requester. */
        r = bus_call_new(b, m, &call);
        if (r < 0) {
                caller_done(&c);
                return r;
        }
        rq = bus_requester_ref(call->requester);
        if (id)
                r = manager_cancel(mgr, &c, id, interactive, rq, on_manage_done, call);
        else
                r = manager_reload_policy_as(mgr, &c, interactive, rq, on_manage_done, call);
        caller_done(&c);
        if (r < 0) {
                bus_call_free(call);
                return r;
        }
        bus_requester_check_gone(rq);
        return 1;
}
