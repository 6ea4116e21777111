/* SPDX-License-Identifier: MIT */

/* The server object: its interfaces and bound methods, the listening
 * sockets, and accepting connections within the limits. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "strv.h"
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

int varlink_server_new(sd_event *e, const VarlinkServerInfo *info, VarlinkServer **ret) {
        VarlinkServer *s;

        if (!e || !ret)
                return -EINVAL;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;

        s->event = sd_event_ref(e);
        s->connections_max = VARLINK_CONNECTIONS_MAX_DEFAULT;
        s->connections_per_uid_max = VARLINK_CONNECTIONS_PER_UID_MAX_DEFAULT;

        s->vendor = strdup(info && info->vendor ? info->vendor : "");
        s->product = strdup(info && info->product ? info->product : "");
        s->version = strdup(info && info->version ? info->version : "");
        s->url = strdup(info && info->url ? info->url : "");
        if (!s->vendor || !s->product || !s->version || !s->url) {
                varlink_server_free(s);
                return -ENOMEM;
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

Interface *server_find_interface(VarlinkServer *s, const char *name, size_t n) {
        for (size_t i = 0; i < s->n_interfaces; i++)
                if (strlen(s->interfaces[i].name) == n && memcmp(s->interfaces[i].name, name, n) == 0)
                        return &s->interfaces[i];
        return NULL;
}

Method *server_find_method(VarlinkServer *s, const char *name) {
        for (size_t i = 0; i < s->n_methods; i++)
                if (strcmp(s->methods[i].name, name) == 0)
                        return &s->methods[i];
        return NULL;
}

int varlink_server_add_interface(VarlinkServer *s, const char *name, const char *description) {
        _cleanup_(strv_freep) char **methods = NULL;
        _cleanup_free_ char *declared = NULL, *n = NULL, *d = NULL;
        Interface *p;
        int r;

        if (!s || !varlink_interface_name_is_valid(name) || !description)
                return -EINVAL;
        if (strcmp(name, SERVICE_INTERFACE) == 0 || server_find_interface(s, name, strlen(name)))
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
        _cleanup_free_ char *n = NULL;
        Method *p;

        if (!s || !callback || !varlink_qualified_name_is_valid(method))
                return -EINVAL;
        if (strncmp(method, SERVICE_INTERFACE ".", strlen(SERVICE_INTERFACE ".")) == 0)
                return -EINVAL;
        if (server_find_method(s, method))
                return -EEXIST;

        n = strdup(method);
        if (!n)
                return -ENOMEM;

        p = reallocarray(s->methods, s->n_methods + 1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        s->methods = p;
        s->methods[s->n_methods++] = (Method) {
                .name = TAKE_PTR(n),
                .callback = callback,
                .userdata = userdata,
        };
        return 0;
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

/* Serves fd, which the caller still owns on failure. */
static int server_add_connection_internal(VarlinkServer *s, int fd, VarlinkConn **ret) {
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

        if (s->n_connections >= s->connections_max ||
            server_connections_of(s, ucred.uid) >= s->connections_per_uid_max)
                return -EBUSY;

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
        int r;

        if (!s || fd < 0)
                return -EINVAL;

        r = fd_set_nonblock(fd);
        if (r < 0)
                return r;

        return server_add_connection_internal(s, fd, ret);
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

        s->accept_retry = sd_event_source_disable_unref(s->accept_retry);
        (void) server_set_accepting(s, SD_EVENT_ON);
        return 0;
}

static bool errno_is_accept_again(int e) {
        /* The connection went away before accept() got it, or a signal. */
        return e == EINTR || e == ECONNABORTED || e == EPROTO || e == ENETDOWN || e == ENOPROTOOPT ||
               e == EHOSTDOWN || e == ENONET || e == EHOSTUNREACH || e == EOPNOTSUPP || e == ENETUNREACH ||
               e == EPERM;
}

static int server_accept_handler(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        VarlinkServer *s = userdata;

        for (unsigned i = 0; i < ACCEPT_BATCH; i++) {
                _cleanup_close_ int cfd = -1;

                cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno == EAGAIN)
                                return 0;
                        if (errno_is_accept_again(errno))
                                continue;

                        /* EMFILE, ENFILE, ENOBUFS, ENOMEM: the socket stays
                         * readable, so pause instead of spinning. */
                        if (!s->accept_retry &&
                            sd_event_add_time_relative(s->event, &s->accept_retry, CLOCK_MONOTONIC,
                                                       ACCEPT_RETRY_USEC, 0,
                                                       server_accept_retry_handler, s) >= 0)
                                (void) server_set_accepting(s, SD_EVENT_OFF);
                        return 0;
                }

                /* Over a limit or refused: closed by the cleanup. */
                if (server_add_connection_internal(s, cfd, NULL) >= 0)
                        TAKE_FD(cfd);
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
        if (s->accept_retry)
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

