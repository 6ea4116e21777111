/* SPDX-License-Identifier: MIT */

/* File descriptors over Varlink (SCM_RIGHTS, docs/varlink-protocol.md):
 * the server runs its sd-event loop in a thread of its own, so that the
 * tests can talk to it both with raw sendmsg() (to send what our client
 * never would) and with the synchronous client. Every fd the server
 * receives is accounted for: the process's open fds are counted before
 * and after each test. */

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json-util.h"
#include "test-util.h"
#include "varlink.h"

#define IFACE "org.example.fds"
#define REPLY_TIMEOUT_MS 120000 /* only for a reply that never comes; one takes microseconds */

typedef struct Test {
        sd_event *event;
        VarlinkServer *server;
        int client;             /* our end of the connection */
        pthread_t thread;
        atomic_bool stop;
} Test;

/* Two fds at most: {"n": how many came, "inodes": their inodes in order,
 * "cloexec": whether all are close-on-exec}. */
static int method_inspect(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        _cleanup_json_ json_object *p = json_object_new_object(), *inodes = json_object_new_array();
        bool cloexec = true;
        unsigned n = varlink_conn_n_fds(c);

        ASSERT_NOT_NULL(p);
        ASSERT_NOT_NULL(inodes);
        for (unsigned i = 0; i < n; i++) {
                int fd = varlink_conn_peek_fd(c, i);
                struct stat st;

                ASSERT_TRUE(fd >= 0);
                ASSERT_EQ(fstat(fd, &st), 0);
                json_object_array_add(inodes, json_object_new_int64((int64_t) st.st_ino));
                cloexec = cloexec && (fcntl(fd, F_GETFD) & FD_CLOEXEC);
        }
        ASSERT_EQ(varlink_conn_peek_fd(c, n), -ENXIO);
        json_object_object_add(p, "n", json_object_new_int64(n));
        json_object_object_add(p, "inodes", json_object_get(inodes));
        json_object_object_add(p, "cloexec", json_object_new_boolean(cloexec));
        return varlink_reply(c, p);
}

/* One fd, taken: writes "x" to it and closes it, as a handler that keeps
 * an fd beyond the call would close it later. */
static int method_take(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        int fd = varlink_conn_take_fd(c, 0);

        if (fd < 0)
                return varlink_error_invalid_parameter(c, "fd");
        ASSERT_EQ(varlink_conn_take_fd(c, 0), -ENXIO);  /* taken already */
        ASSERT_EQ(write(fd, "x", 1), 1);
        close(fd);
        return varlink_reply(c, NULL);
}

/* Takes no fds. */
static int method_plain(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        return varlink_reply(c, NULL);
}

static void *serve(void *userdata) {
        Test *t = userdata;

        while (!atomic_load(&t->stop))
                ASSERT_TRUE(sd_event_run(t->event, 10 * 1000) >= 0);
        return NULL;
}

static void setup(Test *t) {
        int sv[2];

        *t = (Test) { .client = -1 };
        ASSERT_OK(sd_event_new(&t->event));
        ASSERT_OK(varlink_server_new(t->event, NULL, &t->server));
        ASSERT_OK(varlink_server_bind_method_fds(t->server, IFACE ".Inspect", 2, method_inspect, t));
        ASSERT_OK(varlink_server_bind_method_fds(t->server, IFACE ".Take", 1, method_take, t));
        ASSERT_OK(varlink_server_bind_method(t->server, IFACE ".Plain", method_plain, t));
        ASSERT_EQ(varlink_server_bind_method_fds(t->server, IFACE ".TooMany", VARLINK_MESSAGE_FDS_MAX + 1,
                                                 method_plain, t), -EINVAL);
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        ASSERT_OK(varlink_server_add_connection(t->server, sv[0], NULL));
        t->client = sv[1];
        ASSERT_EQ(pthread_create(&t->thread, NULL, serve, t), 0);
}

static void teardown(Test *t) {
        atomic_store(&t->stop, true);
        ASSERT_EQ(pthread_join(t->thread, NULL), 0);
        if (t->client >= 0)
                close(t->client);
        varlink_server_free(t->server);
        sd_event_unref(t->event);
}

static unsigned count_fds(void) {
        unsigned n = 0;
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;

        ASSERT_NOT_NULL(d);
        while ((de = readdir(d)))
                n += de->d_name[0] != '.';
        closedir(d);
        return n - 1;   /* the directory's own */
}

/* Sends text (and its NUL) with fds on its first byte. */
static void send_fds(int sock, const char *text, const int *fds, unsigned n) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * 16)];
        } control = {};
        struct iovec iov = { .iov_base = (char *) text, .iov_len = strlen(text) + 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        ASSERT_TRUE(n <= 16);
        if (n > 0) {
                struct cmsghdr *cm;

                mh.msg_control = &control;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                cm = CMSG_FIRSTHDR(&mh);
                *cm = (struct cmsghdr) { .cmsg_level = SOL_SOCKET, .cmsg_type = SCM_RIGHTS,
                                         .cmsg_len = CMSG_LEN(sizeof(int) * n) };
                memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
        }
        ASSERT_EQ(sendmsg(sock, &mh, MSG_NOSIGNAL), (ssize_t) iov.iov_len);
}

/* The next message from the server, or NULL at end of file. */
static json_object *recv_msg(int sock) {
        static char buf[65536];
        static size_t used;
        json_object *o;
        char *nul;

        while (!(nul = memchr(buf, 0, used))) {
                struct pollfd p = { .fd = sock, .events = POLLIN };
                ssize_t k;

                ASSERT_EQ(poll(&p, 1, REPLY_TIMEOUT_MS), 1);
                k = recv(sock, buf + used, sizeof(buf) - used, 0);
                ASSERT_TRUE(k >= 0);
                if (k == 0) {
                        ASSERT_EQ(used, 0);
                        return NULL;
                }
                used += k;
        }
        o = json_tokener_parse(buf);
        ASSERT_NOT_NULL(o);
        used -= nul + 1 - buf;
        memmove(buf, nul + 1, used);
        return o;
}

static json_object *params_of(json_object *m) {
        json_object *p = NULL;

        ASSERT_TRUE(json_object_object_get_ex(m, "parameters", &p));
        return p;
}

static const char *error_of(json_object *m) {
        json_object *e = NULL;

        return json_object_object_get_ex(m, "error", &e) ? json_object_get_string(e) : NULL;
}

static ino_t ino_of(int fd) {
        struct stat st;

        ASSERT_EQ(fstat(fd, &st), 0);
        return st.st_ino;
}

/* Inspect's parameters name these inodes in this order, all close-on-exec. */
static void expect_inodes(json_object *p, const int *fds, unsigned n) {
        json_object *inodes = NULL, *v = NULL;

        ASSERT_TRUE(json_object_object_get_ex(p, "inodes", &inodes));
        ASSERT_EQ(json_object_array_length(inodes), n);
        for (unsigned i = 0; i < n; i++)
                ASSERT_EQ((ino_t) json_object_get_int64(json_object_array_get_idx(inodes, i)), ino_of(fds[i]));
        ASSERT_TRUE(json_object_object_get_ex(p, "cloexec", &v));
        ASSERT_TRUE(json_object_get_boolean(v));
}

/* The next message is an Inspect reply naming these inodes. */
static void expect_next_inodes(int sock, const int *fds, unsigned n) {
        json_object *m = recv_msg(sock);

        ASSERT_NOT_NULL(m);
        if (error_of(m))
                test_fail("expected a reply, got error '%s'", error_of(m));
        expect_inodes(params_of(m), fds, n);
        json_object_put(m);
}

/* The next message is the error named (or a reply, for NULL); its
 * parameters are returned for a closer look, the caller's to put. */
static json_object *expect_next_error(int sock, const char *error) {
        json_object *m = recv_msg(sock), *p = NULL;

        ASSERT_NOT_NULL(m);
        if (error)
                ASSERT_STREQ(error_of(m), error);
        else
                ASSERT_NULL(error_of(m));
        (void) json_object_object_get_ex(m, "parameters", &p);
        p = json_object_get(p);
        json_object_put(m);
        return p;
}

/* Whether the server still holds a copy of w, the write end of pipe
 * (r, w), once we closed ours: the read end sees EOF only when nobody
 * does. */
static bool write_end_closed_elsewhere(int r) {
        struct pollfd p = { .fd = r, .events = POLLIN };
        char c;

        if (poll(&p, 1, REPLY_TIMEOUT_MS) != 1)
                return false;
        return read(r, &c, 1) == 0;
}

static void make_pipe(int p[2]) {
        ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
}

/* Closes pipe p, our write end first, and checks the server held no copy
 * of it (or closed the one it had): whatever fds it was given are gone. */
static void close_pipe_released(int p[2]) {
        close(p[1]);
        ASSERT_TRUE(write_end_closed_elsewhere(p[0]));
        close(p[0]);
}

static void test_in_order(void) {
        unsigned before = count_fds();
        int a[2], b[2];
        Test t;

        setup(&t);
        make_pipe(a);
        make_pipe(b);

        /* Both orders: an fd's index is its place in the message. */
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\",\"parameters\":{}}", (int[]) { a[0], b[1] }, 2);
        expect_next_inodes(t.client, (int[]) { a[0], b[1] }, 2);
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\",\"parameters\":{}}", (int[]) { b[1], a[0] }, 2);
        expect_next_inodes(t.client, (int[]) { b[1], a[0] }, 2);

        /* No fds: none. */
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\"}", NULL, 0);
        expect_next_inodes(t.client, NULL, 0);

        /* The server closed its copies when the calls ended. */
        close(b[0]);
        close(a[0]);
        close(a[1]);
        close(b[1]);
        teardown(&t);
        ASSERT_EQ(count_fds(), before);
}

/* Pipelined calls, sent before any answer: each fd goes to the call it
 * came with, also when a call without fds comes between, whatever the
 * kernel hands the server in one read. */
static void test_pipelined(void) {
        unsigned before = count_fds();
        int a[2], b[2];
        Test t;

        setup(&t);
        make_pipe(a);
        make_pipe(b);
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\"}", NULL, 0);
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\"}", (int[]) { a[1] }, 1);
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\"}", NULL, 0);
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\"}", (int[]) { b[1], a[1] }, 2);
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\"}", (int[]) { b[0] }, 1);

        expect_next_inodes(t.client, NULL, 0);
        expect_next_inodes(t.client, (int[]) { a[1] }, 1);
        expect_next_inodes(t.client, NULL, 0);
        expect_next_inodes(t.client, (int[]) { b[1], a[1] }, 2);
        expect_next_inodes(t.client, (int[]) { b[0] }, 1);

        close_pipe_released(a);
        close(b[0]);
        close(b[1]);
        teardown(&t);
        ASSERT_EQ(count_fds(), before);
}

/* A method bound without fds, or given more than it takes: refused with
 * InvalidParameter "fds", its handler not called, the fds closed. */
static void test_not_accepted(void) {
        unsigned before = count_fds();
        json_object *p = NULL, *v = NULL;
        int a[2], b[2];
        Test t;

        setup(&t);
        make_pipe(a);
        send_fds(t.client, "{\"method\":\"" IFACE ".Plain\"}", (int[]) { a[1] }, 1);
        p = expect_next_error(t.client, VARLINK_ERROR_INVALID_PARAMETER);
        ASSERT_TRUE(json_object_object_get_ex(p, "parameter", &v));
        ASSERT_STREQ(json_object_get_string(v), "fds");
        json_object_put(p);
        close_pipe_released(a);

        /* org.varlink.service takes none either. */
        make_pipe(a);
        send_fds(t.client, "{\"method\":\"org.varlink.service.GetInfo\"}", (int[]) { a[1] }, 1);
        json_object_put(expect_next_error(t.client, VARLINK_ERROR_INVALID_PARAMETER));
        close_pipe_released(a);

        /* Take takes one; two are one too many, and Take did not run: the
         * pipes got no "x" before their ends were released. */
        make_pipe(a);
        make_pipe(b);
        send_fds(t.client, "{\"method\":\"" IFACE ".Take\"}", (int[]) { a[1], b[1] }, 2);
        json_object_put(expect_next_error(t.client, VARLINK_ERROR_INVALID_PARAMETER));
        close_pipe_released(a);
        close_pipe_released(b);

        /* The connection is still good, and a taken fd is the handler's. */
        make_pipe(b);
        send_fds(t.client, "{\"method\":\"" IFACE ".Take\"}", (int[]) { b[1] }, 1);
        json_object_put(expect_next_error(t.client, NULL));
        {
                char c[2];

                ASSERT_EQ(read(b[0], c, 2), 1);
                ASSERT_EQ(c[0], 'x');
        }
        close_pipe_released(b);
        teardown(&t);
        ASSERT_EQ(count_fds(), before);
}

/* More than VARLINK_MESSAGE_FDS_MAX in one message breaks the protocol:
 * the connection closes, and so do all the fds. */
static void test_too_many(void) {
        unsigned before = count_fds();
        int p[2], fds[VARLINK_MESSAGE_FDS_MAX + 1];
        Test t;

        setup(&t);
        make_pipe(p);
        for (unsigned i = 0; i < ELEMENTSOF(fds); i++)
                fds[i] = p[1];
        send_fds(t.client, "{\"method\":\"" IFACE ".Inspect\"}", fds, ELEMENTSOF(fds));
        ASSERT_NULL(recv_msg(t.client));
        close_pipe_released(p);
        teardown(&t);
        ASSERT_EQ(count_fds(), before);
}

/* fds on a byte that does not start a message break the protocol. */
static void test_mid_message(void) {
        unsigned before = count_fds();
        int p[2];
        Test t;

        setup(&t);
        make_pipe(p);
        ASSERT_EQ(send(t.client, "{\"method\":", 10, MSG_NOSIGNAL), 10);
        /* Until the server has read the first part: read together, the
         * two would look like one message with fds on its first byte,
         * which is what the kernel hands over and fine. */
        for (int outq = 1, i = 0; outq > 0; i++) {
                ASSERT_EQ(ioctl(t.client, SIOCOUTQ, &outq), 0);
                ASSERT_TRUE(i < REPLY_TIMEOUT_MS);
                if (outq > 0)
                        usleep(1000);
        }
        send_fds(t.client, "\"" IFACE ".Inspect\"}", (int[]) { p[1] }, 1);
        ASSERT_NULL(recv_msg(t.client));
        close_pipe_released(p);
        teardown(&t);
        ASSERT_EQ(count_fds(), before);
}

/* Our client: pushed fds go with the next call only, in order. */
static void test_client(void) {
        unsigned before = count_fds();
        _cleanup_(varlink_client_freep) VarlinkClient *c = NULL;
        _cleanup_json_ json_object *reply = NULL, *reply2 = NULL;
        int p[2];
        Test t;

        setup(&t);
        make_pipe(p);
        ASSERT_OK(varlink_client_new_from_fd(t.client, &c));
        t.client = -1;
        ASSERT_EQ(varlink_client_push_fd(c, p[1]), 0);
        ASSERT_EQ(varlink_client_push_fd(c, p[0]), 1);
        ASSERT_OK(varlink_client_call(c, IFACE ".Inspect", NULL, &reply, NULL));
        expect_inodes(reply, (int[]) { p[1], p[0] }, 2);
        ASSERT_OK(varlink_client_call(c, IFACE ".Inspect", NULL, &reply2, NULL));
        expect_inodes(reply2, NULL, 0);

        for (unsigned i = 0; i < VARLINK_MESSAGE_FDS_MAX; i++)
                ASSERT_EQ(varlink_client_push_fd(c, p[0]), (int) i);
        ASSERT_EQ(varlink_client_push_fd(c, p[0]), -E2BIG);

        close(p[0]);
        close(p[1]);
        c = varlink_client_free(c);
        teardown(&t);
        ASSERT_EQ(count_fds(), before);
}

int main(void) {
        test_in_order();
        test_pipelined();
        test_not_accepted();
        test_too_many();
        test_mid_message();
        test_client();
        return 0;
}
