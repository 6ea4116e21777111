/* SPDX-License-Identifier: MIT */
/* polkit with scripted answers (see fake-polkit.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-polkit.h"

#define FAKE_ACTIONS 8

struct PolkitContext {
        sd_event *event;
        PolkitMode mode;
        PolkitCheck *checks;    /* pending, oldest first */
};

struct PolkitCheck {
        PolkitContext *context;         /* NULL once answered or cancelled */
        PolkitCheck *next;
        sd_event_source *defer;         /* an immediate answer on its way */
        FakePolkitAnswer answer;
        polkit_callback_t callback;
        void *userdata;
        bool floating;
};

static struct {
        struct {
                char action[64];
                FakePolkitAnswer answer;
        } rules[FAKE_ACTIONS];
        size_t n_rules;
        FakePolkitAnswer answer;
        unsigned n_asked, n_cancelled;
        char last_action[64];
        bool last_interactive;
        PolkitSubject last_subject;
        PolkitContext *context;         /* the live one, for fake_polkit_answer() */
} fake;

void fake_polkit_reset(void) {
        PolkitContext *c = fake.context;

        memset(&fake, 0, sizeof(fake));
        fake.context = c;
        fake.answer = FAKE_POLKIT_YES;
}

void fake_polkit_set_answer(const char *action, FakePolkitAnswer answer) {
        if (!action) {
                fake.n_rules = 0;
                fake.answer = answer;
                return;
        }
        for (size_t i = 0; i < fake.n_rules; i++)
                if (strcmp(fake.rules[i].action, action) == 0) {
                        fake.rules[i].answer = answer;
                        return;
                }
        if (fake.n_rules < FAKE_ACTIONS) {
                snprintf(fake.rules[fake.n_rules].action, sizeof(fake.rules[0].action), "%s", action);
                fake.rules[fake.n_rules++].answer = answer;
        }
}

unsigned fake_polkit_n_asked(void) {
        return fake.n_asked;
}

const char *fake_polkit_last_action(void) {
        return fake.n_asked ? fake.last_action : NULL;
}

bool fake_polkit_last_interactive(void) {
        return fake.last_interactive;
}

PolkitSubject fake_polkit_last_subject(void) {
        return fake.last_subject;
}

unsigned fake_polkit_n_cancelled(void) {
        return fake.n_cancelled;
}

unsigned fake_polkit_n_pending(void) {
        unsigned n = 0;

        for (PolkitCheck *k = fake.context ? fake.context->checks : NULL; k; k = k->next)
                n += k->answer == FAKE_POLKIT_DELAY;
        return n;
}

/* ---- polkit.h ---- */

static const char *const polkit_mode_table[_POLKIT_MODE_MAX] = {
        [POLKIT_MODE_AUTO] = "auto",
        [POLKIT_MODE_REQUIRED] = "required",
        [POLKIT_MODE_OFF] = "off",
};

const char *polkit_mode_to_string(PolkitMode m) {
        return m >= 0 && m < _POLKIT_MODE_MAX ? polkit_mode_table[m] : NULL;
}

int polkit_mode_from_string(const char *s) {
        for (int i = 0; s && i < _POLKIT_MODE_MAX; i++)
                if (strcmp(s, polkit_mode_table[i]) == 0)
                        return i;
        return -EINVAL;
}

int polkit_context_new(sd_event *event, sd_bus *bus, PolkitMode mode, PolkitContext **ret) {
        PolkitContext *c;

        if (!event || !ret || mode < 0 || mode >= _POLKIT_MODE_MAX)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->event = sd_event_ref(event);
        c->mode = mode;
        fake.context = c;
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
        for (PolkitCheck **pp = &c->checks; *pp; pp = &(*pp)->next)
                if (*pp == check) {
                        *pp = check->next;
                        break;
                }
        check->next = NULL;
        check->context = NULL;
        check->defer = sd_event_source_disable_unref(check->defer);
}

static void check_free_internal(PolkitCheck *check) {
        check_unlink(check);
        free(check);
}

PolkitCheck *polkit_check_free(PolkitCheck *check) {
        if (!check)
                return NULL;
        if (check->context)
                fake.n_cancelled++;     /* freed before its answer */
        check_free_internal(check);
        return NULL;
}

PolkitContext *polkit_context_free(PolkitContext *c) {
        if (!c)
                return NULL;
        while (c->checks) {
                PolkitCheck *check = c->checks;

                if (check->floating)
                        check_free_internal(check);
                else
                        check_unlink(check);
        }
        if (fake.context == c)
                fake.context = NULL;
        sd_event_unref(c->event);
        free(c);
        return NULL;
}

static void complete(PolkitCheck *check, FakePolkitAnswer answer) {
        polkit_callback_t cb = check->callback;
        void *userdata = check->userdata;
        bool floating = check->floating;
        PolkitResult r = { .how = POLKIT_HOW_POLKIT };

        switch (answer) {
        case FAKE_POLKIT_YES:
                r.allowed = true;
                break;
        case FAKE_POLKIT_CHALLENGE:
                r.challenge = true;
                break;
        case FAKE_POLKIT_DISMISSED:
                r.dismissed = true;
                break;
        case FAKE_POLKIT_ERROR:
                r.error = -EIO;
                r.error_name = "org.freedesktop.PolicyKit1.Error.Failed";
                r.error_message = "polkit could not check the authorization (fake)";
                break;
        default:
                break;
        }
        check_unlink(check);
        cb(&r, userdata);
        if (floating)
                free(check);
}

static int on_defer(sd_event_source *s, void *userdata) {
        PolkitCheck *check = userdata;

        complete(check, check->answer);
        return 0;
}

static FakePolkitAnswer answer_for(const char *action) {
        for (size_t i = 0; i < fake.n_rules; i++)
                if (strcmp(fake.rules[i].action, action) == 0)
                        return fake.rules[i].answer;
        return fake.answer;
}

int polkit_check_async(PolkitContext *c, const PolkitSubject *subject, const char *action_id,
                       const char *const *details, bool interactive, polkit_callback_t cb, void *userdata,
                       PolkitCheck **ret_check) {
        PolkitCheck *check, **tail;
        int r;

        if (!c || !subject || !cb || !action_id || !*action_id)
                return -EINVAL;
        if (subject->kind == POLKIT_SUBJECT_BUS_NAME ? !subject->bus_name || subject->bus_name[0] != ':' :
                                                       subject->pid <= 0)
                return -EINVAL;

        fake.n_asked++;
        snprintf(fake.last_action, sizeof(fake.last_action), "%s", action_id);
        fake.last_interactive = interactive;
        fake.last_subject = *subject;
        fake.last_subject.bus_name = NULL;

        check = calloc(1, sizeof(*check));
        if (!check)
                return -ENOMEM;
        *check = (PolkitCheck) {
                .context = c,
                .answer = answer_for(action_id),
                .callback = cb,
                .userdata = userdata,
                .floating = !ret_check,
        };
        if (check->answer != FAKE_POLKIT_DELAY) {
                r = sd_event_add_defer(c->event, &check->defer, on_defer, check);
                if (r < 0) {
                        free(check);
                        return r;
                }
        }
        for (tail = &c->checks; *tail; tail = &(*tail)->next)
                ;
        *tail = check;
        if (ret_check)
                *ret_check = check;
        return 0;
}

int fake_polkit_answer(FakePolkitAnswer answer) {
        if (answer == FAKE_POLKIT_DELAY || !fake.context)
                return -EINVAL;
        for (PolkitCheck *k = fake.context->checks; k; k = k->next)
                if (k->answer == FAKE_POLKIT_DELAY) {
                        complete(k, answer);
                        return 0;
                }
        return -ENOENT;
}
