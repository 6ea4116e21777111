/* SPDX-License-Identifier: MIT */
#pragma once

/* Observe mode (bpf/observe.bpf.c): counting, without failing anything,
 * the calls one process tree makes to many injectable functions at once,
 * and from how many distinct kernel stacks, for `injectctl explore` to
 * plan its runs. One kprobe.multi link attaches to every function. The
 * tree is tagged like a process-scope injection's (scope-roots.h): while
 * the observation lasts, its root counts as a live root. Nothing is
 * pinned: an observation ends with its EngineObserve (or its process). */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"
#include "inject-error.h"
#include "observe.h"  /* bpf/observe.h */

typedef struct EngineObserve EngineObserve;

/* Why a function asked for is not observed. */
typedef struct ObserveSkipped {
        char *name;
        const char *reason;     /* static text */
} ObserveSkipped;

typedef struct ObserveStack {
        uint64_t first_call;    /* the function's call number (0: its first) when this stack first called it */
        uint64_t last_call;     /* ... when it last called it */
        uint64_t calls;
        uint64_t sample_stride; /* samples[i]: the function's call number of this stack's call i * stride */
        uint64_t samples[OBSERVE_SAMPLES];
        size_t n_samples;
        char **frames;          /* the stack's function names, innermost (the function) first; NULL-terminated */
} ObserveStack;

typedef struct ObserveFunction {
        char name[INJECT_FUNC_LEN];
        uint64_t calls;
        uint64_t stack_errors;  /* calls whose stack was not recorded (maps full) */
        ObserveStack *stacks;   /* sorted by first_call */
        size_t n_stacks;
} ObserveFunction;

/* Starts observing the thread group pid (start_ticks: its leader's start
 * time, 0 to read it now) and its descendants, counting only their calls
 * made with nothing but uid's credentials (the check an injection owned by
 * uid makes, bpf/creds.bpf.h; INJECT_UID_ANY: every call, for a privileged
 * observer), on each of functions[] that
 * this kernel can observe: on the error-injection list or an LSM hook, and traceable by
 * ftrace (kprobe.multi attaches through it; a function in a file built
 * without ftrace cannot be). The others are skipped, not refused:
 * engine_observe_skipped() says which and why. Refused when none is left
 * (NotInjectable), when the process is gone (BadScope), when the kernel
 * has no kprobe.multi or refuses the attach (KernelRefused). The engine
 * must outlive the observation. */
int engine_observe_start(Engine *e, pid_t pid, uint64_t start_ticks, uint32_t uid, const char *const *functions,
                         size_t n, EngineObserve **ret, InjectError *err);
const ObserveSkipped *engine_observe_skipped(EngineObserve *o, size_t *ret_n);
size_t engine_observe_n_attached(EngineObserve *o);
pid_t engine_observe_pid(EngineObserve *o);

/* The counts so far: the functions called at least once, sorted by name. */
int engine_observe_read(EngineObserve *o, ObserveFunction **ret, size_t *ret_n);
void observe_functions_free(ObserveFunction *v, size_t n);

/* Detaches, and drops the root's tag unless an injection still uses it. */
EngineObserve *engine_observe_free(EngineObserve *o);
DEFINE_TRIVIAL_CLEANUP_FUNC(EngineObserve *, engine_observe_free);
