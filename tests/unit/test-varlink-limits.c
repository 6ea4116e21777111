/* SPDX-License-Identifier: MIT */

/* The Varlink server against peers that misbehave or are too many: peer
 * credentials, half-closed and unread connections, output limits and
 * backpressure, connection limits and the privileged reserve, accept()
 * out of fds, idle timeouts. */

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

int main(void) {
        fixture_init();

        TEST_RUN(test_peer_credentials);
        TEST_RUN(test_half_close);
        TEST_RUN(test_peer_shut_rd);
        TEST_RUN(test_output_limit);
        TEST_RUN(test_backpressure);
        TEST_RUN(test_connection_limits);
        TEST_RUN(test_accept_emfile);
        TEST_RUN(test_connection_reserve);
        TEST_RUN(test_idle_timeout);
        return 0;
}
