/* SPDX-License-Identifier: MIT */

/* The Varlink server (src/shared/varlink.c) as a client sees it: the input
 * is a byte stream written into a real connection, in chunks, while the
 * server's event loop runs. This covers what the message parser alone does
 * not: framing at NULs split across reads, pipelined calls, the buffers,
 * answers given later or never, and hangups at any point.
 *
 * The first input byte sets the client's behaviour, the rest is the stream:
 *   bits 0-3  chunk size: 1 << n bytes per write
 *   bit 4     the client never reads its replies
 *   bit 5     the client half-closes (shutdown(SHUT_WR)) before closing
 * Whatever the stream, the server must not crash, must close the
 * connection once the client is gone, and must leak nothing. */

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "json-util.h"
#include "varlink.h"

#define IFACE "org.example.fuzz"

static const char description[] =
        "# The fuzzer's interface.\n"
        "interface org.example.fuzz\n"
        "\n"
        "method Echo(s: ?string) -> (s: ?string)\n"
        "method Stream(s: ?string) -> (s: ?string)\n"
        "method Fail() -> ()\n"
        "method Later() -> ()\n"
        "method Broken() -> ()\n"
        "method Close() -> ()\n"
        "method Declared() -> ()\n"
        "\n"
        "error Failed (s: ?string)\n";

/* Calls answered on the next chunk, as the daemon answers after polkit. */
#define LATER_MAX 8
static VarlinkConn *later[LATER_MAX];
static size_t n_later;

static int method_echo(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        return varlink_reply(c, parameters);
}

static int method_stream(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        int r;

        if (!(flags & VARLINK_METHOD_MORE))
                return varlink_error(c, VARLINK_ERROR_EXPECTED_MORE, NULL);
        for (int i = 0; i < 2; i++) {
                r = varlink_notify(c, parameters);
                if (r < 0)
                        return r;
        }
        return varlink_reply(c, parameters);
}

static int method_fail(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        return varlink_error(c, IFACE ".Failed", parameters);
}

static int method_later(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        /* A oneway call must not be answered later (varlink.h). */
        if ((flags & VARLINK_METHOD_ONEWAY) || n_later >= LATER_MAX)
                return varlink_reply(c, NULL);
        later[n_later++] = varlink_conn_ref(c);
        return 0;
}

static int method_broken(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        return -EIO;
}

static int method_close(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        return varlink_conn_close(c);
}

static void answer_later(void) {
        for (size_t i = 0; i < n_later; i++) {
                int r = varlink_reply(later[i], NULL);

                /* Documented answers for a call that is still ours. */
                FUZZ_ASSERT(r == 0 || r == -ENOTCONN || r == -ENOBUFS);
                varlink_conn_unref(later[i]);
        }
        n_later = 0;
}

/* Runs the loop until it is idle; the client reads what came, if it reads. */
static void pump(sd_event *e, int fd, bool reads) {
        for (unsigned i = 0; i < 256; i++) {
                char buf[65536];
                int r;

                r = sd_event_run(e, 0);
                FUZZ_ASSERT(r >= 0);
                if (reads)
                        while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
                                ;
                if (r == 0)
                        return;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const struct {
                const char *name;
                VarlinkMethodFn fn;
        } methods[] = {
                { IFACE ".Echo",   method_echo   },
                { IFACE ".Stream", method_stream },
                { IFACE ".Fail",   method_fail   },
                { IFACE ".Later",  method_later  },
                { IFACE ".Broken", method_broken },
                { IFACE ".Close",  method_close  },
        };
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        VarlinkServer *s = NULL;
        size_t chunk, off = 0;
        bool reads, half_close;
        int fds[2];

        if (size < 1)
                return 0;
        chunk = (size_t) 1 << (data[0] & 0x0f);
        reads = !(data[0] & 0x10);
        half_close = data[0] & 0x20;
        data++, size--;

        FUZZ_ASSERT(sd_event_new(&e) >= 0);
        FUZZ_ASSERT(varlink_server_new(e, &(VarlinkServerInfo) { .vendor = "fuzz" }, &s) >= 0);
        FUZZ_ASSERT(varlink_server_add_interface(s, IFACE, description) >= 0);
        for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
                FUZZ_ASSERT(varlink_server_bind_method(s, methods[i].name, methods[i].fn, NULL) >= 0);

        FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) >= 0);
        FUZZ_ASSERT(varlink_server_add_connection(s, fds[0], NULL) >= 0);

        while (off < size) {
                size_t n = size - off < chunk ? size - off : chunk;
                ssize_t k;

                k = send(fds[1], data + off, n, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (k < 0 && errno == EAGAIN) {
                        /* The server stopped reading: its output is piling
                         * up. A client that never reads stalls here. */
                        pump(e, fds[1], reads);
                        k = send(fds[1], data + off, n, MSG_DONTWAIT | MSG_NOSIGNAL);
                        if (k < 0 && errno == EAGAIN && !reads)
                                break;
                }
                if (k < 0) {
                        /* The server hung up: a protocol violation. */
                        FUZZ_ASSERT(errno == EPIPE || errno == ECONNRESET || errno == EAGAIN);
                        if (errno != EAGAIN)
                                break;
                        k = 0;
                }
                off += (size_t) k;
                pump(e, fds[1], reads);
                answer_later();
        }

        if (half_close) {
                (void) shutdown(fds[1], SHUT_WR);
                pump(e, fds[1], reads);
                answer_later();
                pump(e, fds[1], reads);
        }

        /* Gone: the server must notice and close its end. */
        close(fds[1]);
        pump(e, -1, false);
        answer_later();
        pump(e, -1, false);
        FUZZ_ASSERT(varlink_server_n_connections(s) == 0);

        varlink_server_free(s);
        return 0;
}
