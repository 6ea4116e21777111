/* SPDX-License-Identifier: MIT */
/* Inject's a{sv} as the JSON object the Varlink front end receives, so that
 * request_from_json() is the one validator for both APIs. Apart from the
 * manager so that tests/fuzz can drive it on its own. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bus-api.h"
#include "bus-spec.h"
#include "cleanup.h"
#include "json-build.h"
#include "json-util.h"

/* The keys whose value is a file descriptor, and only those. */
static bool key_is_fd(const char *key) {
        return strcmp(key, "cgroup_fd") == 0 || strcmp(key, "pidfd") == 0 || strcmp(key, "backing_fd") == 0;
}

/* One a{sv} entry's value as JSON; an fd is put in fds[*n_fds] and
 * becomes its index. */
static int variant_to_json(sd_bus_message *m, const char *key, json_object **ret, int *fds, size_t *n_fds,
                           sd_bus_error *error) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (key_is_fd(key) != (strcmp(contents, "h") == 0))
                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_INVALID_ARGUMENT,
                                         key_is_fd(key) ? "'%.64s' must be a file descriptor (type 'h')" :
                                                          "'%.64s' cannot be a file descriptor", key);
        r = sd_bus_message_enter_container(m, 'v', contents);
        if (r < 0)
                return r;

        if (strcmp(contents, "s") == 0) {
                const char *s;

                r = sd_bus_message_read_basic(m, 's', &s);
                if (r >= 0) {
                        *ret = json_object_new_string(s);
                        if (!*ret)
                                r = -ENOMEM;
                }
        } else if (strcmp(contents, "b") == 0) {
                int b;

                r = sd_bus_message_read_basic(m, 'b', &b);
                if (r >= 0) {
                        *ret = json_object_new_boolean(b);
                        if (!*ret)
                                r = -ENOMEM;
                }
        } else if (strchr("ynqiux", contents[0]) && !contents[1]) {
                union {
                        uint8_t y;
                        int16_t n;
                        uint16_t q;
                        int32_t i;
                        uint32_t u;
                        int64_t x;
                } v = {};

                r = sd_bus_message_read_basic(m, contents[0], &v);
                if (r >= 0) {
                        *ret = json_object_new_int64(contents[0] == 'y' ? v.y : contents[0] == 'n' ? v.n :
                                                     contents[0] == 'q' ? v.q : contents[0] == 'i' ? v.i :
                                                     contents[0] == 'u' ? (int64_t) v.u : v.x);
                        if (!*ret)
                                r = -ENOMEM;
                }
        } else if (strcmp(contents, "t") == 0) {
                uint64_t t;

                r = sd_bus_message_read_basic(m, 't', &t);
                if (r >= 0) {
                        *ret = json_object_new_uint64(t);
                        if (!*ret)
                                r = -ENOMEM;
                }
        } else if (strcmp(contents, "d") == 0) {
                double d;

                r = sd_bus_message_read_basic(m, 'd', &d);
                if (r >= 0) {
                        *ret = json_object_new_double(d);
                        if (!*ret)
                                r = -ENOMEM;
                }
        } else if (strcmp(contents, "as") == 0) {
                char **strv = NULL;

                r = sd_bus_message_read_strv(m, &strv);
                if (r >= 0) {
                        *ret = json_new_strv((const char *const *) strv, strv ? SIZE_MAX : 0);
                        if (!*ret)
                                r = -ENOMEM;
                }
                for (char **s = strv; s && *s; s++)
                        free(*s);
                free(strv);
        } else if (strcmp(contents, "h") == 0) {
                int fd;

                /* Two fd keys at most, each once (the caller checks
                 * duplicates): fds has room. */
                r = sd_bus_message_read_basic(m, 'h', &fd);
                if (r >= 0 && *n_fds >= REQUEST_FDS_MAX)
                        r = -E2BIG;
                if (r >= 0) {
                        *ret = json_object_new_int64((int64_t) *n_fds);
                        if (!*ret)
                                r = -ENOMEM;
                        else
                                fds[(*n_fds)++] = fd;
                }
        } else
                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_INVALID_ARGUMENT,
                                         "'%.64s' has a value of type '%.16s' this API does not take", key, contents);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

int bus_read_inject_spec(sd_bus_message *m, json_object **ret, int fds[static REQUEST_FDS_MAX], size_t *ret_n_fds,
                         sd_bus_error *error) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        size_t n_fds = 0;
        unsigned n = 0;
        int r;

        if (!o)
                return -ENOMEM;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                json_object *v = NULL;
                const char *key;

                r = sd_bus_message_read_basic(m, 's', &key);
                if (r < 0)
                        return r;
                if (++n > 64)
                        return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_INVALID_ARGUMENT,
                                                 "Too many keys");
                if (json_object_object_get_ex(o, key, NULL))
                        return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_INVALID_ARGUMENT,
                                                 "'%.64s' given twice", key);
                r = variant_to_json(m, key, &v, fds, &n_fds, error);
                if (r < 0)
                        return r;
                if (v) {
                        if (json_object_object_get_ex(o, key, NULL)) {
                                json_object_put(v);
                                return sd_bus_error_setf(error, BUS_ERROR_PREFIX INJECT_ERROR_INVALID_ARGUMENT,
                                                         "'%.64s' given twice", key);
                        }
                        r = json_add(o, key, v);
                        if (r < 0)
                                return r;
                }
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        *ret_n_fds = n_fds;
        return 0;
}
