/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "polkit.h"

#define POLKIT_BUS_NAME "org.freedesktop.PolicyKit1"
#define POLKIT_OBJECT "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"

/* CheckAuthorizationFlags */
#define POLKIT_FLAG_ALLOW_USER_INTERACTION UINT32_C(1)

struct PolkitContext {
        sd_event *event;
        sd_bus *bus;
        PolkitMode mode;
        PolkitCheck *checks;            /* pending ones, for polkit_context_free() */
        PolkitCheck *queue_head, *queue_tail;   /* built, waiting for a place in flight, oldest first */
        unsigned n_in_flight;           /* CheckAuthorization calls sent and not answered */
        unsigned n_in_flight_interactive;       /* ...of which interactive */
        sd_event_source *pump;          /* sends queued checks, from the loop */
        uint64_t n_started;             /* makes cancellation ids unique */
        bool warned_unavailable;        /* "auto" fell back, and said so */
};

struct PolkitCheck {
        PolkitContext *context;         /* NULL once finished or cancelled */
        PolkitCheck *prev, *next;
        PolkitCheck *queue_prev, *queue_next;
        sd_bus_message *queued;         /* CheckAuthorization built, not sent yet */
        bool interactive;
        sd_bus_slot *slot;              /* CheckAuthorization in flight */
        sd_event_source *defer;         /* a decision made without polkit, on its way */
        PolkitResult deferred;          /* ...and that decision */
        char *deferred_message;
        char *cancellation_id;          /* interactive checks only */
        polkit_callback_t callback;
        void *userdata;
        bool floating;
};

static const char *const polkit_mode_table[_POLKIT_MODE_MAX] = {
        [POLKIT_MODE_AUTO] = "auto",
        [POLKIT_MODE_REQUIRED] = "required",
        [POLKIT_MODE_OFF] = "off",
};

const char *polkit_mode_to_string(PolkitMode m) {
        return m >= 0 && m < _POLKIT_MODE_MAX ? polkit_mode_table[m] : NULL;
}

int polkit_mode_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (int i = 0; i < _POLKIT_MODE_MAX; i++)
                if (strcmp(s, polkit_mode_table[i]) == 0)
                        return i;
        return -EINVAL;
}

static int on_pump(sd_event_source *s, void *userdata);

int polkit_context_new(sd_event *event, sd_bus *bus, PolkitMode mode, PolkitContext **ret) {
        PolkitContext *c;
        int r;

        if (!event || !ret || mode < 0 || mode >= _POLKIT_MODE_MAX)
                return -EINVAL;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->event = sd_event_ref(event);
        c->bus = sd_bus_ref(bus);
        c->mode = mode;
        r = sd_event_add_defer(event, &c->pump, on_pump, c);
        if (r >= 0)
                r = sd_event_source_set_enabled(c->pump, SD_EVENT_OFF);
        if (r < 0) {
                polkit_context_free(c);
                return r;
        }
        (void) sd_event_source_set_description(c->pump, "polkit-queue");
        *ret = c;
        return 0;
}

PolkitMode polkit_context_get_mode(const PolkitContext *c) {
        return c->mode;
}

static void check_unlink(PolkitCheck *check) {
        PolkitContext *c = check->context;

        if (!c)
                return;
        if (check->prev)
                check->prev->next = check->next;
        else
                c->checks = check->next;
        if (check->next)
                check->next->prev = check->prev;
        check->prev = check->next = NULL;
        check->context = NULL;
}

static void queue_remove(PolkitCheck *check) {
        PolkitContext *c = check->context;

        if (!check->queued || !c)
                return;
        if (check->queue_prev)
                check->queue_prev->queue_next = check->queue_next;
        else
                c->queue_head = check->queue_next;
        if (check->queue_next)
                check->queue_next->queue_prev = check->queue_prev;
        else
                c->queue_tail = check->queue_prev;
        check->queue_prev = check->queue_next = NULL;
        check->queued = sd_bus_message_unref(check->queued);
}

/* The check's call is answered or abandoned: its place in flight goes to
 * the oldest queued check, sent from the loop (on_pump()), never from
 * here, where the caller may be walking a list of its own. */
static void check_release(PolkitCheck *check) {
        PolkitContext *c = check->context;

        if (!check->slot)
                return;
        check->slot = sd_bus_slot_unref(check->slot);   /* sd-bus keeps its own reference while dispatching */
        if (!c)
                return;
        c->n_in_flight--;
        if (check->interactive)
                c->n_in_flight_interactive--;
        if (c->queue_head && c->pump)
                (void) sd_event_source_set_enabled(c->pump, SD_EVENT_ONESHOT);
}

/* Stops a pending check: no callback will come. A queued check was never
 * sent, and nobody hears of it. An interactive check may have a password
 * dialog open for it in polkitd's agent: ask polkitd to withdraw it (no
 * reply wanted, nothing to wait for). */
static void check_cancel(PolkitCheck *check) {
        PolkitContext *c = check->context;

        if (check->slot && check->cancellation_id && c && c->bus) {
                int r;

                r = sd_bus_call_method_async(c->bus, NULL, POLKIT_BUS_NAME, POLKIT_OBJECT, POLKIT_INTERFACE,
                                             "CancelCheckAuthorization", NULL, NULL, "s", check->cancellation_id);
                if (r < 0)
                        log_debug_errno(r, "Failed to cancel polkit check '%s', ignoring: %m",
                                        check->cancellation_id);
        }
        queue_remove(check);
        check_release(check);
        check->defer = sd_event_source_disable_unref(check->defer);
        check_unlink(check);
}

static PolkitCheck *check_free_internal(PolkitCheck *check) {
        check_cancel(check);
        free(check->deferred_message);
        free(check->cancellation_id);
        free(check);
        return NULL;
}

PolkitCheck *polkit_check_free(PolkitCheck *check) {
        if (!check)
                return NULL;
        return check_free_internal(check);
}

PolkitContext *polkit_context_free(PolkitContext *c) {
        if (!c)
                return NULL;

        /* Nothing queued is sent any more. */
        c->pump = sd_event_source_disable_unref(c->pump);
        while (c->checks) {
                PolkitCheck *check = c->checks;

                if (check->floating)
                        check_free_internal(check);
                else
                        check_cancel(check);    /* unlinks it */
        }
        sd_bus_unref(c->bus);
        sd_event_unref(c->event);
        free(c);
        return NULL;
}

/* Delivers the result: the check leaves its context first, so the callback
 * may free the check, the context, or both; a floating check is freed
 * afterwards (nobody else can). */
static void check_complete(PolkitCheck *check, const PolkitResult *result) {
        polkit_callback_t cb = check->callback;
        void *userdata = check->userdata;
        bool floating = check->floating;

        queue_remove(check);
        check_release(check);
        check->defer = sd_event_source_disable_unref(check->defer);
        check_unlink(check);

        cb(result, userdata);

        if (floating)
                check_free_internal(check);
}

static int on_deferred(sd_event_source *s, void *userdata) {
        PolkitCheck *check = userdata;
        _cleanup_free_ char *message = TAKE_PTR(check->deferred_message);
        PolkitResult result = check->deferred;

        result.error_message = message;
        check_complete(check, &result);
        return 0;
}

/* Decides without polkit; the callback still comes from the loop. */
static int check_defer(PolkitCheck *check, const PolkitResult *result, char *message) {
        int r;

        check->deferred = *result;
        check->deferred.error_name = NULL;
        check->deferred.error_message = NULL;
        check->deferred_message = message;
        r = sd_event_add_defer(check->context->event, &check->defer, on_deferred, check);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(check->defer, "polkit-deferred");
        return 0;
}

static void warn_unavailable(PolkitContext *c, const char *why) {
        if (c->warned_unavailable)
                return;
        c->warned_unavailable = true;
        log_warning("polkit is not available (%s): authorizing by the JSON policy alone until it is (--polkit=auto).",
                    why);
}

/* Is this error the bus saying nobody owns polkit's name (and it cannot be
 * activated)? Only the bus driver can say that. polkitd itself answers
 * NameHasNoOwner too, when the subject is a bus name that has gone: a
 * D-Bus caller that sent its request and exited at once. Taking that for
 * "polkit is not installed" would let such a caller skip polkit's rules
 * in --polkit=auto, so an error from anyone but the bus is polkit's own
 * refusal. */
static bool error_says_polkit_absent(sd_bus_message *reply, const sd_bus_error *e) {
        const char *sender;

        if (!sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                return false;
        sender = sd_bus_message_get_sender(reply);
        return sender && strcmp(sender, "org.freedesktop.DBus") == 0;
}

static int on_check_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PolkitCheck *check = userdata;
        PolkitContext *c = check->context;
        _cleanup_free_ char *message = NULL;
        PolkitResult result = { .how = POLKIT_HOW_POLKIT };
        const sd_bus_error *e;
        int authorized, challenge, r;

        e = sd_bus_message_get_error(reply);
        if (e) {
                bool absent = error_says_polkit_absent(reply, e);

                if (c->mode == POLKIT_MODE_AUTO && absent) {
                        warn_unavailable(c, e->name);
                        result.allowed = true;
                        result.how = POLKIT_HOW_UNAVAILABLE_AUTO;
                        check_complete(check, &result);
                        return 0;
                }

                r = sd_bus_error_get_errno(e);
                result.error = r > 0 ? -r : -EIO;
                result.error_name = e->name;
                if (absent)
                        r = asprintf(&message, "polkit is required (--polkit=%s) but not available on the system bus: %s",
                                     polkit_mode_to_string(c->mode), e->message ?: e->name);
                else
                        r = asprintf(&message, "polkit could not check the authorization: %s: %s",
                                     e->name, e->message ?: "no message");
                if (r < 0)
                        message = NULL;
                result.error_message = message ?: e->name;
                check_complete(check, &result);
                return 0;
        }

        if (c->warned_unavailable) {
                c->warned_unavailable = false;
                log_info("polkit is available again.");
        }

        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "{ss}");
        while (r >= 0) {
                const char *key, *value;

                r = sd_bus_message_read(reply, "{ss}", &key, &value);
                if (r <= 0)
                        break;
                if (strcmp(key, "polkit.dismissed") == 0 && strcmp(value, "true") == 0)
                        result.dismissed = true;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                result = (PolkitResult) {
                        .how = POLKIT_HOW_POLKIT,
                        .error = r,
                        .error_message = "polkit's reply to CheckAuthorization could not be parsed",
                };
                check_complete(check, &result);
                return 0;
        }

        result.allowed = authorized;
        result.challenge = !authorized && challenge;
        result.dismissed = !authorized && result.dismissed;
        check_complete(check, &result);
        return 0;
}

static int append_subject(sd_bus_message *m, const PolkitSubject *s) {
        int r;

        r = sd_bus_message_open_container(m, 'r', "sa{sv}");
        if (r < 0)
                return r;

        if (s->kind == POLKIT_SUBJECT_BUS_NAME)
                r = sd_bus_message_append(m, "sa{sv}", "system-bus-name", 1, "name", "s", s->bus_name);
        else if (s->uid == (uid_t) -1)
                r = sd_bus_message_append(m, "sa{sv}", "unix-process", 2,
                                          "pid", "u", (uint32_t) s->pid,
                                          "start-time", "t", s->start_time);
        else
                r = sd_bus_message_append(m, "sa{sv}", "unix-process", 3,
                                          "pid", "u", (uint32_t) s->pid,
                                          "start-time", "t", s->start_time,
                                          "uid", "i", (int32_t) s->uid);
        if (r < 0)
                return r;

        return sd_bus_message_close_container(m);
}

static int append_details(sd_bus_message *m, const char *const *details) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{ss}");
        if (r < 0)
                return r;
        for (size_t i = 0; details && details[i]; i += 2) {
                r = sd_bus_message_append(m, "{ss}", details[i], details[i + 1]);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(m);
}

static bool subject_valid(const PolkitSubject *s) {
        switch (s->kind) {
        case POLKIT_SUBJECT_BUS_NAME:
                /* Only a unique name says who sent a message. */
                return s->bus_name && s->bus_name[0] == ':';
        case POLKIT_SUBJECT_PROCESS:
                return s->pid > 0;
        default:
                return false;
        }
}

static bool details_valid(const char *const *details) {
        for (size_t i = 0; details && details[i]; i += 2)
                if (!details[i + 1])
                        return false;
        return true;
}

/* Builds the CheckAuthorization call; it is sent now or when its turn
 * comes (check_send()). */
static int check_build(PolkitCheck *check, const PolkitSubject *subject, const char *action_id,
                       const char *const *details, sd_bus_message **ret) {
        PolkitContext *c = check->context;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        if (check->interactive && asprintf(&check->cancellation_id, "injectd-%d-%" PRIu64,
                                           (int) getpid(), ++c->n_started) < 0)
                return -ENOMEM;

        r = sd_bus_message_new_method_call(c->bus, &m, POLKIT_BUS_NAME, POLKIT_OBJECT, POLKIT_INTERFACE,
                                           "CheckAuthorization");
        if (r < 0)
                return r;
        r = append_subject(m, subject);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", action_id);
        if (r < 0)
                return r;
        r = append_details(m, details);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "us", check->interactive ? POLKIT_FLAG_ALLOW_USER_INTERACTION : 0,
                                  check->cancellation_id ?: "");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

/* Whether a check may be sent now: fewer than POLKIT_IN_FLIGHT_MAX in
 * flight, and an interactive one also within its share. */
static bool check_fits(const PolkitContext *c, bool interactive) {
        return c->n_in_flight < POLKIT_IN_FLIGHT_MAX &&
               (!interactive || c->n_in_flight_interactive < POLKIT_IN_FLIGHT_INTERACTIVE_MAX);
}

/* Sends m and takes a place in flight. The timeout counts from here, not
 * from the request: a queued check waits as long as its turn takes. */
static int check_send(PolkitCheck *check, sd_bus_message *m) {
        PolkitContext *c = check->context;
        int r;

        r = sd_bus_call_async(c->bus, &check->slot, m, on_check_reply, check,
                              check->interactive ? POLKIT_INTERACTIVE_TIMEOUT_USEC : POLKIT_TIMEOUT_USEC);
        if (r < 0) {
                check->slot = sd_bus_slot_unref(check->slot);
                return r;
        }
        c->n_in_flight++;
        if (check->interactive)
                c->n_in_flight_interactive++;
        return 0;
}

/* The answer to a check whose call could not be sent. The bus connection
 * is broken then: polkit may well be fine, so even "auto" does not fall
 * back. */
static int send_failed(int error, PolkitResult *result, char **ret_message) {
        *result = (PolkitResult) { .how = POLKIT_HOW_POLKIT, .error = error };
        if (asprintf(ret_message, "Failed to send CheckAuthorization to polkit: %s", strerror(-error)) < 0)
                return -ENOMEM;
        return 0;
}

static void queue_append(PolkitCheck *check, sd_bus_message *m) {
        PolkitContext *c = check->context;

        check->queued = sd_bus_message_ref(m);
        check->queue_prev = c->queue_tail;
        if (c->queue_tail)
                c->queue_tail->queue_next = check;
        else
                c->queue_head = check;
        c->queue_tail = check;
}

/* Sends the oldest queued checks that fit. An interactive check over its
 * share lets the ones behind it pass, so that password dialogs left open
 * cannot hold up everyone else's checks. */
static int on_pump(sd_event_source *s, void *userdata) {
        PolkitContext *c = userdata;
        unsigned n_sent = 0;

        for (PolkitCheck *check = c->queue_head, *next; check && c->n_in_flight < POLKIT_IN_FLIGHT_MAX;
             check = next) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                _cleanup_free_ char *message = NULL;
                PolkitResult result;
                int r;

                next = check->queue_next;
                if (!check_fits(c, check->interactive))
                        continue;
                m = sd_bus_message_ref(check->queued);
                queue_remove(check);
                r = check_send(check, m);
                if (r >= 0) {
                        n_sent++;
                        continue;
                }

                /* Its callback may free the context: the rest of the queue
                 * waits for the next round. */
                if (c->queue_head)
                        (void) sd_event_source_set_enabled(c->pump, SD_EVENT_ONESHOT);
                if (send_failed(r, &result, &message) >= 0)
                        result.error_message = message;
                else
                        result.error_message = "Failed to send CheckAuthorization to polkit";
                check_complete(check, &result);
                return 0;
        }
        if (n_sent > 0)
                log_debug("Sent %u queued polkit check(s); %u in flight%s.", n_sent, c->n_in_flight,
                          c->queue_head ? ", more queued" : "");
        return 0;
}

int polkit_check_async(
                PolkitContext *c,
                const PolkitSubject *subject,
                const char *action_id,
                const char *const *details,
                bool interactive,
                polkit_callback_t cb,
                void *userdata,
                PolkitCheck **ret_check) {

        _cleanup_(polkit_check_freep) PolkitCheck *check = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *message = NULL;
        PolkitResult decided = { .how = POLKIT_HOW_POLKIT };
        int r;

        if (!c || !subject || !cb || !action_id || !*action_id || !subject_valid(subject) ||
            !details_valid(details))
                return -EINVAL;

        check = calloc(1, sizeof(*check));
        if (!check)
                return -ENOMEM;
        check->context = c;
        check->callback = cb;
        check->userdata = userdata;
        check->floating = !ret_check;
        check->interactive = interactive;
        check->next = c->checks;
        if (c->checks)
                c->checks->prev = check;
        c->checks = check;

        if (c->mode == POLKIT_MODE_OFF) {
                decided = (PolkitResult) { .allowed = true, .how = POLKIT_HOW_OFF };
                goto defer;
        }

        if (!c->bus) {
                if (c->mode == POLKIT_MODE_AUTO) {
                        warn_unavailable(c, "no system bus connection");
                        decided = (PolkitResult) { .allowed = true, .how = POLKIT_HOW_UNAVAILABLE_AUTO };
                        goto defer;
                }
                decided.error = -ENOTCONN;
                message = strdup("polkit is required (--polkit=required) but injectd has no system bus connection");
                if (!message)
                        return -ENOMEM;
                goto defer;
        }

        r = check_build(check, subject, action_id, details, &m);
        if (r == -ENOMEM || r == -EINVAL)
                return r;
        if (r < 0) {
                r = send_failed(r, &decided, &message);
                if (r < 0)
                        return r;
                goto defer;
        }
        /* Behind those already queued, so that they keep their order. */
        if (!c->queue_head && check_fits(c, interactive)) {
                r = check_send(check, m);
                if (r < 0) {
                        r = send_failed(r, &decided, &message);
                        if (r < 0)
                                return r;
                        goto defer;
                }
        } else {
                queue_append(check, m);
                /* Queued behind interactive checks over their share, it
                 * may go at once. */
                if (check_fits(c, interactive))
                        (void) sd_event_source_set_enabled(c->pump, SD_EVENT_ONESHOT);
                log_debug("polkit check queued: %u in flight, at most %u%s.", c->n_in_flight, POLKIT_IN_FLIGHT_MAX,
                          interactive ? " (interactive)" : "");
        }

        goto done;

defer:
        r = check_defer(check, &decided, message);
        if (r < 0)
                return r;
        TAKE_PTR(message);
done:
        if (ret_check)
                *ret_check = check;
        TAKE_PTR(check);
        return 0;
}
