/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <inttypes.h>

#include "io-util.h"
#include "json-build.h"
#include "json-util.h"
#include "pidfd-util.h"
#include "string-util.h"
#include "transport.h"

#define DBUS_ERROR_PREFIX "org.injectd.Injector1.Error."
#define VARLINK_ERROR_PREFIX "org.injectd.Injector."

Transport *transport_free(Transport *t) {
        if (!t)
                return NULL;
        if (t->ops && t->ops->done)
                t->ops->done(t);
        free(t->error_name);
        free(t->error_message);
        free(t);
        return NULL;
}

int transport_new(const TransportOps *ops, void *data, bool interactive, Transport **ret) {
        Transport *t;

        t = calloc(1, sizeof(*t));
        if (!t) {
                Transport tmp = { .ops = ops, .data = data };

                ops->done(&tmp);
                return -ENOMEM;
        }
        *t = (Transport) { .ops = ops, .data = data, .interactive = interactive };
        *ret = t;
        return 0;
}

static void transport_clear_error(Transport *t) {
        free(t->error_name);
        free(t->error_message);
        t->error_name = t->error_message = NULL;
}

int transport_set_error(Transport *t, const char *name, const char *message) {
        const char *shortname = name ?: "UnknownError";

        transport_clear_error(t);
        if (strncmp(shortname, DBUS_ERROR_PREFIX, strlen(DBUS_ERROR_PREFIX)) == 0)
                shortname += strlen(DBUS_ERROR_PREFIX);
        else if (strncmp(shortname, VARLINK_ERROR_PREFIX, strlen(VARLINK_ERROR_PREFIX)) == 0)
                shortname += strlen(VARLINK_ERROR_PREFIX);
        t->error_name = strdup(shortname);
        t->error_message = strdup(message && *message ? message : "(no message)");
        if (!t->error_name || !t->error_message)
                return -ENOMEM;
        return -EREMOTEIO;
}

int transport_set_unreachable(Transport *t, const char *fmt, ...) {
        va_list ap;
        int r;

        transport_clear_error(t);
        va_start(ap, fmt);
        r = vstrprintf(&t->error_message, fmt, ap);
        va_end(ap);
        return r < 0 ? r : -EHOSTDOWN;
}

const char *transport_error_name(Transport *t) {
        return t->error_name;
}

const char *transport_error_message(Transport *t) {
        return t->error_message;
}

int transport_get_capabilities(Transport *t, json_object **ret) {
        transport_clear_error(t);
        return t->ops->get_capabilities(t, ret);
}

int transport_list_functions(Transport *t, const char *pattern, json_object **ret) {
        transport_clear_error(t);
        return t->ops->list_functions(t, pattern ?: "", ret);
}

int transport_inject(Transport *t, json_object *request, char **ret_id, uint64_t *ret_expires_usec,
                     json_object **ret_injection) {
        transport_clear_error(t);
        return t->ops->inject(t, request, ret_id, ret_expires_usec, ret_injection);
}

int transport_list_injections(Transport *t, bool all, json_object **ret) {
        transport_clear_error(t);
        return t->ops->list_injections(t, all, ret);
}

int transport_cancel(Transport *t, const char *id) {
        transport_clear_error(t);
        return t->ops->cancel(t, id);
}

int transport_watch(Transport *t, char *const *ids, TransportEventFn callback, void *userdata) {
        transport_clear_error(t);
        return t->ops->watch(t, ids, callback, userdata);
}

int transport_observe(Transport *t, json_object *request, TransportObservingFn on_observing, void *userdata,
                      json_object **ret_result) {
        transport_clear_error(t);
        return t->ops->observe(t, request, on_observing, userdata, ret_result);
}

int transport_reload_policy(Transport *t) {
        transport_clear_error(t);
        return t->ops->reload_policy(t);
}

/* The backing file of the loop device that a "device" names, opened here,
 * where the path the kernel gives means the file the caller attached (in
 * the daemon's mount namespace it may name nothing, or another file), and
 * opened read-write: the daemon takes an fd as proof that the device is
 * the caller's only when it could change the device's data already.
 * Read-only only for a read-only disk (sysfs' ro), for which a read-only
 * fd is proof enough. -1 when there is none to open (not a loop device, a
 * name the daemon refuses, nothing attached, a file gone or not ours to
 * write): the daemon then says the device is not the caller's, and why. */
static int open_backing_file(const char *device) {
        char dir[128], path[256], file[4096], ro[8];

        if (strncmp(device, "/dev/", 5) == 0)
                device += 5;
        if (!*device || strlen(device) > 64 || strchr(device, '/') || strcmp(device, ".") == 0 ||
            strcmp(device, "..") == 0)
                return -1;
        /* MAJ:MIN by its link in /sys/dev/block, a name in /sys/block. */
        snprintf(dir, sizeof(dir), strchr(device, ':') ? "/sys/dev/block/%s" : "/sys/block/%s", device);
        snprintf(path, sizeof(path), "%s/loop/backing_file", dir);
        if (read_first_line(path, file, sizeof(file)) < 0 || !file[0])
                return -1;
        snprintf(path, sizeof(path), "%s/ro", dir);
        if (read_small_file(path, ro, sizeof(ro)) >= 0 && ro[0] == '1')
                return open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        return open(file, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/* Opens what key names: a pidfd for "pid", the directory for "cgroup",
 * the backing file for "device". 0 and fd -1 to send the key as it is;
 * else *ret_fd_key is the key that names the fd. */
static int open_key(Transport *t, const char *key, json_object *v, int *ret_fd, const char **ret_fd_key) {
        _cleanup_free_ char *msg = NULL;
        int fd;

        *ret_fd = -1;
        *ret_fd_key = strcmp(key, "pid") == 0 ? "pidfd" : strcmp(key, "cgroup") == 0 ? "cgroup_fd" : "backing_fd";
        if (strcmp(key, "pid") == 0 && json_object_is_type(v, json_type_int)) {
                int64_t pid = json_object_get_int64(v);

                if (pid <= 0 || pid > INT32_MAX)
                        return 0;       /* the daemon says what is wrong with it */
                fd = pidfd_open_pid((pid_t) pid);
                if (fd == -ENOSYS)
                        return 0;
                if (fd == -ESRCH) {
                        if (asprintf(&msg, "No process with pid %" PRIi64, pid) < 0)
                                return -ENOMEM;
                        return transport_set_error(t, "BadScope", msg);
                }
                if (fd < 0)
                        return fd;
        } else if (strcmp(key, "cgroup") == 0 && json_object_is_type(v, json_type_string)) {
                const char *path = json_object_get_string(v);

                fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0) {
                        if (asprintf(&msg, "Cannot open the cgroup directory '%s': %s", path, strerror(errno)) < 0)
                                return -ENOMEM;
                        return transport_set_error(t, "BadScope", msg);
                }
        } else if (strcmp(key, "device") == 0 && json_object_is_type(v, json_type_string)) {
                fd = open_backing_file(json_object_get_string(v));
                if (fd < 0)
                        return 0;
        } else
                return 0;
        *ret_fd = fd;
        return 0;
}

int transport_request_fds(Transport *t, json_object *request, json_object **ret, int fds[static TRANSPORT_FDS_MAX],
                          size_t *ret_n_fds) {
        _cleanup_json_ json_object *p = NULL;
        size_t n = 0;
        int r = 0;

        p = json_object_new_object();
        if (!p)
                return -ENOMEM;
        json_object_object_foreach(request, k, v) {
                const char *fd_key;
                int fd;

                r = open_key(t, k, v, &fd, &fd_key);
                if (r < 0)
                        break;
                /* A device goes by name as well: its backing file only
                 * shows that it is the caller's. */
                if (fd < 0 || strcmp(k, "device") == 0) {
                        r = json_add(p, k, json_object_get(v));
                        if (r < 0)
                                break;
                }
                if (fd < 0)
                        continue;
                if (n >= TRANSPORT_FDS_MAX) {
                        close(fd);
                        r = -E2BIG;
                        break;
                }
                fds[n] = fd;
                r = json_add_i64(p, fd_key, (int64_t) n++);
                if (r < 0)
                        break;
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        close(fds[i]);
                return r;
        }
        *ret = TAKE_PTR(p);
        *ret_n_fds = n;
        return 0;
}

json_object *injection_find(json_object *list, const char *id) {
        size_t n = json_object_array_length(list);

        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                const char *s;

                if (json_get_string(e, "id", &s) >= 0 && strcmp(s, id) == 0)
                        return e;
        }
        return NULL;
}
