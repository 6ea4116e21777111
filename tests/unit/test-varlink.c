/* SPDX-License-Identifier: MIT */

/* The Varlink server's protocol, driven by raw clients on the fixture's
 * server (varlink-fixture.c): calls and replies, "more", oneway, errors,
 * org.varlink.service, framing, malformed and oversized messages, the
 * server's life (listening, connections added, refused, freed) and what
 * may be bound. */

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

int main(void) {
        fixture_init();

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
        TEST_RUN(test_connect_refused);
        TEST_RUN(test_server_free_with_connections);
        TEST_RUN(test_add_connection);
        TEST_RUN(test_listen);
        return 0;
}
