/* SPDX-License-Identifier: MIT */
#pragma once

/* What the parts of the Varlink implementation share, and nobody else:
 * varlink-protocol.c (buffers, message framing and parsing),
 * varlink-methods.c (the server's table of interfaces and methods),
 * varlink-conn.c (one server connection: reading, dispatching, answering,
 * and the errors for calls to what is not bound),
 * varlink-service.c (org.varlink.service, bound as ordinary methods),
 * varlink-server.c (the server object, listening, accepting)
 * and varlink-client.c. Calls run down that list, never up it
 * (tools/check-layers.py). */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "cleanup.h"
#include "varlink.h"

/* How much one read asks for. */
#define READ_CHUNK (UINT64_C(64) << 10)

#define SERVICE_INTERFACE "org.varlink.service"

/* data[start..end) holds the unprocessed bytes. */
typedef struct Buffer {
        char *data;
        size_t alloc, start, end;
} Buffer;

size_t buffer_used(const Buffer *b);
void buffer_done(Buffer *b);

/* Makes room for up to want more bytes at the end without letting the
 * buffer hold more than cap bytes; returns the room made, 0 if the buffer
 * is full, or -ENOMEM. */
ssize_t buffer_reserve(Buffer *b, size_t want, size_t cap);

/* Drops n bytes from the front. */
void buffer_consume(Buffer *b, size_t n);

/* Appends data[0..n), or -ENOBUFS if that would exceed cap. */
int buffer_append(Buffer *b, const char *data, size_t n, size_t cap);

/* Reads once from fd into b, up to cap bytes held. Returns the number of
 * bytes read, 0 at end of file, -ENOBUFS if b is full, -EAGAIN if nothing
 * is there, or -errno. */
ssize_t buffer_recv(Buffer *b, int fd, size_t cap);

/* Like buffer_recv(), with recvmsg(): file descriptors sent with the
 * bytes read (SCM_RIGHTS) are put in fds[0..*ret_n_fds), close-on-exec
 * (MSG_CMSG_CLOEXEC). More than fds_max of them, or control data cut
 * short (MSG_CTRUNC), is -EBADMSG, with every fd that arrived closed:
 * the kernel closes what did not fit, and the message they came with
 * cannot be told apart from a complete one. */
ssize_t buffer_recv_fds(Buffer *b, int fd, size_t cap, int *fds, unsigned fds_max, unsigned *ret_n_fds);

/* Looks for the NUL that ends the first message, starting where the last
 * search left off (*scanned bytes are known to have none), so that a
 * message arriving byte by byte is not rescanned each time. Returns 1 and
 * the message length (without the NUL), or 0. */
int buffer_find_message(const Buffer *b, size_t *scanned, size_t *ret_len);

/* The boolean keys a message may carry, set to true by message_new(). */
typedef enum MessageFlags {
        MESSAGE_MORE      = 1 << 0,
        MESSAGE_ONEWAY    = 1 << 1,
        MESSAGE_CONTINUES = 1 << 2,
} MessageFlags;

/* Builds {key: value} (if value is not NULL), "parameters": params (a new
 * reference, or {} if NULL), and the keys of flags set to true. */
int message_new(const char *key, const char *value, json_object *params, MessageFlags flags, json_object **ret);

/* Serializes msg for the wire. Returns a pointer into msg (valid while msg
 * lives) and the length including the terminating NUL, which json-c
 * writes and which is the Varlink message separator. Refuses invalid
 * UTF-8 (-EILSEQ), which our own strict parser (and other
 * implementations) would refuse on the other side. */
int message_serialize(json_object *msg, const char **ret, size_t *ret_len);

static inline int sockaddr_un_set(struct sockaddr_un *sa, const char *path) {
        size_t n = strlen(path);

        if (n == 0)
                return -EINVAL;
        if (n >= sizeof(sa->sun_path))
                return -ENAMETOOLONG;

        *sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(sa->sun_path, path, n + 1);
        return 0;
}

static inline int fd_set_nonblock(int fd) {
        int flags;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0)
                return negative_errno();
        if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return negative_errno();
        return 0;
}

typedef struct Method {
        char *name;
        VarlinkMethodFn callback;
        void *userdata;
        unsigned fds_max;       /* fds a call may carry (varlink_server_bind_method_fds()) */
} Method;

/* File descriptors that came with the first byte of a message: offset is
 * where that message starts in the connection's input stream. */
typedef struct FdBatch {
        uint64_t offset;
        int fds[VARLINK_MESSAGE_FDS_MAX];
        unsigned n;
} FdBatch;

/* Closes every fd of the batch and empties it. */
void fd_batch_done(FdBatch *b);

typedef struct Interface {
        char *name;
        char *description;
        char **methods; /* declared in the description */
} Interface;

typedef struct Listener {
        int fd;
        sd_event_source *source;
} Listener;

struct VarlinkServer {
        sd_event *event;
        char *vendor, *product, *version, *url;

        Method *methods;
        size_t n_methods;
        Interface *interfaces;
        size_t n_interfaces;
        Listener *listeners;
        size_t n_listeners;
        sd_event_source *accept_retry;  /* off but while accepting is paused */
        bool accept_paused;             /* accept() ran short of a resource */

        VarlinkConnectFn connect_callback;
        void *connect_userdata;
        VarlinkDisconnectFn disconnect_callback;
        void *disconnect_userdata;

        unsigned connections_max, connections_per_uid_max, connections_reserved;
        uint64_t idle_usec;
        sd_event_source *idle_timer;
        VarlinkPrivilegedFn privileged_callback;
        void *privileged_userdata;
        char *refusal_error;
        VarlinkRefusedFn refused_callback;
        void *refused_userdata;
        VarlinkConn *connections; /* doubly linked */
        unsigned n_connections;
};

struct VarlinkConn {
        unsigned n_ref;
        VarlinkServer *server; /* NULL once disconnected */
        VarlinkConn *prev, *next;

        int fd;
        struct ucred ucred;
        sd_event_source *io_source, *defer_source;

        Buffer in, out;
        size_t in_scanned;
        uint64_t in_offset;     /* where in.start is in the input stream */

        /* fds received and not yet handed to their call, in stream order,
         * and the fds of the call being dispatched. */
        FdBatch in_fds[VARLINK_FD_BATCHES_MAX];
        unsigned n_in_fds;
        FdBatch call_fds;

        bool call_pending;
        VarlinkMethodFlags call_flags;

        bool accepted;      /* the connect callback took it: call disconnect */
        bool read_eof;      /* the peer will send nothing more */
        bool write_broken;  /* the peer will receive nothing more */
        bool dead;          /* to be closed on the next processing */
        bool disconnected;
        bool keep_idle;     /* the owner holds it open while idle */
        uint64_t last_active_usec; /* CLOCK_MONOTONIC: accepted, or a call, or an answer */

        void *userdata;
};

/* varlink-methods.c: the server's table of interfaces and methods. */

/* The interface called name[0..n), or NULL. */
Interface *methods_find_interface(VarlinkServer *s, const char *name, size_t n);
/* The method bound as name, or NULL. */
Method *methods_find(VarlinkServer *s, const char *name);
/* Binds name (a valid qualified name, not yet bound: -EEXIST) to callback. */
int methods_add(VarlinkServer *s, const char *name, unsigned fds_max, VarlinkMethodFn callback, void *userdata);

/* A connection on fd (which it owns from then on, unless this fails), on
 * s's event loop and in its list, which holds a reference. *ret borrows. */
int conn_new(VarlinkServer *s, int fd, const struct ucred *ucred, VarlinkConn **ret);

/* Closes c and takes it out of its server's list, calling the disconnect
 * callback if the connect callback had accepted it. The caller holds a
 * reference. */
void conn_disconnect(VarlinkConn *c);

/* varlink-service.c: binds org.varlink.service.GetInfo and
 * GetInterfaceDescription on s, as ordinary methods. */
int service_bind(VarlinkServer *s);

/* An error whose parameters are one string, {key: value}. */
int conn_error_string(VarlinkConn *c, const char *error_name, const char *key, const char *value);
