/* SPDX-License-Identifier: MIT */
#pragma once

/* What every file of the D-Bus front end uses (bus-util.c). */

#include <stdarg.h>
#include <stdbool.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "bus-api.h"
#include "inject-error.h"
#include "request.h"

int bus_reply_inject_error(sd_bus_message *m, const InjectError *err);
int bus_set_inject_error(sd_bus_error *error, const InjectError *err);

/* A manager_done_cb whose userdata is the method call (a reference): replies
 * empty or with the error, then drops the reference. */
void bus_reply_done(Manager *mgr, const InjectError *err, void *userdata);

/* Reads a request's a{sv} (bus-spec.c) as the JSON object Varlink gets;
 * the fds stay m's. Sets error for what is malformed. */
int bus_read_request(sd_bus_message *m, json_object **ret, int fds[static REQUEST_FDS_MAX], size_t *ret_n_fds,
                     sd_bus_error *error);

/* Following a unique name: a match on its NameOwnerChanged, in *slot
 * (replacing what it held), that calls cb. -ESRCH if the name had gone
 * before the match was in place. */
int bus_watch_name(sd_bus *bus, const char *name, sd_bus_slot **slot, sd_bus_message_handler_t cb,
                   void *userdata);
/* A NameOwnerChanged that says the name has no owner any more. */
bool bus_name_vanished(sd_bus_message *msg);

/* The caller of the message being dispatched (kept for the rest of its
 * dispatch), NULL if it cannot be identified. */
const Caller *bus_current_caller(BusApi *b, sd_bus *bus);
/* Drops the caller kept for the message being dispatched. */
void bus_forget_caller(BusApi *b);

/* Sends the signal member of iface at path, with types and the arguments
 * in ap, to destination only. */
int bus_emit_signal(sd_bus *bus, const char *destination, const char *path, const char *iface, const char *member,
                    const char *types, va_list ap);
