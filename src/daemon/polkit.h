/* SPDX-License-Identifier: MIT */
#pragma once

/* Asking polkit whether a caller may do something, without ever blocking.
 *
 * A check is one org.freedesktop.PolicyKit1.Authority.CheckAuthorization
 * call sent with sd_bus_call_async(); its answer comes back later through a
 * callback, from the event loop. Interactive authentication (a password
 * dialog) can take minutes; the daemon goes on serving everyone else
 * meanwhile, and can cancel a check whose client went away.
 *
 * The daemon's --polkit=MODE decides what happens when polkit is not there:
 *
 *   off       polkit is never asked: every check is allowed, with
 *             how = "polkit-off". The JSON policy (policy.d) still applies
 *             and is then the only thing that decides.
 *   auto      polkit is asked whenever org.freedesktop.PolicyKit1 has an
 *             owner on the bus or can be activated. If the bus says the name
 *             is neither (ServiceUnknown or NameHasNoOwner), the check is
 *             allowed with how = "polkit-unavailable-auto", by the JSON
 *             policy alone, and that is logged once (and again if polkit
 *             returns and then goes away again). Any other failure (polkit
 *             present but failing, a timeout, no bus) refuses the check.
 *             Neither fallback is a yes for a foreign target: the request
 *             pipeline then wants a policy rule that names it
 *             (authorize_polkit_vouches()).
 *   required  polkit must answer. If it cannot be reached, the check is
 *             refused and result->error/error_message say why.
 *
 * Falling back in "auto" cannot be abused by a user: the system bus only lets
 * root own org.freedesktop.PolicyKit1 (polkit's bus policy, or the bus's
 * default "deny own" when polkit is not installed), so nobody else can make
 * the name appear or vanish. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "cleanup.h"

/* Our actions (policy/org.injectd.policy). */
#define POLKIT_ACTION_INJECT "org.injectd.inject"
#define POLKIT_ACTION_INJECT_GLOBAL "org.injectd.inject-global"
#define POLKIT_ACTION_MANAGE "org.injectd.manage"
#define POLKIT_ACTION_OBSERVE "org.injectd.observe"

/* PolkitResult.how */
#define POLKIT_HOW_POLKIT "polkit"
#define POLKIT_HOW_UNAVAILABLE_AUTO "polkit-unavailable-auto"
#define POLKIT_HOW_OFF "polkit-off"

/* How long polkit may take: a non-interactive check answers at once, an
 * interactive one waits for a person to type a password. */
#define POLKIT_TIMEOUT_USEC (UINT64_C(25) * 1000000)
#define POLKIT_INTERACTIVE_TIMEOUT_USEC (UINT64_C(5) * 60 * 1000000)

/* At most this many CheckAuthorization calls wait for polkitd's answer at
 * once; the rest wait in the daemon, in the order they came, and each is
 * sent when an earlier one is answered. Unbounded, a burst of requests
 * hits the system bus's limit on one connection's calls waiting for
 * replies (dbus-daemon's max_replies_per_connection, 128 by default),
 * and every call past it fails at once with LimitsExceeded. The bound is
 * well below that, because every other call the daemon has waiting on
 * its bus connection counts too, and because each call's timeout
 * (POLKIT_TIMEOUT_USEC) starts when it is sent: polkitd answers one
 * check after the other (its rules run in its main loop), so a check
 * sent behind N others waits for N answers first. Sending more at once is
 * no faster, and it is what made checks time out: with 32 in flight,
 * vm-daemon-polkit-burst saw 10 of 200 checks time out on a loaded CI
 * machine (about 0.6 s per answer there: 31 ahead took longer than 25 s).
 * With 8, the last one sent waits for 7 answers: within the timeout unless
 * polkitd takes over 3 s a check, when it is hung more than slow. */
#define POLKIT_IN_FLIGHT_MAX 8U
/* Of those, interactive ones (which wait for a person, up to
 * POLKIT_INTERACTIVE_TIMEOUT_USEC): password dialogs left open cannot
 * take every place, and checks queued behind them pass them. */
#define POLKIT_IN_FLIGHT_INTERACTIVE_MAX 4U

typedef enum PolkitMode {
        POLKIT_MODE_AUTO,
        POLKIT_MODE_REQUIRED,
        POLKIT_MODE_OFF,
        _POLKIT_MODE_MAX,
} PolkitMode;

const char *polkit_mode_to_string(PolkitMode m);        /* NULL if out of range */
int polkit_mode_from_string(const char *s);             /* PolkitMode, or -EINVAL */

typedef enum PolkitSubjectKind {
        POLKIT_SUBJECT_BUS_NAME,        /* polkit's "system-bus-name": a D-Bus caller */
        POLKIT_SUBJECT_PROCESS,         /* polkit's "unix-process": a Varlink caller */
} PolkitSubjectKind;

/* Who is asking. Only borrowed: polkit_check_async() copies what it needs.
 *
 * BUS_NAME: bus_name is the caller's unique name (":1.42",
 *   sd_bus_message_get_sender()); polkitd resolves it to a process itself.
 * PROCESS: pid and uid from SO_PEERCRED, and start_time (clock ticks since
 *   boot, field 22 of /proc/PID/stat; scope_process() reads it) taken when
 *   the connection was accepted. polkitd compares the start time with the
 *   process now behind pid, so a pid that was reused since is not mistaken
 *   for the caller. start_time 0 makes polkitd read it itself at check time,
 *   and uid (uid_t) -1 makes it look the uid up: both lose that guarantee,
 *   so the daemon always fills them in. */
typedef struct PolkitSubject {
        PolkitSubjectKind kind;
        const char *bus_name;
        pid_t pid;
        uid_t uid;
        uint64_t start_time;
} PolkitSubject;

/* The answer. Strings are valid until the callback returns. */
typedef struct PolkitResult {
        bool allowed;
        bool challenge;                 /* !allowed, but interactive authentication could allow it */
        bool dismissed;                 /* !allowed: the user dismissed the authentication dialog */
        const char *how;                /* POLKIT_HOW_*: who decided */
        int error;                      /* < 0 (negative errno) if polkit could not answer; allowed is false then */
        const char *error_name;         /* the D-Bus error of the failed call, or NULL */
        const char *error_message;      /* what went wrong, for logs and for the client, or NULL */
} PolkitResult;

typedef void (*polkit_callback_t)(const PolkitResult *result, void *userdata);

typedef struct PolkitContext PolkitContext;
typedef struct PolkitCheck PolkitCheck;

/* event is the loop callbacks run from. bus is the system bus connection
 * (attached to that loop) to reach polkit through; it may be NULL, in which
 * case polkit counts as unreachable ("auto" falls back, "required" refuses). */
int polkit_context_new(sd_event *event, sd_bus *bus, PolkitMode mode, PolkitContext **ret);

/* Cancels every pending check (their callbacks are not called). Handles the
 * caller still holds stay valid, inert, until polkit_check_free(). */
PolkitContext *polkit_context_free(PolkitContext *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolkitContext *, polkit_context_free);

PolkitMode polkit_context_get_mode(const PolkitContext *c);

/* Starts a check of action_id for subject. details is NULL or a
 * NULL-terminated list of key, value, key, value... that polkit rules see
 * through action.lookup(key). interactive sets AllowUserInteraction: pass
 * it only when the client asked for it (D-Bus:
 * sd_bus_message_get_allow_interactive_authorization()).
 *
 * cb is called exactly once, later, from the event loop — never from
 * inside this function, even when polkit is not consulted — unless the
 * check is freed or the context is freed first. Past
 * POLKIT_IN_FLIGHT_MAX checks in flight the check is queued, never
 * refused: it is sent when its turn comes, and a queued check that is
 * freed is never sent.
 *
 * ret_check: NULL makes the check floating (owned by the context, freed
 * after its callback). Otherwise the caller owns the handle and frees it
 * with polkit_check_free(): before the callback that cancels the check
 * (the client went away; an interactive authentication in progress is
 * cancelled in polkitd too), during or after it that just frees it.
 *
 * Returns 0, -EINVAL for bad arguments, -ENOMEM. Failing to reach polkit is
 * not an error here: it is reported through the callback, so the caller
 * handles every outcome in one place. */
int polkit_check_async(
                PolkitContext *c,
                const PolkitSubject *subject,
                const char *action_id,
                const char *const *details,
                bool interactive,
                polkit_callback_t cb,
                void *userdata,
                PolkitCheck **ret_check);

PolkitCheck *polkit_check_free(PolkitCheck *check);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolkitCheck *, polkit_check_free);
