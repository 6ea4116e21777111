/* SPDX-License-Identifier: MIT */
/* polkit.c against a polkitd of our own: a direct D-Bus connection over a
 * socketpair, whose server side answers CheckAuthorization as each test
 * scripts it. Covers the three modes (off, auto, required) with polkit
 * answering, missing (ServiceUnknown, NameHasNoOwner from the bus), failing,
 * refusing a subject that has gone (NameHasNoOwner from polkitd), or no bus
 * at all; the answers (yes, no, challenge, dismissed); what is sent (subject,
 * action, interaction flag); cancellation while a check is pending; and
 * the bound on checks in flight, with the rest queued in order. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "cleanup.h"
#include "log.h"
#include "polkit.h"
#include "test-util.h"

typedef enum Reply {
        REPLY_YES,
        REPLY_NO,
        REPLY_CHALLENGE,
        REPLY_DISMISSED,
        REPLY_SERVICE_UNKNOWN,
        REPLY_NAME_HAS_NO_OWNER,
        REPLY_SUBJECT_GONE,     /* polkitd's own NameHasNoOwner: the subject's bus name is gone */
        REPLY_FAILED,
        REPLY_DELAY,            /* keep the call unanswered */
        REPLY_HOLD_ALL,         /* keep every call unanswered, in order */
} Reply;

#define HELD_MAX 128

static struct {
        Reply reply;
        unsigned n_checks;
        char subject_kind[32];
        char bus_name[64];
        uint32_t pid;
        uint64_t start_time;
        int32_t uid;
        bool has_uid;
        char action[64];
        uint32_t flags;
        char cancellation_id[64];
        unsigned n_cancels;
        char cancelled_id[64];
        sd_bus_message *held;   /* REPLY_DELAY's call */
        sd_bus_message *held_all[HELD_MAX];     /* REPLY_HOLD_ALL's calls, oldest first */
        uint32_t held_pid[HELD_MAX];            /* ...and their subjects' pids */
        unsigned n_held_all, n_answered_all;
} polkitd;

static int read_subject(sd_bus_message *m) {
        const char *kind;
        int r;

        polkitd.has_uid = false;
        polkitd.bus_name[0] = 0;
        r = sd_bus_message_enter_container(m, 'r', "sa{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "s", &kind);
        if (r < 0)
                return r;
        snprintf(polkitd.subject_kind, sizeof(polkitd.subject_kind), "%s", kind);
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key, *s;

                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                if (strcmp(key, "name") == 0) {
                        r = sd_bus_message_read(m, "v", "s", &s);
                        snprintf(polkitd.bus_name, sizeof(polkitd.bus_name), "%s", s);
                } else if (strcmp(key, "pid") == 0)
                        r = sd_bus_message_read(m, "v", "u", &polkitd.pid);
                else if (strcmp(key, "start-time") == 0)
                        r = sd_bus_message_read(m, "v", "t", &polkitd.start_time);
                else if (strcmp(key, "uid") == 0) {
                        r = sd_bus_message_read(m, "v", "i", &polkitd.uid);
                        polkitd.has_uid = true;
                } else
                        r = sd_bus_message_skip(m, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* An error reply with the sender a real bus would stamp on it: this fake
 * talks over a socketpair, where no bus fills the field in. */
static int reply_error_from(sd_bus_message *m, const char *sender, const char *name, const char *text) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *rep = NULL;
        int r;

        r = sd_bus_message_new_method_errorf(m, &rep, name, "%s", text);
        if (r < 0)
                return r;
        r = sd_bus_message_set_sender(rep, sender);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, rep, NULL);
}

static int reply_result(sd_bus_message *m, Reply reply) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *rep = NULL;
        int r;

        switch (reply) {
        case REPLY_SERVICE_UNKNOWN:
                return reply_error_from(m, "org.freedesktop.DBus", SD_BUS_ERROR_SERVICE_UNKNOWN,
                                        "The name is not activatable");
        case REPLY_NAME_HAS_NO_OWNER:
                return reply_error_from(m, "org.freedesktop.DBus", SD_BUS_ERROR_NAME_HAS_NO_OWNER, "No owner");
        case REPLY_SUBJECT_GONE:
                /* What polkitd says of a system-bus-name subject that has gone:
                 * the same error name, from polkitd's own unique name. */
                return reply_error_from(m, ":1.5", SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                        "Could not get UID for name: Name \":1.42\" does not exist");
        case REPLY_FAILED:
                return sd_bus_reply_method_errorf(m, "org.freedesktop.PolicyKit1.Error.Failed", "Broken rules");
        default:
                break;
        }
        r = sd_bus_message_new_method_return(m, &rep);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(rep, 'r', "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_append(rep, "bb", reply == REPLY_YES, reply == REPLY_CHALLENGE);
        if (r >= 0) {
                if (reply == REPLY_DISMISSED)
                        r = sd_bus_message_append(rep, "a{ss}", 1, "polkit.dismissed", "true");
                else
                        r = sd_bus_message_append(rep, "a{ss}", 0);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(rep);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, rep, NULL);
}

static int method_check(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *action, *cancellation_id;
        int r;

        polkitd.n_checks++;
        r = read_subject(m);
        if (r >= 0)
                r = sd_bus_message_read(m, "s", &action);
        if (r >= 0)
                r = sd_bus_message_skip(m, "a{ss}");
        if (r >= 0)
                r = sd_bus_message_read(m, "us", &polkitd.flags, &cancellation_id);
        if (r < 0)
                return r;
        snprintf(polkitd.action, sizeof(polkitd.action), "%s", action);
        snprintf(polkitd.cancellation_id, sizeof(polkitd.cancellation_id), "%s", cancellation_id);
        if (polkitd.reply == REPLY_DELAY) {
                polkitd.held = sd_bus_message_ref(m);
                return 1;
        }
        if (polkitd.reply == REPLY_HOLD_ALL) {
                if (polkitd.n_held_all >= HELD_MAX)
                        return -ENOBUFS;
                polkitd.held_pid[polkitd.n_held_all] = polkitd.pid;
                polkitd.held_all[polkitd.n_held_all++] = sd_bus_message_ref(m);
                return 1;
        }
        r = reply_result(m, polkitd.reply);
        return r < 0 ? r : 1;
}

static int method_cancel(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *id;
        int r;

        r = sd_bus_message_read(m, "s", &id);
        if (r < 0)
                return r;
        polkitd.n_cancels++;
        snprintf(polkitd.cancelled_id, sizeof(polkitd.cancelled_id), "%s", id);
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable authority_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", method_check, 0),
        SD_BUS_METHOD("CancelCheckAuthorization", "s", "", method_cancel, 0),
        SD_BUS_VTABLE_END,
};

static sd_event *event;
static sd_bus *client, *server;

static void buses_open(void) {
        int fds[2];
        sd_id128_t id = SD_ID128_MAKE(6e, 2f, 14, 7a, 9b, 20, 4c, 83, a1, 55, 0d, 3e, 77, c2, 19, f0);

        ASSERT_OK(sd_event_new(&event));
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);

        ASSERT_OK(sd_bus_new(&server));
        ASSERT_OK(sd_bus_set_fd(server, fds[0], fds[0]));
        ASSERT_OK(sd_bus_set_server(server, 1, id));
        ASSERT_OK(sd_bus_set_anonymous(server, 1));
        ASSERT_OK(sd_bus_add_object_vtable(server, NULL, "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", authority_vtable, NULL));
        ASSERT_OK(sd_bus_start(server));
        ASSERT_OK(sd_bus_attach_event(server, event, 0));

        ASSERT_OK(sd_bus_new(&client));
        ASSERT_OK(sd_bus_set_fd(client, fds[1], fds[1]));
        ASSERT_OK(sd_bus_set_anonymous(client, 1));
        ASSERT_OK(sd_bus_start(client));
        ASSERT_OK(sd_bus_attach_event(client, event, 0));
}

static void buses_close(void) {
        polkitd.held = sd_bus_message_unref(polkitd.held);
        for (unsigned i = 0; i < polkitd.n_held_all; i++)
                polkitd.held_all[i] = sd_bus_message_unref(polkitd.held_all[i]);
        client = sd_bus_flush_close_unref(client);
        server = sd_bus_flush_close_unref(server);
        event = sd_event_unref(event);
}

typedef struct Answer {
        unsigned n;
        PolkitResult result;
        char how[64];
        char message[256];
} Answer;

static void on_result(const PolkitResult *r, void *userdata) {
        Answer *a = userdata;

        a->n++;
        a->result = *r;
        snprintf(a->how, sizeof(a->how), "%s", r->how ?: "");
        snprintf(a->message, sizeof(a->message), "%s", r->error_message ?: "");
        a->result.how = a->how;
        a->result.error_message = a->message;
        a->result.error_name = NULL;
}

/* Runs the loop until *flag is set. A minute is far more than the
 * milliseconds a reply over a socketpair takes: only a hang trips it. */
static void run_until(const void *flag, size_t size, const char *what) {
        static const char zero[64];

        for (unsigned i = 0; memcmp(flag, zero, size) == 0; i++) {
                if (i > 600)
                        test_fail("expected %s within a minute of the event loop, seen nothing", what);
                ASSERT_OK(sd_event_run(event, 100000));
        }
}

static void run_until_answered(Answer *a) {
        run_until(&a->n, sizeof(a->n), "polkit's answer");
}

static void run_idle(void) {
        while (sd_event_run(event, 0) > 0)
                ;
}

static const PolkitSubject process_subject = {
        .kind = POLKIT_SUBJECT_PROCESS, .pid = 4242, .uid = 1000, .start_time = 123456,
};

/* One check through ctx; the answer must come from the loop, never from inside polkit_check_async(). */
static Answer check(PolkitContext *ctx, const PolkitSubject *s, bool interactive) {
        Answer a = {};

        ASSERT_OK(polkit_check_async(ctx, s, POLKIT_ACTION_INJECT, NULL, interactive, on_result, &a, NULL));
        ASSERT_EQ(a.n, 0);
        run_until_answered(&a);
        ASSERT_EQ(a.n, 1);
        return a;
}

static PolkitContext *context(PolkitMode mode, bool with_bus) {
        PolkitContext *ctx = NULL;

        memset(&polkitd, 0, sizeof(polkitd));
        ASSERT_OK(polkit_context_new(event, with_bus ? client : NULL, mode, &ctx));
        return ctx;
}

static void test_modes(void) {
        _cleanup_(polkit_context_freep) PolkitContext *off = NULL, *aut = NULL, *req = NULL;
        _cleanup_(polkit_context_freep) PolkitContext *aut_nobus = NULL, *req_nobus = NULL;
        Answer a;

        /* off: allowed without asking. */
        off = context(POLKIT_MODE_OFF, true);
        polkitd.reply = REPLY_NO;
        a = check(off, &process_subject, false);
        ASSERT_TRUE(a.result.allowed);
        ASSERT_STREQ(a.result.how, POLKIT_HOW_OFF);
        ASSERT_EQ(polkitd.n_checks, 0);

        /* auto: polkit decides while it is there... */
        aut = context(POLKIT_MODE_AUTO, true);
        polkitd.reply = REPLY_NO;
        a = check(aut, &process_subject, false);
        ASSERT_FALSE(a.result.allowed);
        ASSERT_STREQ(a.result.how, POLKIT_HOW_POLKIT);
        ASSERT_EQ(polkitd.n_checks, 1);
        /* ... the JSON policy alone when the bus says nobody is. */
        polkitd.reply = REPLY_SERVICE_UNKNOWN;
        a = check(aut, &process_subject, false);
        ASSERT_TRUE(a.result.allowed);
        ASSERT_STREQ(a.result.how, POLKIT_HOW_UNAVAILABLE_AUTO);
        polkitd.reply = REPLY_NAME_HAS_NO_OWNER;
        a = check(aut, &process_subject, false);
        ASSERT_TRUE(a.result.allowed);
        ASSERT_STREQ(a.result.how, POLKIT_HOW_UNAVAILABLE_AUTO);
        /* polkitd's own NameHasNoOwner (a D-Bus caller that sent its request
         * and left) is a refusal, not polkit missing: falling back here let
         * such a caller skip every polkit rule. */
        polkitd.reply = REPLY_SUBJECT_GONE;
        a = check(aut, &process_subject, false);
        ASSERT_FALSE(a.result.allowed);
        ASSERT_STREQ(a.result.how, POLKIT_HOW_POLKIT);
        ASSERT_TRUE(a.result.error < 0);
        ASSERT_TRUE(strstr(a.message, "polkit could not check the authorization") != NULL);
        /* A polkit that is there but fails is no reason to fall back. */
        polkitd.reply = REPLY_FAILED;
        a = check(aut, &process_subject, false);
        ASSERT_FALSE(a.result.allowed);
        ASSERT_TRUE(a.result.error < 0);
        ASSERT_TRUE(strstr(a.message, "org.freedesktop.PolicyKit1.Error.Failed") != NULL);
        /* And it is back. */
        polkitd.reply = REPLY_YES;
        a = check(aut, &process_subject, false);
        ASSERT_TRUE(a.result.allowed);
        ASSERT_STREQ(a.result.how, POLKIT_HOW_POLKIT);

        /* required: missing polkit refuses, saying why. */
        req = context(POLKIT_MODE_REQUIRED, true);
        polkitd.reply = REPLY_SERVICE_UNKNOWN;
        a = check(req, &process_subject, false);
        ASSERT_FALSE(a.result.allowed);
        ASSERT_TRUE(a.result.error < 0);
        ASSERT_TRUE(strstr(a.message, "polkit is required (--polkit=required)") != NULL);
        polkitd.reply = REPLY_YES;
        a = check(req, &process_subject, false);
        ASSERT_TRUE(a.result.allowed);

        /* No bus at all: auto falls back, required refuses. */
        aut_nobus = context(POLKIT_MODE_AUTO, false);
        a = check(aut_nobus, &process_subject, false);
        ASSERT_TRUE(a.result.allowed);
        ASSERT_STREQ(a.result.how, POLKIT_HOW_UNAVAILABLE_AUTO);
        req_nobus = context(POLKIT_MODE_REQUIRED, false);
        a = check(req_nobus, &process_subject, false);
        ASSERT_FALSE(a.result.allowed);
        ASSERT_RET(a.result.error, -ENOTCONN);
}

static void test_answers(void) {
        _cleanup_(polkit_context_freep) PolkitContext *ctx = context(POLKIT_MODE_REQUIRED, true);
        Answer a;

        polkitd.reply = REPLY_CHALLENGE;
        a = check(ctx, &process_subject, false);
        ASSERT_FALSE(a.result.allowed);
        ASSERT_TRUE(a.result.challenge);
        ASSERT_EQ(a.result.error, 0);

        polkitd.reply = REPLY_DISMISSED;
        a = check(ctx, &process_subject, true);
        ASSERT_FALSE(a.result.allowed);
        ASSERT_TRUE(a.result.dismissed);
        ASSERT_FALSE(a.result.challenge);
}

static void test_request(void) {
        _cleanup_(polkit_context_freep) PolkitContext *ctx = context(POLKIT_MODE_REQUIRED, true);

        /* A Varlink caller: unix-process with pid, start time and uid. */
        polkitd.reply = REPLY_YES;
        (void) check(ctx, &process_subject, false);
        ASSERT_STREQ(polkitd.subject_kind, "unix-process");
        ASSERT_EQ(polkitd.pid, 4242);
        ASSERT_EQ_U64(polkitd.start_time, 123456);
        ASSERT_TRUE(polkitd.has_uid);
        ASSERT_EQ(polkitd.uid, 1000);
        ASSERT_STREQ(polkitd.action, POLKIT_ACTION_INJECT);
        ASSERT_EQ(polkitd.flags, 0);
        ASSERT_STREQ(polkitd.cancellation_id, "");

        /* A D-Bus caller: system-bus-name; interaction only when asked for. */
        (void) check(ctx, &(PolkitSubject) { .kind = POLKIT_SUBJECT_BUS_NAME, .bus_name = ":1.42" }, true);
        ASSERT_STREQ(polkitd.subject_kind, "system-bus-name");
        ASSERT_STREQ(polkitd.bus_name, ":1.42");
        ASSERT_EQ(polkitd.flags, 1);
        ASSERT_TRUE(polkitd.cancellation_id[0] != 0);

        /* Only a unique name or a real pid says who asks. */
        ASSERT_RET(polkit_check_async(ctx, &(PolkitSubject) { .kind = POLKIT_SUBJECT_BUS_NAME, .bus_name = "org.x" },
                                      POLKIT_ACTION_INJECT, NULL, false, on_result, NULL, NULL), -EINVAL);
        ASSERT_RET(polkit_check_async(ctx, &(PolkitSubject) { .kind = POLKIT_SUBJECT_PROCESS, .pid = 0 },
                                      POLKIT_ACTION_INJECT, NULL, false, on_result, NULL, NULL), -EINVAL);
}

static void test_cancel(void) {
        PolkitContext *ctx = context(POLKIT_MODE_REQUIRED, true);
        PolkitCheck *k = NULL;
        Answer a = {}, b = {};
        char id[64];

        /* An interactive check freed while polkitd waits for a password:
         * no callback, and polkitd is told to withdraw the dialog. */
        polkitd.reply = REPLY_DELAY;
        ASSERT_OK(polkit_check_async(ctx, &process_subject, POLKIT_ACTION_INJECT, NULL, true, on_result, &a, &k));
        run_until(&polkitd.held, sizeof(polkitd.held), "CheckAuthorization at polkitd");
        snprintf(id, sizeof(id), "%s", polkitd.cancellation_id);
        ASSERT_TRUE(id[0] != 0);
        k = polkit_check_free(k);
        run_until(&polkitd.n_cancels, sizeof(polkitd.n_cancels), "CancelCheckAuthorization at polkitd");
        ASSERT_STREQ(polkitd.cancelled_id, id);
        /* The late answer goes nowhere. */
        ASSERT_OK(reply_result(polkitd.held, REPLY_YES));
        polkitd.held = sd_bus_message_unref(polkitd.held);
        run_idle();
        ASSERT_EQ(a.n, 0);

        /* Freeing the context cancels what is pending, floating checks too. */
        ASSERT_OK(polkit_check_async(ctx, &process_subject, POLKIT_ACTION_INJECT, NULL, false, on_result, &b, NULL));
        run_until(&polkitd.held, sizeof(polkitd.held), "CheckAuthorization at polkitd");
        ctx = polkit_context_free(ctx);
        ASSERT_OK(reply_result(polkitd.held, REPLY_YES));
        polkitd.held = sd_bus_message_unref(polkitd.held);
        run_idle();
        ASSERT_EQ(b.n, 0);
}

/* Answers the oldest held call that is not answered yet. */
static void answer_oldest_held(Reply reply) {
        unsigned i = polkitd.n_answered_all++;

        ASSERT_TRUE(i < polkitd.n_held_all);
        ASSERT_OK(reply_result(polkitd.held_all[i], reply));
        polkitd.held_all[i] = sd_bus_message_unref(polkitd.held_all[i]);
}

static PolkitSubject queued_subject(unsigned i) {
        return (PolkitSubject) { .kind = POLKIT_SUBJECT_PROCESS, .pid = 1000 + i, .uid = 1000, .start_time = 1 };
}

#define N_QUEUED (POLKIT_IN_FLIGHT_MAX + 20)

static void test_queue(void) {
        _cleanup_(polkit_context_freep) PolkitContext *ctx = context(POLKIT_MODE_REQUIRED, true);
        PolkitCheck *gone = NULL;
        Answer a[N_QUEUED] = {};
        unsigned gone_i = POLKIT_IN_FLIGHT_MAX + 5, expected_pid = 1000, n_done = 0;

        /* A burst: the first POLKIT_IN_FLIGHT_MAX reach polkitd, the rest
         * wait in the daemon; none is refused. */
        polkitd.reply = REPLY_HOLD_ALL;
        for (unsigned i = 0; i < N_QUEUED; i++) {
                PolkitSubject s = queued_subject(i);

                ASSERT_OK(polkit_check_async(ctx, &s, POLKIT_ACTION_INJECT, NULL, false, on_result, &a[i],
                                             i == gone_i ? &gone : NULL));
        }
        run_idle();
        ASSERT_EQ(polkitd.n_checks, POLKIT_IN_FLIGHT_MAX);

        /* A queued check whose caller went away is never sent. */
        gone = polkit_check_free(gone);

        /* Each answer lets the oldest queued one through, in order, until
         * every one but the freed one was asked and answered. */
        while (polkitd.n_answered_all < polkitd.n_held_all) {
                answer_oldest_held(REPLY_YES);
                run_idle();
                ASSERT_TRUE(polkitd.n_held_all - polkitd.n_answered_all <= POLKIT_IN_FLIGHT_MAX);
        }
        ASSERT_EQ(polkitd.n_checks, N_QUEUED - 1);
        for (unsigned i = 0; i < polkitd.n_held_all; i++, expected_pid++) {
                if (expected_pid == 1000 + gone_i)
                        expected_pid++;
                ASSERT_EQ(polkitd.held_pid[i], expected_pid);
        }
        for (unsigned i = 0; i < N_QUEUED; i++) {
                ASSERT_EQ(a[i].n, i == gone_i ? 0 : 1);
                if (i != gone_i) {
                        ASSERT_TRUE(a[i].result.allowed);
                        n_done++;
                }
        }
        ASSERT_EQ(n_done, N_QUEUED - 1);
}

static void test_queue_interactive(void) {
        PolkitContext *ctx = context(POLKIT_MODE_REQUIRED, true);
        Answer a[POLKIT_IN_FLIGHT_INTERACTIVE_MAX + 3] = {}, b[2] = {}, c = {};

        /* Interactive checks past their share wait; plain checks behind
         * them pass. */
        polkitd.reply = REPLY_HOLD_ALL;
        for (unsigned i = 0; i < ELEMENTSOF(a); i++) {
                PolkitSubject s = queued_subject(i);

                ASSERT_OK(polkit_check_async(ctx, &s, POLKIT_ACTION_INJECT, NULL, true, on_result, &a[i], NULL));
        }
        for (unsigned i = 0; i < ELEMENTSOF(b); i++) {
                PolkitSubject s = queued_subject(100 + i);

                ASSERT_OK(polkit_check_async(ctx, &s, POLKIT_ACTION_INJECT, NULL, false, on_result, &b[i], NULL));
        }
        run_idle();
        ASSERT_EQ(polkitd.n_checks, POLKIT_IN_FLIGHT_INTERACTIVE_MAX + ELEMENTSOF(b));
        ASSERT_EQ(polkitd.held_pid[POLKIT_IN_FLIGHT_INTERACTIVE_MAX], 1100);
        /* An interactive answer lets the next interactive one through. */
        answer_oldest_held(REPLY_NO);
        run_idle();
        ASSERT_EQ(a[0].n, 1);
        ASSERT_EQ(polkitd.n_checks, POLKIT_IN_FLIGHT_INTERACTIVE_MAX + ELEMENTSOF(b) + 1);
        ASSERT_EQ(polkitd.held_pid[polkitd.n_held_all - 1], 1000 + POLKIT_IN_FLIGHT_INTERACTIVE_MAX);

        /* Freeing the context drops what is queued: no callback. */
        ASSERT_OK(polkit_check_async(ctx, &process_subject, POLKIT_ACTION_INJECT, NULL, true, on_result, &c, NULL));
        ctx = polkit_context_free(ctx);
        while (polkitd.n_answered_all < polkitd.n_held_all)
                answer_oldest_held(REPLY_YES);
        run_idle();
        ASSERT_EQ(c.n, 0);
        ASSERT_EQ(a[ELEMENTSOF(a) - 1].n, 0);
        ASSERT_EQ(b[0].n, 0);
}

int main(void) {
        log_set_target("stderr");
        buses_open();

        TEST_RUN(test_modes);
        TEST_RUN(test_answers);
        TEST_RUN(test_request);
        TEST_RUN(test_cancel);
        TEST_RUN(test_queue);
        TEST_RUN(test_queue_interactive);

        buses_close();
        return 0;
}
