/* SPDX-License-Identifier: MIT */
#pragma once

/* An engine in memory, for the unit tests of the daemon's core. It defines
 * the functions of src/engine/engine.h (and the libbpf ring buffer calls the
 * manager reads fault events with), so a test that links fake-engine.c
 * instead of libengine runs the core without a kernel, a bpffs or a
 * privilege. The knobs below script what the "kernel" does. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* The functions the fake kernel can fail, in the error-injection list's
 * format: should_failslab (ERRNO), __x64_sys_openat (ERRNO),
 * __x64_sys_mkdirat (ERRNO), should_fail_alloc_page (TRUE). */
#define FAKE_ENGINE_FUNCTIONS                   \
        "should_failslab\tERRNO\n"              \
        "__x64_sys_openat\tERRNO\n"             \
        "__x64_sys_mkdirat\tERRNO\n"            \
        "should_fail_alloc_page\tTRUE\n"

/* What the last engine_arm() was asked for (strings copied). */
typedef struct FakeArm {
        char function[INJECT_FUNC_LEN];
        Backend backend;
        int64_t retval;
        uint64_t duration_usec;
        enum inject_scope_kind scope;
        uint64_t cgroup_id;
        pid_t pid;
        uint32_t owner_uid;
        uint64_t times;
} FakeArm;

/* Forgets every injection and knob; the next engine starts empty. */
void fake_engine_reset(void);

/* The next engine_arm() fails with r (a negative errno) and this error name
 * (NULL: KernelRefused), after checking the function like the real one. */
void fake_engine_fail_next_arm(int r, const char *error_name);

/* The next engine_arm() of a process scope reads this start time for the
 * process instead of its real one, as it would if the pid had been
 * recycled since the request was checked. */
void fake_engine_recycle_next_pid(uint64_t start_ticks);

/* The next engine_arm_begin() of a process scope takes n engine_arm_step()
 * calls to walk its tree (0: none, done at once). */
void fake_engine_set_arm_steps(unsigned n);
unsigned fake_engine_n_walking(void);   /* arms begun whose walk is not over */
unsigned fake_engine_n_undone(void);    /* arms freed unfinished: taken back */
unsigned fake_engine_n_arms(void);      /* successful engine_arm() calls */
unsigned fake_engine_n_disarms(void);   /* successful engine_disarm() calls */
unsigned fake_engine_n_gets(void);      /* engine_get() calls */
unsigned fake_engine_n_get_manys(void); /* engine_get_many() calls */
size_t fake_engine_n_armed(void);       /* injections armed now */
bool fake_engine_is_armed(uint64_t id);
const FakeArm *fake_engine_last_arm(void);

/* Sets an armed injection's counters, as the BPF program would. */
int fake_engine_set_counters(uint64_t id, uint64_t seen, uint64_t matched, uint64_t injected);
/* What engine_get() and engine_list() report for it from now on. */
int fake_engine_set_state(uint64_t id, InjectionState state);

/* One fault on an armed injection: counts it (seen, matched, injected; at
 * `times` the state becomes exhausted) and queues a fault event on the
 * ring buffer, which the manager reads from its event loop. */
int fake_engine_fire(uint64_t id, pid_t pid, const char *comm);

/* What the next engine_adopt() finds pinned: an injection with this id,
 * function and action (ADOPT_KEPT: still live), its deadline duration_usec
 * from now. */
int fake_engine_add_pinned(uint64_t id, const char *function, int64_t retval, uint64_t duration_usec,
                           AdoptAction action);

/* A restart: what is armed now stays pinned for the next engine_adopt()
 * (as ADOPT_KEPT), and nothing is armed until then. */
void fake_engine_restart(void);
