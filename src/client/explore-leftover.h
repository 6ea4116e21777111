/* SPDX-License-Identifier: MIT */
#pragma once

/* explore's "leftover" detector (docs/explore.md, "Leftovers"): what a
 * run's tree left behind that was not there before it — a loop device
 * still attached, a mount, a block device held open — which no kernel
 * report names: after open_ctree fails at its entry, btrfs keeps the loop
 * device open and nothing is logged
 * (docs/findings/btrfs-open-ctree-leaks-devices.md).
 *
 * A snapshot is taken before and after each run (leftover_snapshot()), and
 * their difference is the run's (leftover_diff()). Each run has its own
 * pair, so that runs made side by side can each be judged on their own
 * (what another run attached meanwhile is told apart by LeftoverRun: its
 * directory and files). The snapshot reads:
 *   - loop devices attached: /sys/block/loop* /loop/backing_file, autoclear;
 *   - mounts: /proc/self/mountinfo, and the initial namespace's view,
 *     /proc/1/mountinfo, when it is readable and another namespace (a run
 *     in a private mount namespace leaves nothing in ours, but what it
 *     mounted in the initial one stays);
 *   - holders: /sys/block/X/holders/Y (a device-mapper or md device on X).
 * A loop device attached during the run and still there is probed with an
 * O_EXCL open (leftover_probe_held()): EBUSY means a file system or
 * another exclusive opener holds it, which is what keeps the device that
 * the script "detached" (losetup -d only sets autoclear then). */

#include <stdbool.h>
#include <stddef.h>

typedef struct LeftoverLoop {
        char *name;             /* "loop0" */
        char *backing;          /* the backing file, as /sys shows it (" (deleted)" kept) */
        bool autoclear;
        int held;               /* 1: an O_EXCL open said EBUSY; 0: it did not; -1: not probed or cannot say */
} LeftoverLoop;

typedef struct LeftoverMount {
        unsigned long id;       /* mountinfo's mount ID (system-wide) */
        char *target;           /* the mount point */
        char *fstype;
        char *source;
        char *view;             /* "self" or "init" (/proc/1/mountinfo) */
} LeftoverMount;

typedef struct LeftoverHolder {
        char *device;           /* "loop0" */
        char *holder;           /* "dm-0" */
} LeftoverHolder;

typedef struct LeftoverSnapshot {
        LeftoverLoop *loops;
        size_t n_loops;
        LeftoverMount *mounts;
        size_t n_mounts;
        LeftoverHolder *holders;
        size_t n_holders;
} LeftoverSnapshot;

/* What ties a leftover to the run: its directory ($INJECTD_EXPLORE_RUN;
 * NULL: none) and its own files (the command's arguments that are paths,
 * say). */
typedef struct LeftoverRun {
        const char *dir;
        const char *const *files;
        size_t n_files;
} LeftoverRun;

typedef struct Leftover {
        char *kind;             /* "loop", "mount", "holder" */
        char *title;            /* one line: what was left */
        char *signature;        /* without device names or numbers, for findings */
        char *text;             /* the details, lines joined by '\n' */
} Leftover;

typedef struct Leftovers {
        Leftover *v;
        size_t n;
} Leftovers;

void leftover_snapshot_done(LeftoverSnapshot *s);
void leftovers_done(Leftovers *l);

/* The parsers and adders the snapshot is made of, exposed for the unit
 * test: each 0 or -ENOMEM. */
int leftover_parse_mountinfo(LeftoverSnapshot *s, const char *text, const char *view);
int leftover_add_loop(LeftoverSnapshot *s, const char *name, const char *backing, bool autoclear);
int leftover_add_holder(LeftoverSnapshot *s, const char *device, const char *holder);

/* Reads the system's state into *ret (whatever is unreadable is left
 * out). 0 or -ENOMEM. */
int leftover_snapshot(LeftoverSnapshot *ret);

/* For each loop device of after that before does not have, attached to
 * the same backing file: whether it is held (LeftoverLoop.held), by an
 * O_EXCL open, closed at once. */
void leftover_probe_held(const LeftoverSnapshot *before, LeftoverSnapshot *after);

/* What after has that before has not: one Leftover each, appended to
 * *ret; mounts seen in both views once. Returns the number added, or
 * -ENOMEM. */
int leftover_diff(const LeftoverSnapshot *before, const LeftoverSnapshot *after, const LeftoverRun *run,
                  Leftovers *ret);

/* A run's check: a snapshot now, diffed with before; whatever differs is
 * looked at again until it goes away or a bounded settle has passed (see
 * the .c), then what is still there is the run's, in *ret. Returns the
 * number of leftovers, or -ENOMEM. */
int leftover_check(const LeftoverSnapshot *before, const LeftoverRun *run, Leftovers *ret);
