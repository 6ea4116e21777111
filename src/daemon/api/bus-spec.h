/* SPDX-License-Identifier: MIT */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-bus.h>

/* Reads Inject's a{sv} argument from m into a new JSON object: strings,
 * booleans, integers (y n q i u x t), doubles and string arrays (as) become
 * the JSON values request_from_json() takes; a cgroup fd ("cgroup_fd": h) is
 * duplicated into *cgroup_fd (which must be -1 on entry) instead. Refuses
 * other types, a key given twice and more than 64 keys, with an
 * InvalidArgument D-Bus error in *error. Returns 0, or a negative errno
 * (*error set or not); on failure *cgroup_fd may hold an fd to close. */
int bus_read_inject_spec(sd_bus_message *m, json_object **ret, int *cgroup_fd, sd_bus_error *error);
