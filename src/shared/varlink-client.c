/* SPDX-License-Identifier: MIT */

/* The synchronous client: one call at a time, each reply awaited with a
 * timeout, for injectctl and the tests. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json-util.h"
#include "time-util.h"
#include "varlink-internal.h"

struct VarlinkClient {
        int fd;
        uint64_t timeout;
        Buffer in;
        size_t in_scanned;
        char *error;  /* name of the last error reply */
        bool broken;  /* a call failed midway: replies may be out of step */
        int fds[VARLINK_MESSAGE_FDS_MAX]; /* borrowed, for the next call */
        unsigned n_fds;
};

int varlink_client_push_fd(VarlinkClient *c, int fd) {
        if (!c || fd < 0)
                return -EINVAL;
        if (c->n_fds >= VARLINK_MESSAGE_FDS_MAX)
                return -E2BIG;
        c->fds[c->n_fds] = fd;
        return (int) c->n_fds++;
}

/* The first send of a message: with the pushed fds, if any, which the
 * kernel attaches to these bytes only. */
static ssize_t client_send_first(VarlinkClient *c, const char *s, size_t len) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * VARLINK_MESSAGE_FDS_MAX)];
        } control = {};
        struct iovec iov = { .iov_base = (char *) s, .iov_len = len };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        struct cmsghdr *cm;

        if (c->n_fds == 0)
                return send(c->fd, s, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        mh.msg_control = &control;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * c->n_fds);
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * c->n_fds);
        memcpy(CMSG_DATA(cm), c->fds, sizeof(int) * c->n_fds);
        return sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

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
        int r;

        if (fd < 0 || !ret)
                return -EINVAL;

        r = fd_set_nonblock(fd);
        if (r < 0)
                return r;

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

/* One call on the wire. */
static int client_send_fds(VarlinkClient *c, const char *method, json_object *params, bool more, bool oneway) {
        _cleanup_json_ json_object *msg = NULL;
        const char *s;
        size_t len, done = 0;
        uint64_t deadline;
        int r;

        if (!varlink_qualified_name_is_valid(method))
                return -EINVAL;
        if (params && !json_object_is_type(params, json_type_object))
                return -EINVAL;
        if (c->broken)
                return -ENOTCONN;

        r = message_new("method", method, params, (more ? MESSAGE_MORE : 0) | (oneway ? MESSAGE_ONEWAY : 0), &msg);
        if (r < 0)
                return r;

        r = message_serialize(msg, &s, &len);
        if (r < 0)
                return r;

        deadline = client_deadline(c);
        while (done < len) {
                ssize_t n;

                n = done == 0 ? client_send_first(c, s, len) :
                                send(c->fd, s + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                r = client_wait(c, POLLOUT, deadline);
                                if (r < 0)
                                        goto broken;
                                continue;
                        }
                        /* The server hung up. It may have said why first
                         * (a connection limit): that is the answer to
                         * read, if one is awaited. */
                        if (!oneway && (errno == EPIPE || errno == ECONNRESET))
                                return 0;
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

/* Builds a call message and sends it with the pushed fds; -EINVAL for a
 * bad method name or parameters, -EILSEQ for invalid UTF-8, which the
 * server would refuse. */
static int client_send(VarlinkClient *c, const char *method, json_object *params, bool more, bool oneway) {
        int r;

        if (!c)
                return -EINVAL;
        r = client_send_fds(c, method, params, more, oneway);
        c->n_fds = 0;   /* sent, or not to be sent with another call */
        return r;
}

/* Receives one reply; on failure the client is broken. */
static int client_receive(VarlinkClient *c, json_object **ret_params, const char **ret_error, bool *ret_continues) {
        _cleanup_(varlink_reply_done) VarlinkReply reply = {};
        uint64_t deadline;
        size_t len;
        int r;

        deadline = client_deadline(c);
        while (buffer_find_message(&c->in, &c->in_scanned, &len) == 0) {
                ssize_t n = buffer_recv(&c->in, c->fd, VARLINK_CLIENT_MESSAGE_MAX + 1);

                if (n == -EAGAIN) {
                        r = client_wait(c, POLLIN, deadline);
                        if (r < 0)
                                goto broken;
                        continue;
                }
                if (n == 0)
                        n = -ECONNRESET;
                if (n < 0) {
                        r = n == -ENOBUFS ? -EBADMSG /* oversized */ : (int) n;
                        goto broken;
                }
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
