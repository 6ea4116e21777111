/* SPDX-License-Identifier: MIT */

/* What the Varlink tests share: a server on an sd-event loop in the test's
 * thread, listening in a temporary directory, with the methods of
 * org.example.test bound, and "raw" clients that write bytes and read
 * replies while pumping the loop, so that framing, limits and misbehaving
 * peers are exact and deterministic. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json-reader.h"
#include "json-util.h"
#include "test-util.h"
#include "varlink-fixture.h"
#include "varlink.h"

const char test_description[] =
        "# An interface for the tests.\n"
        "interface org.example.test\n"
        "\n"
        "type Point (x: int, y: int)\n"
        "\n"
        "# Returns its parameters.\n"
        "method Echo(s: ?string, n: ?int, p: ?Point) -> (s: ?string, n: ?int, p: ?Point)\n"
        "method Count(n: int) -> (i: ?int, done: ?bool)\n"
        "method Fail() -> ()\n"
        "method Hold() -> (late: ?bool)\n"
        "method Broken() -> ()\n"
        "method Record() -> ()\n"
        "method Misuse() -> (ok: bool)\n"
        "method Nul() -> (s: string)\n"
        "method Close() -> ()\n"
        "method Declared() -> ()  # declared, never bound\n"
        "\n"
        "error Failed (reason: string)\n";

char tmpdir[64];
static unsigned socket_counter;


/* ---- Handlers ---- */

int method_echo(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        return varlink_reply(c, parameters);
}

static int method_count(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        _cleanup_json_ json_object *done = NULL;
        uint64_t n;
        int r;

        if (!(flags & VARLINK_METHOD_MORE))
                return varlink_error(c, VARLINK_ERROR_EXPECTED_MORE, NULL);
        if (json_get_u64(parameters, "n", 0, 1000, &n) < 0)
                return varlink_error_invalid_parameter(c, "n");

        for (uint64_t i = 0; i < n; i++) {
                _cleanup_json_ json_object *p = json_object_new_object();

                ASSERT_NOT_NULL(p);
                json_object_object_add(p, "i", json_object_new_int64((int64_t) i));
                r = varlink_notify(c, p);
                if (r < 0)
                        return r;
        }

        done = json_object_new_object();
        json_object_object_add(done, "done", json_object_new_boolean(true));
        return varlink_reply(c, done);
}

static int method_fail(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        _cleanup_json_ json_object *p = json_object_new_object();

        json_object_object_add(p, "reason", json_object_new_string("on purpose"));
        return varlink_error(c, IFACE ".Failed", p);
}

static int method_hold(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        Test *t = userdata;

        ASSERT_NULL(t->held);
        t->held = varlink_conn_ref(c);
        t->last_flags = flags;
        return 0; /* answered later */
}

static int method_broken(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        return -EIO;
}

static int method_record(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        Test *t = userdata;

        t->n_records++;
        t->last_flags = flags;
        /* Accepted and dropped for a oneway call. */
        ASSERT_RET(varlink_reply(c, NULL), 0);
        return 0;
}

static int method_misuse(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        _cleanup_json_ json_object *array = json_object_new_array(), *bad = json_object_new_object(),
                                   *ok = json_object_new_object();

        ASSERT_RET(varlink_notify(c, NULL), -EPROTO);
        ASSERT_RET(varlink_reply(c, array), -EINVAL);
        ASSERT_RET(varlink_error(c, "NotQualified", NULL), -EINVAL);
        ASSERT_RET(varlink_error(c, "org.example.test.lowercase", NULL), -EINVAL);
        ASSERT_RET(varlink_error(c, NULL, NULL), -EINVAL);
        ASSERT_RET(varlink_error_invalid_parameter(c, NULL), -EINVAL);
        json_object_object_add(bad, "s", json_object_new_string("\xff\xfe"));
        ASSERT_RET(varlink_reply(c, bad), -EILSEQ);

        /* None of that answered the call. */
        json_object_object_add(ok, "ok", json_object_new_boolean(true));
        ASSERT_RET(varlink_reply(c, ok), 0);
        ASSERT_RET(varlink_reply(c, ok), -EBUSY);
        ASSERT_RET(varlink_error(c, IFACE ".Failed", NULL), -EBUSY);
        return 0;
}

static int method_nul(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        _cleanup_json_ json_object *p = json_object_new_object();

        json_object_object_add(p, "s", json_object_new_string_len("a\0b", 3));
        return varlink_reply(c, p);
}

static int method_close(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        ASSERT_RET(varlink_conn_close(c), 0);
        ASSERT_FALSE(varlink_conn_is_connected(c));
        ASSERT_RET(varlink_reply(c, NULL), -ENOTCONN);
        return 0;
}

static int on_connect(VarlinkServer *s, VarlinkConn *c, void *userdata) {
        Test *t = userdata;

        ASSERT_TRUE(varlink_conn_get_server(c) == s);
        ASSERT_NULL(varlink_conn_set_userdata(c, t));
        t->n_connect++;
        t->last_conn = c;
        return 0;
}

static void on_disconnect(VarlinkServer *s, VarlinkConn *c, void *userdata) {
        Test *t = userdata;

        ASSERT_TRUE(varlink_conn_get_userdata(c) == t);
        ASSERT_NULL(varlink_conn_get_server(c));
        ASSERT_RET(varlink_conn_get_fd(c), -ENOTCONN);
        ASSERT_FALSE(varlink_conn_is_connected(c));
        t->n_disconnect++;
        if (c == t->last_conn)
                t->last_conn = NULL;
        if (t->release_held_on_disconnect && c == t->held)
                t->held = varlink_conn_unref(t->held);
}

/* ---- Fixture ---- */

void setup(Test *t) {
        static const struct {
                const char *name;
                VarlinkMethodFn fn;
        } methods[] = {
                { IFACE ".Echo",   method_echo   },
                { IFACE ".Count",  method_count  },
                { IFACE ".Fail",   method_fail   },
                { IFACE ".Hold",   method_hold   },
                { IFACE ".Broken", method_broken },
                { IFACE ".Record", method_record },
                { IFACE ".Misuse", method_misuse },
                { IFACE ".Nul",    method_nul    },
                { IFACE ".Close",  method_close  },
        };
        const VarlinkServerInfo info = {
                .vendor = "injectd project",
                .product = "test-varlink",
                .version = "0.1",
                .url = "https://example.org/injectd",
        };

        *t = (Test) {};
        snprintf(t->path, sizeof(t->path), "%s/sock-%u", tmpdir, ++socket_counter);

        ASSERT_OK(sd_event_new(&t->event));
        ASSERT_OK(varlink_server_new(t->event, &info, &t->server));
        ASSERT_OK(varlink_server_add_interface(t->server, IFACE, test_description));
        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                ASSERT_OK(varlink_server_bind_method(t->server, methods[i].name, methods[i].fn, t));
        ASSERT_OK(varlink_server_set_connect_callback(t->server, on_connect, t));
        ASSERT_OK(varlink_server_set_disconnect_callback(t->server, on_disconnect, t));
        ASSERT_OK(varlink_server_listen_address(t->server, t->path, 0600));
}

void teardown(Test *t) {
        t->server = varlink_server_free(t->server);
        t->held = varlink_conn_unref(t->held);
        t->event = sd_event_unref(t->event);
        (void) unlink(t->path);
}

/* Runs the loop until it has nothing left to do. */
void pump(Test *t) {
        for (unsigned i = 0; i < 1000000; i++) {
                int r = sd_event_run(t->event, 0);

                ASSERT_OK(r);
                if (r == 0)
                        return;
        }
        test_fail("%s", "the event loop never went idle");
}

/* ---- Raw clients ---- */


void raw_connect(Test *t, Raw *r) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        *r = (Raw) {};
        r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ASSERT_TRUE(r->fd >= 0);
        strcpy(sa.sun_path, t->path);
        ASSERT_OK(connect(r->fd, (struct sockaddr *) &sa, sizeof(sa)));
        pump(t);
}

void raw_close(Raw *r) {
        r->fd = safe_close(r->fd);
        free(r->buf);
        r->buf = NULL;
        r->len = r->alloc = 0;
}

void raw_send(Test *t, Raw *r, const void *data, size_t len) {
        size_t done = 0;

        for (unsigned i = 0; done < len; i++) {
                ssize_t n = send(r->fd, (const char *) data + done, len - done, MSG_NOSIGNAL);

                if (n < 0) {
                        if (errno != EAGAIN)
                                test_fail("send(): %m (%zu of %zu bytes sent)", done, len);
                        if (i > 100000)
                                test_fail("the server stopped reading (%zu of %zu bytes sent)", done, len);
                        pump(t);
                        continue;
                }
                done += n;
        }
}

/* Sends s and its terminating NUL. */
void raw_send_msg(Test *t, Raw *r, const char *s) {
        raw_send(t, r, s, strlen(s) + 1);
}

/* Pumps and reads until a whole message is there. Returns 0 and the
 * message, -ECONNRESET at EOF, or -EAGAIN if the server is idle and sent
 * nothing (more). */
int raw_recv(Test *t, Raw *r, json_object **ret) {
        for (unsigned i = 0; i < 1000000; i++) {
                char *nul = r->len > 0 ? memchr(r->buf, 0, r->len) : NULL;
                ssize_t n;

                if (nul) {
                        size_t k = nul - r->buf;
                        int q = json_parse_strict(r->buf, k, JSON_PARSE_OBJECT, ret);

                        if (q < 0)
                                test_fail("server sent unparsable message: %.*s", (int) k, r->buf);
                        memmove(r->buf, nul + 1, r->len - k - 1);
                        r->len -= k + 1;
                        return 0;
                }

                pump(t);

                if (r->alloc - r->len < 65536) {
                        r->alloc = r->alloc * 2 + 65536;
                        r->buf = realloc(r->buf, r->alloc);
                        ASSERT_NOT_NULL(r->buf);
                }
                n = recv(r->fd, r->buf + r->len, r->alloc - r->len, MSG_DONTWAIT);
                if (n > 0) {
                        r->len += n;
                        continue;
                }
                if (n == 0 || errno == ECONNRESET)
                        return -ECONNRESET;
                if (errno != EAGAIN)
                        test_fail("recv(): %m%s", "");
                /* The loop was idle before the read: nothing more is coming. */
                if (sd_event_run(t->event, 0) == 0)
                        return -EAGAIN;
        }
        test_fail("%s", "no message in time");
}

void raw_expect_eof(Test *t, Raw *r) {
        _cleanup_json_ json_object *m = NULL;

        ASSERT_RET(raw_recv(t, r, &m), -ECONNRESET);
}

void raw_expect_nothing(Test *t, Raw *r) {
        _cleanup_json_ json_object *m = NULL;

        ASSERT_RET(raw_recv(t, r, &m), -EAGAIN);
}

json_object *params_of(json_object *m) {
        json_object *p = NULL;

        ASSERT_OK(json_get_object(m, "parameters", &p));
        return p;
}

const char *param_string(json_object *m, const char *key) {
        const char *s = NULL;

        ASSERT_OK(json_get_string(params_of(m), key, &s));
        return s;
}

int64_t param_int(json_object *m, const char *key) {
        int64_t v = 0;

        ASSERT_OK(json_get_i64(params_of(m), key, INT64_MIN, INT64_MAX, &v));
        return v;
}

/* Receives one message and checks its envelope: error name (NULL for
 * none) and "continues". */
json_object *raw_expect(Test *t, Raw *r, const char *error, bool continues) {
        static const char *const allowed[] = { "parameters", "continues", "error", NULL };
        json_object *m = NULL;
        const char *e = NULL, *unknown;
        bool cont = false;

        ASSERT_RET(raw_recv(t, r, &m), 0);
        ASSERT_RET(json_check_keys(m, allowed, &unknown), 0);
        (void) json_get_string(m, "error", &e);
        ASSERT_STREQ(e, error);
        (void) json_get_bool(m, "continues", &cont);
        ASSERT_EQ(cont, continues);
        (void) params_of(m); /* always there */
        return m;
}

/* One call, one answer, on a new connection. */
json_object *raw_call(Test *t, const char *msg, const char *error) {
        json_object *m;
        Raw r;

        raw_connect(t, &r);
        raw_send_msg(t, &r, msg);
        m = raw_expect(t, &r, error, false);
        raw_close(&r);
        pump(t);
        return m;
}

static void cleanup_tmpdir(void) {
        char p[128];

        snprintf(p, sizeof(p), "rm -rf '%s'", tmpdir);
        if (tmpdir[0] && system(p) != 0)
                fprintf(stderr, "Failed to remove '%s', ignoring.\n", tmpdir);
}

void fixture_init(void) {
        const char *base = getenv("TMPDIR") ?: "/tmp";

        snprintf(tmpdir, sizeof(tmpdir), "%s/test-varlink-XXXXXX", base);
        if (strlen(base) > 40 || !mkdtemp(tmpdir)) {
                snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-varlink-XXXXXX");
                if (!mkdtemp(tmpdir))
                        TEST_SKIP("cannot create a temporary directory: %m");
        }
        atexit(cleanup_tmpdir);
}
