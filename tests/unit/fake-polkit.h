/* SPDX-License-Identifier: MIT */
#pragma once

/* polkit with scripted answers, for the unit tests of the daemon's core. It
 * defines the functions of src/daemon/polkit.h; link it instead of
 * polkit.c. As the real one promises, an answer never comes from inside
 * polkit_check_async(): an immediate answer is delivered from the event
 * loop, a delayed one when the test says so. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "polkit.h"

typedef enum FakePolkitAnswer {
        FAKE_POLKIT_YES,
        FAKE_POLKIT_NO,
        FAKE_POLKIT_CHALLENGE,  /* no, but interactive authentication could */
        FAKE_POLKIT_DISMISSED,  /* no: the user dismissed the dialog */
        FAKE_POLKIT_ERROR,      /* polkit could not answer (a D-Bus error) */
        FAKE_POLKIT_DELAY,      /* no answer until fake_polkit_answer() */
        _FAKE_POLKIT_ANSWER_MAX,
} FakePolkitAnswer;

/* Every action is answered `answer` (initially FAKE_POLKIT_YES). */
void fake_polkit_reset(void);
/* How checks of action (NULL: every action) are answered from now on. */
void fake_polkit_set_answer(const char *action, FakePolkitAnswer answer);

/* What was asked. */
unsigned fake_polkit_n_asked(void);
const char *fake_polkit_last_action(void);      /* NULL: none asked */
bool fake_polkit_last_interactive(void);
PolkitSubject fake_polkit_last_subject(void);   /* bus_name not kept */

/* Checks waiting for a delayed answer, and checks freed before theirs. */
unsigned fake_polkit_n_pending(void);
unsigned fake_polkit_n_cancelled(void);

/* Answers the oldest delayed check now (its callback runs before this
 * returns). answer must not be FAKE_POLKIT_DELAY. -ENOENT: none pending. */
int fake_polkit_answer(FakePolkitAnswer answer);
