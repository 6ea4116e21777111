/* SPDX-License-Identifier: MIT */

/* The server object: its interfaces and bound methods, the listening
 * sockets, and accepting connections within the limits. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json-build.h"
#include "json-util.h"
#include "strv.h"
#include "time-util.h"
#include "varlink-internal.h"

/* Connections accepted per wakeup, so that a flood of them cannot starve
 * the connections already served. */
#define ACCEPT_BATCH 16U

/* After accept() failed for lack of resources (EMFILE...), pause accepting
 * this long instead of spinning on a listening socket that stays
 * readable. */
#define ACCEPT_RETRY_USEC (UINT64_C(100) * UINT64_C(1000))

static void method_done(Method *m) {
        free(m->name);
}

static void interface_done(Interface *i) {
        free(i->name);
        free(i->description);
        strv_free(i->methods);
}

static int server_accept_retry_handler(sd_event_source *source, uint64_t usec, void *userdata);

int varlink_server_new(sd_event *e, const VarlinkServerInfo *info, VarlinkServer **ret) {
        VarlinkServer *s;
        int r;

        if (!e || !ret)
                return -EINVAL;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;

        s->event = sd_event_ref(e);
        /* Made now, off, for when accept() runs out of descriptors. */
        r = sd_event_add_time_relative(e, &s->accept_retry, CLOCK_MONOTONIC, ACCEPT_RETRY_USEC, 0,
                                       server_accept_retry_handler, s);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->accept_retry, SD_EVENT_OFF);
        if (r < 0) {
                varlink_server_free(s);
                return r;
        }
        s->connections_max = VARLINK_CONNECTIONS_MAX_DEFAULT;
        s->connections_per_uid_max = VARLINK_CONNECTIONS_PER_UID_MAX_DEFAULT;
        s->connections_reserved = VARLINK_CONNECTIONS_RESERVED_DEFAULT;

        s->vendor = strdup(info && info->vendor ? info->vendor : "");
        s->product = strdup(info && info->product ? info->product : "");
        s->version = strdup(info && info->version ? info->version : "");
        s->url = strdup(info && info->url ? info->url : "");
        if (!s->vendor || !s->product || !s->version || !s->url) {
                varlink_server_free(s);
                return -ENOMEM;
        }

        /* GetInfo and GetInterfaceDescription, bound like any method. */
        r = service_bind(s);
        if (r < 0) {
                varlink_server_free(s);
                return r;
        }

        *ret = s;
        return 0;
}

VarlinkServer *varlink_server_free(VarlinkServer *s) {
        if (!s)
                return NULL;

        while (s->connections) {
                VarlinkConn *c = varlink_conn_ref(s->connections);

                conn_disconnect(c);
                varlink_conn_unref(c);
        }

        for (size_t i = 0; i < s->n_listeners; i++) {
                sd_event_source_disable_unref(s->listeners[i].source);
                safe_close(s->listeners[i].fd);
        }
        free(s->listeners);
        sd_event_source_disable_unref(s->accept_retry);
        sd_event_source_disable_unref(s->idle_timer);
        free(s->refusal_error);

        for (size_t i = 0; i < s->n_methods; i++)
                method_done(&s->methods[i]);
        free(s->methods);
        for (size_t i = 0; i < s->n_interfaces; i++)
                interface_done(&s->interfaces[i]);
        free(s->interfaces);

        free(s->vendor);
        free(s->product);
        free(s->version);
        free(s->url);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

int varlink_server_add_interface(VarlinkServer *s, const char *name, const char *description) {
        _cleanup_(strv_freep) char **methods = NULL;
        _cleanup_free_ char *declared = NULL, *n = NULL, *d = NULL;
        Interface *p;
        int r;

        if (!s || !varlink_interface_name_is_valid(name) || !description)
                return -EINVAL;
        if (strcmp(name, SERVICE_INTERFACE) == 0 || methods_find_interface(s, name, strlen(name)))
                return -EEXIST;

        r = varlink_idl_parse(description, &declared, &methods, NULL);
        if (r == -EBADMSG)
                return -EINVAL;
        if (r < 0)
                return r;
        if (strcmp(declared, name) != 0)
                return -EINVAL;

        n = strdup(name);
        d = strdup(description);
        if (!n || !d)
                return -ENOMEM;

        p = reallocarray(s->interfaces, s->n_interfaces + 1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        s->interfaces = p;
        s->interfaces[s->n_interfaces++] = (Interface) {
                .name = TAKE_PTR(n),
                .description = TAKE_PTR(d),
                .methods = TAKE_PTR(methods),
        };
        return 0;
}

int varlink_server_bind_method(VarlinkServer *s, const char *method, VarlinkMethodFn callback, void *userdata) {
        return varlink_server_bind_method_fds(s, method, 0, callback, userdata);
}

int varlink_server_bind_method_fds(VarlinkServer *s, const char *method, unsigned fds_max, VarlinkMethodFn callback,
                                   void *userdata) {
        if (!s || !callback || !varlink_qualified_name_is_valid(method) || fds_max > VARLINK_MESSAGE_FDS_MAX)
                return -EINVAL;
        /* org.varlink.service is the server's own (varlink-service.c). */
        if (strncmp(method, SERVICE_INTERFACE ".", strlen(SERVICE_INTERFACE ".")) == 0)
                return -EINVAL;
        return methods_add(s, method, fds_max, callback, userdata);
}

int varlink_server_set_connect_callback(VarlinkServer *s, VarlinkConnectFn callback, void *userdata) {
        if (!s)
                return -EINVAL;
        s->connect_callback = callback;
        s->connect_userdata = userdata;
        return 0;
}

int varlink_server_set_disconnect_callback(VarlinkServer *s, VarlinkDisconnectFn callback, void *userdata) {
        if (!s)
                return -EINVAL;
        s->disconnect_callback = callback;
        s->disconnect_userdata = userdata;
        return 0;
}

int varlink_server_set_connections_max(VarlinkServer *s, unsigned total, unsigned per_uid) {
        if (!s)
                return -EINVAL;
        if (total > 0)
                s->connections_max = total;
        if (per_uid > 0)
                s->connections_per_uid_max = per_uid;
        if (s->connections_reserved >= s->connections_max)
                s->connections_reserved = 0;
        return 0;
}

/* Closes the connections idle for idle_usec. Runs every idle_usec / 2,
 * so a connection goes after between 1 and 1.5 times idle_usec. */
static int server_idle_handler(sd_event_source *source, uint64_t usec, void *userdata) {
        VarlinkServer *s = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        for (VarlinkConn *c = s->connections; c; c = c->next)
                if (!c->call_pending && !c->keep_idle && !c->dead &&
                    now - c->last_active_usec >= s->idle_usec)
                        (void) varlink_conn_close(c);

        (void) sd_event_source_set_time_relative(source, s->idle_usec / 2);
        (void) sd_event_source_set_enabled(source, SD_EVENT_ON);
        return 0;
}

int varlink_server_set_limits(VarlinkServer *s, const VarlinkServerLimits *l) {
        int r;

        if (!s || !l || l->connections_max == 0 || l->connections_per_uid_max == 0 ||
            l->connections_reserved >= l->connections_max)
                return -EINVAL;

        s->idle_timer = sd_event_source_disable_unref(s->idle_timer);
        if (l->idle_usec > 0) {
                r = sd_event_add_time_relative(s->event, &s->idle_timer, CLOCK_MONOTONIC, l->idle_usec / 2,
                                               l->idle_usec / 8, server_idle_handler, s);
                if (r < 0)
                        return r;
        }

        s->connections_max = l->connections_max;
        s->connections_per_uid_max = l->connections_per_uid_max;
        s->connections_reserved = l->connections_reserved;
        s->idle_usec = l->idle_usec;
        return 0;
}

void varlink_server_get_limits(VarlinkServer *s, VarlinkServerLimits *ret) {
        if (!s || !ret)
                return;
        *ret = (VarlinkServerLimits) {
                .connections_max = s->connections_max,
                .connections_per_uid_max = s->connections_per_uid_max,
                .connections_reserved = s->connections_reserved,
                .idle_usec = s->idle_usec,
        };
}

int varlink_server_set_privileged_callback(VarlinkServer *s, VarlinkPrivilegedFn callback, void *userdata) {
        if (!s)
                return -EINVAL;
        s->privileged_callback = callback;
        s->privileged_userdata = userdata;
        return 0;
}

int varlink_server_set_refusal_error(VarlinkServer *s, const char *error_name) {
        char *n;

        if (!s || !varlink_qualified_name_is_valid(error_name))
                return -EINVAL;
        n = strdup(error_name);
        if (!n)
                return -ENOMEM;
        free(s->refusal_error);
        s->refusal_error = n;
        return 0;
}

int varlink_server_set_refused_callback(VarlinkServer *s, VarlinkRefusedFn callback, void *userdata) {
        if (!s)
                return -EINVAL;
        s->refused_callback = callback;
        s->refused_userdata = userdata;
        return 0;
}

unsigned varlink_server_n_connections(VarlinkServer *s) {
        return s ? s->n_connections : 0;
}

sd_event *varlink_server_get_event(VarlinkServer *s) {
        return s ? s->event : NULL;
}

static unsigned server_connections_of(VarlinkServer *s, uid_t uid) {
        unsigned n = 0;

        for (VarlinkConn *c = s->connections; c; c = c->next)
                if (c->ucred.uid == uid)
                        n++;
        return n;
}

static bool server_peer_privileged(VarlinkServer *s, const struct ucred *ucred) {
        return s->privileged_callback && s->privileged_callback(s, ucred, s->privileged_userdata);
}

/* Returns -EBUSY, and in why which limit, if the peer must be refused. The
 * privileged callback is asked only then, so that the common case costs
 * nothing. */
static int server_check_limits(VarlinkServer *s, const struct ucred *ucred, char *why, size_t why_size) {
        unsigned mine;

        if (s->n_connections >= s->connections_max) {
                snprintf(why, why_size, "The server holds its maximum of %u connections", s->connections_max);
                return -EBUSY;
        }

        mine = server_connections_of(s, ucred->uid);
        if (mine < s->connections_per_uid_max &&
            s->n_connections < s->connections_max - s->connections_reserved)
                return 0;
        if (server_peer_privileged(s, ucred))
                return 0;

        if (mine >= s->connections_per_uid_max)
                snprintf(why, why_size, "Too many connections: uid %u holds %u, at most %u per user",
                         (unsigned) ucred->uid, mine, s->connections_per_uid_max);
        else
                snprintf(why, why_size,
                         "The server holds %u connections; the last %u of its %u are kept for privileged callers",
                         s->n_connections, s->connections_reserved, s->connections_max);
        return -EBUSY;
}

/* Serves fd, which the caller still owns on failure. */
static int server_add_connection_internal(VarlinkServer *s, int fd, char *why, size_t why_size, VarlinkConn **ret) {
        _cleanup_(varlink_conn_unrefp) VarlinkConn *c = NULL;
        struct ucred ucred = {};
        socklen_t sl = sizeof(ucred);
        int r;

        /* Taken now, from the kernel: what the client is, not what it
         * says. */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &ucred, &sl) < 0)
                return negative_errno();
        if (sl != sizeof(ucred))
                return -EIO;

        r = server_check_limits(s, &ucred, why, why_size);
        if (r < 0)
                return r;

        r = conn_new(s, fd, &ucred, &c);
        if (r < 0)
                return r;

        if (s->connect_callback) {
                r = s->connect_callback(s, c, s->connect_userdata);
                if (r < 0) {
                        c->fd = -1; /* the caller's again */
                        conn_disconnect(c);
                        return r;
                }
        }
        c->accepted = true;

        if (ret)
                *ret = c;
        return 0;
}

int varlink_server_add_connection(VarlinkServer *s, int fd, VarlinkConn **ret) {
        char why[160];
        int r;

        if (!s || fd < 0)
                return -EINVAL;

        r = fd_set_nonblock(fd);
        if (r < 0)
                return r;

        return server_add_connection_internal(s, fd, why, sizeof(why), ret);
}

static int server_set_accepting(VarlinkServer *s, int enabled) {
        int r = 0;

        for (size_t i = 0; i < s->n_listeners; i++) {
                int k = sd_event_source_set_enabled(s->listeners[i].source, enabled);
                if (k < 0)
                        r = k;
        }
        return r;
}

static int server_accept_retry_handler(sd_event_source *source, uint64_t usec, void *userdata) {
        VarlinkServer *s = userdata;

        s->accept_paused = false;
        (void) server_set_accepting(s, SD_EVENT_ON);
        return 0;
}

static bool errno_is_accept_again(int e) {
        /* The connection went away before accept() got it, or a signal. */
        return e == EINTR || e == ECONNABORTED || e == EPROTO || e == ENETDOWN || e == ENOPROTOOPT ||
               e == EHOSTDOWN || e == ENONET || e == EHOSTUNREACH || e == EOPNOTSUPP || e == ENETUNREACH ||
               e == EPERM;
}

/* Tells a peer over a limit why, in the one message it will get: what
 * it reads as the answer to its first call, instead of a bare hangup.
 * Best effort, without waiting: the socket's buffer is empty, and a peer
 * that is gone does not care. */
static void server_refuse(VarlinkServer *s, int fd, const char *why) {
        _cleanup_json_ json_object *params = NULL, *msg = NULL;
        char discard[4096];
        const char *text;
        size_t len;

        params = json_object_new_object();
        if (!params || json_add_string(params, "message", why) < 0)
                return;
        if (message_new("error", s->refusal_error ?: VARLINK_ERROR_PERMISSION_DENIED, params, 0, &msg) < 0 ||
            message_serialize(msg, &text, &len) < 0)
                return;
        (void) send(fd, text, len, MSG_DONTWAIT | MSG_NOSIGNAL);

        /* What it sent already is read and dropped, so that closing does
         * not reset the connection before the peer reads the error. */
        for (unsigned i = 0; i < 4; i++)
                if (recv(fd, discard, sizeof(discard), MSG_DONTWAIT) <= 0)
                        break;
        (void) shutdown(fd, SHUT_WR);
}

static int server_accept_handler(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        VarlinkServer *s = userdata;
        char why[160];
        int r;

        for (unsigned i = 0; i < ACCEPT_BATCH; i++) {
                _cleanup_close_ int cfd = -1;

                cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        int e = errno;

                        if (e == EAGAIN)
                                return 0;
                        if (errno_is_accept_again(e))
                                continue;

                        /* EMFILE, ENFILE, ENOBUFS, ENOMEM: the socket stays
                         * readable, so pause instead of spinning. The timer
                         * exists already: making one now could fail for the
                         * same want of a descriptor (its timerfd). */
                        if (!s->accept_paused &&
                            sd_event_source_set_time_relative(s->accept_retry, ACCEPT_RETRY_USEC) >= 0 &&
                            sd_event_source_set_enabled(s->accept_retry, SD_EVENT_ONESHOT) >= 0) {
                                s->accept_paused = true;
                                (void) server_set_accepting(s, SD_EVENT_OFF);
                        }
                        if (s->refused_callback)
                                s->refused_callback(s, -e, NULL, s->refused_userdata);
                        return 0;
                }

                /* Over a limit or refused: closed by the cleanup. */
                r = server_add_connection_internal(s, cfd, why, sizeof(why), NULL);
                if (r >= 0)
                        TAKE_FD(cfd);
                else if (r == -EBUSY) {
                        server_refuse(s, cfd, why);
                        if (s->refused_callback)
                                s->refused_callback(s, r, why, s->refused_userdata);
                }
        }

        return 0;
}

static int server_add_listener(VarlinkServer *s, int fd) {
        sd_event_source *source = NULL;
        Listener *p;
        int r;

        p = reallocarray(s->listeners, s->n_listeners + 1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        s->listeners = p;

        r = sd_event_add_io(s->event, &source, fd, EPOLLIN, server_accept_handler, s);
        if (r < 0)
                return r;
        if (s->accept_paused)
                (void) sd_event_source_set_enabled(source, SD_EVENT_OFF);

        s->listeners[s->n_listeners++] = (Listener) { .fd = fd, .source = source };
        return 0;
}

static int fd_set_flags(int fd) {
        int flags, r;

        r = fd_set_nonblock(fd);
        if (r < 0)
                return r;
        flags = fcntl(fd, F_GETFD);
        if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
                return negative_errno();
        return 0;
}

int varlink_server_listen_fd(VarlinkServer *s, int fd) {
        int v;
        socklen_t sl;
        int r;

        if (!s || fd < 0)
                return -EINVAL;

        /* SO_PEERCRED is what callers are identified by: unix sockets
         * only. */
        sl = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &sl) < 0)
                return negative_errno();
        if (v != AF_UNIX)
                return -EINVAL;
        sl = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &sl) < 0)
                return negative_errno();
        if (v != SOCK_STREAM)
                return -EINVAL;
        sl = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &sl) < 0)
                return negative_errno();
        if (!v)
                return -EINVAL;

        r = fd_set_flags(fd);
        if (r < 0)
                return r;

        return server_add_listener(s, fd);
}

/* Removes a socket at path that nobody listens on any more. */
static int remove_stale_socket(const struct sockaddr_un *sa) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (lstat(sa->sun_path, &st) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) >= 0)
                return -EADDRINUSE;
        if (errno == EAGAIN || errno == EINPROGRESS)
                return -EADDRINUSE; /* alive, with a full backlog */
        if (errno != ECONNREFUSED)
                return negative_errno();

        if (unlink(sa->sun_path) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

int varlink_server_listen_address(VarlinkServer *s, const char *path, mode_t mode) {
        _cleanup_close_ int fd = -1;
        struct sockaddr_un sa;
        mode_t old;
        int r;

        if (!s || !path || (mode & ~(mode_t) 0777))
                return -EINVAL;

        r = sockaddr_un_set(&sa, path);
        if (r < 0)
                return r;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();

        r = remove_stale_socket(&sa);
        if (r < 0)
                return r;

        /* bind() creates the inode with 0777 & ~umask: set the mode
         * without a window in which it is wrong. */
        old = umask(~mode & 0777);
        r = bind(fd, (const struct sockaddr *) &sa, sizeof(sa));
        if (r < 0)
                r = negative_errno();
        (void) umask(old);
        if (r < 0)
                return r;

        if (listen(fd, SOMAXCONN) < 0) {
                r = negative_errno();
                (void) unlink(path);
                return r;
        }

        r = server_add_listener(s, fd);
        if (r < 0) {
                (void) unlink(path);
                return r;
        }

        TAKE_FD(fd);
        return 0;
}

