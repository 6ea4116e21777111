/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "time-util.h"
#include "json-reader.h"
#include "json-util.h"
#include "utf8.h"
#include "varlink.h"

/* How much one read asks for. */
#define READ_CHUNK (UINT64_C(64) << 10)

/* Buffers bigger than this are freed when they run empty, so that an idle
 * connection does not keep the memory a big message needed. */
#define BUFFER_KEEP (UINT64_C(64) << 10)

/* Calls dispatched from one connection per event loop iteration, and
 * connections accepted per wakeup, so that one busy client cannot starve
 * the others. */
#define DISPATCH_BATCH 16U
#define ACCEPT_BATCH 16U

/* After accept() failed for lack of resources (EMFILE...), pause accepting
 * this long instead of spinning on a listening socket that stays
 * readable. */
#define ACCEPT_RETRY_USEC (UINT64_C(100) * UINT64_C(1000))

#define SERVICE_INTERFACE "org.varlink.service"

static const char service_description[] =
        "# The Varlink service interface, provided by every Varlink service.\n"
        "interface org.varlink.service\n"
        "\n"
        "# Describes the service and lists the interfaces it implements.\n"
        "method GetInfo() -> (\n"
        "  vendor: string,\n"
        "  product: string,\n"
        "  version: string,\n"
        "  url: string,\n"
        "  interfaces: []string\n"
        ")\n"
        "\n"
        "# Returns the description of one of the interfaces.\n"
        "method GetInterfaceDescription(interface: string) -> (description: string)\n"
        "\n"
        "# The interface is not implemented by this service.\n"
        "error InterfaceNotFound (interface: string)\n"
        "\n"
        "# The method is not known.\n"
        "error MethodNotFound (method: string)\n"
        "\n"
        "# The interface declares the method, but the service does not implement it.\n"
        "error MethodNotImplemented (method: string)\n"
        "\n"
        "# A parameter is missing, has the wrong type or an invalid value.\n"
        "error InvalidParameter (parameter: string)\n"
        "\n"
        "# The caller may not call this method.\n"
        "error PermissionDenied ()\n"
        "\n"
        "# The method must be called with \"more\".\n"
        "error ExpectedMore ()\n";

/* ---- Byte buffers ---- */

/* data[start..end) holds the unprocessed bytes. */
typedef struct Buffer {
        char *data;
        size_t alloc, start, end;
} Buffer;

static size_t buffer_used(const Buffer *b) {
        return b->end - b->start;
}

static void buffer_done(Buffer *b) {
        free(b->data);
        *b = (Buffer) {};
}

/* Makes room for up to want more bytes at the end without letting the
 * buffer hold more than cap bytes; returns the room made, 0 if the buffer
 * is full, or -ENOMEM. */
static ssize_t buffer_reserve(Buffer *b, size_t want, size_t cap) {
        size_t used = buffer_used(b), n, alloc;
        char *p;

        if (used >= cap)
                return 0;
        n = want < cap - used ? want : cap - used;

        if (b->start > 0 && b->alloc - b->end < n) {
                memmove(b->data, b->data + b->start, used);
                b->start = 0;
                b->end = used;
        }

        if (b->alloc - b->end >= n)
                return (ssize_t) n;

        alloc = b->alloc > 0 ? b->alloc : 4096;
        while (alloc < used + n)
                alloc *= 2;
        if (alloc > cap)
                alloc = cap;

        p = realloc(b->data, alloc);
        if (!p)
                return -ENOMEM;
        b->data = p;
        b->alloc = alloc;
        return (ssize_t) n;
}

static void buffer_consume(Buffer *b, size_t n) {
        b->start += n;
        if (b->start < b->end)
                return;

        b->start = b->end = 0;
        if (b->alloc > BUFFER_KEEP)
                buffer_done(b);
}

static int buffer_append(Buffer *b, const char *data, size_t n, size_t cap) {
        ssize_t k;

        k = buffer_reserve(b, n, cap);
        if (k < 0)
                return (int) k;
        if ((size_t) k < n)
                return -ENOBUFS;

        memcpy(b->data + b->end, data, n);
        b->end += n;
        return 0;
}

/* Looks for the NUL that ends the first message, starting where the last
 * search left off (*scanned bytes are known to have none), so that a
 * message arriving byte by byte is not rescanned each time. Returns 1 and
 * the message length (without the NUL), or 0. */
static int buffer_find_message(const Buffer *b, size_t *scanned, size_t *ret_len) {
        const char *nul = NULL;

        /* data is NULL while nothing was read; memchr() must not see it. */
        if (buffer_used(b) > *scanned)
                nul = memchr(b->data + b->start + *scanned, 0, buffer_used(b) - *scanned);
        if (!nul) {
                *scanned = buffer_used(b);
                return 0;
        }

        *ret_len = nul - (b->data + b->start);
        return 1;
}

/* ---- Names and messages ---- */

/* Serializes msg for the wire. Returns a pointer into msg (valid while msg
 * lives) and the length including the terminating NUL, which json-c
 * writes and which is the Varlink message separator. Refuses invalid
 * UTF-8, which our own strict parser (and other implementations) would
 * refuse on the other side. */
static int message_serialize(json_object *msg, const char **ret, size_t *ret_len) {
        const char *s;
        size_t len;

        s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        if (!s)
                return -ENOMEM;
        if (!utf8_is_valid(s, len))
                return -EILSEQ;

        *ret = s;
        *ret_len = len + 1;
        return 0;
}

static int json_add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int json_add_string(json_object *o, const char *key, const char *value) {
        return json_add(o, key, json_object_new_string(value));
}

/* ---- Server objects ---- */

typedef struct Method {
        char *name;
        VarlinkMethodFn callback;
        void *userdata;
} Method;

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
        sd_event_source *accept_retry;

        VarlinkConnectFn connect_callback;
        void *connect_userdata;
        VarlinkDisconnectFn disconnect_callback;
        void *disconnect_userdata;

        unsigned connections_max, connections_per_uid_max;
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

        bool call_pending;
        VarlinkMethodFlags call_flags;

        bool accepted;      /* the connect callback took it: call disconnect */
        bool read_eof;      /* the peer will send nothing more */
        bool write_broken;  /* the peer will receive nothing more */
        bool dead;          /* to be closed on the next processing */
        bool disconnected;

        void *userdata;
};

static void conn_disconnect(VarlinkConn *c);

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

static Interface *server_find_interface(VarlinkServer *s, const char *name, size_t n) {
        for (size_t i = 0; i < s->n_interfaces; i++)
                if (strlen(s->interfaces[i].name) == n && memcmp(s->interfaces[i].name, name, n) == 0)
                        return &s->interfaces[i];
        return NULL;
}

static Method *server_find_method(VarlinkServer *s, const char *name) {
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

/* ---- Connections ---- */

VarlinkConn *varlink_conn_ref(VarlinkConn *c) {
        if (c)
                c->n_ref++;
        return c;
}

static VarlinkConn *conn_free(VarlinkConn *c) {
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

static void conn_disconnect(VarlinkConn *c) {
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

        msg = json_object_new_object();
        if (!msg)
                return -ENOMEM;
        if (error) {
                r = json_add_string(msg, "error", error);
                if (r < 0)
                        return r;
        }
        r = json_add(msg, "parameters", params ? json_object_get(params) : json_object_new_object());
        if (r < 0)
                return r;
        if (continues) {
                r = json_add(msg, "continues", json_object_new_boolean(true));
                if (r < 0)
                        return r;
        }

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

/* An error whose parameters are one string, {key: value}. */
static int conn_error_string(VarlinkConn *c, const char *error_name, const char *key, const char *value) {
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

int varlink_error_invalid_parameter(VarlinkConn *c, const char *name) {
        if (!name)
                return -EINVAL;
        return conn_error_string(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter", name);
}

/* ---- org.varlink.service ---- */

static int json_array_add_string(json_object *a, const char *value) {
        json_object *v = json_object_new_string(value);

        if (!v)
                return -ENOMEM;
        if (json_object_array_add(a, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int service_get_info(VarlinkConn *c, json_object *parameters) {
        static const char *const allowed[] = { NULL };
        _cleanup_json_ json_object *reply = NULL;
        VarlinkServer *s = c->server;
        json_object *interfaces;
        const char *unknown;
        int r;

        if (json_check_keys(parameters, allowed, &unknown) < 0)
                return varlink_error_invalid_parameter(c, unknown);

        reply = json_object_new_object();
        if (!reply)
                return -ENOMEM;
        if ((r = json_add_string(reply, "vendor", s->vendor)) < 0 ||
            (r = json_add_string(reply, "product", s->product)) < 0 ||
            (r = json_add_string(reply, "version", s->version)) < 0 ||
            (r = json_add_string(reply, "url", s->url)) < 0)
                return r;

        interfaces = json_object_new_array();
        r = json_add(reply, "interfaces", interfaces);
        if (r < 0)
                return r;
        r = json_array_add_string(interfaces, SERVICE_INTERFACE);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_interfaces; i++) {
                r = json_array_add_string(interfaces, s->interfaces[i].name);
                if (r < 0)
                        return r;
        }

        return varlink_reply(c, reply);
}

static int service_get_interface_description(VarlinkConn *c, json_object *parameters) {
        static const char *const allowed[] = { "interface", NULL };
        _cleanup_json_ json_object *reply = NULL;
        const char *unknown, *name, *description;
        Interface *i;
        int r;

        if (json_check_keys(parameters, allowed, &unknown) < 0)
                return varlink_error_invalid_parameter(c, unknown);
        if (json_get_string(parameters, "interface", &name) < 0)
                return varlink_error_invalid_parameter(c, "interface");

        if (strcmp(name, SERVICE_INTERFACE) == 0)
                description = service_description;
        else if ((i = server_find_interface(c->server, name, strlen(name))))
                description = i->description;
        else
                return conn_error_string(c, VARLINK_ERROR_INTERFACE_NOT_FOUND, "interface", name);

        reply = json_object_new_object();
        if (!reply)
                return -ENOMEM;
        r = json_add_string(reply, "description", description);
        if (r < 0)
                return r;

        return varlink_reply(c, reply);
}

/* ---- Receiving calls ---- */

/* Routes a call that is not to a bound method. */
static int conn_route_unbound(VarlinkConn *c, const char *method) {
        VarlinkServer *s = c->server;
        const char *dot = strrchr(method, '.');
        size_t n = dot - method;
        _cleanup_free_ char *interface = NULL;
        Interface *i;

        if (n == strlen(SERVICE_INTERFACE) && memcmp(method, SERVICE_INTERFACE, n) == 0)
                return conn_error_string(c, VARLINK_ERROR_METHOD_NOT_FOUND, "method", method);

        i = server_find_interface(s, method, n);
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

int varlink_call_parse(const char *text, size_t len, VarlinkCall *ret) {
        static const char *const allowed[] = { "method", "parameters", "oneway", "more", "upgrade", NULL };
        _cleanup_json_ json_object *msg = NULL, *parameters = NULL;
        bool oneway = false, more = false, upgrade = false;
        const char *method, *unknown;
        json_object *p;
        int r;

        r = json_read(text, len, JSON_READ_OBJECT, &msg, NULL, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;

        if (json_check_keys(msg, allowed, &unknown) < 0)
                return -EBADMSG;
        if (json_get_string(msg, "method", &method) < 0 || !varlink_qualified_name_is_valid(method))
                return -EBADMSG;

        r = json_get_bool(msg, "oneway", &oneway);
        if (r < 0 && r != -ENOENT)
                return -EBADMSG;
        r = json_get_bool(msg, "more", &more);
        if (r < 0 && r != -ENOENT)
                return -EBADMSG;
        r = json_get_bool(msg, "upgrade", &upgrade);
        if (r < 0 && r != -ENOENT)
                return -EBADMSG;
        if (oneway && more)
                return -EBADMSG;

        r = json_get_object(msg, "parameters", &p);
        if (r == -ENOENT) {
                parameters = json_object_new_object();
                if (!parameters)
                        return -ENOMEM;
        } else if (r < 0)
                return -EBADMSG;
        else
                parameters = json_object_get(p);

        *ret = (VarlinkCall) {
                .message = TAKE_PTR(msg),
                .method = method,
                .parameters = TAKE_PTR(parameters),
                .flags = (more ? VARLINK_METHOD_MORE : 0) | (oneway ? VARLINK_METHOD_ONEWAY : 0),
                .upgrade = upgrade,
        };
        return 0;
}

void varlink_call_done(VarlinkCall *call) {
        json_object_put(call->parameters);
        json_object_put(call->message);
        *call = (VarlinkCall) {};
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

        if (call.upgrade)
                /* We have no method that hands the connection over to
                 * another protocol. */
                r = varlink_error_invalid_parameter(c, "upgrade");
        else if (strcmp(call.method, SERVICE_INTERFACE ".GetInfo") == 0)
                r = service_get_info(c, call.parameters);
        else if (strcmp(call.method, SERVICE_INTERFACE ".GetInterfaceDescription") == 0)
                r = service_get_interface_description(c, call.parameters);
        else if ((m = server_find_method(c->server, call.method)))
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

/* Reads what is available, up to a full input buffer. */
static void conn_read(VarlinkConn *c) {
        for (;;) {
                ssize_t room, n;

                /* Room for one message and its NUL; pipelined calls wait
                 * in the kernel's socket buffer beyond that. */
                room = buffer_reserve(&c->in, READ_CHUNK, VARLINK_MESSAGE_MAX + 1);
                if (room < 0) {
                        c->dead = true;
                        return;
                }
                if (room == 0)
                        return;

                n = recv(c->fd, c->in.data + c->in.end, room, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return;
                        if (errno == ECONNRESET || errno == EPIPE) {
                                c->read_eof = c->write_broken = true;
                                return;
                        }
                        c->dead = true;
                        return;
                }
                if (n == 0) {
                        c->read_eof = true;
                        return;
                }
                c->in.end += n;
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

        if (!c->read_eof && buffer_used(&c->in) <= VARLINK_MESSAGE_MAX)
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

                r = conn_dispatch(c, c->in.data + c->in.start, len);
                if (c->disconnected)
                        return;
                buffer_consume(&c->in, len + 1);
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

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->n_ref = 1;
        c->fd = fd;
        c->ucred = ucred;

        r = sd_event_add_io(s->event, &c->io_source, fd, EPOLLIN, conn_io_handler, c);
        if (r < 0)
                goto fail;
        r = sd_event_add_defer(s->event, &c->defer_source, conn_defer_handler, c);
        if (r < 0)
                goto fail;
        r = sd_event_source_set_enabled(c->defer_source, SD_EVENT_OFF);
        if (r < 0)
                goto fail;

        /* The list holds the server's reference. */
        c->server = s;
        c->next = s->connections;
        if (c->next)
                c->next->prev = c;
        s->connections = varlink_conn_ref(c);
        s->n_connections++;

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

fail:
        c->fd = -1;
        return r;
}

int varlink_server_add_connection(VarlinkServer *s, int fd, VarlinkConn **ret) {
        int flags;

        if (!s || fd < 0)
                return -EINVAL;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0)
                return negative_errno();
        if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return negative_errno();

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
        int flags;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return negative_errno();
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

static int sockaddr_un_set(struct sockaddr_un *sa, const char *path) {
        size_t n = strlen(path);

        if (n == 0)
                return -EINVAL;
        if (n >= sizeof(sa->sun_path))
                return -ENAMETOOLONG;

        *sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(sa->sun_path, path, n + 1);
        return 0;
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

/* ---- Client ---- */

struct VarlinkClient {
        int fd;
        uint64_t timeout;
        Buffer in;
        size_t in_scanned;
        char *error;  /* name of the last error reply */
        bool broken;  /* a call failed midway: replies may be out of step */
};

static uint64_t client_deadline(VarlinkClient *c) {
        uint64_t n = now_usec(CLOCK_MONOTONIC);

        if (c->timeout == VARLINK_TIMEOUT_INFINITY || c->timeout > UINT64_MAX - n)
                return VARLINK_TIMEOUT_INFINITY;
        return n + c->timeout;
}

/* Waits for events on the client's socket until deadline. Returns > 0 if
 * ready, -ETIMEDOUT. */
static int client_wait(VarlinkClient *c, short events, uint64_t deadline) {
        for (;;) {
                struct pollfd pfd = { .fd = c->fd, .events = events };
                int ms = -1, r;

                if (deadline != VARLINK_TIMEOUT_INFINITY) {
                        uint64_t n = now_usec(CLOCK_MONOTONIC), left;

                        if (n >= deadline)
                                return -ETIMEDOUT;
                        left = (deadline - n + 999) / 1000;
                        ms = left > INT_MAX ? INT_MAX : (int) left;
                }

                r = poll(&pfd, 1, ms);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (r > 0)
                        return r;
        }
}

int varlink_client_new_from_fd(int fd, VarlinkClient **ret) {
        VarlinkClient *c;
        int flags;

        if (fd < 0 || !ret)
                return -EINVAL;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0)
                return negative_errno();
        if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return negative_errno();

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->fd = fd;
        c->timeout = VARLINK_CLIENT_TIMEOUT_USEC_DEFAULT;

        *ret = c;
        return 0;
}

int varlink_client_connect(const char *path, VarlinkClient **ret) {
        _cleanup_close_ int fd = -1;
        struct sockaddr_un sa;
        struct timeval tv = {
                .tv_sec = VARLINK_CLIENT_TIMEOUT_USEC_DEFAULT / UINT64_C(1000000),
        };
        int r;

        if (!path || !ret)
                return -EINVAL;

        r = sockaddr_un_set(&sa, path);
        if (r < 0)
                return r;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();

        /* A blocking connect() waits while the server's backlog is full;
         * SO_SNDTIMEO bounds that. */
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (connect(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0)
                return errno == EAGAIN ? -ETIMEDOUT : negative_errno();

        r = varlink_client_new_from_fd(fd, ret);
        if (r < 0)
                return r;
        TAKE_FD(fd);
        return 0;
}

VarlinkClient *varlink_client_free(VarlinkClient *c) {
        if (!c)
                return NULL;
        safe_close(c->fd);
        buffer_done(&c->in);
        free(c->error);
        free(c);
        return NULL;
}

int varlink_client_get_fd(VarlinkClient *c) {
        return c ? c->fd : -EINVAL;
}

void varlink_client_set_timeout(VarlinkClient *c, uint64_t usec) {
        if (c)
                c->timeout = usec;
}

/* Builds a call message; -EINVAL for a bad method name or parameters,
 * -EILSEQ for invalid UTF-8, which the server would refuse. */
static int client_send(VarlinkClient *c, const char *method, json_object *params, bool more, bool oneway) {
        _cleanup_json_ json_object *msg = NULL;
        const char *s;
        size_t len, done = 0;
        uint64_t deadline;
        int r;

        if (!c || !varlink_qualified_name_is_valid(method))
                return -EINVAL;
        if (params && !json_object_is_type(params, json_type_object))
                return -EINVAL;
        if (c->broken)
                return -ENOTCONN;

        msg = json_object_new_object();
        if (!msg)
                return -ENOMEM;
        r = json_add_string(msg, "method", method);
        if (r < 0)
                return r;
        r = json_add(msg, "parameters", params ? json_object_get(params) : json_object_new_object());
        if (r < 0)
                return r;
        if (more) {
                r = json_add(msg, "more", json_object_new_boolean(true));
                if (r < 0)
                        return r;
        }
        if (oneway) {
                r = json_add(msg, "oneway", json_object_new_boolean(true));
                if (r < 0)
                        return r;
        }

        r = message_serialize(msg, &s, &len);
        if (r < 0)
                return r;

        deadline = client_deadline(c);
        while (done < len) {
                ssize_t n;

                n = send(c->fd, s + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                r = client_wait(c, POLLOUT, deadline);
                                if (r < 0)
                                        goto broken;
                                continue;
                        }
                        r = errno == EPIPE ? -ECONNRESET : negative_errno();
                        goto broken;
                }
                done += n;
        }
        return 0;

broken:
        c->broken = true;
        return r;
}

int varlink_reply_parse(const char *text, size_t len, VarlinkReply *ret) {
        static const char *const allowed[] = { "parameters", "continues", "error", NULL };
        _cleanup_json_ json_object *msg = NULL, *params = NULL;
        const char *unknown, *error = NULL;
        bool continues = false;
        json_object *p;
        int r;

        r = json_read(text, len, JSON_READ_OBJECT, &msg, NULL, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;

        if (json_check_keys(msg, allowed, &unknown) < 0)
                return -EBADMSG;
        if (json_get_bool(msg, "continues", &continues) == -EINVAL)
                return -EBADMSG;
        switch (json_get_string(msg, "error", &error)) {
        case 0:
                if (!varlink_qualified_name_is_valid(error) || continues)
                        return -EBADMSG;
                break;
        case -ENOENT:
                error = NULL;
                break;
        default:
                return -EBADMSG;
        }

        switch (json_get_object(msg, "parameters", &p)) {
        case 0:
                params = json_object_get(p);
                break;
        case -ENOENT:
                params = json_object_new_object();
                if (!params)
                        return -ENOMEM;
                break;
        default:
                return -EBADMSG;
        }

        *ret = (VarlinkReply) {
                .message = TAKE_PTR(msg),
                .parameters = TAKE_PTR(params),
                .error = error,
                .continues = continues,
        };
        return 0;
}

void varlink_reply_done(VarlinkReply *reply) {
        json_object_put(reply->parameters);
        json_object_put(reply->message);
        *reply = (VarlinkReply) {};
}

/* Receives one reply; on failure the client is broken. */
static int client_receive(VarlinkClient *c, json_object **ret_params, const char **ret_error, bool *ret_continues) {
        _cleanup_(varlink_reply_done) VarlinkReply reply = {};
        uint64_t deadline;
        size_t len;
        int r;

        deadline = client_deadline(c);
        while (buffer_find_message(&c->in, &c->in_scanned, &len) == 0) {
                ssize_t room, n;

                room = buffer_reserve(&c->in, READ_CHUNK, VARLINK_CLIENT_MESSAGE_MAX + 1);
                if (room < 0) {
                        r = (int) room;
                        goto broken;
                }
                if (room == 0) {
                        r = -EBADMSG; /* oversized */
                        goto broken;
                }

                n = recv(c->fd, c->in.data + c->in.end, room, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                r = client_wait(c, POLLIN, deadline);
                                if (r < 0)
                                        goto broken;
                                continue;
                        }
                        r = negative_errno();
                        goto broken;
                }
                if (n == 0) {
                        r = -ECONNRESET;
                        goto broken;
                }
                c->in.end += n;
        }

        r = varlink_reply_parse(c->in.data + c->in.start, len, &reply);
        buffer_consume(&c->in, len + 1);
        c->in_scanned = 0;
        if (r < 0)
                goto broken;

        free(c->error);
        c->error = NULL;
        if (reply.error) {
                c->error = strdup(reply.error);
                if (!c->error) {
                        r = -ENOMEM;
                        goto broken;
                }
        }

        *ret_params = TAKE_PTR(reply.parameters);
        *ret_error = c->error;
        *ret_continues = reply.continues;
        return 0;

broken:
        c->broken = true;
        return r;
}

int varlink_client_call(
                VarlinkClient *c,
                const char *method,
                json_object *params,
                json_object **ret_reply_params,
                const char **ret_error) {

        _cleanup_json_ json_object *reply = NULL;
        const char *error;
        bool continues;
        int r;

        r = client_send(c, method, params, false, false);
        if (r < 0)
                return r;

        r = client_receive(c, &reply, &error, &continues);
        if (r < 0)
                return r;
        if (continues) {
                c->broken = true;
                return -EBADMSG;
        }

        if (error && !ret_error)
                return -EREMOTEIO;

        if (ret_reply_params)
                *ret_reply_params = TAKE_PTR(reply);
        if (ret_error)
                *ret_error = error;
        return 0;
}

int varlink_client_call_oneway(VarlinkClient *c, const char *method, json_object *params) {
        return client_send(c, method, params, false, true);
}

int varlink_client_call_more(
                VarlinkClient *c,
                const char *method,
                json_object *params,
                VarlinkReplyFn callback,
                void *userdata) {

        int r;

        if (!callback)
                return -EINVAL;

        r = client_send(c, method, params, true, false);
        if (r < 0)
                return r;

        for (;;) {
                _cleanup_json_ json_object *reply = NULL;
                const char *error;
                bool continues;

                r = client_receive(c, &reply, &error, &continues);
                if (r < 0)
                        return r;

                r = callback(c, reply, error, continues, userdata);
                if (r != 0) {
                        if (continues)
                                c->broken = true; /* the rest of the stream is coming */
                        return r;
                }
                if (!continues)
                        return 0;
        }
}
