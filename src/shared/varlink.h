/* SPDX-License-Identifier: MIT */
#pragma once

/* A small Varlink (https://varlink.org) implementation on json-c and
 * sd-event: the server side injectd exposes on a unix socket, and a
 * synchronous client for injectctl and the tests. See
 * docs/varlink-protocol.md for the framing, the limits and what is left
 * out.
 *
 * The server is a security boundary: clients are untrusted. Everything a
 * client sends is bounded (message size, number of connections, queued
 * output), protocol violations disconnect the client, and nothing here
 * logs. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "cleanup.h"
#include "varlink-idl.h"

/* Largest message the server accepts, in bytes of JSON text without the
 * terminating NUL. A longer one disconnects its sender. */
#define VARLINK_MESSAGE_MAX (UINT64_C(1) << 20)

/* Largest reply the client accepts, in bytes of JSON text. Bigger than
 * VARLINK_OUTPUT_MAX, so that it takes anything our server can send. */
#define VARLINK_CLIENT_MESSAGE_MAX (UINT64_C(16) << 20)

/* Most unsent output the server queues for one connection. A reply or
 * notification that would exceed it fails with -ENOBUFS and the
 * connection is closed: the client is not reading. */
#define VARLINK_OUTPUT_MAX (UINT64_C(8) << 20)

/* The server reads no further calls from a connection while this much of
 * its output is unsent, so that a client which pipelines calls but never
 * reads cannot make the server produce unbounded replies. */
#define VARLINK_OUTPUT_HIGH_WATER (UINT64_C(256) << 10)

/* Default connection limits, see varlink_server_set_limits(). One uid
 * may hold a quarter of the connections, and the last 16 are kept for
 * privileged peers, so that neither one user nor all of them together
 * can lock root out. */
#define VARLINK_CONNECTIONS_MAX_DEFAULT 256U
#define VARLINK_CONNECTIONS_PER_UID_MAX_DEFAULT 64U
#define VARLINK_CONNECTIONS_RESERVED_DEFAULT 16U
/* A connection with no call in progress for this long is closed, unless
 * its owner holds it open (varlink_conn_set_keep_idle()). */
#define VARLINK_IDLE_TIMEOUT_USEC_DEFAULT (UINT64_C(120) * UINT64_C(1000000))

/* File descriptors (SCM_RIGHTS) one message may carry, and how many
 * messages' worth a connection holds before they are dispatched. A
 * message with more fds breaks the protocol and closes the connection; a
 * connection with VARLINK_FD_BATCHES_MAX batches waiting reads nothing
 * more until one is dispatched. Together they bound the descriptors a
 * client can make the server hold: 8 per connection. */
#define VARLINK_MESSAGE_FDS_MAX 4U
#define VARLINK_FD_BATCHES_MAX 2U

/* Default client timeout, per message awaited. */
#define VARLINK_CLIENT_TIMEOUT_USEC_DEFAULT (UINT64_C(30) * UINT64_C(1000000))
#define VARLINK_TIMEOUT_INFINITY UINT64_MAX

/* The errors of org.varlink.service. */
#define VARLINK_ERROR_INTERFACE_NOT_FOUND      "org.varlink.service.InterfaceNotFound"
#define VARLINK_ERROR_METHOD_NOT_FOUND         "org.varlink.service.MethodNotFound"
#define VARLINK_ERROR_METHOD_NOT_IMPLEMENTED   "org.varlink.service.MethodNotImplemented"
#define VARLINK_ERROR_INVALID_PARAMETER        "org.varlink.service.InvalidParameter"
#define VARLINK_ERROR_PERMISSION_DENIED        "org.varlink.service.PermissionDenied"
#define VARLINK_ERROR_EXPECTED_MORE            "org.varlink.service.ExpectedMore"

typedef struct VarlinkServer VarlinkServer;
typedef struct VarlinkConn VarlinkConn;
typedef struct VarlinkClient VarlinkClient;

typedef enum VarlinkMethodFlags {
        VARLINK_METHOD_MORE   = 1 << 0, /* the caller accepts several replies */
        VARLINK_METHOD_ONEWAY = 1 << 1, /* the caller wants no reply */
} VarlinkMethodFlags;

/* What org.varlink.service.GetInfo returns. The strings are copied. */
typedef struct VarlinkServerInfo {
        const char *vendor;
        const char *product;
        const char *version;
        const char *url;
} VarlinkServerInfo;

/* Called for each call of a bound method. parameters is the call's
 * "parameters" object (an empty object if the call had none) and is
 * borrowed: take a reference to keep it. The handler answers with
 * varlink_reply(), varlink_error() (or varlink_notify() first, for
 * VARLINK_METHOD_MORE), either before it returns or later: to answer
 * later, it takes a reference with varlink_conn_ref() and returns 0. The
 * connection reads no further call until the current one is answered.
 *
 * For VARLINK_METHOD_ONEWAY calls the call ends when the handler returns;
 * answers are accepted and dropped. A oneway handler must not answer
 * later, since its answer would go to the next call.
 *
 * A negative return without an answer closes the connection: the client
 * sees a disconnect, not a made-up error. Handlers report the errors a
 * client should see with varlink_error(). */
typedef int (*VarlinkMethodFn)(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata);

/* Called for each accepted connection, after the connection limits have
 * been checked. A negative return closes the connection, and the
 * disconnect callback is not called for it. */
typedef int (*VarlinkConnectFn)(VarlinkServer *s, VarlinkConn *c, void *userdata);

/* Called once for each connection the connect callback accepted, when it
 * is closed: the peer hung up, it broke the protocol or a limit, a handler
 * failed, varlink_conn_close() was called, or the server is being freed.
 * Always called from the event loop or from varlink_server_free(), never
 * from within another varlink_*() call. The connection is still valid
 * while the callback runs (its fd is closed already). */
typedef void (*VarlinkDisconnectFn)(VarlinkServer *s, VarlinkConn *c, void *userdata);

/* Asked only when a peer would be refused by a limit that privileged
 * peers are exempt from: may it use the room kept for them? */
typedef bool (*VarlinkPrivilegedFn)(VarlinkServer *s, const struct ucred *ucred, void *userdata);

/* A peer was turned away: error -EBUSY when it was over a limit (why
 * says which, as the peer was told), or the error of accept() when the
 * daemon ran short of a resource (-EMFILE, -ENFILE, -ENOBUFS, -ENOMEM;
 * why NULL), in which case the server stops accepting for 100 ms and the
 * peers wait in the listen backlog. For the server's user to log: the
 * shared code does not. It must not free the server. */
typedef void (*VarlinkRefusedFn)(VarlinkServer *s, int error, const char *why, void *userdata);

/* The connection limits. An unprivileged peer is refused when its uid
 * holds connections_per_uid_max connections, or when all peers together
 * hold connections_max - connections_reserved; a privileged peer only at
 * connections_max. A refused peer gets one error message (see
 * varlink_server_set_refusal_error()) and is disconnected. */
typedef struct VarlinkServerLimits {
        unsigned connections_max;
        unsigned connections_per_uid_max;
        unsigned connections_reserved;  /* < connections_max */
        uint64_t idle_usec;             /* 0: connections never time out */
} VarlinkServerLimits;

/* The server. */

/* Creates a server on the event loop e (which it references). info may be
 * NULL; missing strings are reported as empty. */
int varlink_server_new(sd_event *e, const VarlinkServerInfo *info, VarlinkServer **ret);

/* Closes every connection (calling the disconnect callback for each) and
 * the listening sockets. Does not unlink socket files. Must not be called
 * from one of the server's own callbacks. */
VarlinkServer *varlink_server_free(VarlinkServer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(VarlinkServer *, varlink_server_free)

/* Registers an interface for GetInfo and GetInterfaceDescription. The
 * description must pass varlink_idl_validate() and declare the interface
 * name. Methods it declares that are not bound answer
 * MethodNotImplemented. Returns -EINVAL for an invalid name or
 * description, -EEXIST if already registered. */
int varlink_server_add_interface(VarlinkServer *s, const char *name, const char *description);

/* Binds "interface.Method" to callback. The interface need not be
 * registered, but then GetInterfaceDescription does not know it. Returns
 * -EINVAL for an invalid name or one in org.varlink.service, -EEXIST if
 * already bound. */
int varlink_server_bind_method(VarlinkServer *s, const char *method, VarlinkMethodFn callback, void *userdata);

/* The same, for a method whose calls may carry up to fds_max (at most
 * VARLINK_MESSAGE_FDS_MAX) file descriptors, which the handler reads with
 * varlink_conn_peek_fd() or takes with varlink_conn_take_fd(). A call
 * with more fds than its method takes (any, for a method bound without
 * this) is answered org.varlink.service.InvalidParameter {"parameter":
 * "fds"} without calling the handler, and its fds are closed. */
int varlink_server_bind_method_fds(VarlinkServer *s, const char *method, unsigned fds_max, VarlinkMethodFn callback,
                                   void *userdata);

int varlink_server_set_connect_callback(VarlinkServer *s, VarlinkConnectFn callback, void *userdata);
int varlink_server_set_disconnect_callback(VarlinkServer *s, VarlinkDisconnectFn callback, void *userdata);

/* Connections beyond these limits are accepted and closed at once. 0
 * leaves a limit as it is. Connections already open are not affected. */
int varlink_server_set_connections_max(VarlinkServer *s, unsigned total, unsigned per_uid);

/* All the limits at once; -EINVAL if connections_max or
 * connections_per_uid_max is 0, or nothing is left unreserved. */
int varlink_server_set_limits(VarlinkServer *s, const VarlinkServerLimits *l);
void varlink_server_get_limits(VarlinkServer *s, VarlinkServerLimits *ret);

/* Who may use the reserved connections and pass the per-uid limit.
 * Without a callback, nobody. */
int varlink_server_set_privileged_callback(VarlinkServer *s, VarlinkPrivilegedFn callback, void *userdata);

/* The error a refused peer reads before the disconnect, with parameters
 * {"message": "..."} saying which limit; default
 * org.varlink.service.PermissionDenied. The name is copied. */
int varlink_server_set_refusal_error(VarlinkServer *s, const char *error_name);

int varlink_server_set_refused_callback(VarlinkServer *s, VarlinkRefusedFn callback, void *userdata);

/* Listens on fd, a bound and listening AF_UNIX stream socket (as from
 * socket activation). Takes ownership of fd on success only. Returns
 * -ENOTSOCK, -EINVAL if it is not listening or not a unix stream socket. */
int varlink_server_listen_fd(VarlinkServer *s, int fd);

/* Creates a unix stream socket at path with the given access mode (the
 * umask is not applied: the process umask is changed around bind(), which
 * is fine for a single-threaded daemon) and listens on it. A stale
 * socket at path is replaced; a live one (connect() succeeds) is
 * -EADDRINUSE, a file that is not a socket -EEXIST. Returns
 * -ENAMETOOLONG if path does not fit in sockaddr_un. */
int varlink_server_listen_address(VarlinkServer *s, const char *path, mode_t mode);

/* Serves an already connected unix stream socket (e.g. one end of a
 * socketpair), as if it had been accepted. Takes ownership of fd on
 * success only. Returns -EBUSY if a connection limit is reached, or the
 * connect callback's error if it refused. *ret (optional) borrows the
 * connection: take a reference to keep it. */
int varlink_server_add_connection(VarlinkServer *s, int fd, VarlinkConn **ret);

unsigned varlink_server_n_connections(VarlinkServer *s);
sd_event *varlink_server_get_event(VarlinkServer *s);

/* A connection, on the server side. */

VarlinkConn *varlink_conn_ref(VarlinkConn *c);
VarlinkConn *varlink_conn_unref(VarlinkConn *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(VarlinkConn *, varlink_conn_unref)

/* The credentials of the peer, from SO_PEERCRED at accept time. Still
 * answers after a disconnect. Returns -ENODATA if the kernel gave none. */
int varlink_conn_get_peer_ucred(VarlinkConn *c, struct ucred *ret);

/* The connected socket, or -ENOTCONN after a disconnect. */
int varlink_conn_get_fd(VarlinkConn *c);

/* The server, or NULL after a disconnect. */
VarlinkServer *varlink_conn_get_server(VarlinkConn *c);

bool varlink_conn_is_connected(VarlinkConn *c);

/* A connection that holds something of its peer's (an injection that ends
 * with it) is not closed when idle. */
void varlink_conn_set_keep_idle(VarlinkConn *c, bool b);

/* Per-connection data for the daemon; set returns the previous value. */
void *varlink_conn_set_userdata(VarlinkConn *c, void *userdata);
void *varlink_conn_get_userdata(VarlinkConn *c);

/* Bytes queued and not yet sent, so a streaming producer can drop events
 * before hitting VARLINK_OUTPUT_MAX. */
size_t varlink_conn_get_output_queued(VarlinkConn *c);

/* The file descriptors that came with the call being dispatched, for its
 * handler. Parameters name them by index (0 is the first fd of the
 * message). peek borrows: the fd is closed when the handler returns,
 * unless taken; take hands it over to the caller. Both return -ENXIO for
 * an index the call did not bring (or already taken), -EBUSY outside a
 * handler. A handler that answers later takes what it needs first. */
unsigned varlink_conn_n_fds(VarlinkConn *c);
int varlink_conn_peek_fd(VarlinkConn *c, unsigned index);
int varlink_conn_take_fd(VarlinkConn *c, unsigned index);

/* Closes the connection on the next event loop iteration, dropping
 * unsent output. Safe to call from a handler. */
int varlink_conn_close(VarlinkConn *c);

/* Answers to the current call. params (borrowed, may be NULL for {}) must
 * be an object. They return 0 when the message is queued (or dropped
 * because the call is oneway or the peer has hung up), or
 *   -ENOTCONN  the connection is closed: nothing is sent,
 *   -EBUSY     there is no call to answer,
 *   -EPROTO    varlink_notify() for a call without "more",
 *   -EINVAL    params is not an object, or an invalid error name,
 *   -EILSEQ    params contain a string that is not valid UTF-8,
 *   -ENOBUFS   VARLINK_OUTPUT_MAX would be exceeded: the connection is
 *              being closed,
 *   -ENOMEM.
 * After an error other than -ENOBUFS the call is still unanswered. */

/* The final reply. */
int varlink_reply(VarlinkConn *c, json_object *params);

/* A reply with "continues": true; only for calls with "more". */
int varlink_notify(VarlinkConn *c, json_object *params);

/* The final, error reply: error_name is "interface.ErrorName". */
int varlink_error(VarlinkConn *c, const char *error_name, json_object *params);

/* org.varlink.service.InvalidParameter {"parameter": name}. */
int varlink_error_invalid_parameter(VarlinkConn *c, const char *name);

/* Messages.
 *
 * The parsers behind the server and the client, without any I/O, for the
 * tests and the fuzzers: text[0..len) is one message without its NUL
 * (need not be NUL-terminated). Both return 0, -EBADMSG for anything the
 * protocol does not allow (see docs/varlink-protocol.md), or -ENOMEM. */

/* A call as the server receives it. */
typedef struct VarlinkCall {
        json_object *message;           /* the whole message, owned */
        const char *method;             /* a valid qualified name, borrowed from message */
        json_object *parameters;        /* owned; an empty object if the call had none */
        VarlinkMethodFlags flags;       /* never both MORE and ONEWAY */
        bool upgrade;
} VarlinkCall;

int varlink_call_parse(const char *text, size_t len, VarlinkCall *ret);
void varlink_call_done(VarlinkCall *call);

/* A reply as the client receives it. */
typedef struct VarlinkReply {
        json_object *message;           /* the whole message, owned */
        json_object *parameters;        /* owned; an empty object if the reply had none */
        const char *error;              /* a valid qualified name or NULL, borrowed from message */
        bool continues;                 /* never set with error */
} VarlinkReply;

int varlink_reply_parse(const char *text, size_t len, VarlinkReply *ret);
void varlink_reply_done(VarlinkReply *reply);

/* The client. */

/* Connects to the unix socket at path. */
int varlink_client_connect(const char *path, VarlinkClient **ret);

/* Uses an already connected socket; takes ownership of fd on success. */
int varlink_client_new_from_fd(int fd, VarlinkClient **ret);

VarlinkClient *varlink_client_free(VarlinkClient *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(VarlinkClient *, varlink_client_free)

/* The socket, for poll()-based callers: readable means a reply (part) is
 * waiting. Owned by the client. */
int varlink_client_get_fd(VarlinkClient *c);

/* How long to wait for each message (and for sending a call), in µs;
 * VARLINK_TIMEOUT_INFINITY waits forever. Default
 * VARLINK_CLIENT_TIMEOUT_USEC_DEFAULT. */
void varlink_client_set_timeout(VarlinkClient *c, uint64_t usec);

/* Calls method with params (borrowed; NULL for {}) and waits for the
 * reply. Returns 0 with a new reference to the reply's parameters in
 * *ret_reply_params (optional) and NULL in *ret_error if the call
 * succeeded, or the error name in *ret_error (borrowed from the client,
 * valid until its next call) and the error's parameters in
 * *ret_reply_params if the server answered with an error. Without
 * ret_error, an error reply returns -EREMOTEIO. Otherwise returns
 * -ETIMEDOUT, -ECONNRESET (the server hung up), -EBADMSG (a malformed or
 * oversized reply, or "continues" in a reply to a call without "more"),
 * -EINVAL (bad method name or params), -ENOMEM. After any of these the
 * client is unusable (-ENOTCONN), since a late reply could be taken for
 * the answer to the next call. */
int varlink_client_call(
                VarlinkClient *c,
                const char *method,
                json_object *params,
                json_object **ret_reply_params,
                const char **ret_error);

/* Attaches fd (borrowed: it must stay open until the next call is sent)
 * to the next call sent, and returns its index, which the call's
 * parameters use to name it. At most VARLINK_MESSAGE_FDS_MAX per call
 * (-E2BIG). Sent with the first byte of the call (SCM_RIGHTS); the
 * list empties when the call is sent or fails. */
int varlink_client_push_fd(VarlinkClient *c, int fd);

/* Sends a call with "oneway": no reply comes. */
int varlink_client_call_oneway(VarlinkClient *c, const char *method, json_object *params);

/* Called for each reply of a streaming call. parameters and error are
 * borrowed for the duration of the call. Returning non-zero stops
 * receiving. */
typedef int (*VarlinkReplyFn)(
                VarlinkClient *c,
                json_object *parameters,
                const char *error,
                bool continues,
                void *userdata);

/* Calls method with "more" and passes each reply to callback until the
 * final one (continues false, or an error). The timeout applies to each
 * reply. Returns 0 after the final reply, or the callback's non-zero
 * return value (the client is then unusable, since the rest of the stream
 * is still coming), or the errors of varlink_client_call(). */
int varlink_client_call_more(
                VarlinkClient *c,
                const char *method,
                json_object *params,
                VarlinkReplyFn callback,
                void *userdata);
