/* SPDX-License-Identifier: MIT */
#pragma once

/* The engine arms and disarms injections in the kernel. Everything it
 * creates is pinned under its pin root (/sys/fs/bpf/injectd), so armed
 * injections outlive the process that armed them, and a later engine (after
 * a restart) adopts them from bpffs alone:
 *
 *   injectd/events                       ring buffer shared by every site
 *   injectd/site-scopes, site-slots, site-infos
 *                                        outer maps: every site's maps, at its index
 *   injectd/sites/<backend>-<function>/  link, scopes, slots, site
 *
 * One kprobe program, loaded once, serves every kprobe site, found through
 * the attach cookie; an fmod_ret site has a program of its own. Injections
 * are map entries of their site. The engine does no policy: its caller has
 * decided. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arg-filters.h"
#include "cleanup.h"
#include "functions.h"
#include "inject-error.h"
#include "inject.h"
#include "probe.h"

#define ENGINE_PIN_ROOT "/sys/fs/bpf/injectd"
#define ENGINE_STATE_DIR "/run/injectd"
#define ENGINE_MAX_DURATION_USEC (UINT64_C(7) * 24 * 3600 * 1000000)

typedef enum Backend {
        BACKEND_AUTO,
        BACKEND_KPROBE,
        BACKEND_FMOD_RET,
        _BACKEND_MAX,
} Backend;

const char *backend_to_string(Backend b);
int backend_from_string(const char *s);         /* Backend, or -EINVAL */

/* What this kernel lets us do, each with the errno that said no; the
 * findings behind them, with reasons, are engine_probe()'s. */
typedef struct EngineCaps {
        int bpf;                /* 0: programs load at all (a socket filter did) */
        int tracing;            /* 0: kprobe and trampoline programs load (EPERM: lockdown or a policy refuses them) */
        int override;           /* 0: the kprobe backend works: kprobes, bpf_override_return, the list */
        int fmod_ret;           /* 0: our fmod_ret program loaded against security_file_open */
        int btf;                /* 0: vmlinux BTF is readable */
        int list;               /* 0: the error-injection list is readable */
} EngineCaps;

typedef struct InjectSpec {
        const char *function;
        Backend backend;
        int64_t retval;
        uint64_t duration_usec;                 /* > 0, <= ENGINE_MAX_DURATION_USEC */

        enum inject_scope_kind scope;
        uint64_t cgroup_id;                     /* INJECT_SCOPE_CGROUP */
        uint32_t cgroup_level;
        pid_t pid;                              /* INJECT_SCOPE_PROCESS */
        uint64_t diskseq;                       /* INJECT_SCOPE_DEVICE (scope-device.h) */

        const char *comm;                       /* NULL or "": any */
        const char *const *callers;             /* all must be on the kernel stack */
        size_t n_callers;
        uint64_t after;                         /* pass the first N matching calls */
        uint64_t every;                         /* 0 or 1: every matching call */
        uint64_t times;                         /* 0: unlimited */
        uint32_t probability_ppm;               /* 0 means INJECT_PPM (always) */
        uint32_t owner_uid;                     /* INJECT_UID_ANY, or only tasks fully running as it */
        ArgFilters arg_filters;                 /* only calls whose arguments pass (arg-filters.h) */
} InjectSpec;

typedef enum InjectionState {
        INJECTION_ACTIVE,
        INJECTION_EXPIRED,      /* deadline passed: the program no longer fails anything */
        INJECTION_EXHAUSTED,    /* `times` faults injected */
        _INJECTION_STATE_MAX,
} InjectionState;

const char *injection_state_to_string(InjectionState s);

/* A snapshot of one injection: its configuration and counters. */
typedef struct InjectionInfo {
        uint64_t id;
        char function[INJECT_FUNC_LEN];
        Backend backend;
        InjectionState state;
        struct inject_slot slot;
} InjectionInfo;

typedef enum AdoptAction {
        ADOPT_KEPT,
        ADOPT_EXPIRED,
        ADOPT_EXHAUSTED,
        ADOPT_ORPHANED,         /* its process or cgroup is gone */
        _ADOPT_ACTION_MAX,
} AdoptAction;

const char *adopt_action_to_string(AdoptAction a);

typedef struct AdoptResult {
        InjectionInfo info;
        AdoptAction action;
} AdoptResult;

typedef struct Engine Engine;

/* Where an arm's time went, in microseconds (CLOCK_MONOTONIC). A phase
 * the arm did not need is 0: a warm arm, on a site already attached, only
 * writes map entries. */
typedef struct EnginePhases {
        uint64_t load_usec;             /* opening and preparing inject.bpf.c (ELF, BTF, configuration) */
        uint64_t verify_usec;           /* the kernel creating its maps and verifying it (bpf(BPF_PROG_LOAD)) */
        uint64_t attach_usec;           /* creating the site's maps (publishing them in the outer maps),
                                         * attaching and pinning it; or re-attaching a cached program */
        uint64_t tag_usec;              /* a process scope: finding its root and tagging its tasks,
                                         * tags.bpf.c's loading included when it had to be */
        uint64_t tag_tasks;             /* ... the tasks its tagging visited: the root's and its
                                         * descendants' (every task on the machine, on a kernel
                                         * before 6.1), times the passes made */
        uint64_t total_usec;            /* the whole engine_arm(), these and the map writes */
        uint32_t verified_insns;        /* instructions the verifier processed for the program loaded
                                         * (bpf_prog_info.verified_insns, Linux 5.16+; 0: none loaded,
                                         * or an older kernel) */
} EnginePhases;

/* What the site cache did, for tests and the curious. */
typedef struct EngineSiteStats {
        uint64_t loads;                 /* programs loaded and verified: the shared kprobe one (once),
                                         * and an fmod_ret one per new fmod_ret site */
        uint64_t reattaches;            /* cached fmod_ret programs attached again instead */
        uint64_t reattach_failures;     /* ... refused by the kernel, then loaded afresh */
        uint64_t expired;               /* cached programs freed at the end of their grace period */
        uint64_t evicted;               /* ... freed early, to stay within the cap */
        uint64_t arms;                  /* successful engine_arm() calls */
        EnginePhases last_arm;          /* the last successful one's phases */
        EnginePhases arm_total;         /* every successful one's, summed (verified_insns: the largest) */
        EnginePhases kprobe_program;    /* the shared kprobe program's load (load, verify,
                                         * verified_insns), wherever it happened: at start or
                                         * in the first kprobe arm */
        uint64_t index_rebuilds;        /* the index of injections read again from the pins (at
                                         * adoption, and after another engine changed them) */
        uint64_t linger_reuses;         /* arms that found their site lingering: no attach */
        uint64_t lingers_ended;         /* lingering sites detached (their linger over, or ended early) */
        unsigned n_lingering;           /* emptied sites still attached now, lingering */
        unsigned n_owned;               /* programs this engine holds, attached or cached */
        unsigned n_cached;              /* ... of which detached, kept for reuse */
} EngineSiteStats;

/* Injections per site: the slots of a site created from now on (one
 * already pinned or cached keeps its own). Each slot costs the kernel
 * sizeof(struct inject_slot) (264 bytes) in the slots array and one
 * preallocated entry in the scopes hash (its 40 bytes of key and value
 * plus the kernel's element header), per site, when the site is created;
 * and every arm and cancel reads its site's slots in one batch. */
#define ENGINE_MAX_SLOTS_LIMIT 16384
int engine_set_max_per_function(Engine *e, uint32_t n);       /* 1 to ENGINE_MAX_SLOTS_LIMIT, else -ERANGE */
uint32_t engine_max_per_function(Engine *e);

#define ENGINE_SITE_CACHE_GRACE_DEFAULT_USEC (UINT64_C(10) * 60 * 1000000)
#define ENGINE_SITE_CACHE_MAX_DEFAULT 32
/* The daemon's default linger (engine_set_site_linger()); an engine
 * starts with none. */
#define ENGINE_SITE_LINGER_DEFAULT_USEC (UINT64_C(5) * 1000000)
#define ENGINE_SITE_LINGER_MAX_USEC (UINT64_C(10) * 60 * 1000000)

/* pin_root NULL: ENGINE_PIN_ROOT. Nothing is created until the first arm. */
int engine_new(const char *pin_root, Engine **ret);
Engine *engine_free(Engine *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(Engine *, engine_free);

int engine_caps(Engine *e, const EngineCaps **ret);
/* The probe behind engine_caps(), run on first use; NULL only without memory. */
const KernelProbe *engine_probe(Engine *e);
int engine_functions(Engine *e, const FunctionTable **ret);

/* Bit (1 << BACKEND_x) for each backend that can serve f on this kernel. */
unsigned engine_function_backends(Engine *e, const InjectableFunction *f);

/* What engine_arm() would refuse about the function, value, backend and
 * argument filters, without loading anything: the daemon asks before
 * policy and polkit. */
int engine_check(Engine *e, const InjectSpec *spec, InjectError *err);
int engine_arm(Engine *e, const InjectSpec *spec, InjectionInfo *ret, InjectError *err);

/* engine_arm() in steps, for a caller that must not be held while a process
 * scope's tree is tagged (the daemon's event loop: issue 29). Begin does
 * all of engine_arm() but the walk of the tree, and leaves the injection
 * unreachable (no scope entry) with its slot taken and its root live, so
 * that from then on every fork below a tagged task is tagged too. Each
 * step tags at most budget processes of the tree: 1 while more remain, 0
 * when done (at once for other scopes), < 0 on failure (err set). Finish
 * makes it reachable; it is armed only then. Freeing an arm not finished
 * (a failure, a requester gone, a daemon stopping) undoes it: its slot
 * emptied, its root dropped unless another injection has it, its site
 * retired if empty; nothing of it was ever reachable. The engine's lock is
 * taken inside each call, not between them; other requests may run
 * between steps, arms and disarms too. */
typedef struct EngineArm EngineArm;
int engine_arm_begin(Engine *e, const InjectSpec *spec, EngineArm **ret, InjectError *err);
int engine_arm_step(EngineArm *a, size_t budget, InjectError *err);
int engine_arm_finish(EngineArm *a, InjectionInfo *ret, InjectError *err);
bool engine_arm_walking(const EngineArm *a);   /* steps remain */
EngineArm *engine_arm_free(EngineArm *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(EngineArm *, engine_arm_free);
int engine_disarm(Engine *e, uint64_t id, InjectionInfo *ret_final, InjectError *err);
int engine_get(Engine *e, uint64_t id, InjectionInfo *ret);
/* engine_get() of each of ids[0..n): ret_r[i] is its result (0, -ENOENT,
 * ...) and ret[i] its document when 0. Each site that holds some of them
 * is opened and its slots read once, whatever their number: a list of n
 * injections costs O(sites), not O(n) site openings. Returns 0, or a
 * negative errno when nothing could be read. */
int engine_get_many(Engine *e, const uint64_t *ids, size_t n, InjectionInfo *ret, int *ret_r);
int engine_list(Engine *e, InjectionInfo **ret, size_t *ret_n);

/* Loads now what every process-scope arm needs (bpf/tags.bpf.c, kept
 * loaded and attached until engine_free()) and the kprobe program every
 * kprobe site shares (kept loaded until engine_free()), so that no request
 * pays for their verification; without it, the first request that needs
 * one loads it. A long-lived caller (the daemon) calls it once at start.
 * Loads nothing where no backend can inject. */
int engine_preload(Engine *e);

/* Re-opens what is pinned, removes expired, exhausted and orphaned
 * injections and half-built sites, and reports each one. */
int engine_adopt(Engine *e, AdoptResult **ret, size_t *ret_n);

/* What a site's last injection leaves behind is kept for reuse in two
 * stages, both this engine's memory (site-cache.c):
 *
 * The linger, either backend: the emptied site stays attached and pinned
 * for linger_usec, so a request on the same function and backend in that
 * time only writes map entries, as on a site another injection holds.
 * While it lingers, every call of the function runs the program up to its
 * first check (nothing armed: return), which fails nothing. Then it is
 * detached. 0 (an engine's default) detaches at once, and setting 0 ends
 * every linger now.
 *
 * The cache, fmod_ret only: once detached, its program stays loaded,
 * with emptied maps, for grace_usec; a request on the same function in
 * that time re-attaches it instead of loading and verifying it again. At
 * most max_sites are kept, the least recently used freed first. Either one
 * 0 turns the cache off. Only sites this engine loaded can be cached. A
 * kprobe site needs no cache: every one runs the same program. */
void engine_set_site_linger(Engine *e, uint64_t linger_usec);
void engine_set_site_cache(Engine *e, uint64_t grace_usec, unsigned max_sites);
/* Detaches the lingering sites whose linger is over and frees the cached
 * programs whose grace period is over. Returns when the next one's ends
 * (CLOCK_BOOTTIME ns), or UINT64_MAX when nothing lingers or is cached. */
uint64_t engine_site_cache_expire(Engine *e);
/* Detaches every lingering site and frees every cached program now. */
void engine_site_cache_flush(Engine *e);
void engine_site_stats(Engine *e, EngineSiteStats *ret);

/* The shared ring buffer of struct inject_event, created if needed. */
int engine_events_fd(Engine *e);

/* A process's pid namespaces as the kernel holds them, read with a BPF task
 * iterator (bpf/task-ns.bpf.c): /proc/PID/ns/pid would say the same only
 * to whoever may ptrace the process. */
#define ENGINE_PIDNS_LEVELS 33          /* the initial namespace and 32 nested ones */
typedef struct EngineTaskPidns {
        pid_t tgid;
        uint64_t start_ticks;           /* its leader's start, as /proc/PID/stat field 22 */
        unsigned level;                 /* of its own pid namespace (0: the initial one) */
        uint32_t inum[ENGINE_PIDNS_LEVELS];     /* 0..level: its namespace at each level, by inode */
        pid_t nr[ENGINE_PIDNS_LEVELS];          /* 0..level: its pid in each (NSpid) */
} EngineTaskPidns;

/* The pid namespaces of the thread group pid (a pid in the engine's pid
 * namespace, the initial one). Loads the program on first use; once it
 * failed to load, or the kernel showed it another task than the one asked
 * (-EOPNOTSUPP: before 6.1, task iterators take no task), returns that
 * error at once from then on. -ESRCH: no such thread group (a thread's id
 * is not one). Each call runs the iterator over this one task: a few
 * system calls, no walk of every task on the machine. */
int engine_task_pidns(Engine *e, pid_t pid, EngineTaskPidns *ret);

/* Resolves a kernel address back to a symbol name, for display. */
const char *engine_symbol_name(Engine *e, uint64_t addr);

/* "name+0xoff" (with " [module]" for a module). -ENOENT when no symbol
 * covers addr; another negative errno when there are no symbols at all
 * (/proc/kallsyms unreadable, or its addresses hidden: -EPERM). Never the
 * raw address. Truncates to size. */
int engine_symbolize(Engine *e, uint64_t addr, char *buf, size_t size);
/* Reads /proc/kallsyms again, for what was loaded since (a module, a BPF
 * program), at most once per ENGINE_KALLSYMS_REFRESH_USEC. 1: read again,
 * 0: too soon, < 0: failed (the symbols read before stay). */
int engine_refresh_symbols(Engine *e);
#define ENGINE_KALLSYMS_REFRESH_USEC (10 * UINT64_C(1000000))
