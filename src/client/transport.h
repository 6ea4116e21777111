/* SPDX-License-Identifier: MIT */
#pragma once

/* The one interface injectctl's commands talk to injectd through, with two
 * implementations: D-Bus (transport-bus.c, the system bus, or
 * $DBUS_SYSTEM_BUS_ADDRESS) and Varlink (transport-varlink.c). Both take
 * the same request object and hand back the same JSON documents
 * (docs/dbus-api.md, docs/varlink-api.md).
 *
 * Every operation returns >= 0, or a negative errno:
 *   -EREMOTEIO     the daemon refused: transport_error_name() gives the
 *                  short error name ("NotInjectable" for both
 *                  org.injectd.Injector1.Error.NotInjectable and
 *                  org.injectd.Injector.NotInjectable; other errors keep
 *                  their full name) and transport_error_message() its
 *                  sentence;
 *   -EHOSTDOWN     injectd cannot be reached; transport_error_message()
 *                  says how to start it;
 *   anything else  a local or transport failure (-ENOMEM, -ETIMEDOUT, ...).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cleanup.h"

#define INJECTD_VARLINK_ADDRESS "/run/injectd/org.injectd.Injector"

typedef struct Transport Transport;

/* The errors that mean the peer is gone or was never there. */
static inline bool errno_is_disconnect(int r) {
        return r == -ECONNREFUSED || r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE;
}

/* Called for each watched event: a Varlink Watch event object ("type":
 * "watching", "added", "removed", "fault"; over D-Bus also "counters",
 * which carries "id" and the fresh "injection" document when its counters
 * changed). Borrowed. A non-zero return stops the watch and is returned
 * by transport_watch(). */
typedef int (*TransportEventFn)(json_object *event, void *userdata);

/* Called once, when the observation is on, with its "observing" document
 * (borrowed). A negative return is returned by transport_observe(), which
 * then ends the observation. */
typedef int (*TransportObservingFn)(json_object *observing, void *userdata);

typedef struct TransportOps {
        int (*get_capabilities)(Transport *t, json_object **ret);
        int (*list_functions)(Transport *t, const char *pattern, json_object **ret);
        int (*inject)(Transport *t, json_object *request, char **ret_id, uint64_t *ret_expires_usec,
                      json_object **ret_injection);
        int (*list_injections)(Transport *t, bool all, json_object **ret);
        int (*cancel)(Transport *t, const char *id);
        int (*watch)(Transport *t, char *const *ids, TransportEventFn callback, void *userdata);
        int (*reload_policy)(Transport *t);
        int (*observe)(Transport *t, json_object *request, TransportObservingFn on_observing, void *userdata,
                       json_object **ret_result);
        void (*done)(Transport *t);
} TransportOps;

/* The table of an implementation whose functions are named
 * PREFIX_get_capabilities() ... PREFIX_done(): the operations are listed
 * once, here, for every implementation. */
#define TRANSPORT_OPS_INIT(prefix)                                              \
        {                                                                       \
                .get_capabilities = prefix##_get_capabilities,                  \
                .list_functions = prefix##_list_functions,                      \
                .inject = prefix##_inject,                                      \
                .list_injections = prefix##_list_injections,                    \
                .cancel = prefix##_cancel,                                      \
                .watch = prefix##_watch,                                        \
                .reload_policy = prefix##_reload_policy,                        \
                .observe = prefix##_observe,                                    \
                .done = prefix##_done,                                          \
        }

struct Transport {
        const TransportOps *ops;
        void *data;                     /* the implementation's */
        bool interactive;               /* allow interactive polkit authentication */
        char *error_name;
        char *error_message;
};

/* Whether this build has the D-Bus transport. injectctl-static is built
 * with transport-bus-none.c in place of transport-bus*.c, without
 * libsystemd: it speaks only Varlink, and there transport_open_bus()
 * returns -EPROTONOSUPPORT. Which transports a binary has is chosen by
 * the sources it is built from; the commands ask here. */
bool transport_bus_supported(void);

/* D-Bus on the system bus. When injectd cannot be reached, returns
 * -EHOSTDOWN with a sentence saying how to start it in *reterr_message
 * (written on -EHOSTDOWN only). */
int transport_open_bus(bool interactive, Transport **ret, char **reterr_message);

/* Varlink on the socket at path (NULL: INJECTD_VARLINK_ADDRESS), as above. */
int transport_open_varlink(const char *path, bool interactive, Transport **ret, char **reterr_message);

Transport *transport_free(Transport *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Transport *, transport_free)

/* Capabilities document (an object). */
int transport_get_capabilities(Transport *t, json_object **ret);

/* Function entries whose name matches the glob pattern (NULL or "": all),
 * a JSON array. */
int transport_list_functions(Transport *t, const char *pattern, json_object **ret);

/* Arms an injection. request holds the request keys of the API docs; a
 * "pid" goes as a "pidfd" and a "cgroup" path as a "cgroup_fd", both
 * opened here, where the number and the path mean what the user meant,
 * and a loop "device" with a "backing_fd" (transport_request_fds()). Unless the request says "detach": true, the injection lasts as
 * long as t. Returns the id, deadline and injection document; each
 * ret_ is optional. */
int transport_inject(Transport *t, json_object *request, char **ret_id, uint64_t *ret_expires_usec,
                     json_object **ret_injection);

/* The caller's injections (all: everyone's, root only), a JSON array. */
int transport_list_injections(Transport *t, bool all, json_object **ret);

int transport_cancel(Transport *t, const char *id);

/* Streams events of the caller's injections (ids: only these, NULL or
 * empty: all) to callback until it returns non-zero or the connection
 * fails. Over Varlink this holds the connection: use a transport of its
 * own. */
int transport_watch(Transport *t, char *const *ids, TransportEventFn callback, void *userdata);

int transport_reload_policy(Transport *t);

/* Observe (docs/varlink-api.md, docs/dbus-api.md): request holds
 * "functions", and "pid" (sent as a pidfd, as transport_inject() does) and
 * "duration_usec". on_observing gets the "observing" document when it is
 * on; then this waits, without a timeout, until the daemon ends it, and
 * *ret_result is the end's document: {"functions", "ended"}. Over
 * Varlink this holds the connection, over D-Bus the calling connection
 * owns the session: it ends when t is freed. */
int transport_observe(Transport *t, json_object *request, TransportObservingFn on_observing, void *userdata,
                      json_object **ret_result);

/* After -EREMOTEIO or -EHOSTDOWN; NULL otherwise. */
const char *transport_error_name(Transport *t);
const char *transport_error_message(Transport *t);

/* For the implementations: a new transport on ops and their connection
 * data, which it takes in every case (on failure, ops->done releases it).
 * Returns 0, -ENOMEM. */
int transport_new(const TransportOps *ops, void *data, bool interactive, Transport **ret);

/* For the implementations: request as it goes to the daemon. A "pid"
 * becomes "pidfd" and a "cgroup" path "cgroup_fd", the index of an fd
 * opened here, in fds[0..*ret_n_fds): a pid number and a path mean
 * something else in the daemon's namespaces, a pidfd and a directory fd do
 * not. A "device" that is a loop device stays, and gains "backing_fd", its
 * backing file opened here read-write (read-only for a read-only disk),
 * which shows the daemon it is the caller's (none when there is no such
 * file to open, or not for writing: the daemon says why). Where the kernel has no pidfd_open() (before 5.3) the pid goes as
 * is. The caller closes the fds; on failure none is left open. -EREMOTEIO
 * (with the error recorded as the daemon's would be) for a pid that names
 * no process or a cgroup that cannot be opened. */
#define TRANSPORT_FDS_MAX 2
int transport_request_fds(Transport *t, json_object *request, json_object **ret, int fds[static TRANSPORT_FDS_MAX],
                          size_t *ret_n_fds);

/* For the implementations: records a daemon error, shortening the name. */
int transport_set_error(Transport *t, const char *name, const char *message);

/* For the implementations: records that injectd cannot be reached, with
 * how to start it. Returns -EHOSTDOWN. */
int transport_set_unreachable(Transport *t, const char *fmt, ...) _printf_(2, 3);

/* The entry with this "id" in a ListInjections array, or NULL. */
json_object *injection_find(json_object *list, const char *id);
