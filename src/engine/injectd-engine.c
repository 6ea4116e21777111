/* SPDX-License-Identifier: MIT */
/* injectd-engine: drives the engine directly from the command line, as root,
 * with no daemon, policy or bus. The VM tests use it to prove the engine
 * against a real kernel, and the benchmarks use it as the floor that the
 * daemon's request path is compared with. */

#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <json-c/json.h>

#include "time-util.h"
#include "cleanup.h"
#include "duration.h"
#include "engine.h"
#include "errno-name.h"
#include "json-build.h"
#include "json-util.h"
#include "parse-util.h"
#include "scope.h"

static bool arg_json;

static _noreturn_ void usage_error(const char *fmt, ...) {
        va_list ap;

        fputs("injectd-engine: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs("\nTry 'injectd-engine --help'.\n", stderr);
        exit(2);
}

static void help(void) {
        printf("Usage: injectd-engine COMMAND [OPTIONS]\n"
               "Arm, inspect and disarm injections directly (root; no daemon, no policy).\n\n"
               "Commands:\n"
               "  arm FUNCTION (--error NAME|NUM | --retval N) (--cgroup PATH | --pid PID | --global)\n"
               "      [--for DUR] [--backend auto|kprobe|fmod_ret] [--comm NAME] [--caller FUNC]...\n"
               "      [--after N] [--every N] [--times N] [--probability P%%] [--uid UID] [--hold]\n"
               "  disarm ID... | --all\n"
               "  list                 armed injections with their counters\n"
               "  show ID\n"
               "  adopt                re-open pinned injections, drop expired/exhausted/orphaned ones\n"
               "  functions [GLOB]     injectable functions, their type and usable backends\n"
               "  caps                 what this kernel offers\n"
               "  events [--count N] [--timeout DUR]   stream injected faults as JSON lines\n\n"
               "Options:\n"
               "  --json               machine-readable output\n"
               "  --uid UID            (arm) fail only tasks whose uid, euid, suid and fsuid are UID\n"
               "  --hold               (arm) stay until SIGINT/SIGTERM or the deadline, then disarm;\n"
               "                       prints 'armed ID' once the fault is live\n"
               "  -h --help            this text\n\n"
               "Exit status: 0 success, 1 refused or failed, 2 usage error.\n");
}

/* "25%", "25", "0.5%" → parts per million. */
static int parse_probability(const char *s, uint32_t *ret) {
        char *end;
        double p;

        errno = 0;
        p = strtod(s, &end);
        if (errno || end == s || (*end && strcmp(end, "%") != 0) || !(p > 0) || p > 100)
                return -EINVAL;
        *ret = (uint32_t) (p * (INJECT_PPM / 100) + 0.5) ?: 1;
        return 0;
}

static json_object *scope_to_json(const InjectionInfo *i) {
        json_object *o;

        switch (i->slot.scope_kind) {
        case INJECT_SCOPE_CGROUP:
                if (json_build_object(&o,
                                      JSON_PAIR_STRING("kind", "cgroup"),
                                      JSON_PAIR_U64("cgroup_id", i->slot.scope_id),
                                      JSON_PAIR_I64("level", i->slot.cgroup_level),
                                      JSON_BUILD_END) < 0)
                        return NULL;
                return o;
        case INJECT_SCOPE_PROCESS:
                if (json_build_object(&o,
                                      JSON_PAIR_STRING("kind", "process"),
                                      JSON_PAIR_I64("pid", (int64_t) i->slot.scope_id),
                                      JSON_BUILD_END) < 0)
                        return NULL;
                return o;
        case INJECT_SCOPE_DEVICE:
                if (json_build_object(&o,
                                      JSON_PAIR_STRING("kind", "device"),
                                      JSON_PAIR_U64("diskseq", i->slot.scope_id),
                                      JSON_BUILD_END) < 0)
                        return NULL;
                return o;
        default:
                if (json_build_object(&o, JSON_PAIR_STRING("kind", "global"), JSON_BUILD_END) < 0)
                        return NULL;
                return o;
        }
}

static json_object *callers_to_json(Engine *e, const InjectionInfo *i) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (uint32_t c = 0; c < i->slot.n_callers && c < INJECT_MAX_CALLERS; c++) {
                const char *n = engine_symbol_name(e, i->slot.callers[c].start);
                char buf[32];

                if (!n) {
                        snprintf(buf, sizeof(buf), "0x%" PRIx64, (uint64_t) i->slot.callers[c].start);
                        n = buf;
                }
                if (json_append_string(a, n) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

/* A new object, or NULL when out of memory. */
static json_object *info_to_json(Engine *e, const InjectionInfo *i) {
        json_object *o;
        char id[17];
        uint64_t now = now_nsec(CLOCK_BOOTTIME);
        const char *ename = i->slot.retval < 0 ? errno_to_name((int) -i->slot.retval) : NULL;

        snprintf(id, sizeof(id), "%016" PRIx64, i->id);
        if (json_build_object(&o,
                              JSON_PAIR_STRING("id", id),
                              JSON_PAIR_STRING("function", i->function),
                              JSON_PAIR_STRING("backend", backend_to_string(i->backend)),
                              JSON_PAIR_STRING("state", injection_state_to_string(i->state)),
                              JSON_PAIR_I64("retval", i->slot.retval),
                              JSON_PAIR_IF(ename, JSON_PAIR_STRING("error", ename)),
                              JSON_PAIR_OBJECT("scope", scope_to_json(i)),
                              JSON_PAIR_IF(i->slot.comm[0], JSON_PAIR_STRING("comm", i->slot.comm)),
                              JSON_PAIR_OBJECT("callers", callers_to_json(e, i)),
                              JSON_PAIR_IF(i->slot.owner_uid != INJECT_UID_ANY,
                                           JSON_PAIR_I64("uid", i->slot.owner_uid)),
                              JSON_PAIR_U64("after", i->slot.after),
                              JSON_PAIR_U64("every", i->slot.every),
                              JSON_PAIR_U64("times", i->slot.times),
                              JSON_PAIR_DOUBLE("probability", i->slot.probability_ppm / 10000.0),
                              JSON_PAIR_U64("created_ns", i->slot.created_ns),
                              JSON_PAIR_U64("deadline_ns", i->slot.deadline_ns),
                              JSON_PAIR_U64("remaining_ms",
                                            i->slot.deadline_ns > now ? (i->slot.deadline_ns - now) / 1000000 : 0),
                              JSON_PAIR_U64("seen", i->slot.seen),
                              JSON_PAIR_U64("matched", i->slot.matched),
                              JSON_PAIR_U64("injected", i->slot.injected),
                              JSON_PAIR_U64("guarded", i->slot.guarded),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

/* Says that the JSON output could not be built; returns the exit status. */
static int exit_oom(void) {
        fprintf(stderr, "injectd-engine: Cannot build the JSON output: %s\n", strerror(ENOMEM));
        return 1;
}

/* Prints and releases o; o == NULL is the out-of-memory of whatever built
 * it. Returns 0, or -ENOMEM (said on stderr). */
static int print_json(json_object *o) {
        _cleanup_json_ json_object *p = o;
        const char *s = p ? json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN) : NULL;

        if (!s) {
                (void) exit_oom();
                return -ENOMEM;
        }
        puts(s);
        return 0;
}

static void print_info_text(const InjectionInfo *i) {
        uint64_t now = now_nsec(CLOCK_BOOTTIME);
        const char *kind = i->slot.scope_kind == INJECT_SCOPE_CGROUP ? "cgroup" :
                           i->slot.scope_kind == INJECT_SCOPE_PROCESS ? "process" :
                           i->slot.scope_kind == INJECT_SCOPE_DEVICE ? "diskseq" : "global";

        printf("%016" PRIx64 "  %-24s %-8s %-9s retval=%-6" PRId64 " %s:%" PRIu64 "  left=%s"
               "  seen=%" PRIu64 " matched=%" PRIu64 " injected=%" PRIu64 " guarded=%" PRIu64 "\n",
               i->id, i->function, backend_to_string(i->backend), injection_state_to_string(i->state),
               (int64_t) i->slot.retval, kind, (uint64_t) i->slot.scope_id,
               FORMAT_DURATION(i->slot.deadline_ns > now ? (i->slot.deadline_ns - now) / 1000 : 0),
               (uint64_t) i->slot.seen, (uint64_t) i->slot.matched, (uint64_t) i->slot.injected,
               (uint64_t) i->slot.guarded);
}

static int print_info(Engine *e, const InjectionInfo *i) {
        if (arg_json)
                return print_json(info_to_json(e, i));
        print_info_text(i);
        return 0;
}

static int refused(const InjectError *err, int r) {
        fprintf(stderr, "injectd-engine: %s%s%s\n", err->name ? err->name : "", err->name ? ": " : "",
                err->name ? err->message : strerror(-r));
        return 1;
}

/* Waits for SIGINT/SIGTERM or the deadline, then disarms. */
static int hold(Engine *e, const InjectionInfo *info) {
        _cleanup_close_ int sfd = -1;
        InjectError err = {};
        InjectionInfo final;
        sigset_t mask;
        uint64_t now;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC);
        if (sfd < 0)
                return negative_errno();
        now = now_nsec(CLOCK_BOOTTIME);
        if (info->slot.deadline_ns > now) {
                struct pollfd p = { .fd = sfd, .events = POLLIN };
                uint64_t ms = (info->slot.deadline_ns - now) / 1000000 + 1;

                (void) poll(&p, 1, ms > INT32_MAX ? INT32_MAX : (int) ms);
        }
        r = engine_disarm(e, info->id, &final, &err);
        if (r < 0)
                return refused(&err, r);
        return print_info(e, &final) < 0 ? 1 : 0;
}

static int cmd_arm(Engine *e, int argc, char **argv) {
        static const struct option opts[] = {
                { "error", required_argument, NULL, 'e' },
                { "retval", required_argument, NULL, 'r' },
                { "for", required_argument, NULL, 'f' },
                { "backend", required_argument, NULL, 'b' },
                { "cgroup", required_argument, NULL, 'c' },
                { "pid", required_argument, NULL, 'p' },
                { "global", no_argument, NULL, 'g' },
                { "comm", required_argument, NULL, 'C' },
                { "caller", required_argument, NULL, 'K' },
                { "after", required_argument, NULL, 'A' },
                { "every", required_argument, NULL, 'E' },
                { "times", required_argument, NULL, 'T' },
                { "probability", required_argument, NULL, 'P' },
                { "hold", no_argument, NULL, 'H' },
                { "uid", required_argument, NULL, 'U' },
                { "json", no_argument, NULL, 'j' },
                {}
        };
        const char *callers[INJECT_MAX_CALLERS + 1];
        InjectSpec spec = { .duration_usec = 60 * USEC_PER_SEC, .owner_uid = INJECT_UID_ANY };
        bool have_value = false, do_hold = false;
        InjectError err = {};
        InjectionInfo info;
        int c, r, n_scopes = 0;
        uint64_t u;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
                switch (c) {
                case 'e': {
                        int en;

                        if (have_value)
                                usage_error("--error and --retval are exclusive");
                        if (errno_from_name(optarg, &en) < 0)
                                usage_error("Unknown errno '%s'", optarg);
                        spec.retval = -en;
                        have_value = true;
                        break;
                }
                case 'r': {
                        char *end;
                        long long v;

                        if (have_value)
                                usage_error("--error and --retval are exclusive");
                        errno = 0;
                        v = strtoll(optarg, &end, 0);
                        if (errno || *end || !*optarg)
                                usage_error("Invalid --retval '%s'", optarg);
                        spec.retval = v;
                        have_value = true;
                        break;
                }
                case 'f':
                        if (parse_duration(optarg, &spec.duration_usec) < 0)
                                usage_error("Invalid duration '%s' (e.g. 30s, 5min, 1h30m)", optarg);
                        break;
                case 'b':
                        r = backend_from_string(optarg);
                        if (r < 0)
                                usage_error("Unknown backend '%s' (auto, kprobe, fmod_ret)", optarg);
                        spec.backend = r;
                        break;
                case 'c':
                        spec.scope = INJECT_SCOPE_CGROUP;
                        n_scopes++;
                        r = scope_cgroup_from_path(optarg, &spec.cgroup_id, &spec.cgroup_level);
                        if (r < 0) {
                                fprintf(stderr, "injectd-engine: '%s' is not a cgroup2 directory: %s\n", optarg,
                                        r == -EMEDIUMTYPE ? "not on cgroup2" : strerror(-r));
                                return 1;
                        }
                        break;
                case 'p':
                        if (parse_u64(optarg, &u) < 0 || u == 0 || u > INT32_MAX)
                                usage_error("Invalid pid '%s'", optarg);
                        spec.scope = INJECT_SCOPE_PROCESS;
                        spec.pid = (pid_t) u;
                        n_scopes++;
                        break;
                case 'g':
                        spec.scope = INJECT_SCOPE_GLOBAL;
                        n_scopes++;
                        break;
                case 'C':
                        spec.comm = optarg;
                        break;
                case 'K':
                        if (spec.n_callers >= INJECT_MAX_CALLERS)
                                usage_error("At most %d --caller options", INJECT_MAX_CALLERS);
                        callers[spec.n_callers++] = optarg;
                        break;
                case 'A':
                        if (parse_u64(optarg, &spec.after) < 0)
                                usage_error("Invalid --after '%s'", optarg);
                        break;
                case 'E':
                        if (parse_u64(optarg, &spec.every) < 0 || spec.every == 0)
                                usage_error("Invalid --every '%s' (a number >= 1)", optarg);
                        break;
                case 'T':
                        if (parse_u64(optarg, &spec.times) < 0 || spec.times == 0)
                                usage_error("Invalid --times '%s' (a number >= 1)", optarg);
                        break;
                case 'P':
                        if (parse_probability(optarg, &spec.probability_ppm) < 0)
                                usage_error("Invalid --probability '%s' (more than 0%% and at most 100%%)", optarg);
                        break;
                case 'H':
                        do_hold = true;
                        break;
                case 'U':
                        if (parse_u64(optarg, &u) < 0 || u >= INJECT_UID_ANY)
                                usage_error("Invalid --uid '%s'", optarg);
                        spec.owner_uid = (uint32_t) u;
                        break;
                case 'j':
                        arg_json = true;
                        break;
                default:
                        usage_error("Unknown option for 'arm'");
                }
        }
        if (optind + 1 != argc)
                usage_error("'arm' takes exactly one FUNCTION");
        if (!have_value)
                usage_error("'arm' needs --error or --retval");
        if (n_scopes != 1)
                usage_error("'arm' needs exactly one of --cgroup, --pid, --global");
        spec.function = argv[optind];
        spec.callers = callers;

        if (do_hold) {
                /* Block them now, so a signal sent right after "armed" is not lost. */
                sigset_t mask;

                sigemptyset(&mask);
                sigaddset(&mask, SIGINT);
                sigaddset(&mask, SIGTERM);
                sigprocmask(SIG_BLOCK, &mask, NULL);
        }

        r = engine_arm(e, &spec, &info, &err);
        if (r < 0)
                return refused(&err, r);
        if (do_hold) {
                printf("armed %016" PRIx64 "\n", info.id);
                fflush(stdout);
                return hold(e, &info);
        }
        if (arg_json)
                return print_json(info_to_json(e, &info)) < 0 ? 1 : 0;
        else
                printf("%016" PRIx64 "\n", info.id);
        return 0;
}

/* Returns the exit status, so that one failure among several IDs shows. */
static int disarm_one(Engine *e, uint64_t id) {
        InjectError err = {};
        InjectionInfo final;
        int r;

        r = engine_disarm(e, id, &final, &err);
        if (r < 0)
                return refused(&err, r);
        return print_info(e, &final) < 0 ? 1 : 0;
}

static int cmd_disarm(Engine *e, int argc, char **argv, bool all) {
        int ret = 0, r;

        if (all) {
                _cleanup_free_ InjectionInfo *v = NULL;
                size_t n;

                if (argc > 0)
                        usage_error("'disarm --all' takes no IDs");
                r = engine_list(e, &v, &n);
                if (r < 0) {
                        fprintf(stderr, "injectd-engine: Cannot list injections: %s\n", strerror(-r));
                        return 1;
                }
                for (size_t i = 0; i < n; i++)
                        ret |= disarm_one(e, v[i].id);
                return ret;
        }
        if (argc == 0)
                usage_error("'disarm' needs an ID or --all");
        for (int i = 0; i < argc; i++) {
                uint64_t id;

                if (parse_injection_id(argv[i], &id) < 0)
                        usage_error("Invalid injection ID '%s'", argv[i]);
                ret |= disarm_one(e, id);
        }
        return ret;
}

static int cmd_list(Engine *e) {
        _cleanup_free_ InjectionInfo *v = NULL;
        size_t n;
        int r;

        r = engine_list(e, &v, &n);
        if (r < 0) {
                fprintf(stderr, "injectd-engine: Cannot list injections: %s\n", strerror(-r));
                return 1;
        }
        if (arg_json) {
                _cleanup_json_ json_object *a = json_object_new_array();

                if (!a)
                        return exit_oom();
                for (size_t i = 0; i < n; i++)
                        if (json_append(a, info_to_json(e, &v[i])) < 0)
                                return exit_oom();
                return print_json(TAKE_PTR(a)) < 0 ? 1 : 0;
        } else
                for (size_t i = 0; i < n; i++)
                        print_info_text(&v[i]);
        return 0;
}

static int cmd_show(Engine *e, int argc, char **argv) {
        InjectionInfo info;
        uint64_t id;
        int r;

        if (argc != 1 || parse_injection_id(argv[0], &id) < 0)
                usage_error("'show' takes one injection ID");
        r = engine_get(e, id, &info);
        if (r < 0) {
                fprintf(stderr, "injectd-engine: %s: %s\n", argv[0],
                        r == -ENOENT ? "no such injection" : strerror(-r));
                return 1;
        }
        return print_info(e, &info) < 0 ? 1 : 0;
}

static int cmd_adopt(Engine *e) {
        _cleanup_free_ AdoptResult *v = NULL;
        _cleanup_json_ json_object *a = NULL;
        size_t n;
        int r;

        r = engine_adopt(e, &v, &n);
        if (r < 0) {
                fprintf(stderr, "injectd-engine: Cannot adopt pinned injections: %s\n", strerror(-r));
                return 1;
        }
        if (arg_json) {
                a = json_object_new_array();
                if (!a)
                        return exit_oom();
        }
        for (size_t i = 0; i < n; i++) {
                if (a) {
                        _cleanup_json_ json_object *o = info_to_json(e, &v[i].info);

                        if (!o || json_add_string(o, "action", adopt_action_to_string(v[i].action)) < 0 ||
                            json_append(a, TAKE_PTR(o)) < 0)
                                return exit_oom();
                } else
                        printf("%-9s %016" PRIx64 " %s\n", adopt_action_to_string(v[i].action), v[i].info.id,
                               v[i].info.function);
        }
        if (a)
                return print_json(TAKE_PTR(a)) < 0 ? 1 : 0;
        return 0;
}

static json_object *backends_json(unsigned m) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (int b = BACKEND_KPROBE; b < _BACKEND_MAX; b++)
                if ((m & (1u << b)) && json_append_string(a, backend_to_string(b)) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static int cmd_functions(Engine *e, int argc, char **argv) {
        const FunctionTable *t;
        _cleanup_json_ json_object *a = NULL;
        int r;

        if (argc > 1)
                usage_error("'functions' takes at most one GLOB");
        r = engine_functions(e, &t);
        if (r < 0) {
                fprintf(stderr, "injectd-engine: Cannot list functions: %s\n", strerror(-r));
                return 1;
        }
        if (arg_json) {
                a = json_object_new_array();
                if (!a)
                        return exit_oom();
        }
        for (size_t i = 0; i < t->n; i++) {
                const InjectableFunction *f = &t->funcs[i];
                unsigned m;

                if (argc == 1 && fnmatch(argv[0], f->name, 0) != 0)
                        continue;
                m = engine_function_backends(e, f);
                if (a) {
                        json_object *o;

                        r = json_build_object(&o,
                                              JSON_PAIR_STRING("name", f->name),
                                              JSON_PAIR_IF(f->module, JSON_PAIR_STRING("module", f->module)),
                                              JSON_PAIR_STRING("type", func_type_to_string(f->type)),
                                              JSON_PAIR_OBJECT("backends", backends_json(m)),
                                              JSON_BUILD_END);
                        if (r < 0 || json_append(a, o) < 0)
                                return exit_oom();
                } else
                        printf("%-40s %-10s %-8s%s%s\n", f->name, func_type_to_string(f->type),
                               m & (1u << BACKEND_KPROBE) ? "kprobe" : "-",
                               m & (1u << BACKEND_FMOD_RET) ? " fmod_ret" : " -",
                               f->module ? f->module : "");
        }
        if (a)
                return print_json(TAKE_PTR(a)) < 0 ? 1 : 0;
        return 0;
}

static json_object *cap_json(int r) {
        json_object *o;

        if (json_build_object(&o,
                              JSON_PAIR_BOOL("available", r == 0),
                              JSON_PAIR_IF(r < 0, JSON_PAIR_STRING("errno", errno_to_name(-r) ?: "?")),
                              JSON_PAIR_IF(r < 0, JSON_PAIR_STRING("reason", strerror(-r))),
                              JSON_BUILD_END) < 0)
                return NULL;
        return o;
}

static int cmd_caps(Engine *e) {
        static const char *const names[] = { "bpf", "tracing", "override", "fmod_ret", "btf", "list" };
        const EngineCaps *c;
        int v[6];

        (void) engine_caps(e, &c);
        v[0] = c->bpf, v[1] = c->tracing, v[2] = c->override, v[3] = c->fmod_ret, v[4] = c->btf, v[5] = c->list;
        if (arg_json) {
                _cleanup_json_ json_object *o = json_object_new_object();

                if (!o)
                        return exit_oom();
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        if (json_add(o, names[i], cap_json(v[i])) < 0)
                                return exit_oom();
                return print_json(TAKE_PTR(o)) < 0 ? 1 : 0;
        } else
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        printf("%-10s %s%s%s\n", names[i], v[i] == 0 ? "yes" : "no", v[i] < 0 ? ": " : "",
                               v[i] < 0 ? strerror(-v[i]) : "");
        return 0;
}

static int event_cb(void *ctx, void *data, size_t size) {
        const struct inject_event *ev = data;
        uint64_t *left = ctx;
        json_object *o;
        char id[17], comm[INJECT_COMM_LEN + 1] = {}, fn[INJECT_FUNC_LEN + 1] = {};
        int r;

        if (size < INJECT_EVENT_MIN_SIZE)     /* an older program's record has no uid: not read here */
                return 0;
        memcpy(comm, ev->comm, INJECT_COMM_LEN);
        memcpy(fn, ev->function, INJECT_FUNC_LEN);
        snprintf(id, sizeof(id), "%016" PRIx64, (uint64_t) ev->inj_id);
        r = json_build_object(&o,
                              JSON_PAIR_U64("time_ns", ev->time_ns),
                              JSON_PAIR_STRING("id", id),
                              JSON_PAIR_STRING("function", fn),
                              JSON_PAIR_I64("pid", ev->pid),
                              JSON_PAIR_I64("tgid", ev->tgid),
                              JSON_PAIR_STRING("comm", comm),
                              JSON_PAIR_I64("retval", ev->retval),
                              JSON_BUILD_END);
        r = print_json(r < 0 ? NULL : o);
        if (r < 0)
                return r;       /* stop polling, with the error */
        fflush(stdout);
        if (*left && --*left == 0)
                return 1;       /* stop polling */
        return 0;
}

static int cmd_events(Engine *e, int argc, char **argv) {
        static const struct option opts[] = {
                { "count", required_argument, NULL, 'n' },
                { "timeout", required_argument, NULL, 't' },
                {}
        };
        struct ring_buffer *rb;
        uint64_t count = 0, timeout_usec = 0, deadline;
        int c, fd, r = 0;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
                switch (c) {
                case 'n':
                        if (parse_u64(optarg, &count) < 0)
                                usage_error("Invalid --count '%s'", optarg);
                        break;
                case 't':
                        if (parse_duration(optarg, &timeout_usec) < 0)
                                usage_error("Invalid --timeout '%s'", optarg);
                        break;
                default:
                        usage_error("Unknown option for 'events'");
                }
        fd = engine_events_fd(e);
        if (fd < 0) {
                fprintf(stderr, "injectd-engine: Cannot open the event ring buffer: %s\n", strerror(-fd));
                return 1;
        }
        rb = ring_buffer__new(fd, event_cb, &count, NULL);
        if (!rb) {
                fprintf(stderr, "injectd-engine: Cannot read the event ring buffer: %m\n");
                return 1;
        }
        printf("{\"listening\":true}\n");
        fflush(stdout);
        deadline = timeout_usec ? now_nsec(CLOCK_BOOTTIME) + timeout_usec * 1000 : 0;
        for (;;) {
                r = ring_buffer__poll(rb, 100);
                if (r == 1 || (r < 0 && r != -EINTR))
                        break;
                if (deadline && now_nsec(CLOCK_BOOTTIME) >= deadline)
                        break;
        }
        ring_buffer__free(rb);
        return r < 0 && r != -EINTR ? 1 : 0;
}

int main(int argc, char **argv) {
        _cleanup_(engine_freep) Engine *e = NULL;
        const char *cmd;
        bool all = false;
        int r;

        /* Global options may come anywhere; peel off --json/--all/--help. */
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--all") == 0) {
                        if (argv[i][2] == 'j')
                                arg_json = true;
                        else
                                all = true;
                        memmove(&argv[i], &argv[i + 1], (argc - i) * sizeof(char *));
                        argc--, i--;
                } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        help();
                        return 0;
                } else if (strcmp(argv[i], "--") == 0)
                        break;
        }
        if (argc < 2)
                usage_error("Missing command");
        cmd = argv[1];

        r = engine_new(getenv("INJECTD_PIN_ROOT"), &e);
        if (r < 0) {
                fprintf(stderr, "injectd-engine: %s\n", strerror(-r));
                return 1;
        }

        /* Subcommands parse from argv[1], so getopt skips the command name. */
        argc--, argv++;
        optind = 1;
        if (strcmp(cmd, "arm") == 0)
                return cmd_arm(e, argc, argv);
        if (strcmp(cmd, "disarm") == 0)
                return cmd_disarm(e, argc - 1, argv + 1, all);
        if (all && strcmp(cmd, "list") != 0)
                usage_error("--all only goes with 'disarm'");
        if (strcmp(cmd, "list") == 0)
                return argc == 1 ? cmd_list(e) : (usage_error("'list' takes no arguments"), 2);
        if (strcmp(cmd, "show") == 0)
                return cmd_show(e, argc - 1, argv + 1);
        if (strcmp(cmd, "adopt") == 0)
                return argc == 1 ? cmd_adopt(e) : (usage_error("'adopt' takes no arguments"), 2);
        if (strcmp(cmd, "functions") == 0)
                return cmd_functions(e, argc - 1, argv + 1);
        if (strcmp(cmd, "caps") == 0)
                return argc == 1 ? cmd_caps(e) : (usage_error("'caps' takes no arguments"), 2);
        if (strcmp(cmd, "events") == 0)
                return cmd_events(e, argc, argv);
        usage_error("Unknown command '%s'", cmd);
}
