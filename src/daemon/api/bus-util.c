/* SPDX-License-Identifier: MIT */
/* What every file of the D-Bus front end uses: errors and answers in
 * D-Bus terms, reading a request, following a unique name, the caller of
 * the message being dispatched, and sending a signal to one peer. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-spec.h"
#include "bus-util.h"

int bus_reply_inject_error(sd_bus_message *m, const InjectError *err) {
        char name[128];

        snprintf(name, sizeof(name), BUS_ERROR_PREFIX "%s", err->name ?: INJECT_ERROR_INVALID_ARGUMENT);
        return sd_bus_reply_method_errorf(m, name, "%s", err->message);
}

int bus_set_inject_error(sd_bus_error *error, const InjectError *err) {
        char name[128];

        snprintf(name, sizeof(name), BUS_ERROR_PREFIX "%s", err->name ?: INJECT_ERROR_INVALID_ARGUMENT);
        return sd_bus_error_setf(error, name, "%s", err->message);
}

void bus_reply_done(Manager *mgr, const InjectError *err, void *userdata) {
        sd_bus_message *m = userdata;

        if (err)
                (void) bus_reply_inject_error(m, err);
        else
                (void) sd_bus_reply_method_return(m, NULL);
        sd_bus_message_unref(m);
}

int bus_read_request(sd_bus_message *m, json_object **ret, int fds[static REQUEST_FDS_MAX], size_t *ret_n_fds,
                     sd_bus_error *error) {
        int r = bus_read_inject_spec(m, ret, fds, ret_n_fds, error);

        if (r < 0 && !sd_bus_error_is_set(error))
                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_INVALID_ARGUMENT,
                                         "Malformed request: %s", strerror(-r));
        return r;
}

int bus_watch_name(sd_bus *bus, const char *name, sd_bus_slot **slot, sd_bus_message_handler_t cb,
                   void *userdata) {
        char match[256];
        int r;

        snprintf(match, sizeof(match),
                 "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                 "member='NameOwnerChanged',arg0='%s'", name);
        *slot = sd_bus_slot_unref(*slot);
        r = sd_bus_add_match(bus, slot, match, cb, userdata);
        if (r < 0)
                return r;
        /* It may have gone before the match was in place. */
        r = sd_bus_get_name_creds(bus, name, 0, NULL);
        if (r == -ENXIO || r == -ESRCH)
                return -ESRCH;
        return 0;
}

bool bus_name_vanished(sd_bus_message *msg) {
        const char *name, *old, *new;

        return sd_bus_message_read(msg, "sss", &name, &old, &new) >= 0 && !*new;
}

const Caller *bus_current_caller(BusApi *b, sd_bus *bus) {
        sd_bus_message *m = sd_bus_get_current_message(bus);
        const char *sender = m ? sd_bus_message_get_sender(m) : NULL;
        uint64_t cookie;

        if (!sender || sd_bus_message_get_cookie(m, &cookie) < 0)
                return NULL;
        /* Unique names are never reused on a bus, and a sender's cookies
         * only grow: (sender, cookie) names this one message. */
        if (!b->seen_sender || cookie != b->seen_cookie || strcmp(sender, b->seen_sender) != 0) {
                Caller c;

                bus_forget_caller(b);
                if (caller_from_bus(m, &c) < 0)
                        return NULL;
                b->seen_sender = strdup(sender);
                if (!b->seen_sender) {
                        caller_done(&c);
                        return NULL;
                }
                b->seen_cookie = cookie;
                b->seen_caller = c;
        }
        return &b->seen_caller;
}

void bus_forget_caller(BusApi *b) {
        free(b->seen_sender);
        b->seen_sender = NULL;
        caller_done(&b->seen_caller);
}

int bus_emit_signal(sd_bus *bus, const char *destination, const char *path, const char *iface, const char *member,
                    const char *types, va_list ap) {
        sd_bus_message *msg = NULL;
        va_list aq;
        int r;

        r = sd_bus_message_new_signal(bus, &msg, path, iface, member);
        if (r >= 0)
                r = sd_bus_message_set_destination(msg, destination);
        if (r >= 0) {
                va_copy(aq, ap);
                r = sd_bus_message_appendv(msg, types, aq);
                va_end(aq);
        }
        if (r >= 0)
                r = sd_bus_send(bus, msg, NULL);
        sd_bus_message_unref(msg);
        return r;
}
