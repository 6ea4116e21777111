/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "request.h"

/* Reads Inject's a{sv} argument from m into a new JSON object: strings,
 * booleans, integers (y n q i u x t), doubles and string arrays (as) become
 * the JSON values request_from_json() takes. The file descriptors
 * ("cgroup_fd" and "pidfd", type h, and no other key) go into
 * fds[0..*ret_n_fds), borrowed from m, and the JSON names them by index
 * there, as a Varlink call names the fds it brought. Refuses other types,
 * an fd key of another type, a key given twice and more than 64 keys,
 * with an InvalidArgument D-Bus error in *error. Returns 0, or a negative
 * errno (*error set or not). */
int bus_read_inject_spec(sd_bus_message *m, json_object **ret, int fds[static REQUEST_FDS_MAX], size_t *ret_n_fds,
                         sd_bus_error *error);
