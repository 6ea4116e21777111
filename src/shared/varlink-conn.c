/* SPDX-License-Identifier: MIT */

/* One connection of the server: reading calls, dispatching them to their
 * handlers one at a time, queueing answers, and closing when the peer is
 * gone, broke the protocol or a limit. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "json-build.h"
#include "json-util.h"
#include "time-util.h"
#include "varlink-internal.h"

/* Calls dispatched from one connection per event loop iteration, so that
 * one busy client cannot starve the others. */
#define DISPATCH_BATCH 16U

VarlinkConn *varlink_conn_ref(VarlinkConn *c) {
        if (c)
                c->n_ref++;
        return c;
}

static void conn_drop_fds(VarlinkConn *c) {
        for (unsigned i = 0; i < c->n_in_fds; i++)
                fd_batch_done(&c->in_fds[i]);
        c->n_in_fds = 0;
        fd_batch_done(&c->call_fds);
}

static VarlinkConn *conn_free(VarlinkConn *c) {
        conn_drop_fds(c);
        sd_event_source_disable_unref(c->io_source);
        sd_event_source_disable_unref(c->defer_source);
        safe_close(c->fd);
        buffer_done(&c->in);
        buffer_done(&c->out);
        free(c);
        return NULL;
}

VarlinkConn *varlink_conn_unref(VarlinkConn *c) {
        if (!c)
                return NULL;
        if (--c->n_ref > 0)
                return NULL;
        return conn_free(c);
}

int varlink_conn_get_peer_ucred(VarlinkConn *c, struct ucred *ret) {
        if (!c || !ret)
                return -EINVAL;
        if (c->ucred.pid <= 0)
                return -ENODATA;
        *ret = c->ucred;
        return 0;
}

int varlink_conn_get_fd(VarlinkConn *c) {
        if (!c)
                return -EINVAL;
        if (c->disconnected)
                return -ENOTCONN;
        return c->fd;
}

VarlinkServer *varlink_conn_get_server(VarlinkConn *c) {
        return c ? c->server : NULL;
}

bool varlink_conn_is_connected(VarlinkConn *c) {
        return c && !c->disconnected && !c->dead;
}

void varlink_conn_set_keep_idle(VarlinkConn *c, bool b) {
        if (!c)
                return;
        c->keep_idle = b;
        c->last_active_usec = now_usec(CLOCK_MONOTONIC);
}

void *varlink_conn_set_userdata(VarlinkConn *c, void *userdata) {
        void *old;

        if (!c)
                return NULL;
        old = c->userdata;
        c->userdata = userdata;
        return old;
}

void *varlink_conn_get_userdata(VarlinkConn *c) {
        return c ? c->userdata : NULL;
}

size_t varlink_conn_get_output_queued(VarlinkConn *c) {
        return c ? buffer_used(&c->out) : 0;
}

/* Runs conn_process() on the next event loop iteration. */
static void conn_schedule(VarlinkConn *c) {
        if (!c->disconnected && c->defer_source)
                (void) sd_event_source_set_enabled(c->defer_source, SD_EVENT_ONESHOT);
}

int varlink_conn_close(VarlinkConn *c) {
        if (!c)
                return -EINVAL;
        if (c->disconnected)
                return 0;
        c->dead = true;
        conn_schedule(c);
        return 0;
}

void conn_disconnect(VarlinkConn *c) {
        VarlinkServer *s = c->server;

        /* The caller holds a reference, so c outlives the callback. */
        if (c->disconnected)
                return;
        c->disconnected = true;
        c->call_pending = false;

        c->io_source = sd_event_source_disable_unref(c->io_source);
        c->defer_source = sd_event_source_disable_unref(c->defer_source);
        c->fd = safe_close(c->fd);
        buffer_done(&c->in);
        buffer_done(&c->out);
        conn_drop_fds(c);

        if (c->prev)
                c->prev->next = c->next;
        else
                s->connections = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->prev = c->next = NULL;
        s->n_connections--;
        c->server = NULL;

        if (c->accepted && s->disconnect_callback)
                s->disconnect_callback(s, c, s->disconnect_userdata);

        varlink_conn_unref(c); /* the server's reference */
}

/* Queues msg, unless the peer is gone, in which case it is dropped. */
static int conn_queue(VarlinkConn *c, json_object *msg) {
        const char *s;
        size_t len;
        int r;

        r = message_serialize(msg, &s, &len);
        if (r < 0)
                return r;

        if (c->write_broken)
                return 0;

        if (len > VARLINK_OUTPUT_MAX - buffer_used(&c->out)) {
                /* The client is not reading. */
                c->dead = true;
                conn_schedule(c);
                return -ENOBUFS;
        }

        r = buffer_append(&c->out, s, len, VARLINK_OUTPUT_MAX);
        if (r < 0)
                return r;
        c->last_active_usec = now_usec(CLOCK_MONOTONIC);

        conn_schedule(c);
        return 0;
}

static int conn_answer(VarlinkConn *c, const char *error, json_object *params, bool continues) {
        _cleanup_json_ json_object *msg = NULL;
        int r;

        if (!c)
                return -EINVAL;
        if (c->disconnected || c->dead)
                return -ENOTCONN;
        if (!c->call_pending)
                return -EBUSY;
        if (continues && !(c->call_flags & VARLINK_METHOD_MORE))
                return -EPROTO;
        if (params && !json_object_is_type(params, json_type_object))
                return -EINVAL;
        if (error && !varlink_qualified_name_is_valid(error))
                return -EINVAL;

        /* The call ends when its handler returns, see conn_dispatch(). */
        if (c->call_flags & VARLINK_METHOD_ONEWAY)
                return 0;

        r = message_new("error", error, params, continues ? MESSAGE_CONTINUES : 0, &msg);
        if (r < 0)
                return r;

        r = conn_queue(c, msg);
        if (r == -ENOBUFS)
                c->call_pending = false;
        if (r < 0)
                return r;

        if (!continues)
                c->call_pending = false;
        return 0;
}

int varlink_reply(VarlinkConn *c, json_object *params) {
        return conn_answer(c, NULL, params, false);
}

int varlink_notify(VarlinkConn *c, json_object *params) {
        return conn_answer(c, NULL, params, true);
}

int varlink_error(VarlinkConn *c, const char *error_name, json_object *params) {
        if (!error_name)
                return -EINVAL;
        return conn_answer(c, error_name, params, false);
}

int conn_error_string(VarlinkConn *c, const char *error_name, const char *key, const char *value) {
        _cleanup_json_ json_object *p = NULL;
        int r;

        p = json_object_new_object();
        if (!p)
                return -ENOMEM;
        r = json_add_string(p, key, value);
        if (r < 0)
                return r;

        return varlink_error(c, error_name, p);
}

unsigned varlink_conn_n_fds(VarlinkConn *c) {
        return c ? c->call_fds.n : 0;
}

int varlink_conn_peek_fd(VarlinkConn *c, unsigned index) {
        if (!c)
                return -EINVAL;
        if (!c->call_pending)
                return -EBUSY;
        if (index >= c->call_fds.n || c->call_fds.fds[index] < 0)
                return -ENXIO;
        return c->call_fds.fds[index];
}

int varlink_conn_take_fd(VarlinkConn *c, unsigned index) {
        int fd = varlink_conn_peek_fd(c, index);

        if (fd >= 0)
                c->call_fds.fds[index] = -1;
        return fd;
}

int varlink_error_invalid_parameter(VarlinkConn *c, const char *name) {
        if (!name)
                return -EINVAL;
        return conn_error_string(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter", name);
}

/* Answers a call to a method that is not bound: MethodNotImplemented,
 * MethodNotFound or InterfaceNotFound. */
static int conn_route_unbound(VarlinkConn *c, const char *method) {
        VarlinkServer *s = c->server;
        const char *dot = strrchr(method, '.');
        size_t n = dot - method;
        _cleanup_free_ char *interface = NULL;
        Interface *i;

        if (n == strlen(SERVICE_INTERFACE) && memcmp(method, SERVICE_INTERFACE, n) == 0)
                return conn_error_string(c, VARLINK_ERROR_METHOD_NOT_FOUND, "method", method);

        i = methods_find_interface(s, method, n);
        if (i) {
                for (char **m = i->methods; m && *m; m++)
                        if (strcmp(*m, dot + 1) == 0)
                                return conn_error_string(c, VARLINK_ERROR_METHOD_NOT_IMPLEMENTED, "method", method);
                return conn_error_string(c, VARLINK_ERROR_METHOD_NOT_FOUND, "method", method);
        }

        /* Methods may be bound without a registered description. */
        for (size_t k = 0; k < s->n_methods; k++)
                if (strncmp(s->methods[k].name, method, n + 1) == 0 &&
                    strrchr(s->methods[k].name, '.') == s->methods[k].name + n)
                        return conn_error_string(c, VARLINK_ERROR_METHOD_NOT_FOUND, "method", method);

        interface = strndup(method, n);
        if (!interface)
                return -ENOMEM;
        return conn_error_string(c, VARLINK_ERROR_INTERFACE_NOT_FOUND, "interface", interface);
}

/* Parses one message and calls its handler. Returns < 0 if the connection
 * must be closed: a protocol violation (-EBADMSG) or a failed handler. */
static int conn_dispatch(VarlinkConn *c, const char *text, size_t len) {
        _cleanup_(varlink_call_done) VarlinkCall call = {};
        Method *m;
        int r;

        r = varlink_call_parse(text, len, &call);
        if (r < 0)
                return r;

        c->call_pending = true;
        c->call_flags = call.flags;
        c->last_active_usec = now_usec(CLOCK_MONOTONIC);

        m = methods_find(c->server, call.method);
        if (c->call_fds.n > (m ? m->fds_max : 0))
                /* Not what this method takes: refused before its handler
                 * runs, and closed with the call (conn_process()). */
                r = varlink_error_invalid_parameter(c, "fds");
        else if (call.upgrade)
                /* We have no method that hands the connection over to
                 * another protocol. */
                r = varlink_error_invalid_parameter(c, "upgrade");
        else if (m)
                r = m->callback(c, call.parameters, c->call_flags, m->userdata);
        else
                r = conn_route_unbound(c, call.method);

        if (c->call_flags & VARLINK_METHOD_ONEWAY) {
                /* A oneway call ends with its handler. */
                if (!c->disconnected)
                        c->call_pending = false;
                return r < 0 ? r : 0;
        }

        /* A failed handler that did not answer: close rather than leave
         * the client waiting forever. */
        if (r < 0 && c->call_pending)
                return r;
        return 0;
}

/* Files fds that arrived with the n bytes just read under the message
 * they belong to. A sender attaches fds to the first byte of a message,
 * and the kernel ends a read right after the bytes that carried fds, so
 * the owner is the last message that starts among those n bytes. fds
 * anywhere else (no message starts there, or a message already has
 * some) break the protocol: -EBADMSG. */
static int conn_file_fds(VarlinkConn *c, size_t n, const int *fds, unsigned n_fds) {
        const char *chunk = c->in.data + c->in.end - n;
        size_t before = buffer_used(&c->in) - n;
        uint64_t start;
        size_t i;

        /* The last NUL before the chunk's last byte ends the message
         * before the one that owns the fds. */
        for (i = n - 1; i > 0 && chunk[i - 1] != 0; i--)
                ;
        if (i == 0 && before > 0 && chunk[-1] != 0)
                return -EBADMSG;        /* the chunk starts in the middle of a message */
        start = c->in_offset + before + i;
        if (c->n_in_fds > 0 && c->in_fds[c->n_in_fds - 1].offset >= start)
                return -EBADMSG;
        if (c->n_in_fds >= VARLINK_FD_BATCHES_MAX)
                return -EBADMSG;        /* not reached: reading stops before */

        c->in_fds[c->n_in_fds] = (FdBatch) { .offset = start, .n = n_fds };
        memcpy(c->in_fds[c->n_in_fds].fds, fds, n_fds * sizeof(int));
        c->n_in_fds++;
        return 0;
}

/* Reads what is available, up to a full input buffer, or until fds of
 * VARLINK_FD_BATCHES_MAX messages wait for their dispatch. */
static void conn_read(VarlinkConn *c) {
        while (c->n_in_fds < VARLINK_FD_BATCHES_MAX) {
                int fds[VARLINK_MESSAGE_FDS_MAX];
                unsigned n_fds = 0;
                /* Room for one message and its NUL; pipelined calls wait
                 * in the kernel's socket buffer beyond that. */
                ssize_t n = buffer_recv_fds(&c->in, c->fd, VARLINK_MESSAGE_MAX + 1, fds, ELEMENTSOF(fds), &n_fds);

                if (n > 0 && n_fds > 0 && conn_file_fds(c, n, fds, n_fds) < 0) {
                        for (unsigned i = 0; i < n_fds; i++)
                                safe_close(fds[i]);
                        n = -EBADMSG;
                }

                if (n == -ENOBUFS || n == -EAGAIN)
                        return;
                if (n == -ECONNRESET || n == -EPIPE) {
                        c->read_eof = c->write_broken = true;
                        return;
                }
                if (n < 0) {
                        c->dead = true;
                        return;
                }
                if (n == 0) {
                        c->read_eof = true;
                        return;
                }
        }
}

/* Sends what the socket takes. */
static void conn_flush(VarlinkConn *c) {
        while (!c->write_broken && buffer_used(&c->out) > 0) {
                ssize_t n;

                n = send(c->fd, c->out.data + c->out.start, buffer_used(&c->out), MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return;
                        if (errno == EPIPE || errno == ECONNRESET) {
                                c->write_broken = true;
                                break;
                        }
                        c->dead = true;
                        return;
                }
                buffer_consume(&c->out, n);
        }

        if (c->write_broken)
                buffer_done(&c->out);
}

static void conn_update_events(VarlinkConn *c) {
        uint32_t events = 0;

        if (c->disconnected)
                return;

        /* A peer that hung up keeps the socket readable (EOF, EPOLLHUP):
         * stop polling then, or the loop would spin. */
        if (c->write_broken) {
                (void) sd_event_source_set_enabled(c->io_source, SD_EVENT_OFF);
                return;
        }

        if (!c->read_eof && buffer_used(&c->in) <= VARLINK_MESSAGE_MAX && c->n_in_fds < VARLINK_FD_BATCHES_MAX)
                events |= EPOLLIN;
        if (buffer_used(&c->out) > 0)
                events |= EPOLLOUT;

        if (sd_event_source_set_io_events(c->io_source, events) < 0 ||
            sd_event_source_set_enabled(c->io_source, SD_EVENT_ON) < 0) {
                c->dead = true;
                conn_schedule(c);
        }
}

/* The connection's state machine: sends, dispatches buffered calls, and
 * closes when it is time. The caller holds a reference. */
static void conn_process(VarlinkConn *c) {
        bool complete = false;
        size_t len;

        if (c->disconnected)
                return;

        conn_flush(c);

        for (unsigned n = 0; !c->dead && !c->call_pending; n++) {
                int r;

                if (!c->write_broken && buffer_used(&c->out) >= VARLINK_OUTPUT_HIGH_WATER)
                        break; /* resumes when the output drains (EPOLLOUT) */
                if (buffer_find_message(&c->in, &c->in_scanned, &len) == 0)
                        break;
                if (n >= DISPATCH_BATCH) {
                        conn_schedule(c);
                        break;
                }

                /* The fds that came with this message, if any, are the
                 * call's while it is dispatched. */
                if (c->n_in_fds > 0 && c->in_fds[0].offset == c->in_offset) {
                        c->call_fds = c->in_fds[0];
                        memmove(c->in_fds, c->in_fds + 1, --c->n_in_fds * sizeof(FdBatch));
                }
                r = conn_dispatch(c, c->in.data + c->in.start, len);
                fd_batch_done(&c->call_fds);    /* what the handler did not take */
                if (c->disconnected)
                        return;
                buffer_consume(&c->in, len + 1);
                c->in_offset += len + 1;
                c->in_scanned = 0;
                if (r < 0)
                        c->dead = true;
        }

        if (!c->dead) {
                complete = buffer_find_message(&c->in, &c->in_scanned, &len) > 0;
                if (!complete && buffer_used(&c->in) > VARLINK_MESSAGE_MAX)
                        c->dead = true; /* oversized */
        }

        if (!c->dead)
                conn_flush(c);

        if (c->dead ||
            /* Nobody to answer to: whatever calls are left were sent
             * before the hangup and are still dispatched, but a call
             * waiting for its answer will not get anywhere. */
            (c->write_broken && (c->call_pending || !complete)) ||
            /* Half-closed: done once the last answer is out. */
            (c->read_eof && !c->call_pending && !complete && buffer_used(&c->out) == 0)) {
                conn_disconnect(c);
                return;
        }

        conn_update_events(c);
}

static int conn_io_handler(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        _cleanup_(varlink_conn_unrefp) VarlinkConn *c = varlink_conn_ref(userdata);

        if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))
                conn_read(c);
        if (revents & (EPOLLHUP | EPOLLERR))
                c->write_broken = true;

        conn_process(c);
        return 0;
}

static int conn_defer_handler(sd_event_source *source, void *userdata) {
        _cleanup_(varlink_conn_unrefp) VarlinkConn *c = varlink_conn_ref(userdata);

        conn_process(c);
        return 0;
}


int conn_new(VarlinkServer *s, int fd, const struct ucred *ucred, VarlinkConn **ret) {
        _cleanup_(varlink_conn_unrefp) VarlinkConn *c = NULL;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->n_ref = 1;
        c->fd = fd;
        c->ucred = *ucred;
        c->last_active_usec = now_usec(CLOCK_MONOTONIC);

        r = sd_event_add_io(s->event, &c->io_source, fd, EPOLLIN, conn_io_handler, c);
        if (r >= 0)
                r = sd_event_add_defer(s->event, &c->defer_source, conn_defer_handler, c);
        if (r >= 0)
                r = sd_event_source_set_enabled(c->defer_source, SD_EVENT_OFF);
        if (r < 0) {
                c->fd = -1; /* the caller's again */
                return r;
        }

        /* The list holds the server's reference. */
        c->server = s;
        c->next = s->connections;
        if (c->next)
                c->next->prev = c;
        s->connections = varlink_conn_ref(c);
        s->n_connections++;

        *ret = TAKE_PTR(c);
        return 0;
}
