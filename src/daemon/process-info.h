/* SPDX-License-Identifier: MIT */
#pragma once

/* What /proc says about a process that decides whose it is and what it may
 * do itself: its uids, its effective capabilities, where it sits in the
 * tree of pid namespaces, who owns its /proc files. Only files any
 * process may read are needed (/proc/PID/status, /proc/PID/stat and
 * its owner, uid_map and gid_map): the daemon runs with
 * a few capabilities and without CAP_SYS_PTRACE, so the /proc/PID/ns links of a
 * process that holds capabilities it lacks are closed to it. Those links
 * are still used when they open. Which pid namespace a process is in is
 * read by the engine (engine_task_pidns(), a BPF task iterator) when it
 * can, and otherwise told from the parent chain. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "engine.h"

/* Deeper pid namespaces than this are refused (the kernel allows 32). */
#define PROC_NS_LEVEL_MAX 33
/* Steps up the parent chain before giving up (pid_max bounds it anyway). */
#define PROC_ANCESTRY_MAX 4096

typedef struct ProcStatus {
        pid_t tgid;
        pid_t ppid;
        uid_t uids[4];                  /* real, effective, saved, filesystem */
        uint64_t cap_eff;               /* in the process's own user namespace */
        /* NSpid: the pid in this /proc's namespace first, then in each
         * nested one down to the process's own. n_nspid - 1 is its depth
         * below the namespace of this /proc. */
        pid_t nspid[PROC_NS_LEVEL_MAX];
        unsigned n_nspid;
} ProcStatus;

/* Parses the text of a /proc/PID/status (a table of the keys above);
 * -EIO if one is missing or malformed. */
int proc_status_parse(FILE *f, ProcStatus *ret);
int proc_status_read(pid_t pid, ProcStatus *ret);

/* May do it without us: CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON,
 * effective in the initial user namespace, from the initial pid namespace. */
bool proc_privilege_from(uint64_t cap_eff, bool init_userns, bool init_pidns);

/* Whether pid's user and pid namespaces are the daemon's own: by the
 * inode of /proc/PID/ns/{user,pid} when that opens, else by what anyone
 * may read (the same uid_map and gid_map; NSpid with no nested pid). */
int proc_same_namespaces(pid_t pid, const ProcStatus *st, bool *ret_userns, bool *ret_pidns);

/* The uid owning the files in /proc/PID (its "stat"): the process's euid
 * if it is dumpable, else root. (The directory itself keeps the euid.) */
int proc_dump_owner(pid_t pid, uid_t *ret);

/* The topmost process reached from pid up the parent chain through
 * processes whose depth (n_nspid - 1) is at least level, with its start
 * time. A child is always in its parent's pid namespace or below it, so
 * two processes at depth >= level with the same anchor are both in the
 * namespace of the anchor at depth level or below it. -EAGAIN if a parent
 * is younger than its child (its pid was reused meanwhile). */
int proc_ns_anchor(pid_t pid, unsigned level, pid_t *ret_pid, uint64_t *ret_start);

/* The pid namespace of a process (pid, seen from here as st), as what
 * proc_ns_contains() compares: by its inode, read by the engine, which
 * sees the namespace of any process; or, where the engine's program cannot
 * load, by its anchor (proc_ns_anchor()), which finds a process that
 * entered the namespace with setns() (docker exec, nsenter) outside it,
 * since its parent is. */
typedef struct ProcNsRef {
        unsigned level;                 /* its depth below this /proc's namespace */
        Engine *engine;                 /* inum is set: ask it about other processes */
        uint32_t inum;                  /* the namespace's inode, 0 if by ancestry */
        pid_t anchor;                   /* by ancestry: proc_ns_anchor() at that depth */
        uint64_t anchor_start;
} ProcNsRef;

/* start: pid's start time (scope_process()), read before st; the
 * namespace is read only if pid still has it, so what st says and the
 * namespace are one process's. e NULL: by ancestry. */
int proc_ns_ref(Engine *e, pid_t pid, uint64_t start, const ProcStatus *st, ProcNsRef *ret);

/* 1 if process pid (st, read after its start time was start: 0 if it was
 * not read) is in the namespace of ref or below it, 0 if not (or if that
 * cannot be told: pid changed hands meanwhile), negative errno on
 * failure. Level 0 holds everything this /proc shows. */
int proc_ns_contains(const ProcNsRef *ref, pid_t pid, uint64_t start, const ProcStatus *st);

/* The process that is number nr in the namespace of ref (a pid the caller
 * gave, seen from its own namespace), as a pid seen from here: -ESRCH if
 * none. Level 0 is the identity. */
int proc_ns_translate(const ProcNsRef *ref, pid_t nr, pid_t *ret);
