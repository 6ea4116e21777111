/* SPDX-License-Identifier: MIT */

/* The Varlink client API, against a server running in a second thread and
 * against a fake server on a socketpair. */

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

int main(void) {
        fixture_init();

        TEST_RUN(test_parse_duplicate_keys);
        TEST_RUN(test_client);
        TEST_RUN(test_client_fake_server);
        return 0;
}
