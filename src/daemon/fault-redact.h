/* SPDX-License-Identifier: MIT */
#pragma once

/* Which tasks a fault event may show its subscriber. A device scope fails
 * the device's I/O whoever submits it (root's sync, another user's reads
 * of files on it, the flusher), and the event names the submitter: its
 * pid, tgid, comm and kernel stack. The injection's owner and root are who
 * hear its events (docs/dbus-api.md, "Visibility"), and a user sees her
 * own tasks, nobody else's: so for a device-scope injection armed by a
 * caller without privilege, a task is shown only when it is the owner's
 * (real, effective, saved and filesystem uid hers) or a kernel thread
 * (nobody's: its pid and comm are in everyone's /proc, and it acts for
 * the device, not for a user). Any other task is redacted: pid and tgid 0,
 * an empty comm and no stack. The fault is still counted and reported.
 * Whose task it was is what the BPF program read at the fault (the
 * event's uid and task_flags), not what /proc says when the event is
 * read, by when the task may have exited and its pid been reused; only a
 * record of an older program (adopted pins) lacks them, and is then told
 * from /proc, a task that cannot be told there redacted. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "manager-types.h"

/* What /proc said about a task, for the rule below. */
typedef struct FaultTask {
        bool known;                     /* /proc had it, and it started no later than the fault */
        bool kthread;                   /* PF_KTHREAD */
        uid_t uids[4];                  /* real, effective, saved, filesystem */
} FaultTask;

/* The rule: whether owner_uid may see task t. */
bool fault_task_visible_to(uid_t owner_uid, const FaultTask *t);

/* Reads task pid from proc_root ("/proc", or a test's) as it was at
 * event_ns (CLOCK_BOOTTIME): t->known is false if it is gone or started
 * after that. */
void fault_task_read(const char *proc_root, pid_t pid, uint64_t event_ns, FaultTask *t);

/* What the event itself says of its task (has_task: the record has uid
 * and task_flags, from the BPF program at the fault; older programs'
 * records do not, and then /proc is read, which a task that exited since
 * fails). */
void fault_task_from_event(const struct inject_event *ev, FaultTask *t);

/* Whether inj's subscribers may see ev's task (only device scopes of
 * unprivileged owners are ever redacted); if not, clears it in ev and
 * returns true. */
bool fault_event_redact(const Injection *inj, struct inject_event *ev, bool has_task);
