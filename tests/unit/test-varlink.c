/* SPDX-License-Identifier: MIT */

/* The Varlink server is driven on an sd-event loop in this thread, over
 * real unix sockets in a temporary directory, by "raw" clients that write
 * bytes and read replies while pumping the loop, so that framing, limits
 * and misbehaving peers are exact and deterministic. The client API is
 * tested against a server running in a second thread, and against a fake
 * server on a socketpair. */

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
#include "varlink.h"

#define IFACE "org.example.test"

static const char test_description[] =
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

static char tmpdir[64];
static unsigned socket_counter;

typedef struct Test {
        sd_event *event;
        VarlinkServer *server;
        char path[128];
        unsigned n_connect, n_disconnect, n_records;
        VarlinkMethodFlags last_flags;
        VarlinkConn *held;      /* a call the test answers later */
        VarlinkConn *last_conn; /* the newest connection, borrowed */
        bool release_held_on_disconnect;
} Test;

/* ---- Handlers ---- */

static int method_echo(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
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

static void setup(Test *t) {
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

static void teardown(Test *t) {
        t->server = varlink_server_free(t->server);
        t->held = varlink_conn_unref(t->held);
        t->event = sd_event_unref(t->event);
        (void) unlink(t->path);
}

/* Runs the loop until it has nothing left to do. */
static void pump(Test *t) {
        for (unsigned i = 0; i < 1000000; i++) {
                int r = sd_event_run(t->event, 0);

                ASSERT_OK(r);
                if (r == 0)
                        return;
        }
        test_fail("%s", "the event loop never went idle");
}

/* ---- Raw clients ---- */

typedef struct Raw {
        int fd;
        char *buf;
        size_t len, alloc;
} Raw;

static void raw_connect(Test *t, Raw *r) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        *r = (Raw) {};
        r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ASSERT_TRUE(r->fd >= 0);
        strcpy(sa.sun_path, t->path);
        ASSERT_OK(connect(r->fd, (struct sockaddr *) &sa, sizeof(sa)));
        pump(t);
}

static void raw_close(Raw *r) {
        r->fd = safe_close(r->fd);
        free(r->buf);
        r->buf = NULL;
        r->len = r->alloc = 0;
}

static void raw_send(Test *t, Raw *r, const void *data, size_t len) {
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
static void raw_send_msg(Test *t, Raw *r, const char *s) {
        raw_send(t, r, s, strlen(s) + 1);
}

/* Pumps and reads until a whole message is there. Returns 0 and the
 * message, -ECONNRESET at EOF, or -EAGAIN if the server is idle and sent
 * nothing (more). */
static int raw_recv(Test *t, Raw *r, json_object **ret) {
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

static void raw_expect_eof(Test *t, Raw *r) {
        _cleanup_json_ json_object *m = NULL;

        ASSERT_RET(raw_recv(t, r, &m), -ECONNRESET);
}

static void raw_expect_nothing(Test *t, Raw *r) {
        _cleanup_json_ json_object *m = NULL;

        ASSERT_RET(raw_recv(t, r, &m), -EAGAIN);
}

static json_object *params_of(json_object *m) {
        json_object *p = NULL;

        ASSERT_OK(json_get_object(m, "parameters", &p));
        return p;
}

static const char *param_string(json_object *m, const char *key) {
        const char *s = NULL;

        ASSERT_OK(json_get_string(params_of(m), key, &s));
        return s;
}

static int64_t param_int(json_object *m, const char *key) {
        int64_t v = 0;

        ASSERT_OK(json_get_i64(params_of(m), key, INT64_MIN, INT64_MAX, &v));
        return v;
}

/* Receives one message and checks its envelope: error name (NULL for
 * none) and "continues". */
static json_object *raw_expect(Test *t, Raw *r, const char *error, bool continues) {
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
static json_object *raw_call(Test *t, const char *msg, const char *error) {
        json_object *m;
        Raw r;

        raw_connect(t, &r);
        raw_send_msg(t, &r, msg);
        m = raw_expect(t, &r, error, false);
        raw_close(&r);
        pump(t);
        return m;
}

/* ---- Server tests ---- */

static void test_call_reply(void) {
        _cleanup_json_ json_object *m = NULL, *m2 = NULL, *m3 = NULL;
        Test t;

        setup(&t);

        m = raw_call(&t, "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"s\":\"hello\",\"n\":42}}", NULL);
        ASSERT_STREQ(param_string(m, "s"), "hello");
        ASSERT_EQ(param_int(m, "n"), 42);

        /* No parameters, and null parameters, are an empty object. */
        m2 = raw_call(&t, "{\"method\":\"" IFACE ".Echo\"}", NULL);
        ASSERT_EQ(json_object_object_length(params_of(m2)), 0);
        m3 = raw_call(&t, "{\"method\":\"" IFACE ".Echo\",\"parameters\":null,\"more\":false,\"oneway\":null}", NULL);
        ASSERT_EQ(json_object_object_length(params_of(m3)), 0);

        ASSERT_EQ(t.n_connect, 3);
        ASSERT_EQ(t.n_disconnect, 3);
        ASSERT_EQ(varlink_server_n_connections(t.server), 0);
        teardown(&t);
}

static void test_more(void) {
        Test t;
        Raw r;

        setup(&t);
        raw_connect(&t, &r);

        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Count\",\"parameters\":{\"n\":3},\"more\":true}");
        for (int i = 0; i < 3; i++) {
                _cleanup_json_ json_object *m = raw_expect(&t, &r, NULL, true);

                ASSERT_EQ(param_int(m, "i"), i);
        }
        json_object_put(raw_expect(&t, &r, NULL, false));
        raw_expect_nothing(&t, &r);

        /* A method that streams refuses a call without "more". */
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Count\",\"parameters\":{\"n\":3}}");
        json_object_put(raw_expect(&t, &r, VARLINK_ERROR_EXPECTED_MORE, false));

        /* "more" to a method that answers once: one final reply. */
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Echo\",\"more\":true}");
        json_object_put(raw_expect(&t, &r, NULL, false));

        /* An empty stream. */
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Count\",\"parameters\":{\"n\":0},\"more\":true}");
        json_object_put(raw_expect(&t, &r, NULL, false));

        raw_close(&r);
        teardown(&t);
}

static void test_oneway(void) {
        _cleanup_json_ json_object *m = NULL;
        Test t;
        Raw r;

        setup(&t);
        raw_connect(&t, &r);

        /* No reply to the oneway call: the first reply is the Echo's. */
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Record\",\"oneway\":true}");
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"s\":\"after\"}}");
        m = raw_expect(&t, &r, NULL, false);
        ASSERT_STREQ(param_string(m, "s"), "after");
        raw_expect_nothing(&t, &r);
        ASSERT_EQ(t.n_records, 1);
        ASSERT_EQ(t.last_flags, VARLINK_METHOD_ONEWAY);

        /* Errors to oneway calls are not sent either. */
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Nope\",\"oneway\":true}");
        raw_expect_nothing(&t, &r);
        ASSERT_EQ(varlink_server_n_connections(t.server), 1);
        raw_close(&r);
        pump(&t);

        /* Fire and forget: a oneway call followed by close() still runs. */
        raw_connect(&t, &r);
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Record\",\"oneway\":true}");
        raw_close(&r);
        pump(&t);
        ASSERT_EQ(t.n_records, 2);
        ASSERT_EQ(t.n_disconnect, 2);

        /* Many of them, more than one dispatch batch. */
        raw_connect(&t, &r);
        for (int i = 0; i < 100; i++)
                raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Record\",\"oneway\":true}");
        raw_close(&r);
        pump(&t);
        ASSERT_EQ(t.n_records, 102);
        ASSERT_EQ(t.n_disconnect, 3);

        teardown(&t);
}

static void test_errors(void) {
        _cleanup_json_ json_object *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL;
        Test t;

        setup(&t);

        m1 = raw_call(&t, "{\"method\":\"" IFACE ".Fail\"}", IFACE ".Failed");
        ASSERT_STREQ(param_string(m1, "reason"), "on purpose");

        m2 = raw_call(&t, "{\"method\":\"" IFACE ".Count\",\"parameters\":{\"n\":\"3\"},\"more\":true}",
                      VARLINK_ERROR_INVALID_PARAMETER);
        ASSERT_STREQ(param_string(m2, "parameter"), "n");

        m3 = raw_call(&t, "{\"method\":\"" IFACE ".Misuse\"}", NULL);
        ASSERT_NOT_NULL(json_object_object_get(params_of(m3), "ok"));

        /* A string with a NUL goes out escaped, not as a message end. */
        m4 = raw_call(&t, "{\"method\":\"" IFACE ".Nul\"}", NULL);
        ASSERT_EQ(json_object_get_string_len(json_object_object_get(params_of(m4), "s")), 3);
        ASSERT_TRUE(memcmp(json_object_get_string(json_object_object_get(params_of(m4), "s")), "a\0b", 3) == 0);

        teardown(&t);
}

static void test_unknown(void) {
        _cleanup_json_ json_object *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL, *m5 = NULL;
        Test t;

        setup(&t);

        m1 = raw_call(&t, "{\"method\":\"" IFACE ".Nope\"}", VARLINK_ERROR_METHOD_NOT_FOUND);
        ASSERT_STREQ(param_string(m1, "method"), IFACE ".Nope");

        m2 = raw_call(&t, "{\"method\":\"org.example.other.Nope\"}", VARLINK_ERROR_INTERFACE_NOT_FOUND);
        ASSERT_STREQ(param_string(m2, "interface"), "org.example.other");

        m3 = raw_call(&t, "{\"method\":\"" IFACE ".Declared\"}", VARLINK_ERROR_METHOD_NOT_IMPLEMENTED);
        ASSERT_STREQ(param_string(m3, "method"), IFACE ".Declared");

        m4 = raw_call(&t, "{\"method\":\"org.varlink.service.Nope\"}", VARLINK_ERROR_METHOD_NOT_FOUND);
        ASSERT_STREQ(param_string(m4, "method"), "org.varlink.service.Nope");

        /* Upgrade is not supported; the connection stays usable. */
        m5 = raw_call(&t, "{\"method\":\"" IFACE ".Echo\",\"upgrade\":true}", VARLINK_ERROR_INVALID_PARAMETER);
        ASSERT_STREQ(param_string(m5, "parameter"), "upgrade");

        teardown(&t);
}

static void test_get_info(void) {
        _cleanup_json_ json_object *m = NULL, *m2 = NULL;
        json_object *interfaces;
        Test t;

        setup(&t);

        m = raw_call(&t, "{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{}}", NULL);
        ASSERT_STREQ(param_string(m, "vendor"), "injectd project");
        ASSERT_STREQ(param_string(m, "product"), "test-varlink");
        ASSERT_STREQ(param_string(m, "version"), "0.1");
        ASSERT_STREQ(param_string(m, "url"), "https://example.org/injectd");
        ASSERT_OK(json_get_array(params_of(m), "interfaces", &interfaces));
        ASSERT_EQ(json_object_array_length(interfaces), 2);
        ASSERT_STREQ(json_object_get_string(json_object_array_get_idx(interfaces, 0)), "org.varlink.service");
        ASSERT_STREQ(json_object_get_string(json_object_array_get_idx(interfaces, 1)), IFACE);

        m2 = raw_call(&t, "{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{\"x\":1}}",
                      VARLINK_ERROR_INVALID_PARAMETER);
        ASSERT_STREQ(param_string(m2, "parameter"), "x");

        teardown(&t);
}

static void test_get_interface_description(void) {
        _cleanup_json_ json_object *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL, *m5 = NULL;
        char *err = NULL;
        Test t;

        setup(&t);

        m1 = raw_call(&t, "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                      "\"parameters\":{\"interface\":\"" IFACE "\"}}", NULL);
        ASSERT_STREQ(param_string(m1, "description"), test_description);

        m2 = raw_call(&t, "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                      "\"parameters\":{\"interface\":\"org.varlink.service\"}}", NULL);
        if (varlink_idl_validate(param_string(m2, "description"), &err) < 0)
                test_fail("org.varlink.service description does not parse: %s", err);
        ASSERT_TRUE(strstr(param_string(m2, "description"), "method GetInterfaceDescription(") != NULL);

        m3 = raw_call(&t, "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                      "\"parameters\":{\"interface\":\"org.example.none\"}}", VARLINK_ERROR_INTERFACE_NOT_FOUND);
        ASSERT_STREQ(param_string(m3, "interface"), "org.example.none");

        m4 = raw_call(&t, "{\"method\":\"org.varlink.service.GetInterfaceDescription\"}",
                      VARLINK_ERROR_INVALID_PARAMETER);
        ASSERT_STREQ(param_string(m4, "parameter"), "interface");

        m5 = raw_call(&t, "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                      "\"parameters\":{\"interface\":7}}", VARLINK_ERROR_INVALID_PARAMETER);
        ASSERT_STREQ(param_string(m5, "parameter"), "interface");

        teardown(&t);
}

static void test_pipelined(void) {
        static const char calls[] =
                "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"n\":1}}\0"
                "{\"method\":\"" IFACE ".Count\",\"parameters\":{\"n\":2},\"more\":true}\0"
                "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"n\":3}}";
        _cleanup_json_ json_object *a = NULL, *b0 = NULL, *b1 = NULL, *b2 = NULL, *c = NULL;
        Test t;
        Raw r;

        setup(&t);
        raw_connect(&t, &r);

        /* Several messages in one write. */
        raw_send(&t, &r, calls, sizeof(calls));
        a = raw_expect(&t, &r, NULL, false);
        ASSERT_EQ(param_int(a, "n"), 1);
        b0 = raw_expect(&t, &r, NULL, true);
        ASSERT_EQ(param_int(b0, "i"), 0);
        b1 = raw_expect(&t, &r, NULL, true);
        ASSERT_EQ(param_int(b1, "i"), 1);
        b2 = raw_expect(&t, &r, NULL, false);
        c = raw_expect(&t, &r, NULL, false);
        ASSERT_EQ(param_int(c, "n"), 3);
        raw_expect_nothing(&t, &r);

        raw_close(&r);
        teardown(&t);
}

static void test_async_reply(void) {
        static const char calls[] =
                "{\"method\":\"" IFACE ".Hold\"}\0"
                "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"n\":2}}";
        _cleanup_json_ json_object *late = NULL, *a = NULL, *b = NULL;
        Test t;
        Raw r;

        setup(&t);
        raw_connect(&t, &r);

        /* The second call waits for the first one's answer. */
        raw_send(&t, &r, calls, sizeof(calls));
        raw_expect_nothing(&t, &r);
        ASSERT_NOT_NULL(t.held);
        ASSERT_EQ(t.last_flags, 0);

        late = json_object_new_object();
        json_object_object_add(late, "late", json_object_new_boolean(true));
        ASSERT_RET(varlink_reply(t.held, late), 0);
        ASSERT_RET(varlink_reply(t.held, late), -EBUSY);
        t.held = varlink_conn_unref(t.held);

        a = raw_expect(&t, &r, NULL, false);
        ASSERT_NOT_NULL(json_object_object_get(params_of(a), "late"));
        b = raw_expect(&t, &r, NULL, false);
        ASSERT_EQ(param_int(b, "n"), 2);

        /* A stream answered from outside the handler. */
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Hold\",\"more\":true}");
        raw_expect_nothing(&t, &r);
        ASSERT_EQ(t.last_flags, VARLINK_METHOD_MORE);
        ASSERT_RET(varlink_notify(t.held, NULL), 0);
        ASSERT_RET(varlink_notify(t.held, NULL), 0);
        json_object_put(raw_expect(&t, &r, NULL, true));
        json_object_put(raw_expect(&t, &r, NULL, true));
        ASSERT_RET(varlink_error(t.held, IFACE ".Failed", NULL), 0);
        json_object_put(raw_expect(&t, &r, IFACE ".Failed", false));
        ASSERT_RET(varlink_notify(t.held, NULL), -EBUSY);
        t.held = varlink_conn_unref(t.held);

        raw_close(&r);
        teardown(&t);
}

static void test_reply_after_disconnect(void) {
        struct ucred u;
        Test t;
        Raw r;

        setup(&t);
        raw_connect(&t, &r);

        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Hold\",\"more\":true}");
        pump(&t);
        ASSERT_NOT_NULL(t.held);
        ASSERT_EQ(t.n_disconnect, 0);

        /* The requester goes away while its call is pending: the daemon
         * learns it at once. */
        raw_close(&r);
        pump(&t);
        ASSERT_EQ(t.n_disconnect, 1);
        ASSERT_EQ(varlink_server_n_connections(t.server), 0);

        ASSERT_FALSE(varlink_conn_is_connected(t.held));
        ASSERT_RET(varlink_notify(t.held, NULL), -ENOTCONN);
        ASSERT_RET(varlink_reply(t.held, NULL), -ENOTCONN);
        ASSERT_RET(varlink_error(t.held, IFACE ".Failed", NULL), -ENOTCONN);
        ASSERT_RET(varlink_conn_get_fd(t.held), -ENOTCONN);
        ASSERT_NULL(varlink_conn_get_server(t.held));
        ASSERT_OK(varlink_conn_get_peer_ucred(t.held, &u));
        ASSERT_EQ(u.pid, getpid());
        ASSERT_RET(varlink_conn_close(t.held), 0);
        pump(&t);
        ASSERT_EQ(t.n_disconnect, 1);

        /* The last reference frees it (ASan/valgrind check that). */
        t.held = varlink_conn_unref(t.held);

        /* Same with a pipelined call still queued behind the pending one:
         * it is not dispatched for a peer that is gone. */
        raw_connect(&t, &r);
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Hold\"}");
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Record\"}");
        pump(&t);
        ASSERT_NOT_NULL(t.held);
        raw_close(&r);
        pump(&t);
        ASSERT_EQ(t.n_disconnect, 2);
        ASSERT_EQ(t.n_records, 0);
        t.held = varlink_conn_unref(t.held);

        teardown(&t);
}

static void test_byte_by_byte(void) {
        static const char calls[] =
                "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"s\":\"é\"}}\0"
                "{\"method\":\"org.varlink.service.GetInfo\"}";
        _cleanup_json_ json_object *a = NULL, *b = NULL;
        Test t;
        Raw r;

        setup(&t);
        raw_connect(&t, &r);

        for (size_t i = 0; i < sizeof(calls); i++) {
                raw_send(&t, &r, calls + i, 1);
                pump(&t);
                if (i < strlen(calls))
                        raw_expect_nothing(&t, &r);
        }

        a = raw_expect(&t, &r, NULL, false);
        ASSERT_STREQ(param_string(a, "s"), "é");
        b = raw_expect(&t, &r, NULL, false);
        ASSERT_STREQ(param_string(b, "product"), "test-varlink");

        raw_close(&r);
        teardown(&t);
}

#define BIG_HEAD "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"s\":\""
#define BIG_TAIL "\"}}"

/* A call to Echo whose JSON text is exactly len bytes. */
static char *make_call_of_size(size_t len) {
        static const char head[] = BIG_HEAD;
        static const char tail[] = BIG_TAIL;
        size_t fill = len - strlen(head) - strlen(tail);
        char *s = malloc(len + 1);

        ASSERT_NOT_NULL(s);
        memcpy(s, head, strlen(head));
        memset(s + strlen(head), 'a', fill);
        memcpy(s + strlen(head) + fill, tail, strlen(tail) + 1);
        ASSERT_EQ(strlen(s), len);
        return s;
}

static void test_oversized(void) {
        _cleanup_free_ char *max = make_call_of_size(VARLINK_MESSAGE_MAX),
                            *over = make_call_of_size(VARLINK_MESSAGE_MAX + 1);
        _cleanup_json_ json_object *m = NULL;
        Test t;
        Raw r;

        setup(&t);

        /* The largest message is served (and echoed back, 1 MiB), also
         * when its NUL comes in a read of its own. */
        raw_connect(&t, &r);
        raw_send(&t, &r, max, VARLINK_MESSAGE_MAX);
        raw_expect_nothing(&t, &r);
        ASSERT_EQ(t.n_disconnect, 0);
        raw_send(&t, &r, "", 1);
        m = raw_expect(&t, &r, NULL, false);
        ASSERT_EQ(strlen(param_string(m, "s")), VARLINK_MESSAGE_MAX - strlen(BIG_HEAD BIG_TAIL));
        raw_close(&r);
        pump(&t);
        ASSERT_EQ(t.n_disconnect, 1);

        /* One byte more disconnects, without a reply, before the NUL. */
        raw_connect(&t, &r);
        raw_send(&t, &r, over, VARLINK_MESSAGE_MAX + 1);
        raw_expect_eof(&t, &r);
        raw_close(&r);
        ASSERT_EQ(t.n_disconnect, 2);

        /* So does garbage that never ends, even while a call is pending. */
        raw_connect(&t, &r);
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Hold\"}");
        pump(&t);
        ASSERT_NOT_NULL(t.held);
        raw_send(&t, &r, over, VARLINK_MESSAGE_MAX + 1);
        raw_expect_eof(&t, &r);
        raw_close(&r);
        ASSERT_EQ(t.n_disconnect, 3);
        ASSERT_RET(varlink_reply(t.held, NULL), -ENOTCONN);
        t.held = varlink_conn_unref(t.held);

        teardown(&t);
}

static void test_malformed(void) {
        static const char *const bad[] = {
                "",
                "not json",
                "[]",
                "\"org.example.test.Echo\"",
                "null",
                "{}",
                "{\"method\":5}",
                "{\"method\":null}",
                "{\"method\":\"\"}",
                "{\"method\":\"Echo\"}",
                "{\"method\":\"org.example.test.echo\"}",
                "{\"method\":\"org.example.test.\"}",
                "{\"method\":\"org..test.Echo\"}",
                "{\"method\":\".Echo\"}",
                "{\"method\":\"org.example.test.Echo\",\"bogus\":1}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":[]}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":\"x\"}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":1}",
                "{\"method\":\"org.example.test.Echo\",\"oneway\":1}",
                "{\"method\":\"org.example.test.Echo\",\"more\":\"yes\"}",
                "{\"method\":\"org.example.test.Echo\",\"upgrade\":0}",
                "{\"method\":\"org.example.test.Echo\",\"oneway\":true,\"more\":true}",
                "{\"method\":\"org.example.test.Echo\"} x",
                "{\"method\":\"org.example.test.Echo\",}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"s\":\"\xff\"}}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"s\":'x'}}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"n\":NaN}}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"n\":99999999999999999999}}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"s\":\"\x01\"}}",
                /* Duplicate keys: which one would count? Refused, at any depth. */
                "{\"method\":\"org.example.test.Echo\",\"method\":\"org.example.test.Close\"}",
                "{\"method\":\"org.example.test.Echo\",\"m\\u0065thod\":\"org.example.test.Echo\"}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"s\":\"a\",\"s\":\"b\"}}",
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{},\"parameters\":{}}",
                "{\"method\":\"org.example.test.Broken\"}",          /* a failing handler */
                "{\"method\":\"org.example.test.Broken\",\"oneway\":true}",
                "{\"method\":\"org.example.test.Close\"}",
        };
        char deep[200];
        Test t;
        Raw r;

        setup(&t);

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                raw_connect(&t, &r);
                raw_send_msg(&t, &r, bad[i]);
                if (raw_recv(&t, &r, &(json_object *) { NULL }) != -ECONNRESET)
                        test_fail("message '%s': expected a disconnect", bad[i]);
                raw_close(&r);
                ASSERT_EQ(t.n_disconnect, i + 1);
        }

        /* Nesting beyond JSON_DEPTH_MAX. */
        memset(deep, '[', 100);
        memset(deep + 100, ']', 100);
        raw_connect(&t, &r);
        raw_send(&t, &r, BIG_HEAD, strlen(BIG_HEAD) - 1); /* up to the string's opening quote */
        raw_send(&t, &r, deep, sizeof(deep));
        raw_send(&t, &r, "}}", 3);
        raw_expect_eof(&t, &r);
        raw_close(&r);

        /* The server is still fine. */
        json_object_put(raw_call(&t, "{\"method\":\"" IFACE ".Echo\"}", NULL));
        ASSERT_EQ(t.n_connect, ELEMENTSOF(bad) + 2);
        ASSERT_EQ(t.n_disconnect, ELEMENTSOF(bad) + 2);

        teardown(&t);
}

static void test_peer_credentials(void) {
        struct ucred u = {};
        Test t;
        Raw r;

        setup(&t);
        raw_connect(&t, &r);

        ASSERT_NOT_NULL(t.last_conn);
        ASSERT_OK(varlink_conn_get_peer_ucred(t.last_conn, &u));
        ASSERT_EQ(u.pid, getpid());
        ASSERT_EQ(u.uid, getuid());
        ASSERT_EQ(u.gid, getgid());
        ASSERT_TRUE(varlink_conn_get_fd(t.last_conn) >= 0);
        ASSERT_TRUE(varlink_conn_is_connected(t.last_conn));
        ASSERT_RET(varlink_conn_get_peer_ucred(t.last_conn, NULL), -EINVAL);

        raw_close(&r);
        teardown(&t);
}

static void test_half_close(void) {
        _cleanup_json_ json_object *m = NULL;
        Test t;
        Raw r;

        setup(&t);

        /* Call, shut down the sending side, still get the reply, then EOF. */
        raw_connect(&t, &r);
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"n\":7}}");
        ASSERT_OK(shutdown(r.fd, SHUT_WR));
        m = raw_expect(&t, &r, NULL, false);
        ASSERT_EQ(param_int(m, "n"), 7);
        raw_expect_eof(&t, &r);
        raw_close(&r);
        ASSERT_EQ(t.n_disconnect, 1);

        /* Half-closed with a pending call: kept until the answer is out. */
        raw_connect(&t, &r);
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Hold\"}");
        ASSERT_OK(shutdown(r.fd, SHUT_WR));
        raw_expect_nothing(&t, &r);
        ASSERT_EQ(t.n_disconnect, 1);
        ASSERT_RET(varlink_reply(t.held, NULL), 0);
        t.held = varlink_conn_unref(t.held);
        json_object_put(raw_expect(&t, &r, NULL, false));
        raw_expect_eof(&t, &r);
        raw_close(&r);
        ASSERT_EQ(t.n_disconnect, 2);

        /* An incomplete message before the half-close is dropped. */
        raw_connect(&t, &r);
        raw_send(&t, &r, "{\"method\":", 10);
        ASSERT_OK(shutdown(r.fd, SHUT_WR));
        raw_expect_eof(&t, &r);
        raw_close(&r);
        ASSERT_EQ(t.n_disconnect, 3);

        teardown(&t);
}

/* A peer that stops reading with shutdown(SHUT_RD): sending to it fails
 * with EPIPE, without EPOLLHUP. Without MSG_NOSIGNAL, SIGPIPE would kill
 * the test. */
static void test_peer_shut_rd(void) {
        Test t;
        Raw r;

        setup(&t);
        raw_connect(&t, &r);
        ASSERT_OK(shutdown(r.fd, SHUT_RD));
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Echo\"}");
        pump(&t);
        ASSERT_EQ(t.n_disconnect, 1);
        raw_close(&r);
        teardown(&t);
}

static void test_output_limit(void) {
        _cleanup_json_ json_object *big = json_object_new_object();
        _cleanup_free_ char *s = malloc(65536);
        size_t queued = 0;
        unsigned i;
        Test t;
        Raw r;

        memset(s, 'x', 65535);
        s[65535] = 0;
        json_object_object_add(big, "s", json_object_new_string(s));

        setup(&t);
        raw_connect(&t, &r);
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Hold\",\"more\":true}");
        pump(&t);
        ASSERT_NOT_NULL(t.held);

        /* The client never reads. */
        for (i = 0;; i++) {
                int q = varlink_notify(t.held, big);

                if (q == -ENOBUFS)
                        break;
                ASSERT_RET(q, 0);
                ASSERT_TRUE(i < 1000);
                pump(&t);
                queued = varlink_conn_get_output_queued(t.held);
        }
        ASSERT_TRUE(queued > VARLINK_OUTPUT_MAX - 65600);
        ASSERT_TRUE(queued <= VARLINK_OUTPUT_MAX);
        ASSERT_FALSE(varlink_conn_is_connected(t.held));
        ASSERT_RET(varlink_notify(t.held, big), -ENOTCONN);
        pump(&t);
        ASSERT_EQ(t.n_disconnect, 1);
        t.held = varlink_conn_unref(t.held);

        raw_close(&r);
        teardown(&t);
}

static void test_backpressure(void) {
        static const char call[] = "{\"method\":\"org.varlink.service.GetInfo\"}";
        _cleanup_free_ char *calls = NULL;
        const unsigned n = 4000;
        Test t;
        Raw r;

        calls = malloc(n * sizeof(call));
        ASSERT_NOT_NULL(calls);
        for (unsigned i = 0; i < n; i++)
                memcpy(calls + i * sizeof(call), call, sizeof(call));

        setup(&t);
        raw_connect(&t, &r);

        /* 160 KiB of pipelined calls whose replies (~600 KiB) the client
         * does not read yet: the server stops dispatching at the high
         * water mark instead of queueing them all, and keeps the client. */
        raw_send(&t, &r, calls, n * sizeof(call));
        pump(&t);
        ASSERT_NOT_NULL(t.last_conn);
        ASSERT_TRUE(varlink_conn_get_output_queued(t.last_conn) < VARLINK_OUTPUT_HIGH_WATER + 1024);
        ASSERT_TRUE(varlink_conn_get_output_queued(t.last_conn) > 0);

        for (unsigned i = 0; i < n; i++)
                json_object_put(raw_expect(&t, &r, NULL, false));
        raw_expect_nothing(&t, &r);
        ASSERT_EQ(t.n_disconnect, 0);

        raw_close(&r);
        teardown(&t);
}

static unsigned n_refused;
static int refused_error;
static char refused_why[160];

static void on_refused(VarlinkServer *s, int error, const char *why, void *userdata) {
        n_refused++;
        refused_error = error;
        snprintf(refused_why, sizeof(refused_why), "%s", why ?: "(null)");
}

static void test_connection_limits(void) {
        Raw r[4];
        Test t;

        setup(&t);

        /* The server's user hears of each refusal, to log it. */
        ASSERT_OK(varlink_server_set_refused_callback(t.server, on_refused, NULL));
        ASSERT_OK(varlink_server_set_connections_max(t.server, 2, 0));
        for (int i = 0; i < 3; i++)
                raw_connect(&t, &r[i]);
        ASSERT_EQ(t.n_connect, 2);
        ASSERT_EQ(varlink_server_n_connections(t.server), 2);
        /* Refused with a reason, then closed. */
        json_object_put(raw_expect(&t, &r[2], VARLINK_ERROR_PERMISSION_DENIED, false));
        raw_expect_eof(&t, &r[2]);
        ASSERT_EQ(n_refused, 1);
        ASSERT_EQ(refused_error, -EBUSY);
        ASSERT_NOT_NULL(strstr(refused_why, "maximum of 2 connections"));
        raw_send_msg(&t, &r[0], "{\"method\":\"" IFACE ".Echo\"}");
        json_object_put(raw_expect(&t, &r[0], NULL, false));
        for (int i = 0; i < 3; i++)
                raw_close(&r[i]);
        pump(&t);

        /* Per user: all of ours count. */
        ASSERT_OK(varlink_server_set_connections_max(t.server, 100, 1));
        ASSERT_OK(varlink_server_set_refusal_error(t.server, IFACE ".Failed"));
        raw_connect(&t, &r[0]);
        raw_connect(&t, &r[1]);
        {
                _cleanup_json_ json_object *m = raw_expect(&t, &r[1], IFACE ".Failed", false);
                const char *msg = NULL;

                ASSERT_OK(json_get_string(params_of(m), "message", &msg));
                ASSERT_NOT_NULL(strstr(msg, "at most 1 per user"));
        }
        raw_expect_eof(&t, &r[1]);
        raw_close(&r[1]);
        raw_close(&r[0]);
        pump(&t);

        /* A slot freed is a slot available. */
        raw_connect(&t, &r[0]);
        raw_send_msg(&t, &r[0], "{\"method\":\"" IFACE ".Echo\"}");
        json_object_put(raw_expect(&t, &r[0], NULL, false));
        raw_close(&r[0]);
        pump(&t);

        ASSERT_EQ(t.n_connect, 4);
        ASSERT_EQ(t.n_disconnect, 4);
        teardown(&t);
}

/* Out of descriptors, accept() fails: the server pauses accepting (it does
 * not spin on the listening socket, which stays readable), says so, and
 * accepts the waiting peer once a descriptor is free again. */
static void test_accept_emfile(void) {
        struct rlimit old, low;
        Raw r;
        Test t;
        int probe;

        setup(&t);
        ASSERT_OK(varlink_server_set_refused_callback(t.server, on_refused, NULL));
        n_refused = 0;
        refused_error = 0;
        ASSERT_OK(getrlimit(RLIMIT_NOFILE, &old));
        probe = dup(0);                 /* the lowest free descriptor */
        ASSERT_TRUE(probe >= 0);
        safe_close(probe);
        low = old;
        low.rlim_cur = (rlim_t) probe + 1;      /* room for the peer's socket, none for accept() */
        ASSERT_OK(setrlimit(RLIMIT_NOFILE, &low));
        raw_connect(&t, &r);            /* pumps until idle: a spinning loop never is */
        ASSERT_OK(setrlimit(RLIMIT_NOFILE, &old));
        ASSERT_EQ(refused_error, -EMFILE);
        ASSERT_EQ(t.n_connect, 0);

        /* Accepting resumes by itself (after 100 ms). */
        for (unsigned i = 0; i < 200 && t.n_connect == 0; i++)
                ASSERT_TRUE(sd_event_run(t.event, 50 * 1000) >= 0);
        ASSERT_EQ(t.n_connect, 1);
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Echo\"}");
        json_object_put(raw_expect(&t, &r, NULL, false));
        raw_close(&r);
        pump(&t);
        teardown(&t);
}

static bool test_privileged;

static bool is_privileged(VarlinkServer *s, const struct ucred *ucred, void *userdata) {
        Test *t = userdata;

        t->n_records++; /* asked only when over an unprivileged limit */
        return test_privileged;
}

static void expect_refusal(Test *t, Raw *r, const char *what) {
        _cleanup_json_ json_object *m = raw_expect(t, r, IFACE ".Failed", false);
        const char *msg = NULL;

        ASSERT_OK(json_get_string(params_of(m), "message", &msg));
        if (!strstr(msg, what))
                test_fail("refusal '%s' does not say '%s'", msg, what);
        raw_expect_eof(t, r);
}

static void test_connection_reserve(void) {
        VarlinkServerLimits l = { .connections_max = 4, .connections_per_uid_max = 3, .connections_reserved = 2 };
        VarlinkServerLimits bad = l;
        Raw r[6];
        Test t;

        setup(&t);
        bad.connections_reserved = 4;
        ASSERT_RET(varlink_server_set_limits(t.server, &bad), -EINVAL);
        bad = (VarlinkServerLimits) { .connections_max = 4 };
        ASSERT_RET(varlink_server_set_limits(t.server, &bad), -EINVAL);
        ASSERT_OK(varlink_server_set_limits(t.server, &l));
        ASSERT_OK(varlink_server_set_refusal_error(t.server, IFACE ".Failed"));
        ASSERT_OK(varlink_server_set_privileged_callback(t.server, is_privileged, &t));

        /* Unprivileged: two of four, the other two are kept. */
        test_privileged = false;
        raw_connect(&t, &r[0]);
        raw_connect(&t, &r[1]);
        ASSERT_EQ(t.n_records, 0);      /* under the limits: not asked */
        raw_connect(&t, &r[2]);
        expect_refusal(&t, &r[2], "kept for privileged callers");
        ASSERT_EQ(t.n_records, 1);

        /* Privileged: the reserve, and past the per-uid limit (3), up to
         * the total. */
        test_privileged = true;
        raw_connect(&t, &r[3]);
        raw_connect(&t, &r[4]);
        ASSERT_EQ(varlink_server_n_connections(t.server), 4);
        raw_connect(&t, &r[5]);
        expect_refusal(&t, &r[5], "maximum of 4 connections");
        raw_send_msg(&t, &r[4], "{\"method\":\"" IFACE ".Echo\"}");
        json_object_put(raw_expect(&t, &r[4], NULL, false));

        for (int i = 0; i < 6; i++)
                raw_close(&r[i]);
        pump(&t);
        ASSERT_EQ(varlink_server_n_connections(t.server), 0);
        test_privileged = false;
        teardown(&t);
}

/* Runs the loop, waiting, until it has disconnected n connections. */
static void run_until_disconnects(Test *t, unsigned n) {
        for (unsigned i = 0; i < 200 && t->n_disconnect < n; i++)
                ASSERT_TRUE(sd_event_run(t->event, 50 * 1000) >= 0);
}

static void test_idle_timeout(void) {
        VarlinkServerLimits l = {
                .connections_max = 10, .connections_per_uid_max = 10, .idle_usec = 200 * 1000,
        };
        VarlinkServerLimits got;
        Raw idle, busy, kept;
        Test t;

        setup(&t);
        ASSERT_OK(varlink_server_set_limits(t.server, &l));
        varlink_server_get_limits(t.server, &got);
        ASSERT_EQ(got.idle_usec, l.idle_usec);

        raw_connect(&t, &idle);
        raw_connect(&t, &busy);
        raw_send_msg(&t, &busy, "{\"method\":\"" IFACE ".Hold\"}");
        pump(&t);
        ASSERT_NOT_NULL(t.held);
        raw_connect(&t, &kept);
        varlink_conn_set_keep_idle(t.last_conn, true);
        /* Half a message is no activity. */
        raw_send(&t, &idle, "{\"meth", 6);

        run_until_disconnects(&t, 1);
        ASSERT_EQ(t.n_disconnect, 1);
        raw_expect_eof(&t, &idle);
        /* A call in progress and a connection held open stay. */
        ASSERT_RET(varlink_reply(t.held, NULL), 0);
        json_object_put(raw_expect(&t, &busy, NULL, false));
        raw_expect_nothing(&t, &kept);
        ASSERT_EQ(varlink_server_n_connections(t.server), 2);

        /* Once answered, the busy one is idle too. */
        run_until_disconnects(&t, 2);
        ASSERT_EQ(t.n_disconnect, 2);
        raw_expect_eof(&t, &busy);

        raw_close(&idle);
        raw_close(&busy);
        raw_close(&kept);
        teardown(&t);
}

static int refuse_connect(VarlinkServer *s, VarlinkConn *c, void *userdata) {
        Test *t = userdata;

        t->n_connect++;
        return -EPERM;
}

static void test_connect_refused(void) {
        Test t;
        Raw r;

        setup(&t);
        ASSERT_OK(varlink_server_set_connect_callback(t.server, refuse_connect, &t));
        raw_connect(&t, &r);
        raw_expect_eof(&t, &r);
        raw_close(&r);
        ASSERT_EQ(t.n_connect, 1);
        ASSERT_EQ(t.n_disconnect, 0); /* never accepted, never disconnected */
        teardown(&t);
}

static void test_server_free_with_connections(void) {
        Raw r1, r2;
        Test t;

        setup(&t);
        raw_connect(&t, &r1);
        raw_connect(&t, &r2);
        raw_send_msg(&t, &r1, "{\"method\":\"" IFACE ".Hold\"}");
        pump(&t);
        ASSERT_NOT_NULL(t.held);

        t.server = varlink_server_free(t.server);
        ASSERT_EQ(t.n_disconnect, 2);
        ASSERT_RET(varlink_reply(t.held, NULL), -ENOTCONN);

        raw_close(&r1);
        raw_close(&r2);
        teardown(&t);
}

static void test_add_connection(void) {
        _cleanup_json_ json_object *m = NULL;
        VarlinkConn *c = NULL;
        struct ucred u;
        int fds[2];
        Test t;
        Raw r = {};

        setup(&t);
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds));
        ASSERT_OK(varlink_server_add_connection(t.server, fds[0], &c));
        ASSERT_NOT_NULL(c);
        ASSERT_EQ(varlink_conn_get_fd(c), fds[0]);
        ASSERT_OK(varlink_conn_get_peer_ucred(c, &u));
        ASSERT_EQ(u.pid, getpid());

        r.fd = fds[1];
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Echo\",\"parameters\":{\"n\":5}}");
        m = raw_expect(&t, &r, NULL, false);
        ASSERT_EQ(param_int(m, "n"), 5);
        raw_close(&r);
        pump(&t);
        ASSERT_EQ(t.n_disconnect, 1);

        ASSERT_RET(varlink_server_add_connection(t.server, -1, NULL), -EINVAL);
        teardown(&t);
}

static void test_listen(void) {
        _cleanup_close_ int live = -1, unbound = -1;
        int pipefd[2];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char path[192], longpath[200];
        struct stat st;
        int fd;
        Test t;
        Raw r;

        setup(&t);
        snprintf(path, sizeof(path), "%s/listen", tmpdir);
        strcpy(sa.sun_path, path);

        /* A stale socket: bound, then its owner died. */
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_OK(bind(fd, (struct sockaddr *) &sa, sizeof(sa)));
        safe_close(fd);
        ASSERT_OK(varlink_server_listen_address(t.server, path, 0666));
        ASSERT_OK(stat(path, &st));
        ASSERT_TRUE(S_ISSOCK(st.st_mode));
        ASSERT_EQ(st.st_mode & 0777, 0666);

        /* Now a live one: refused, and left alone. */
        ASSERT_RET(varlink_server_listen_address(t.server, path, 0600), -EADDRINUSE);
        ASSERT_OK(stat(path, &st));
        ASSERT_EQ(st.st_mode & 0777, 0666);

        /* Something else entirely. */
        ASSERT_OK(unlink(path));
        fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        safe_close(fd);
        ASSERT_RET(varlink_server_listen_address(t.server, path, 0600), -EEXIST);
        ASSERT_OK(unlink(path));

        memset(longpath, 'x', sizeof(longpath) - 1);
        longpath[0] = '/';
        longpath[sizeof(longpath) - 1] = 0;
        ASSERT_RET(varlink_server_listen_address(t.server, longpath, 0600), -ENAMETOOLONG);
        ASSERT_RET(varlink_server_listen_address(t.server, "", 0600), -EINVAL);
        ASSERT_RET(varlink_server_listen_address(t.server, path, 01777), -EINVAL);

        /* An fd from "socket activation". */
        live = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_OK(bind(live, (struct sockaddr *) &sa, sizeof(sa)));
        ASSERT_OK(listen(live, 8));
        ASSERT_OK(varlink_server_listen_fd(t.server, live));
        strcpy(t.path, path);
        raw_connect(&t, &r);
        raw_send_msg(&t, &r, "{\"method\":\"" IFACE ".Echo\"}");
        json_object_put(raw_expect(&t, &r, NULL, false));
        raw_close(&r);
        TAKE_FD(live); /* the server's now */

        /* Not listening, not a socket. */
        unbound = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_RET(varlink_server_listen_fd(t.server, unbound), -EINVAL);
        ASSERT_OK(pipe2(pipefd, O_CLOEXEC));
        ASSERT_RET(varlink_server_listen_fd(t.server, pipefd[0]), -ENOTSOCK);
        safe_close(pipefd[0]);
        safe_close(pipefd[1]);

        teardown(&t);
        (void) unlink(path);
}

static void test_registration(void) {
        VarlinkServer *s = NULL;
        sd_event *e = NULL;

        ASSERT_OK(sd_event_new(&e));
        ASSERT_RET(varlink_server_new(NULL, NULL, &s), -EINVAL);
        ASSERT_OK(varlink_server_new(e, NULL, &s));

        ASSERT_OK(varlink_server_bind_method(s, IFACE ".Echo", method_echo, NULL));
        ASSERT_RET(varlink_server_bind_method(s, IFACE ".Echo", method_echo, NULL), -EEXIST);
        ASSERT_RET(varlink_server_bind_method(s, "Echo", method_echo, NULL), -EINVAL);
        ASSERT_RET(varlink_server_bind_method(s, IFACE ".echo", method_echo, NULL), -EINVAL);
        ASSERT_RET(varlink_server_bind_method(s, "org.varlink.service.GetInfo", method_echo, NULL), -EINVAL);
        ASSERT_RET(varlink_server_bind_method(s, IFACE ".Other", NULL, NULL), -EINVAL);

        ASSERT_RET(varlink_server_add_interface(s, "org.example.other", test_description), -EINVAL);
        ASSERT_RET(varlink_server_add_interface(s, IFACE, "interface org.example.test\nmethod X(->()\n"), -EINVAL);
        ASSERT_RET(varlink_server_add_interface(s, "org.varlink.service", test_description), -EEXIST);
        ASSERT_OK(varlink_server_add_interface(s, IFACE, test_description));
        ASSERT_RET(varlink_server_add_interface(s, IFACE, test_description), -EEXIST);

        ASSERT_EQ(varlink_server_n_connections(s), 0);
        ASSERT_TRUE(varlink_server_get_event(s) == e);
        s = varlink_server_free(s);
        ASSERT_NULL(varlink_server_free(NULL));
        ASSERT_NULL(varlink_conn_unref(NULL));
        ASSERT_NULL(varlink_conn_ref(NULL));
        e = sd_event_unref(e);
}

/* ---- Client against a server thread ---- */

typedef struct ServerThread {
        Test t;
        pthread_t thread;
        int stop_fd, ready_fd;
} ServerThread;

static int stop_handler(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static void *server_thread(void *p) {
        ServerThread *st = p;
        sd_event_source *stop = NULL;

        setup(&st->t);
        st->t.release_held_on_disconnect = true;
        ASSERT_OK(sd_event_add_io(st->t.event, &stop, st->stop_fd, EPOLLIN, stop_handler, NULL));
        ASSERT_OK(eventfd_write(st->ready_fd, 1));
        ASSERT_OK(sd_event_loop(st->t.event));
        sd_event_source_unref(stop);
        teardown(&st->t);
        return NULL;
}

static void server_thread_start(ServerThread *st) {
        eventfd_t v;

        *st = (ServerThread) {};
        st->stop_fd = eventfd(0, EFD_CLOEXEC);
        st->ready_fd = eventfd(0, EFD_CLOEXEC);
        ASSERT_TRUE(st->stop_fd >= 0 && st->ready_fd >= 0);
        ASSERT_RET(pthread_create(&st->thread, NULL, server_thread, st), 0);
        ASSERT_OK(eventfd_read(st->ready_fd, &v));
}

static void server_thread_stop(ServerThread *st) {
        ASSERT_OK(eventfd_write(st->stop_fd, 1));
        ASSERT_RET(pthread_join(st->thread, NULL), 0);
        safe_close(st->stop_fd);
        safe_close(st->ready_fd);
}

typedef struct Collected {
        unsigned n, stop_after;
        int64_t values[16];
        const char *last_error;
        bool last_continues;
} Collected;

static int collect(VarlinkClient *c, json_object *parameters, const char *error, bool continues, void *userdata) {
        Collected *col = userdata;
        int64_t v = -1;

        ASSERT_TRUE(col->n < ELEMENTSOF(col->values));
        (void) json_get_i64(parameters, "i", INT64_MIN, INT64_MAX, &v);
        col->values[col->n++] = v;
        col->last_error = error;
        col->last_continues = continues;
        return col->stop_after > 0 && col->n >= col->stop_after ? 1 : 0;
}

static void test_client(void) {
        _cleanup_json_ json_object *info = NULL, *echo = NULL, *args = NULL, *fail = NULL, *nul = NULL,
                                   *array = NULL, *badstr = NULL;
        _cleanup_(varlink_client_freep) VarlinkClient *c = NULL;
        const char *error = "unset", *s;
        Collected col = {};
        ServerThread st;
        json_object *o;

        server_thread_start(&st);

        ASSERT_OK(varlink_client_connect(st.t.path, &c));
        ASSERT_TRUE(varlink_client_get_fd(c) >= 0);

        ASSERT_RET(varlink_client_call(c, "org.varlink.service.GetInfo", NULL, &info, &error), 0);
        ASSERT_NULL(error);
        ASSERT_OK(json_get_string(info, "product", &s));
        ASSERT_STREQ(s, "test-varlink");

        args = json_object_new_object();
        json_object_object_add(args, "s", json_object_new_string("round trip"));
        ASSERT_RET(varlink_client_call(c, IFACE ".Echo", args, &echo, NULL), 0);
        ASSERT_OK(json_get_string(echo, "s", &s));
        ASSERT_STREQ(s, "round trip");
        ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, NULL, NULL), 0);

        /* Error replies. */
        ASSERT_RET(varlink_client_call(c, IFACE ".Fail", NULL, &fail, &error), 0);
        ASSERT_STREQ(error, IFACE ".Failed");
        ASSERT_OK(json_get_string(fail, "reason", &s));
        ASSERT_STREQ(s, "on purpose");
        ASSERT_RET(varlink_client_call(c, IFACE ".Fail", NULL, NULL, NULL), -EREMOTEIO);
        ASSERT_RET(varlink_client_call(c, IFACE ".Nope", NULL, NULL, &error), 0);
        ASSERT_STREQ(error, VARLINK_ERROR_METHOD_NOT_FOUND);

        /* Arguments refused before anything is sent: still usable. */
        array = json_object_new_array();
        ASSERT_RET(varlink_client_call(c, "Nope", NULL, NULL, &error), -EINVAL);
        ASSERT_RET(varlink_client_call(c, IFACE ".Echo", array, NULL, &error), -EINVAL);
        badstr = json_object_new_object();
        json_object_object_add(badstr, "s", json_object_new_string("\xc0\xaf"));
        ASSERT_RET(varlink_client_call(c, IFACE ".Echo", badstr, NULL, &error), -EILSEQ);

        /* A NUL inside a string survives the framing. */
        ASSERT_RET(varlink_client_call(c, IFACE ".Nul", NULL, &nul, NULL), 0);
        o = json_object_object_get(nul, "s");
        ASSERT_EQ(json_object_get_string_len(o), 3);
        ASSERT_RET(json_get_string(nul, "s", &s), -EINVAL);

        /* Streams. */
        args = (json_object_put(args), json_object_new_object());
        json_object_object_add(args, "n", json_object_new_int(3));
        ASSERT_RET(varlink_client_call_more(c, IFACE ".Count", args, collect, &col), 0);
        ASSERT_EQ(col.n, 4);
        for (int i = 0; i < 3; i++)
                ASSERT_EQ(col.values[i], i);
        ASSERT_EQ(col.values[3], -1);
        ASSERT_FALSE(col.last_continues);
        ASSERT_NULL(col.last_error);

        col = (Collected) {};
        ASSERT_RET(varlink_client_call_more(c, IFACE ".Fail", NULL, collect, &col), 0);
        ASSERT_EQ(col.n, 1);
        ASSERT_STREQ(col.last_error, IFACE ".Failed");

        /* Oneway, then a call: only the call is answered. */
        ASSERT_RET(varlink_client_call_oneway(c, IFACE ".Record", NULL), 0);
        ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, NULL, &error), 0);
        ASSERT_NULL(error);

        /* Stopping a stream early leaves the client unusable. */
        col = (Collected) { .stop_after = 2 };
        ASSERT_RET(varlink_client_call_more(c, IFACE ".Count", args, collect, &col), 1);
        ASSERT_EQ(col.n, 2);
        ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, NULL, &error), -ENOTCONN);
        c = varlink_client_free(c);

        /* A server that does not answer in time. */
        ASSERT_OK(varlink_client_connect(st.t.path, &c));
        varlink_client_set_timeout(c, 100 * 1000);
        ASSERT_RET(varlink_client_call(c, IFACE ".Hold", NULL, NULL, &error), -ETIMEDOUT);
        ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, NULL, &error), -ENOTCONN);
        c = varlink_client_free(c);

        /* A server that hangs up. */
        ASSERT_OK(varlink_client_connect(st.t.path, &c));
        ASSERT_RET(varlink_client_call(c, IFACE ".Broken", NULL, NULL, &error), -ECONNRESET);
        c = varlink_client_free(c);

        server_thread_stop(&st);
        ASSERT_EQ(st.t.n_records, 1);
        ASSERT_EQ(st.t.n_connect, 3);
        ASSERT_EQ(st.t.n_disconnect, 3);
        ASSERT_NULL(st.t.held);

        ASSERT_RET(varlink_client_connect(st.t.path, &c), -ENOENT);
        ASSERT_RET(varlink_client_connect("/x/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                                          "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", &c), -ENAMETOOLONG);
        ASSERT_NULL(c);
}

/* ---- Client against a fake server ---- */

/* Runs a call on a client whose "server" sent reply beforehand; checks
 * the call the client sent. */
static int fake_call(const char *reply, size_t reply_len, json_object **ret, const char **ret_error) {
        _cleanup_(varlink_client_freep) VarlinkClient *c = NULL;
        _cleanup_json_ json_object *sent = NULL;
        const char *method;
        char buf[4096];
        int fds[2], r;
        ssize_t n;

        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds));
        ASSERT_OK(varlink_client_new_from_fd(fds[0], &c));
        varlink_client_set_timeout(c, 200 * 1000);
        if (reply)
                ASSERT_EQ(send(fds[1], reply, reply_len, MSG_NOSIGNAL), (ssize_t) reply_len);
        else
                ASSERT_OK(shutdown(fds[1], SHUT_WR));

        r = varlink_client_call(c, IFACE ".Echo", NULL, ret, ret_error);

        n = recv(fds[1], buf, sizeof(buf), MSG_DONTWAIT);
        ASSERT_TRUE(n > 0 && buf[n - 1] == 0);
        ASSERT_OK(json_parse_strict(buf, n - 1, JSON_PARSE_OBJECT, &sent));
        ASSERT_OK(json_get_string(sent, "method", &method));
        ASSERT_STREQ(method, IFACE ".Echo");
        ASSERT_EQ(json_object_object_length(sent), 2); /* method, parameters */

        if (r >= 0)
                ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, NULL, NULL), -ETIMEDOUT);
        else
                ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, NULL, NULL), -ENOTCONN);

        safe_close(fds[1]);
        return r;
}

#define FAKE_CALL(s, ret, ret_error) fake_call(s, sizeof(s), ret, ret_error)

typedef struct Flood {
        int fd;
} Flood;

static void *flood_thread(void *p) {
        Flood *f = p;
        static char chunk[65536];

        memset(chunk, ' ', sizeof(chunk));
        while (send(f->fd, chunk, sizeof(chunk), MSG_NOSIGNAL) > 0)
                ;
        return NULL;
}

static void test_client_fake_server(void) {
        _cleanup_json_ json_object *p = NULL;
        const char *error = NULL, *s;
        int fds[2];
        Flood f;
        pthread_t th;
        VarlinkClient *c = NULL;
        uint64_t start;
        struct timespec ts;

        ASSERT_RET(FAKE_CALL("{\"parameters\":{\"s\":\"ok\"}}", &p, &error), 0);
        ASSERT_OK(json_get_string(p, "s", &s));
        ASSERT_STREQ(s, "ok");
        ASSERT_NULL(error);
        p = (json_object_put(p), NULL);

        /* Missing parameters are an empty object. */
        ASSERT_RET(FAKE_CALL("{}", &p, &error), 0);
        ASSERT_EQ(json_object_object_length(p), 0);
        p = (json_object_put(p), NULL);

        ASSERT_RET(FAKE_CALL("{bad}", &p, &error), -EBADMSG);
        ASSERT_RET(FAKE_CALL("[]", &p, &error), -EBADMSG);
        ASSERT_RET(FAKE_CALL("{\"parameters\":{},\"continues\":true}", &p, &error), -EBADMSG);
        ASSERT_RET(FAKE_CALL("{\"parameters\":{},\"extra\":1}", &p, &error), -EBADMSG);
        ASSERT_RET(FAKE_CALL("{\"error\":\"bad name\"}", &p, &error), -EBADMSG);
        ASSERT_RET(FAKE_CALL("{\"error\":\"a.b.C\",\"continues\":true}", &p, &error), -EBADMSG);
        ASSERT_RET(FAKE_CALL("{\"parameters\":[]}", &p, &error), -EBADMSG);
        ASSERT_RET(FAKE_CALL("{\"parameters\":{\"s\":1,\"s\":2}}", &p, &error), -EBADMSG);
        ASSERT_RET(FAKE_CALL("{\"error\":\"a.b.C\",\"error\":\"a.b.D\"}", &p, &error), -EBADMSG);
        ASSERT_RET(fake_call(NULL, 0, &p, &error), -ECONNRESET);
        ASSERT_NULL(p);

        /* Nothing comes: the timeout. */
        ASSERT_OK(clock_gettime(CLOCK_MONOTONIC, &ts));
        start = ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
        ASSERT_RET(fake_call("", 0, &p, &error), -ETIMEDOUT);
        ASSERT_OK(clock_gettime(CLOCK_MONOTONIC, &ts));
        ASSERT_TRUE(ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000 - start >= 200 * 1000);

        /* Two replies in one packet are two replies. */
        {
                static const char two[] = "{\"parameters\":{\"n\":1}}\0{\"parameters\":{\"n\":2}}";
                _cleanup_json_ json_object *a = NULL, *b = NULL;

                ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds));
                ASSERT_OK(varlink_client_new_from_fd(fds[0], &c));
                ASSERT_EQ(send(fds[1], two, sizeof(two), 0), (ssize_t) sizeof(two));
                ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, &a, NULL), 0);
                ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, &b, NULL), 0);
                ASSERT_EQ(json_object_get_int(json_object_object_get(a, "n")), 1);
                ASSERT_EQ(json_object_get_int(json_object_object_get(b, "n")), 2);
                c = varlink_client_free(c);
                safe_close(fds[1]);
        }

        /* A reply that never ends: refused at VARLINK_CLIENT_MESSAGE_MAX. */
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds));
        ASSERT_OK(varlink_client_new_from_fd(fds[0], &c));
        f.fd = fds[1];
        ASSERT_RET(pthread_create(&th, NULL, flood_thread, &f), 0);
        ASSERT_RET(varlink_client_call(c, IFACE ".Echo", NULL, NULL, NULL), -EBADMSG);
        c = varlink_client_free(c); /* the flood ends with EPIPE */
        ASSERT_RET(pthread_join(th, NULL), 0);
        safe_close(fds[1]);

        ASSERT_RET(varlink_client_new_from_fd(-1, &c), -EINVAL);
        ASSERT_NULL(varlink_client_free(NULL));
}

/* The parsers alone: a duplicate key is a protocol violation (the server
 * disconnects, the client fails with -EBADMSG), as is anything else the
 * strict reader refuses. */
static void test_parse_duplicate_keys(void) {
        static const char call_ok[] = "{\"method\":\"a.b.C\",\"parameters\":{\"x\":{\"y\":1},\"y\":1}}";
        static const char call_dup[] = "{\"method\":\"a.b.C\",\"parameters\":{\"x\":{\"y\":1,\"y\":1}}}";
        static const char reply_dup[] = "{\"continues\":true,\"continues\":false}";
        VarlinkCall call = {};
        VarlinkReply reply = {};

        ASSERT_RET(varlink_call_parse(call_ok, strlen(call_ok), &call), 0);
        varlink_call_done(&call);
        ASSERT_RET(varlink_call_parse(call_dup, strlen(call_dup), &call), -EBADMSG);
        ASSERT_NULL(call.message);
        ASSERT_RET(varlink_reply_parse(reply_dup, strlen(reply_dup), &reply), -EBADMSG);
        ASSERT_NULL(reply.message);
}

/* ---- Names and IDL ---- */

static void test_names(void) {
        static const char *const good_interfaces[] = {
                "org.varlink.service", "org.injectd.Injector", "io.systemd.Resolve", "a.b", "a1.2b",
                "org.foo-bar.x", "org.foo--bar.x",
        };
        static const char *const bad_interfaces[] = {
                "", "org", "1org.x", "org..x", ".org.x", "org.x.", "org.-x", "org.x-", "org.x_y", "org.x y",
                "org.é",
        };

        for (size_t i = 0; i < ELEMENTSOF(good_interfaces); i++)
                if (!varlink_interface_name_is_valid(good_interfaces[i]))
                        test_fail("'%s' should be a valid interface name", good_interfaces[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad_interfaces); i++)
                if (varlink_interface_name_is_valid(bad_interfaces[i]))
                        test_fail("'%s' should not be a valid interface name", bad_interfaces[i]);
        ASSERT_FALSE(varlink_interface_name_is_valid(NULL));

        ASSERT_TRUE(varlink_qualified_name_is_valid("org.example.test.Echo"));
        ASSERT_TRUE(varlink_qualified_name_is_valid("org.injectd.Injector.Inject2"));
        ASSERT_FALSE(varlink_qualified_name_is_valid("org.example.test.echo"));
        ASSERT_FALSE(varlink_qualified_name_is_valid("org.Echo.")); /* "org" alone is no interface */
        ASSERT_FALSE(varlink_qualified_name_is_valid("org.Echo"));
        ASSERT_FALSE(varlink_qualified_name_is_valid("Echo"));
        ASSERT_FALSE(varlink_qualified_name_is_valid("org.example.test.Echo-2"));
        ASSERT_FALSE(varlink_qualified_name_is_valid(NULL));
        ASSERT_TRUE(varlink_member_name_is_valid("GetInfo"));
        ASSERT_FALSE(varlink_member_name_is_valid("getInfo"));
        ASSERT_FALSE(varlink_member_name_is_valid("Get_Info"));
}

static void test_idl(void) {
        static const char *const good[] = {
                "interface org.example.x\nmethod A() -> ()\n",
                "# leading comment\n\ninterface org.example.x # trailing comment\r\n"
                "type T (a: int, b_c: ?[]string, d: [string]float, e: object, f: (x, y), g: (h: bool))\n"
                "type E (one, two, three)\n"
                "type Empty ()\n"
                "method M(t: T, list: []?T, m: [string][]E) -> (r: ?(a: int))\n"
                "error Bad (why: string)\n"
                "error Plain ()\n",
                "interface org.example.x\nmethod A()->() # same line\nerror B()",
                "interface org.example.x\nmethod A(\n  a: int,\n  b: int\n) -> (\n)\n",
        };
        static const struct {
                const char *text;
                const char *message;
        } bad[] = {
                { "", "1:1: expected 'interface', got end of input" },
                { "# just a comment\n", "2:1: expected 'interface', got end of input" },
                { "interface org\nmethod A() -> ()\n", "1:11: expected an interface name" },
                { "interface org.example.x\n", "2:1: interface declares no method, type or error" },
                { "interface org.example.x\nmethod a() -> ()\n", "2:8: expected a name" },
                { "interface org.example.x\nmethod A() -> (\n", "3:1: expected a field name, got end of input" },
                { "interface org.example.x\nmethod A() ()\n", "2:12: expected '->', got '('" },
                { "interface org.example.x\nmethod A(a: int -> ()\n", "2:17: expected ',' or ')', got '->'" },
                { "interface org.example.x\nmethod A(a int) -> ()\n", "2:12: expected ':', got 'int'" },
                { "interface org.example.x\nmethod A(a: Unknown) -> ()\n", "2:13: unknown type 'Unknown'" },
                { "interface org.example.x\nmethod A(a: ??int) -> ()\n", "2:14: '?' twice" },
                { "interface org.example.x\nmethod A(a: int, a: int) -> ()\n", "2:18: duplicate field 'a'" },
                { "interface org.example.x\ntype T (a, a)\n", "2:12: duplicate enum value 'a'" },
                { "interface org.example.x\nmethod A() -> ()\nerror A ()\n", "3:7: duplicate member 'A'" },
                { "interface org.example.x\nmethod A(a) -> ()\n", "2:11: expected ':', got ')'" },
                { "interface org.example.x\nerror E (a, b)\n", "2:11: expected ':', got ','" },
                { "interface org.example.x\nmethod A(a: [int]string) -> ()\n", "2:14: expected ']', got 'int'" },
                { "interface org.example.x\nmethod A(a: int) -> () junk\n", "2:24: expected 'method', 'type' or 'error', got 'junk'" },
                { "interface org.example.x method A() -> ()\n", "1:25: expected a new line before 'method'" },
                { "interface org.example.x\nmethod A() -> () error B()\n", "2:18: expected a new line before 'error'" },
                { "interface org.example.x\nmethod A(a: int;) -> ()\n", "2:16: unexpected character ';'" },
                { "interface org.example.x\nmethod A(_a: int) -> ()\n", "2:10: expected a field name, got '_a'" },
                { "interface org.example.x\nmethod A(a__b: int) -> ()\n", "2:10: expected a field name" },
                { "interface org.example.x\nmethod A(a: float) -> ())\n", "2:25: expected 'method', 'type' or 'error', got ')'" },
                { "interface org.example.x\n# caf\xc3\xa9 \xff\nmethod A() -> ()\n", "2:8: invalid UTF-8" },
        };
        char deep[400] = "interface org.example.x\nmethod A(a: ";
        char *err = NULL, *iface = NULL, **methods = NULL;

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                if (varlink_idl_validate(good[i], &err) < 0)
                        test_fail("description %zu should parse: %s", i, err);

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r;

                err = NULL;
                r = varlink_idl_validate(bad[i].text, &err);
                if (r != -EBADMSG)
                        test_fail("description '%s': expected -EBADMSG, seen %d", bad[i].text, r);
                ASSERT_NOT_NULL(err);
                if (strncmp(err, bad[i].message, strlen(bad[i].message)) != 0)
                        test_fail("description '%s': expected message '%s', seen '%s'", bad[i].text,
                                  bad[i].message, err);
                free(err);
        }

        /* Without a place for the message. */
        ASSERT_RET(varlink_idl_validate("interface", NULL), -EBADMSG);
        ASSERT_RET(varlink_idl_validate(NULL, NULL), -EINVAL);

        /* Nesting is bounded. */
        for (int i = 0; i < 40; i++)
                strcat(deep, "[]");
        strcat(deep, "int) -> ()\n");
        ASSERT_RET(varlink_idl_validate(deep, &err), -EBADMSG);
        ASSERT_TRUE(strstr(err, "nested deeper") != NULL);
        free(err);

        ASSERT_OK(varlink_idl_parse(test_description, &iface, &methods, NULL));
        ASSERT_STREQ(iface, IFACE);
        ASSERT_STREQ(methods[0], "Echo");
        ASSERT_STREQ(methods[9], "Declared");
        ASSERT_NULL(methods[10]);
        free(iface);
        methods = strv_free(methods);
}

static void cleanup_tmpdir(void) {
        char p[128];

        snprintf(p, sizeof(p), "rm -rf '%s'", tmpdir);
        if (tmpdir[0] && system(p) != 0)
                fprintf(stderr, "Failed to remove '%s', ignoring.\n", tmpdir);
}

int main(void) {
        const char *base = getenv("TMPDIR") ?: "/tmp";

        snprintf(tmpdir, sizeof(tmpdir), "%s/test-varlink-XXXXXX", base);
        if (strlen(base) > 40 || !mkdtemp(tmpdir)) {
                snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-varlink-XXXXXX");
                if (!mkdtemp(tmpdir))
                        TEST_SKIP("cannot create a temporary directory: %m");
        }
        atexit(cleanup_tmpdir);

        TEST_RUN(test_names);
        TEST_RUN(test_idl);
        TEST_RUN(test_registration);
        TEST_RUN(test_call_reply);
        TEST_RUN(test_more);
        TEST_RUN(test_oneway);
        TEST_RUN(test_errors);
        TEST_RUN(test_unknown);
        TEST_RUN(test_get_info);
        TEST_RUN(test_get_interface_description);
        TEST_RUN(test_pipelined);
        TEST_RUN(test_async_reply);
        TEST_RUN(test_reply_after_disconnect);
        TEST_RUN(test_byte_by_byte);
        TEST_RUN(test_oversized);
        TEST_RUN(test_malformed);
        TEST_RUN(test_parse_duplicate_keys);
        TEST_RUN(test_peer_credentials);
        TEST_RUN(test_half_close);
        TEST_RUN(test_peer_shut_rd);
        TEST_RUN(test_output_limit);
        TEST_RUN(test_backpressure);
        TEST_RUN(test_connection_limits);
        TEST_RUN(test_accept_emfile);
        TEST_RUN(test_connection_reserve);
        TEST_RUN(test_idle_timeout);
        TEST_RUN(test_connect_refused);
        TEST_RUN(test_server_free_with_connections);
        TEST_RUN(test_add_connection);
        TEST_RUN(test_listen);
        TEST_RUN(test_client);
        TEST_RUN(test_client_fake_server);
        return 0;
}
