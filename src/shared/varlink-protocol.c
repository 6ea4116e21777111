/* SPDX-License-Identifier: MIT */

/* The Varlink protocol without a server or a client: byte buffers and the
 * NUL framing, building, serializing and parsing messages, and the socket
 * helpers both sides need. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "json-build.h"
#include "json-reader.h"
#include "json-util.h"
#include "utf8.h"
#include "varlink-internal.h"

/* Buffers bigger than this are freed when they run empty, so that an idle
 * connection does not keep the memory a big message needed. */
#define BUFFER_KEEP (UINT64_C(64) << 10)

size_t buffer_used(const Buffer *b) {
        return b->end - b->start;
}

void buffer_done(Buffer *b) {
        free(b->data);
        *b = (Buffer) {};
}

ssize_t buffer_reserve(Buffer *b, size_t want, size_t cap) {
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

void buffer_consume(Buffer *b, size_t n) {
        b->start += n;
        if (b->start < b->end)
                return;

        b->start = b->end = 0;
        if (b->alloc > BUFFER_KEEP)
                buffer_done(b);
}

int buffer_append(Buffer *b, const char *data, size_t n, size_t cap) {
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

ssize_t buffer_recv(Buffer *b, int fd, size_t cap) {
        for (;;) {
                ssize_t room, n;

                room = buffer_reserve(b, READ_CHUNK, cap);
                if (room < 0)
                        return room;
                if (room == 0)
                        return -ENOBUFS;

                n = recv(fd, b->data + b->end, room, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                b->end += n;
                return n;
        }
}

void fd_batch_done(FdBatch *b) {
        for (unsigned i = 0; i < b->n; i++)
                safe_close(b->fds[i]);
        *b = (FdBatch) {};
}

/* Takes the fds out of every SCM_RIGHTS of mh; -EBADMSG past fds_max
 * (those are closed). */
static int cmsg_take_fds(struct msghdr *mh, int *fds, unsigned fds_max, unsigned *n) {
        int r = 0;

        for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
                size_t k;

                if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
                        continue;
                k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int f;

                        memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
                        if (*n < fds_max)
                                fds[(*n)++] = f;
                        else {
                                safe_close(f);
                                r = -EBADMSG;
                        }
                }
        }
        return r;
}

ssize_t buffer_recv_fds(Buffer *b, int fd, size_t cap, int *fds, unsigned fds_max, unsigned *ret_n_fds) {
        /* Room for one more fd than allowed, so that too many is seen
         * as such rather than as a cut. */
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * (VARLINK_MESSAGE_FDS_MAX + 1))];
        } control;

        *ret_n_fds = 0;
        for (;;) {
                struct iovec iov;
                struct msghdr mh = {
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = &control,
                        .msg_controllen = sizeof(control),
                };
                ssize_t room, n;
                int r;

                room = buffer_reserve(b, READ_CHUNK, cap);
                if (room < 0)
                        return room;
                if (room == 0)
                        return -ENOBUFS;
                iov = (struct iovec) { .iov_base = b->data + b->end, .iov_len = room };

                n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                b->end += n;
                r = cmsg_take_fds(&mh, fds, fds_max, ret_n_fds);
                if (r >= 0 && (mh.msg_flags & MSG_CTRUNC))
                        r = -EBADMSG;
                if (r < 0) {
                        for (unsigned i = 0; i < *ret_n_fds; i++)
                                safe_close(fds[i]);
                        *ret_n_fds = 0;
                        return r;
                }
                return n;
        }
}

int buffer_find_message(const Buffer *b, size_t *scanned, size_t *ret_len) {
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

int message_serialize(json_object *msg, const char **ret, size_t *ret_len) {
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

int message_new(const char *key, const char *value, json_object *params, MessageFlags flags, json_object **ret) {
        static const char *const flag_keys[] = { "more", "oneway", "continues" };
        _cleanup_json_ json_object *msg = NULL;
        int r;

        msg = json_object_new_object();
        if (!msg)
                return -ENOMEM;
        if (value) {
                r = json_add_string(msg, key, value);
                if (r < 0)
                        return r;
        }
        r = json_add(msg, "parameters", params ? json_object_get(params) : json_object_new_object());
        if (r < 0)
                return r;
        for (size_t i = 0; i < sizeof(flag_keys) / sizeof(flag_keys[0]); i++)
                if (flags & (1 << i)) {
                        r = json_add_bool(msg, flag_keys[i], true);
                        if (r < 0)
                                return r;
                }

        *ret = TAKE_PTR(msg);
        return 0;
}

/* Reads one message: a JSON object with none but the allowed keys, whose
 * "parameters" (null or missing: {}) is an object. */
static int message_read(const char *text, size_t len, const char *const *allowed,
                        json_object **ret_msg, json_object **ret_params) {
        _cleanup_json_ json_object *msg = NULL, *params = NULL;
        json_object *p;
        int r;

        r = json_read(text, len, JSON_READ_OBJECT, &msg, NULL, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        if (json_check_keys(msg, allowed, NULL) < 0)
                return -EBADMSG;

        r = json_get_object(msg, "parameters", &p);
        if (r == -ENOENT)
                params = json_object_new_object();
        else if (r < 0)
                return -EBADMSG;
        else
                params = json_object_get(p);
        if (!params)
                return -ENOMEM;

        *ret_msg = TAKE_PTR(msg);
        *ret_params = TAKE_PTR(params);
        return 0;
}

/* A boolean key that is false if missing or null. */
static int message_get_flag(json_object *msg, const char *key, bool *ret) {
        int r = json_get_bool(msg, key, ret);

        if (r == -ENOENT) {
                *ret = false;
                return 0;
        }
        return r < 0 ? -EBADMSG : 0;
}

int varlink_call_parse(const char *text, size_t len, VarlinkCall *ret) {
        static const char *const allowed[] = { "method", "parameters", "oneway", "more", "upgrade", NULL };
        _cleanup_json_ json_object *msg = NULL, *parameters = NULL;
        bool oneway, more, upgrade;
        const char *method;
        int r;

        r = message_read(text, len, allowed, &msg, &parameters);
        if (r < 0)
                return r;

        if (json_get_string(msg, "method", &method) < 0 || !varlink_qualified_name_is_valid(method))
                return -EBADMSG;
        if (message_get_flag(msg, "oneway", &oneway) < 0 ||
            message_get_flag(msg, "more", &more) < 0 ||
            message_get_flag(msg, "upgrade", &upgrade) < 0 ||
            (oneway && more))
                return -EBADMSG;

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

int varlink_reply_parse(const char *text, size_t len, VarlinkReply *ret) {
        static const char *const allowed[] = { "parameters", "continues", "error", NULL };
        _cleanup_json_ json_object *msg = NULL, *params = NULL;
        const char *error = NULL;
        bool continues;
        int r;

        r = message_read(text, len, allowed, &msg, &params);
        if (r < 0)
                return r;

        if (message_get_flag(msg, "continues", &continues) < 0)
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

