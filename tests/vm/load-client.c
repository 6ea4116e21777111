/* SPDX-License-Identifier: MIT */
/* load-client: drives injectd with many concurrent clients, for
 * tests/vm/test-daemon-load.sh. Each client is a process of its own (so
 * that each arms in a scope of its own: process scope, its own pid).
 *
 *   load-client [--dbus N] [--varlink N] [--garbage N] [--hangup N]
 *               [--iterations N] [--function NAME] SOCKET
 *
 * --dbus / --varlink clients loop --iterations times over: Inject (process
 * scope of themselves, a comm filter that matches no thread, 300 s),
 * ListInjections (their id must be listed), a short watch (D-Bus:
 * Subscribe; Varlink: Watch on a second connection, raw), Cancel, and then
 * the watch must show the removal (reason "cancelled"); D-Bus Unsubscribes.
 * Every answer is checked; one that is wrong or late (60 s) is a failure.
 *
 * --garbage clients send, in turn: text that is not JSON, a truncated
 * object, 2 MB without a message end, Inject with wrong parameter types,
 * an unknown method (Varlink), and over D-Bus a wrong signature and a
 * wrong variant type. Each must get its documented answer: a disconnect
 * for a protocol violation, the named error otherwise.
 * --hangup clients connect and hang up: mid-message, at once, or right
 * after sending a valid Inject (Varlink and D-Bus), whose injection must
 * then end with its owner (the script checks nothing is left).
 *
 * Prints, per transport, how many requests were sent and answered
 * correctly, and the p50/p99 latency of the checked requests. Exit status
 * 0 if every answer was correct, 1 otherwise, 2 on usage errors. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "json-reader.h"
#include "json-util.h"
#include "varlink.h"

#define BUS_NAME "org.injectd.Injector1"
#define BUS_PATH "/org/injectd/Injector1"
#define BUS_MANAGER "org.injectd.Injector1.Manager"
#define VL_IFACE "org.injectd.Injector."
#define COMM_NOMATCH "ld-nomatch-x" /* no thread is called this */
/* Each answer must come within WAIT_USEC. With 50 clients queued on one
 * daemon under TCG, a loaded 2-core host and ASan, p99 reached 20 s; the
 * printed latencies show the real distribution. An injection must outlive
 * the slowest round trip before its Cancel. */
#define WAIT_USEC UINT64_C(60000000)
#define DURATION_USEC UINT64_C(300000000)

enum { T_DBUS, T_VARLINK, T_MAX };
static const char *const transport_name[T_MAX] = { "dbus", "varlink" };

/* One checked request, sent from a client to the parent through a pipe:
 * small enough that each write() is atomic (PIPE_BUF). */
typedef struct Record {
        uint8_t transport;
        uint8_t ok;       /* 1: a correct answer; 0: wrong or none */
        uint8_t timed;    /* 1: its latency counts for p50/p99 */
        uint8_t pad;
        uint32_t usec;
} Record;

static int record_fd = -1;
static const char *socket_path;
static const char *function = "__x64_sys_getpriority";
static unsigned iterations = 5;
static unsigned client_no;

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static void record(int transport, bool ok, bool timed, uint64_t started) {
        Record r = {
                .transport = transport,
                .ok = ok,
                .timed = timed,
                .usec = (uint32_t) (now_usec() - started),
        };

        if (write(record_fd, &r, sizeof(r)) != sizeof(r))
                _exit(3);
}

#define BAD(transport, started, ...)                                                   \
        ({                                                                             \
                fprintf(stderr, "load-client[%u] %s: ", client_no, transport_name[transport]); \
                fprintf(stderr, __VA_ARGS__);                                          \
                fputc('\n', stderr);                                                   \
                record(transport, false, false, started);                              \
                -1;                                                                    \
        })

/* ---------------------------------------------------------------- raw Varlink */

static int raw_connect(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        strncpy(sa.sun_path, socket_path, sizeof(sa.sun_path) - 1);
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

static int raw_send(int fd, const char *text, size_t n) {
        while (n > 0) {
                ssize_t k = send(fd, text, n, MSG_NOSIGNAL);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                text += k;
                n -= (size_t) k;
        }
        return 0;
}

/* Reads one NUL-terminated message into buf (at most size - 1 bytes) within
 * WAIT_USEC; *pending carries bytes read past the message to the next call.
 * Returns its length, 0 at end of file (or a reset), -ETIMEDOUT, -EMSGSIZE. */
typedef struct RawConn {
        int fd;
        char buf[65536];
        size_t have;
} RawConn;

static ssize_t raw_read_message(RawConn *rc, char *out, size_t size) {
        uint64_t deadline = now_usec() + WAIT_USEC;

        for (;;) {
                char *nul = memchr(rc->buf, 0, rc->have);
                if (nul) {
                        size_t len = (size_t) (nul - rc->buf);
                        if (len >= size)
                                return -EMSGSIZE;
                        memcpy(out, rc->buf, len + 1);
                        memmove(rc->buf, nul + 1, rc->have - len - 1);
                        rc->have -= len + 1;
                        return (ssize_t) len + (len == 0); /* an empty message is not EOF */
                }
                if (rc->have == sizeof(rc->buf))
                        return -EMSGSIZE;
                uint64_t n = now_usec();
                if (n >= deadline)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = rc->fd, .events = POLLIN };
                int r = poll(&p, 1, (int) ((deadline - n) / 1000) + 1);
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                ssize_t k = recv(rc->fd, rc->buf + rc->have, sizeof(rc->buf) - rc->have, 0);
                if (k == 0 || (k < 0 && errno == ECONNRESET))
                        return 0;
                if (k < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        return -errno;
                }
                rc->have += (size_t) k;
        }
}

/* Waits until the peer closes the connection without sending anything:
 * what the server does on a protocol violation. Returns 0, or -EPROTO if
 * something came, -ETIMEDOUT. */
static int raw_expect_disconnect(int fd) {
        uint64_t deadline = now_usec() + WAIT_USEC;
        char c;

        for (;;) {
                uint64_t n = now_usec();
                if (n >= deadline)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, (int) ((deadline - n) / 1000) + 1) <= 0)
                        continue;
                ssize_t k = recv(fd, &c, 1, 0);
                if (k == 0 || (k < 0 && errno == ECONNRESET))
                        return 0;
                if (k > 0)
                        return -EPROTO;
                if (errno != EINTR && errno != EAGAIN)
                        return -errno;
        }
}

/* ---------------------------------------------------------------- D-Bus client */

typedef struct Removal {
        const char *id;
        bool seen;
        char reason[32];
} Removal;

static int on_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Removal *w = userdata;
        const char *id, *path, *reason;

        if (sd_bus_message_read(m, "sos", &id, &path, &reason) < 0)
                return 0;
        if (strcmp(id, w->id) == 0) {
                w->seen = true;
                snprintf(w->reason, sizeof(w->reason), "%s", reason);
        }
        return 0;
}

static bool id_in_list(const char *json, const char *id) {
        _cleanup_(json_object_putp) json_object *a = NULL;

        if (json_parse_strict(json, strlen(json), 0, &a) < 0 || !json_object_is_type(a, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *o = json_object_array_get_idx(a, i), *v;
                if (json_object_object_get_ex(o, "id", &v) && json_object_is_type(v, json_type_string) &&
                    strcmp(json_object_get_string(v), id) == 0)
                        return true;
        }
        return false;
}

static bool is_id(const char *s) {
        if (!s || strlen(s) != 16)
                return false;
        return strspn(s, "0123456789abcdef") == 16;
}

static int bus_inject_message(sd_bus *bus, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH, BUS_MANAGER, "Inject");
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 5,
                                          "function", "s", function,
                                          "error", "s", "EPERM",
                                          "scope", "s", "process",
                                          "comm", "s", COMM_NOMATCH,
                                          "duration_usec", "t", DURATION_USEC);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int dbus_iteration(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *id0, *path, *list;
        char id[17];
        uint64_t expires, t;
        int r;

        /* Inject */
        t = now_usec();
        if (bus_inject_message(bus, &m) < 0)
                return BAD(T_DBUS, t, "cannot build Inject");
        r = sd_bus_call(bus, m, WAIT_USEC, &error, &reply);
        if (r < 0) {
                BAD(T_DBUS, t, "Inject: %s: %s", error.name ?: strerror(-r), error.message ?: "");
                sd_bus_error_free(&error);
                return -1;
        }
        if (sd_bus_message_read(reply, "sot", &id0, &path, &expires) < 0 || !is_id(id0))
                return BAD(T_DBUS, t, "Inject: a malformed reply");
        snprintf(id, sizeof(id), "%s", id0);
        record(T_DBUS, true, true, t);
        reply = sd_bus_message_unref(reply);

        /* ListInjections: ours is there */
        t = now_usec();
        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER, "ListInjections", &error, &reply, "b", 0);
        if (r < 0) {
                BAD(T_DBUS, t, "ListInjections: %s: %s", error.name ?: strerror(-r), error.message ?: "");
                sd_bus_error_free(&error);
                return -1;
        }
        if (sd_bus_message_read(reply, "s", &list) < 0 || !id_in_list(list, id))
                return BAD(T_DBUS, t, "ListInjections: %s is not listed", id);
        record(T_DBUS, true, true, t);
        reply = sd_bus_message_unref(reply);

        /* The watch: subscribe, and the removal must be signalled. */
        Removal w = { .id = id };
        if (sd_bus_match_signal(bus, &slot, NULL, NULL, BUS_MANAGER, "InjectionRemoved", on_removed, &w) < 0)
                return BAD(T_DBUS, now_usec(), "cannot add a match");
        t = now_usec();
        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER, "Subscribe", &error, NULL, "");
        if (r < 0) {
                BAD(T_DBUS, t, "Subscribe: %s: %s", error.name ?: strerror(-r), error.message ?: "");
                sd_bus_error_free(&error);
                return -1;
        }
        record(T_DBUS, true, true, t);

        /* Cancel */
        t = now_usec();
        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER, "Cancel", &error, NULL, "s", id);
        if (r < 0) {
                BAD(T_DBUS, t, "Cancel %s: %s: %s", id, error.name ?: strerror(-r), error.message ?: "");
                sd_bus_error_free(&error);
                return -1;
        }
        record(T_DBUS, true, true, t);

        uint64_t deadline = now_usec() + WAIT_USEC;
        t = now_usec();
        while (!w.seen) {
                uint64_t n = now_usec();
                if (n >= deadline)
                        return BAD(T_DBUS, t, "no InjectionRemoved for %s", id);
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return BAD(T_DBUS, t, "sd_bus_process: %s", strerror(-r));
                if (r == 0)
                        (void) sd_bus_wait(bus, deadline - n);
        }
        if (strcmp(w.reason, "cancelled") != 0)
                return BAD(T_DBUS, t, "InjectionRemoved %s: reason '%s', expected 'cancelled'", id, w.reason);
        record(T_DBUS, true, false, t);

        t = now_usec();
        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER, "Unsubscribe", &error, NULL, "");
        if (r < 0) {
                BAD(T_DBUS, t, "Unsubscribe: %s: %s", error.name ?: strerror(-r), error.message ?: "");
                sd_bus_error_free(&error);
                return -1;
        }
        record(T_DBUS, true, true, t);
        return 0;
}

static int dbus_client(void) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0)
                return BAD(T_DBUS, now_usec(), "cannot connect to the system bus: %s", strerror(-r));
        for (unsigned i = 0; i < iterations; i++)
                if (dbus_iteration(bus) < 0)
                        return -1;
        return 0;
}

/* ---------------------------------------------------------------- Varlink client */

/* A Varlink call through our client module; the reply parameters, or NULL
 * after recording the failure. */
static json_object *vl_call(VarlinkClient *c, const char *method, json_object *params, uint64_t *started) {
        json_object *reply = NULL;
        const char *error = NULL;
        int r;

        *started = now_usec();
        r = varlink_client_call(c, method, params, &reply, &error);
        if (r < 0) {
                BAD(T_VARLINK, *started, "%s: %s", method, strerror(-r));
                return NULL;
        }
        if (error) {
                json_object *msg = NULL;
                json_object_object_get_ex(reply, "message", &msg);
                BAD(T_VARLINK, *started, "%s: %s: %s", method, error, msg ? json_object_get_string(msg) : "");
                json_object_put(reply);
                return NULL;
        }
        return reply;
}

static const char *event_field(json_object *msg, const char *key) {
        json_object *p, *e, *v;

        if (!json_object_object_get_ex(msg, "parameters", &p) || !json_object_object_get_ex(p, "event", &e) ||
            !json_object_object_get_ex(e, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

static int varlink_iteration(VarlinkClient *c) {
        _cleanup_(json_object_putp) json_object *params = NULL, *reply = NULL;
        static char text[65536];
        json_object *v;
        char id[17], call[256];
        uint64_t t;
        int r;

        /* Inject, not detached: it belongs to this connection. */
        params = json_object_new_object();
        json_object_object_add(params, "function", json_object_new_string(function));
        json_object_object_add(params, "error", json_object_new_string("EPERM"));
        json_object_object_add(params, "scope", json_object_new_string("process"));
        json_object_object_add(params, "comm", json_object_new_string(COMM_NOMATCH));
        json_object_object_add(params, "duration_usec", json_object_new_int64((int64_t) DURATION_USEC));
        reply = vl_call(c, VL_IFACE "Inject", params, &t);
        if (!reply)
                return -1;
        if (!json_object_object_get_ex(reply, "id", &v) || !is_id(json_object_get_string(v)))
                return BAD(T_VARLINK, t, "Inject: a reply without an id");
        snprintf(id, sizeof(id), "%s", json_object_get_string(v));
        record(T_VARLINK, true, true, t);
        json_object_put(TAKE_PTR(reply));
        json_object_put(TAKE_PTR(params));

        /* ListInjections: ours is there */
        reply = vl_call(c, VL_IFACE "ListInjections", NULL, &t);
        if (!reply)
                return -1;
        if (!json_object_object_get_ex(reply, "injections", &v) ||
            !id_in_list(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), id))
                return BAD(T_VARLINK, t, "ListInjections: %s is not listed", id);
        record(T_VARLINK, true, true, t);
        json_object_put(TAKE_PTR(reply));

        /* Watch on a second connection: "watching" first. */
        RawConn w = { .fd = -1 };
        t = now_usec();
        w.fd = raw_connect();
        if (w.fd < 0)
                return BAD(T_VARLINK, t, "Watch: cannot connect: %s", strerror(-w.fd));
        snprintf(call, sizeof(call),
                 "{\"method\":\"" VL_IFACE "Watch\",\"parameters\":{\"ids\":[\"%s\"]},\"more\":true}", id);
        r = raw_send(w.fd, call, strlen(call) + 1);
        ssize_t k = r < 0 ? r : raw_read_message(&w, text, sizeof(text));
        if (k <= 0 || json_parse_strict(text, (size_t) k, JSON_PARSE_OBJECT, &reply) < 0 ||
            !event_field(reply, "type") || strcmp(event_field(reply, "type"), "watching") != 0) {
                close(w.fd);
                return BAD(T_VARLINK, t, "Watch: expected 'watching', saw %s",
                           k > 0 ? text : k == 0 ? "a disconnect" : strerror((int) -k));
        }
        record(T_VARLINK, true, true, t);
        json_object_put(TAKE_PTR(reply));

        /* Cancel */
        params = json_object_new_object();
        json_object_object_add(params, "id", json_object_new_string(id));
        reply = vl_call(c, VL_IFACE "Cancel", params, &t);
        if (!reply) {
                close(w.fd);
                return -1;
        }
        record(T_VARLINK, true, true, t);
        json_object_put(TAKE_PTR(reply));

        /* The watch shows the removal. */
        t = now_usec();
        for (;;) {
                k = raw_read_message(&w, text, sizeof(text));
                if (k <= 0) {
                        close(w.fd);
                        return BAD(T_VARLINK, t, "Watch: no 'removed' event for %s: %s", id,
                                   k == 0 ? "a disconnect" : strerror((int) -k));
                }
                if (json_parse_strict(text, (size_t) k, JSON_PARSE_OBJECT, &reply) < 0) {
                        close(w.fd);
                        return BAD(T_VARLINK, t, "Watch: not JSON: %s", text);
                }
                const char *type = event_field(reply, "type"), *eid = event_field(reply, "id");
                if (type && strcmp(type, "removed") == 0 && eid && strcmp(eid, id) == 0)
                        break;
                json_object_put(TAKE_PTR(reply));
        }
        close(w.fd);
        const char *reason = event_field(reply, "reason");
        if (!reason || strcmp(reason, "cancelled") != 0)
                return BAD(T_VARLINK, t, "Watch: %s removed with reason '%s', expected 'cancelled'", id,
                           reason ?: "(none)");
        record(T_VARLINK, true, false, t);
        return 0;
}

static int varlink_client(void) {
        _cleanup_(varlink_client_freep) VarlinkClient *c = NULL;
        int r;

        r = varlink_client_connect(socket_path, &c);
        if (r < 0)
                return BAD(T_VARLINK, now_usec(), "cannot connect: %s", strerror(-r));
        varlink_client_set_timeout(c, WAIT_USEC);
        for (unsigned i = 0; i < iterations; i++)
                if (varlink_iteration(c) < 0)
                        return -1;
        return 0;
}

/* ---------------------------------------------------------------- garbage */

/* Sends text (with its NUL when nul) and expects the error reply named
 * want_error, or (want_error NULL) a disconnect without a reply. */
static int raw_expect(const char *what, const char *text, size_t n, const char *want_error) {
        static char buf[65536];
        RawConn rc = { .fd = -1 };
        uint64_t t = now_usec();
        int r;

        rc.fd = raw_connect();
        if (rc.fd < 0)
                return BAD(T_VARLINK, t, "%s: cannot connect: %s", what, strerror(-rc.fd));
        r = raw_send(rc.fd, text, n);
        /* The server may hang up before it has read everything we send:
         * that is the answer to a message too big. */
        if (r < 0 && !(want_error == NULL && (r == -EPIPE || r == -ECONNRESET))) {
                close(rc.fd);
                return BAD(T_VARLINK, t, "%s: send: %s", what, strerror(-r));
        }
        if (!want_error) {
                r = r < 0 ? 0 : raw_expect_disconnect(rc.fd);
                close(rc.fd);
                if (r < 0)
                        return BAD(T_VARLINK, t, "%s: expected a disconnect, saw %s", what,
                                   r == -EPROTO ? "a reply" : strerror(-r));
                record(T_VARLINK, true, false, t);
                return 0;
        }
        ssize_t k = raw_read_message(&rc, buf, sizeof(buf));
        close(rc.fd);
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *e;
        if (k <= 0 || json_parse_strict(buf, (size_t) k, JSON_PARSE_OBJECT, &o) < 0 ||
            !json_object_object_get_ex(o, "error", &e) || strcmp(json_object_get_string(e), want_error) != 0)
                return BAD(T_VARLINK, t, "%s: expected error %s, saw %s", what, want_error,
                           k > 0 ? buf : k == 0 ? "a disconnect" : strerror((int) -k));
        record(T_VARLINK, true, true, t);
        return 0;
}

static int bus_expect_error(sd_bus *bus, const char *what, sd_bus_message *m, const char *want_error) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        uint64_t t = now_usec();
        int r;

        r = sd_bus_call(bus, m, WAIT_USEC, &error, NULL);
        if (r >= 0 || !sd_bus_error_has_name(&error, want_error)) {
                BAD(T_DBUS, t, "%s: expected error %s, saw %s (%s)", what, want_error,
                    r >= 0 ? "success" : error.name ?: strerror(-r), error.message ?: "");
                sd_bus_error_free(&error);
                return -1;
        }
        sd_bus_error_free(&error);
        record(T_DBUS, true, true, t);
        return 0;
}

static int garbage_client(void) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        static char big[2 * 1024 * 1024];
        int failed = 0, r;

        memset(big, 'a', sizeof(big));
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return BAD(T_DBUS, now_usec(), "cannot connect to the system bus: %s", strerror(-r));

#define RAW(what, s, err) (raw_expect(what, s, sizeof(s), err) < 0)
        for (unsigned i = 0; i < iterations; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m1 = NULL, *m2 = NULL;

                failed |= RAW("not JSON", "not json at all", NULL);
                failed |= RAW("a truncated object", "{\"method\":", NULL);
                failed |= RAW("invalid UTF-8", "{\"method\":\"org.injectd.Injector.Inject\",\"parameters\":{\"function\":\"\xff\xfe\"}}", NULL);
                failed |= RAW("parameters not an object", "{\"method\":\"" VL_IFACE "Inject\",\"parameters\":[]}", NULL);
                failed |= raw_expect("2 MB without a message end", big, sizeof(big), NULL) < 0;
                failed |= RAW("a number for 'function'",
                              "{\"method\":\"" VL_IFACE "Inject\",\"parameters\":{\"function\":42,\"error\":\"EPERM\"}}",
                              VL_IFACE "InvalidArgument");
                failed |= RAW("a string for 'duration_usec'",
                              "{\"method\":\"" VL_IFACE "Inject\",\"parameters\":{\"function\":\"__x64_sys_getpriority\","
                              "\"error\":\"EPERM\",\"duration_usec\":\"soon\"}}",
                              VL_IFACE "InvalidArgument");
                failed |= RAW("an unknown method", "{\"method\":\"" VL_IFACE "Nope\",\"parameters\":{}}",
                              "org.varlink.service.MethodNotFound");
                failed |= RAW("a number for 'all'", "{\"method\":\"" VL_IFACE "ListInjections\",\"parameters\":{\"all\":1}}",
                              VL_IFACE "InvalidArgument");

                if (sd_bus_message_new_method_call(bus, &m1, BUS_NAME, BUS_PATH, BUS_MANAGER, "Inject") < 0 ||
                    sd_bus_message_append(m1, "s", "hello") < 0 ||
                    sd_bus_message_new_method_call(bus, &m2, BUS_NAME, BUS_PATH, BUS_MANAGER, "Inject") < 0 ||
                    sd_bus_message_append(m2, "a{sv}", 2, "function", "s", function, "duration_usec", "s", "soon") < 0)
                        return BAD(T_DBUS, now_usec(), "cannot build a message");
                failed |= bus_expect_error(bus, "Inject(s)", m1, "org.freedesktop.DBus.Error.InvalidArgs") < 0;
                failed |= bus_expect_error(bus, "a string for duration_usec", m2,
                                           "org.injectd.Injector1.Error.InvalidArgument") < 0;
        }
#undef RAW
        return failed ? -1 : 0;
}

/* ---------------------------------------------------------------- hang-ups */

static int hangup_client(void) {
        char call[512];
        uint64_t t;
        int fd, r;

        snprintf(call, sizeof(call),
                 "{\"method\":\"" VL_IFACE "Inject\",\"parameters\":{\"function\":\"%s\",\"error\":\"EPERM\","
                 "\"scope\":\"process\",\"comm\":\"" COMM_NOMATCH "\",\"duration_usec\":60000000}}",
                 function);
        for (unsigned i = 0; i < iterations; i++) {
                /* Half a call, then gone. */
                t = now_usec();
                fd = raw_connect();
                if (fd < 0)
                        return BAD(T_VARLINK, t, "cannot connect: %s", strerror(-fd));
                (void) raw_send(fd, call, strlen(call) / 2);
                close(fd);
                /* Connected, and gone at once. */
                fd = raw_connect();
                if (fd < 0)
                        return BAD(T_VARLINK, t, "cannot connect: %s", strerror(-fd));
                close(fd);
                /* A whole Inject, gone before the answer: not detached, so
                 * it ends with the connection (the script checks that none
                 * is left). */
                fd = raw_connect();
                if (fd < 0)
                        return BAD(T_VARLINK, t, "cannot connect: %s", strerror(-fd));
                (void) raw_send(fd, call, strlen(call) + 1);
                close(fd);

                /* The same over D-Bus. */
                _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                r = sd_bus_open_system(&bus);
                if (r < 0)
                        return BAD(T_DBUS, t, "cannot connect to the system bus: %s", strerror(-r));
                if (bus_inject_message(bus, &m) < 0)
                        return BAD(T_DBUS, t, "cannot build Inject");
                r = sd_bus_send(bus, m, NULL);
                if (r < 0)
                        return BAD(T_DBUS, t, "cannot send Inject: %s", strerror(-r));
        }
        return 0;
}

/* ---------------------------------------------------------------- parent */

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return x < y ? -1 : x > y;
}

static unsigned parse_count(const char *s) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || end == s || v > 10000) {
                fprintf(stderr, "load-client: not a count: '%s'\n", s);
                exit(2);
        }
        return (unsigned) v;
}

int main(int argc, char **argv) {
        unsigned n_dbus = 0, n_varlink = 0, n_garbage = 0, n_hangup = 0;
        int i, p[2];

        for (i = 1; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
                if (strcmp(argv[i], "--dbus") == 0)
                        n_dbus = parse_count(argv[i + 1]);
                else if (strcmp(argv[i], "--varlink") == 0)
                        n_varlink = parse_count(argv[i + 1]);
                else if (strcmp(argv[i], "--garbage") == 0)
                        n_garbage = parse_count(argv[i + 1]);
                else if (strcmp(argv[i], "--hangup") == 0)
                        n_hangup = parse_count(argv[i + 1]);
                else if (strcmp(argv[i], "--iterations") == 0)
                        iterations = parse_count(argv[i + 1]);
                else if (strcmp(argv[i], "--function") == 0)
                        function = argv[i + 1];
                else
                        break;
        }
        if (i != argc - 1) {
                fprintf(stderr, "usage: load-client [--dbus N] [--varlink N] [--garbage N] [--hangup N]\n"
                                "                   [--iterations N] [--function NAME] SOCKET\n");
                return 2;
        }
        socket_path = argv[i];
        signal(SIGPIPE, SIG_IGN);
        if (pipe2(p, O_CLOEXEC) < 0) {
                perror("load-client: pipe");
                return 1;
        }

        unsigned total = n_dbus + n_varlink + n_garbage + n_hangup;
        uint64_t started = now_usec();
        for (unsigned k = 0; k < total; k++) {
                pid_t pid = fork();
                if (pid < 0) {
                        perror("load-client: fork");
                        return 1;
                }
                if (pid == 0) {
                        close(p[0]);
                        record_fd = p[1];
                        client_no = k;
                        int r = k < n_dbus                         ? dbus_client()
                                : k < n_dbus + n_varlink             ? varlink_client()
                                : k < n_dbus + n_varlink + n_garbage ? garbage_client()
                                                                     : hangup_client();
                        _exit(r < 0 ? 1 : 0);
                }
        }
        close(p[1]);

        /* Collect until every client has closed its end. */
        size_t n = 0, cap = 0;
        Record *recs = NULL, r;
        for (;;) {
                ssize_t k = read(p[0], &r, sizeof(r));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                if (k != sizeof(r)) {
                        fprintf(stderr, "load-client: a short record\n");
                        return 1;
                }
                if (n == cap) {
                        cap = cap ? cap * 2 : 1024;
                        recs = realloc(recs, cap * sizeof(Record));
                        if (!recs) {
                                fprintf(stderr, "load-client: out of memory\n");
                                return 1;
                        }
                }
                recs[n++] = r;
        }
        bool ok = true;
        for (unsigned k = 0; k < total; k++) {
                int status;
                if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        ok = false;
        }
        uint64_t elapsed = now_usec() - started;

        for (int t = 0; t < T_MAX; t++) {
                size_t sent = 0, good = 0, timed = 0;
                uint32_t *lat = calloc(n + 1, sizeof(uint32_t));
                if (!lat)
                        return 1;
                for (size_t k = 0; k < n; k++) {
                        if (recs[k].transport != t)
                                continue;
                        sent++;
                        good += recs[k].ok;
                        if (recs[k].ok && recs[k].timed)
                                lat[timed++] = recs[k].usec;
                }
                qsort(lat, timed, sizeof(uint32_t), cmp_u32);
                printf("%s: %zu checked answers, %zu correct", transport_name[t], sent, good);
                if (timed > 0)
                        printf("; latency of %zu requests: p50 %.1f ms, p99 %.1f ms, max %.1f ms", timed,
                               lat[(timed - 1) / 2] / 1000.0, lat[(timed * 99 + 99) / 100 - 1] / 1000.0,
                               lat[timed - 1] / 1000.0);
                putchar('\n');
                if (good != sent)
                        ok = false;
                free(lat);
        }
        printf("%u clients in %.1f s\n", total, elapsed / 1e6);
        free(recs);
        return ok ? 0 : 1;
}
