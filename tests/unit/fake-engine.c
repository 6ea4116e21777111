/* SPDX-License-Identifier: MIT */
/* The engine in memory (see fake-engine.h): link this instead of libengine's
 * engine.c and scope-tags.c. The rest of the engine library that the core
 * uses (functions.c, scope.c, inject-error.c) is the real one. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "fake-engine.h"
#include "scope.h"
#include "time-util.h"

#define FAKE_MAX 512

struct Engine {
        FunctionTable *functions;
        EngineCaps caps;
};

typedef struct FakeInjection {
        InjectionInfo info;
        bool forced_state;
} FakeInjection;

typedef struct FakePinned {
        AdoptResult result;
} FakePinned;

static struct {
        FakeInjection armed[FAKE_MAX];
        size_t n_armed;
        FakePinned pinned[16];
        size_t n_pinned;
        uint64_t next_id;
        int fail_next_arm;
        uint64_t recycled_start;        /* 0: none */
        const char *fail_next_name;
        unsigned n_arms, n_disarms;
        FakeArm last_arm;
        unsigned arm_steps;             /* steps the next process-scope arm takes */
        unsigned n_walking, n_undone;

        /* The ring buffer: an eventfd made readable when events are queued. */
        int events_fd;
        struct inject_event queue[640];
        size_t n_queue;
} fake = { .events_fd = -1 };

void fake_engine_reset(void) {
        if (fake.events_fd >= 0)
                close(fake.events_fd);
        memset(&fake, 0, sizeof(fake));
        fake.events_fd = -1;
}

void fake_engine_recycle_next_pid(uint64_t start_ticks) {
        fake.recycled_start = start_ticks;
}

void fake_engine_fail_next_arm(int r, const char *error_name) {
        fake.fail_next_arm = r;
        fake.fail_next_name = error_name;
}

unsigned fake_engine_n_arms(void) {
        return fake.n_arms;
}

unsigned fake_engine_n_disarms(void) {
        return fake.n_disarms;
}

size_t fake_engine_n_armed(void) {
        return fake.n_armed;
}

const FakeArm *fake_engine_last_arm(void) {
        return &fake.last_arm;
}

static FakeInjection *find(uint64_t id) {
        for (size_t i = 0; i < fake.n_armed; i++)
                if (fake.armed[i].info.id == id)
                        return &fake.armed[i];
        return NULL;
}

bool fake_engine_is_armed(uint64_t id) {
        return find(id) != NULL;
}

int fake_engine_set_counters(uint64_t id, uint64_t seen, uint64_t matched, uint64_t injected) {
        FakeInjection *f = find(id);

        if (!f)
                return -ENOENT;
        f->info.slot.seen = seen;
        f->info.slot.matched = matched;
        f->info.slot.injected = injected;
        return 0;
}

int fake_engine_set_state(uint64_t id, InjectionState state) {
        FakeInjection *f = find(id);

        if (!f)
                return -ENOENT;
        f->info.state = state;
        f->forced_state = true;
        return 0;
}

int fake_engine_fire(uint64_t id, pid_t pid, const char *comm) {
        FakeInjection *f = find(id);
        struct inject_event *ev;
        uint64_t one = 1;

        if (!f)
                return -ENOENT;
        if (fake.n_queue >= ELEMENTSOF(fake.queue))
                return -ENOBUFS;
        f->info.slot.seen++;
        f->info.slot.matched++;
        f->info.slot.injected++;
        if (f->info.slot.times && f->info.slot.injected >= f->info.slot.times) {
                f->info.state = INJECTION_EXHAUSTED;
                f->forced_state = true;
        }
        ev = &fake.queue[fake.n_queue++];
        *ev = (struct inject_event) {
                .time_ns = now_nsec(CLOCK_BOOTTIME),
                .inj_id = id,
                .retval = f->info.slot.retval,
                .pid = (uint32_t) pid,
                .tgid = (uint32_t) pid,
        };
        snprintf(ev->comm, sizeof(ev->comm), "%s", comm ?: "");
        snprintf(ev->function, sizeof(ev->function), "%s", f->info.function);
        if (fake.events_fd >= 0 && write(fake.events_fd, &one, sizeof(one)) != sizeof(one))
                return -errno;
        return 0;
}

int fake_engine_add_pinned(uint64_t id, const char *function, int64_t retval, uint64_t duration_usec,
                           AdoptAction action) {
        AdoptResult *a;
        uint64_t now = now_nsec(CLOCK_BOOTTIME);

        if (fake.n_pinned >= ELEMENTSOF(fake.pinned))
                return -ENOBUFS;
        a = &fake.pinned[fake.n_pinned++].result;
        *a = (AdoptResult) { .action = action };
        a->info.id = id;
        snprintf(a->info.function, sizeof(a->info.function), "%s", function);
        a->info.backend = BACKEND_KPROBE;
        a->info.slot.id = id;
        a->info.slot.retval = retval;
        a->info.slot.created_ns = now;
        a->info.slot.deadline_ns = now + duration_usec * 1000;
        a->info.slot.every = 1;
        a->info.slot.probability_ppm = INJECT_PPM;
        return 0;
}

void fake_engine_restart(void) {
        for (size_t i = 0; i < fake.n_armed && fake.n_pinned < ELEMENTSOF(fake.pinned); i++)
                fake.pinned[fake.n_pinned++].result = (AdoptResult) { .info = fake.armed[i].info,
                                                                      .action = ADOPT_KEPT };
        fake.n_armed = 0;
}

/* ---- engine.h ---- */

static const char *const backend_table[_BACKEND_MAX] = {
        [BACKEND_AUTO] = "auto",
        [BACKEND_KPROBE] = "kprobe",
        [BACKEND_FMOD_RET] = "fmod_ret",
};

const char *backend_to_string(Backend b) {
        return b >= 0 && b < _BACKEND_MAX ? backend_table[b] : NULL;
}

int backend_from_string(const char *s) {
        for (int i = 0; i < _BACKEND_MAX; i++)
                if (strcmp(backend_table[i], s) == 0)
                        return i;
        return -EINVAL;
}

static const char *const state_table[_INJECTION_STATE_MAX] = {
        [INJECTION_ACTIVE] = "active",
        [INJECTION_EXPIRED] = "expired",
        [INJECTION_EXHAUSTED] = "exhausted",
};

const char *injection_state_to_string(InjectionState s) {
        return s >= 0 && s < _INJECTION_STATE_MAX ? state_table[s] : NULL;
}

static const char *const adopt_table[_ADOPT_ACTION_MAX] = {
        [ADOPT_KEPT] = "adopted",
        [ADOPT_EXPIRED] = "expired",
        [ADOPT_EXHAUSTED] = "exhausted",
        [ADOPT_ORPHANED] = "orphaned",
};

const char *adopt_action_to_string(AdoptAction a) {
        return a >= 0 && a < _ADOPT_ACTION_MAX ? adopt_table[a] : NULL;
}

int engine_new(const char *pin_root, Engine **ret) {
        Engine *e;
        FILE *f;
        int r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->functions = calloc(1, sizeof(*e->functions));
        if (!e->functions) {
                free(e);
                return -ENOMEM;
        }
        f = fmemopen((void *) FAKE_ENGINE_FUNCTIONS, strlen(FAKE_ENGINE_FUNCTIONS), "r");
        if (!f) {
                engine_free(e);
                return -errno;
        }
        r = function_table_parse_list(e->functions, f);
        fclose(f);
        if (r < 0) {
                engine_free(e);
                return r;
        }
        function_table_sort(e->functions);
        *ret = e;
        return 0;
}

Engine *engine_free(Engine *e) {
        if (!e)
                return NULL;
        function_table_free(e->functions);
        free(e);
        return NULL;
}

int engine_caps(Engine *e, const EngineCaps **ret) {
        *ret = &e->caps;
        return 0;
}

const KernelProbe *engine_probe(Engine *e) {
        return NULL;
}

int engine_functions(Engine *e, const FunctionTable **ret) {
        *ret = e->functions;
        return 0;
}

unsigned engine_function_backends(Engine *e, const InjectableFunction *f) {
        return f->listed ? 1u << BACKEND_KPROBE : 0;
}

int engine_check(Engine *e, const InjectSpec *spec, InjectError *err) {
        const InjectableFunction *f;

        if (!spec->function || !*spec->function || strlen(spec->function) >= INJECT_FUNC_LEN)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_NOT_INJECTABLE,
                                        "A function name of 1 to %d characters is required", INJECT_FUNC_LEN - 1);
        f = function_table_find(e->functions, spec->function);
        if (!f)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_NOT_INJECTABLE,
                                        "'%s' cannot be made to fail (fake engine)", spec->function);
        if (!func_type_accepts(f->type, spec->retval))
                return inject_error_set(err, -ERANGE, INJECT_ERROR_BAD_VALUE, "'%s' is of type %s, not %lld",
                                        f->name, func_type_to_string(f->type), (long long) spec->retval);
        if (spec->backend == BACKEND_FMOD_RET)
                return inject_error_set(err, -EOPNOTSUPP, INJECT_ERROR_BACKEND_UNAVAILABLE,
                                        "The fake engine has only kprobe");
        /* The real table; no slab caches to check a name against. */
        return arg_filters_check(f->name, &spec->arg_filters, "/nonexistent", err);
}

int engine_arm(Engine *e, const InjectSpec *spec, InjectionInfo *ret, InjectError *err) {
        FakeInjection *f;
        uint64_t now, start_ticks = 0;
        int r;

        r = engine_check(e, spec, err);
        if (r < 0)
                return r;
        if (fake.fail_next_arm < 0) {
                r = fake.fail_next_arm;
                fake.fail_next_arm = 0;
                return inject_error_set(err, r, fake.fail_next_name ?: INJECT_ERROR_KERNEL_REFUSED,
                                        "The fake kernel refused: %s", strerror(-r));
        }
        if (spec->duration_usec == 0 || spec->duration_usec > ENGINE_MAX_DURATION_USEC)
                return inject_error_set(err, -ERANGE, INJECT_ERROR_BAD_DURATION,
                                        "The duration must be more than 0 and at most 7 days");
        if (spec->scope != INJECT_SCOPE_CGROUP && spec->scope != INJECT_SCOPE_PROCESS &&
            spec->scope != INJECT_SCOPE_GLOBAL)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_BAD_SCOPE, "An injection needs a scope");
        if (fake.n_armed >= FAKE_MAX)
                return inject_error_set(err, -EUSERS, INJECT_ERROR_TOO_MANY, "The fake engine is full");

        /* As the real engine: the process's start time, read now. */
        if (spec->scope == INJECT_SCOPE_PROCESS) {
                pid_t tgid;

                r = scope_process(spec->pid, &tgid, &start_ticks);
                if (r < 0)
                        return inject_error_set(err, r, INJECT_ERROR_BAD_SCOPE, "No process %d", (int) spec->pid);
                if (fake.recycled_start) {
                        start_ticks = fake.recycled_start;
                        fake.recycled_start = 0;
                }
        }
        now = now_nsec(CLOCK_BOOTTIME);
        f = &fake.armed[fake.n_armed++];
        *f = (FakeInjection) {};
        f->info.id = ++fake.next_id + UINT64_C(0xfa4e000000000000);
        snprintf(f->info.function, sizeof(f->info.function), "%s", spec->function);
        f->info.backend = BACKEND_KPROBE;
        f->info.state = INJECTION_ACTIVE;
        f->info.slot = (struct inject_slot) {
                .id = f->info.id,
                .created_ns = now,
                .deadline_ns = now + spec->duration_usec * 1000,
                .retval = spec->retval,
                .scope_kind = spec->scope,
                .cgroup_level = spec->cgroup_level,
                .scope_id = spec->scope == INJECT_SCOPE_CGROUP ? spec->cgroup_id :
                            spec->scope == INJECT_SCOPE_PROCESS ? (uint64_t) spec->pid : 0,
                .start_ticks = start_ticks,
                .after = spec->after,
                .every = spec->every ?: 1,
                .times = spec->times,
                .probability_ppm = spec->probability_ppm ?: INJECT_PPM,
                .owner_uid = spec->owner_uid,
        };
        if (spec->comm)
                snprintf(f->info.slot.comm, sizeof(f->info.slot.comm), "%s", spec->comm);
        arg_filters_fill(&spec->arg_filters, &f->info.slot);

        fake.last_arm = (FakeArm) {
                .backend = spec->backend,
                .retval = spec->retval,
                .duration_usec = spec->duration_usec,
                .scope = spec->scope,
                .cgroup_id = spec->cgroup_id,
                .pid = spec->pid,
                .owner_uid = spec->owner_uid,
                .times = spec->times,
        };
        snprintf(fake.last_arm.function, sizeof(fake.last_arm.function), "%s", spec->function);
        fake.n_arms++;
        if (ret)
                *ret = f->info;
        return 0;
}

/* Like the BPF program: past the deadline, an injection fails nothing. */
static void snapshot(FakeInjection *f, InjectionInfo *ret) {
        *ret = f->info;
        if (!f->forced_state && f->info.slot.deadline_ns <= now_nsec(CLOCK_BOOTTIME))
                ret->state = INJECTION_EXPIRED;
}

static unsigned n_gets, n_get_manys;

unsigned fake_engine_n_gets(void) {
        return n_gets;
}

unsigned fake_engine_n_get_manys(void) {
        return n_get_manys;
}

int engine_get(Engine *e, uint64_t id, InjectionInfo *ret) {
        FakeInjection *f = find(id);

        n_gets++;
        if (!f)
                return -ENOENT;
        snapshot(f, ret);
        return 0;
}

int engine_get_many(Engine *e, const uint64_t *ids, size_t n, InjectionInfo *ret, int *ret_r) {
        n_get_manys++;
        for (size_t i = 0; i < n; i++) {
                FakeInjection *f = find(ids[i]);

                ret_r[i] = f ? 0 : -ENOENT;
                if (f)
                        snapshot(f, &ret[i]);
        }
        return 0;
}

int engine_disarm(Engine *e, uint64_t id, InjectionInfo *ret_final, InjectError *err) {
        FakeInjection *f = find(id);

        if (!f)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_NO_SUCH_INJECTION, "No injection %016llx",
                                        (unsigned long long) id);
        if (ret_final)
                snapshot(f, ret_final);
        *f = fake.armed[--fake.n_armed];
        fake.n_disarms++;
        return 0;
}

/* engine_arm() in steps: the fake arms at once, and the injection is taken
 * back if the arm is freed unfinished. */
struct EngineArm {
        uint64_t id;
        unsigned steps;
        bool finished;
};

int engine_arm_begin(Engine *e, const InjectSpec *spec, EngineArm **ret, InjectError *err) {
        InjectionInfo info;
        EngineArm *a;
        int r;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        r = engine_arm(e, spec, &info, err);
        if (r < 0) {
                free(a);
                return r;
        }
        fake.n_arms--;          /* counted once finished */
        a->id = info.id;
        if (spec->scope == INJECT_SCOPE_PROCESS) {
                a->steps = fake.arm_steps;
                fake.arm_steps = 0;
        }
        fake.n_walking += a->steps > 0;
        *ret = a;
        return 0;
}

int engine_arm_step(EngineArm *a, size_t budget, InjectError *err) {
        if (a->steps == 0)
                return 0;
        if (--a->steps > 0)
                return 1;
        fake.n_walking--;
        return 0;
}

bool engine_arm_walking(const EngineArm *a) {
        return a && a->steps > 0;
}

int engine_arm_finish(EngineArm *a, InjectionInfo *ret, InjectError *err) {
        FakeInjection *f = find(a->id);

        if (a->steps > 0)
                return -EINPROGRESS;
        if (!f)
                return inject_error_set(err, -ENOENT, INJECT_ERROR_KERNEL_REFUSED, "Gone (fake engine)");
        a->finished = true;
        fake.n_arms++;
        snapshot(f, ret);
        return 0;
}

EngineArm *engine_arm_free(EngineArm *a) {
        FakeInjection *f;

        if (!a)
                return NULL;
        if (!a->finished) {
                f = find(a->id);
                if (f) {
                        *f = fake.armed[--fake.n_armed];
                        fake.n_undone++;
                }
                if (a->steps > 0)
                        fake.n_walking--;
        }
        free(a);
        return NULL;
}

void fake_engine_set_arm_steps(unsigned n) {
        fake.arm_steps = n;
}

unsigned fake_engine_n_walking(void) {
        return fake.n_walking;
}

unsigned fake_engine_n_undone(void) {
        return fake.n_undone;
}

int engine_list(Engine *e, InjectionInfo **ret, size_t *ret_n) {
        InjectionInfo *v = calloc(fake.n_armed ?: 1, sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < fake.n_armed; i++)
                snapshot(&fake.armed[i], &v[i]);
        *ret = v;
        *ret_n = fake.n_armed;
        return 0;
}

/* The pinned injections left by "an earlier daemon": the kept ones become
 * armed in this engine, the others are reported as removed. */
int engine_adopt(Engine *e, AdoptResult **ret, size_t *ret_n) {
        AdoptResult *v = calloc(fake.n_pinned ?: 1, sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < fake.n_pinned; i++) {
                v[i] = fake.pinned[i].result;
                if (v[i].action == ADOPT_KEPT && fake.n_armed < FAKE_MAX)
                        fake.armed[fake.n_armed++] = (FakeInjection) { .info = v[i].info };
        }
        *ret = v;
        *ret_n = fake.n_pinned;
        fake.n_pinned = 0;
        return 0;
}

void engine_set_site_linger(Engine *e, uint64_t linger_usec) {
}

void engine_set_site_cache(Engine *e, uint64_t grace_usec, unsigned max_sites) {
}

uint64_t engine_site_cache_expire(Engine *e) {
        return UINT64_MAX;
}

void engine_site_cache_flush(Engine *e) {
}

int engine_set_max_per_function(Engine *e, uint32_t n) {
        return n == 0 || n > ENGINE_MAX_SLOTS_LIMIT ? -ERANGE : 0;
}

uint32_t engine_max_per_function(Engine *e) {
        return INJECT_MAX_SLOTS;
}

int engine_preload(Engine *e) {
        return 0;
}

void engine_site_stats(Engine *e, EngineSiteStats *ret) {
        *ret = (EngineSiteStats) {};
}

int engine_events_fd(Engine *e) {
        if (fake.events_fd < 0) {
                fake.events_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (fake.events_fd < 0)
                        return -errno;
        }
        return fake.events_fd;
}

const char *engine_symbol_name(Engine *e, uint64_t addr) {
        return NULL;
}

int engine_symbolize(Engine *e, uint64_t addr, char *buf, size_t size) {
        return -ENOENT;
}

int engine_refresh_symbols(Engine *e) {
        return 0;
}

/* No kernel to read namespaces in: as if the program could not load, so
 * the core tells them apart by ancestry, as on such a kernel. */
int engine_task_pidns(Engine *e, pid_t pid, EngineTaskPidns *ret) {
        return -EOPNOTSUPP;
}

/* ---- libbpf's ring buffer, over the fake's event queue ---- */

struct ring_buffer {
        ring_buffer_sample_fn cb;
        void *ctx;
        int fd;
};

struct ring_buffer *ring_buffer__new(int map_fd, ring_buffer_sample_fn sample_cb, void *ctx,
                                     const struct ring_buffer_opts *opts) {
        struct ring_buffer *rb;

        if (map_fd != fake.events_fd || map_fd < 0) {
                errno = EINVAL;
                return NULL;
        }
        rb = calloc(1, sizeof(*rb));
        if (!rb)
                return NULL;
        *rb = (struct ring_buffer) { .cb = sample_cb, .ctx = ctx, .fd = map_fd };
        return rb;
}

void ring_buffer__free(struct ring_buffer *rb) {
        free(rb);
}

int ring_buffer__epoll_fd(const struct ring_buffer *rb) {
        return rb->fd;
}

/* As libbpf's: a negative return of the callback stops the reading after
 * that sample, which is consumed, and is returned; the rest stay, and the
 * fd stays readable, as the ring buffer's epoll fd does while data is
 * there. */
int ring_buffer__consume(struct ring_buffer *rb) {
        uint64_t v, one = 1;
        size_t n, done = 0;
        int r = 0;

        (void) read(rb->fd, &v, sizeof(v));
        /* Only what is queued now: the callback may fire more. */
        n = fake.n_queue;
        while (done < n) {
                struct inject_event ev = fake.queue[done++];

                r = rb->cb(rb->ctx, &ev, sizeof(ev));
                if (r < 0)
                        break;
        }
        memmove(fake.queue, fake.queue + done, (fake.n_queue - done) * sizeof(fake.queue[0]));
        fake.n_queue -= done;
        if (fake.n_queue > 0 && write(rb->fd, &one, sizeof(one)) != sizeof(one))
                return -errno;
        return r < 0 ? r : (int) done;
}
