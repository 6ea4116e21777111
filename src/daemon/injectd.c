/* SPDX-License-Identifier: MIT */
/* injectd: policy-controlled, time-bounded BPF error injection. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <systemd/sd-daemon.h>

#include "bus-manager.h"
#include "config.h"
#include "duration.h"
#include "log.h"
#include "manager.h"
#include "privileges.h"
#include "varlink.h"
#include "varlink-manager.h"

#define MAX_POLICY_DIRS 8

static ManagerOptions arg_options = {
        .polkit_mode = POLKIT_MODE_AUTO,
        .rate_per_minute = MANAGER_RATE_PER_MINUTE_DEFAULT,
        .max_active = MANAGER_MAX_ACTIVE_DEFAULT,
        .reserved_active = MANAGER_RESERVED_ACTIVE_DEFAULT,
        .event_rate = MANAGER_EVENT_RATE_DEFAULT,
        .connections_max = VARLINK_CONNECTIONS_MAX_DEFAULT,
        .connections_per_user = VARLINK_CONNECTIONS_PER_UID_MAX_DEFAULT,
        .connections_reserved = VARLINK_CONNECTIONS_RESERVED_DEFAULT,
        .idle_usec = VARLINK_IDLE_TIMEOUT_USEC_DEFAULT,
        .subscriptions_per_user = MANAGER_SUBSCRIPTIONS_PER_USER_DEFAULT,
        .max_observe = MANAGER_MAX_OBSERVE_DEFAULT,
        .max_observe_per_user = MANAGER_MAX_OBSERVE_PER_USER_DEFAULT,
        .site_linger_usec = ENGINE_SITE_LINGER_DEFAULT_USEC,
        .site_cache_usec = ENGINE_SITE_CACHE_GRACE_DEFAULT_USEC,
        .site_cache_max = ENGINE_SITE_CACHE_MAX_DEFAULT,
        .max_per_function = INJECT_MAX_SLOTS,
};
static const char *arg_policy_dirs[MAX_POLICY_DIRS + 1];
static bool arg_keep_caps;

static void help(void) {
        printf("Usage: injectd [OPTIONS]\n"
               "Policy-controlled, time-bounded BPF error injection daemon.\n\n"
               "  --polkit=auto|required|off  use polkit when it is on the bus (auto), always, or never\n"
               "  --keep-on-exit              leave injections armed when stopped (SIGTERM)\n"
               "  --policy-dir=DIR            read policy from DIR (repeatable; replaces the defaults)\n"
               "  --max-active=N              injections armed for all users together (default %d)\n"
               "  --reserved-active=N         of those, kept for privileged callers (default %d)\n"
               "  --rate=N                    Inject calls per user per minute (default %d, 0: no limit)\n"
               "  --event-rate=N              fault events passed on per injection per second; the rest\n"
               "                              are counted as suppressed (default %d, 0: no limit)\n"
               "  --max-connections=N         Varlink connections of everyone together (default %u)\n"
               "  --max-connections-per-user=N\n"
               "                              Varlink connections of one unprivileged user (default %u)\n"
               "  --reserved-connections=N    of --max-connections, kept for privileged callers (default %u)\n"
               "  --idle-timeout=DURATION     close a Varlink connection idle this long (default %s, 0: never)\n"
               "  --max-subscriptions-per-user=N\n"
               "                              D-Bus Subscribe() calls of one unprivileged user (default %d)\n"
               "  --max-observe=N             Observe sessions of all users together (default %d; the last\n"
               "                              %d kept for privileged callers; each costs about 1.5 MiB)\n"
               "  --max-observe-per-user=N    Observe sessions of one unprivileged user (default %d)\n"
               "  --site-linger=DURATION      keep a function's emptied site attached this long after its\n"
               "                              last injection ends (default %s, at most %s, 0: off)\n"
               "  --site-cache=DURATION       keep a function's verified fmod_ret program loaded, detached, this long\n"
               "                              after its last injection ends (default %s, 0: off)\n"
               "  --site-cache-max=N          keep at most N such programs (default %d, 0: off)\n"
               "  --max-per-function=N        injections on one function and backend (default %d,\n"
               "                              at most %d; each costs the kernel about 320 bytes)\n"
               "  --log-level=LEVEL           debug, info, notice, warning, err\n"
               "  --log-target=auto|journal|stderr\n"
               "  --keep-capabilities         do not drop capabilities (debugging only)\n"
               "  -h --help                   this text\n"
               "  --version                   the version\n",
               MANAGER_MAX_ACTIVE_DEFAULT, MANAGER_RESERVED_ACTIVE_DEFAULT, MANAGER_RATE_PER_MINUTE_DEFAULT,
               MANAGER_EVENT_RATE_DEFAULT, VARLINK_CONNECTIONS_MAX_DEFAULT, VARLINK_CONNECTIONS_PER_UID_MAX_DEFAULT,
               VARLINK_CONNECTIONS_RESERVED_DEFAULT, FORMAT_DURATION(VARLINK_IDLE_TIMEOUT_USEC_DEFAULT),
               MANAGER_SUBSCRIPTIONS_PER_USER_DEFAULT, MANAGER_MAX_OBSERVE_DEFAULT, MANAGER_OBSERVE_RESERVED,
               MANAGER_MAX_OBSERVE_PER_USER_DEFAULT,
               FORMAT_DURATION(ENGINE_SITE_LINGER_DEFAULT_USEC), FORMAT_DURATION(ENGINE_SITE_LINGER_MAX_USEC),
               FORMAT_DURATION(ENGINE_SITE_CACHE_GRACE_DEFAULT_USEC), ENGINE_SITE_CACHE_MAX_DEFAULT,
               INJECT_MAX_SLOTS, ENGINE_MAX_SLOTS_LIMIT);
}

static int parse_level(const char *s) {
        static const char *const names[] = { "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug" };

        for (int i = 0; i < 8; i++)
                if (strcmp(s, names[i]) == 0)
                        return i;
        return -EINVAL;
}

static int parse_count(const char *s, unsigned min, unsigned max, unsigned *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < (long) min || v > (long) max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int parse_argv(int argc, char **argv) {
        enum { ARG_POLKIT = 0x100, ARG_KEEP, ARG_POLICY_DIR, ARG_MAX_ACTIVE, ARG_RATE, ARG_LOG_LEVEL,
               ARG_LOG_TARGET, ARG_KEEP_CAPS, ARG_VERSION, ARG_SITE_LINGER, ARG_SITE_CACHE, ARG_SITE_CACHE_MAX,
               ARG_MAX_PER_FUNCTION,
               ARG_RESERVED_ACTIVE, ARG_EVENT_RATE, ARG_MAX_CONNECTIONS, ARG_MAX_CONNECTIONS_PER_USER,
               ARG_RESERVED_CONNECTIONS, ARG_IDLE_TIMEOUT, ARG_MAX_SUBSCRIPTIONS_PER_USER,
               ARG_MAX_OBSERVE, ARG_MAX_OBSERVE_PER_USER };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "polkit", required_argument, NULL, ARG_POLKIT },
                { "keep-on-exit", no_argument, NULL, ARG_KEEP },
                { "policy-dir", required_argument, NULL, ARG_POLICY_DIR },
                { "max-active", required_argument, NULL, ARG_MAX_ACTIVE },
                { "rate", required_argument, NULL, ARG_RATE },
                { "reserved-active", required_argument, NULL, ARG_RESERVED_ACTIVE },
                { "event-rate", required_argument, NULL, ARG_EVENT_RATE },
                { "max-connections", required_argument, NULL, ARG_MAX_CONNECTIONS },
                { "max-connections-per-user", required_argument, NULL, ARG_MAX_CONNECTIONS_PER_USER },
                { "reserved-connections", required_argument, NULL, ARG_RESERVED_CONNECTIONS },
                { "idle-timeout", required_argument, NULL, ARG_IDLE_TIMEOUT },
                { "max-subscriptions-per-user", required_argument, NULL, ARG_MAX_SUBSCRIPTIONS_PER_USER },
                { "max-observe", required_argument, NULL, ARG_MAX_OBSERVE },
                { "max-observe-per-user", required_argument, NULL, ARG_MAX_OBSERVE_PER_USER },
                { "site-linger", required_argument, NULL, ARG_SITE_LINGER },
                { "site-cache", required_argument, NULL, ARG_SITE_CACHE },
                { "site-cache-max", required_argument, NULL, ARG_SITE_CACHE_MAX },
                { "max-per-function", required_argument, NULL, ARG_MAX_PER_FUNCTION },
                { "log-level", required_argument, NULL, ARG_LOG_LEVEL },
                { "log-target", required_argument, NULL, ARG_LOG_TARGET },
                { "keep-capabilities", no_argument, NULL, ARG_KEEP_CAPS },
                {}
        };
        size_t n_dirs = 0;
        char *end;
        long v;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        puts("injectd " PROJECT_VERSION);
                        return 0;
                case ARG_POLKIT:
                        r = polkit_mode_from_string(optarg);
                        if (r < 0)
                                return log_error_errno(-EINVAL, "Invalid --polkit '%s': auto, required or off", optarg);
                        arg_options.polkit_mode = r;
                        break;
                case ARG_KEEP:
                        arg_options.keep_on_exit = true;
                        break;
                case ARG_POLICY_DIR:
                        if (n_dirs >= MAX_POLICY_DIRS)
                                return log_error_errno(-E2BIG, "At most %d --policy-dir options", MAX_POLICY_DIRS);
                        arg_policy_dirs[n_dirs++] = optarg;
                        arg_options.policy_dirs = arg_policy_dirs;
                        break;
                case ARG_MAX_ACTIVE:
                case ARG_RATE:
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || v < (c == ARG_RATE ? 0 : 1) || v > 100000)
                                return log_error_errno(-EINVAL, "Invalid --%s '%s'",
                                                       c == ARG_RATE ? "rate" : "max-active", optarg);
                        if (c == ARG_RATE)
                                arg_options.rate_per_minute = (unsigned) v;
                        else
                                arg_options.max_active = (unsigned) v;
                        break;
                case ARG_RESERVED_ACTIVE:
                        r = parse_count(optarg, 0, 100000, &arg_options.reserved_active);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --reserved-active '%s'", optarg);
                        break;
                case ARG_EVENT_RATE:
                        r = parse_count(optarg, 0, 1000000, &arg_options.event_rate);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --event-rate '%s': 0 to 1000000", optarg);
                        break;
                case ARG_MAX_CONNECTIONS:
                        r = parse_count(optarg, 1, 65536, &arg_options.connections_max);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --max-connections '%s': 1 to 65536", optarg);
                        break;
                case ARG_MAX_CONNECTIONS_PER_USER:
                        r = parse_count(optarg, 1, 65536, &arg_options.connections_per_user);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --max-connections-per-user '%s': 1 to 65536", optarg);
                        break;
                case ARG_RESERVED_CONNECTIONS:
                        r = parse_count(optarg, 0, 65535, &arg_options.connections_reserved);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --reserved-connections '%s': 0 to 65535", optarg);
                        break;
                case ARG_MAX_SUBSCRIPTIONS_PER_USER:
                        r = parse_count(optarg, 1, MANAGER_SUBSCRIPTIONS_MAX, &arg_options.subscriptions_per_user);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --max-subscriptions-per-user '%s': 1 to %d", optarg,
                                                       MANAGER_SUBSCRIPTIONS_MAX);
                        break;
                case ARG_MAX_OBSERVE:
                        r = parse_count(optarg, MANAGER_OBSERVE_RESERVED + 1, MANAGER_MAX_OBSERVE_LIMIT,
                                        &arg_options.max_observe);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --max-observe '%s': %d to %d", optarg,
                                                       MANAGER_OBSERVE_RESERVED + 1, MANAGER_MAX_OBSERVE_LIMIT);
                        break;
                case ARG_MAX_OBSERVE_PER_USER:
                        r = parse_count(optarg, 1, MANAGER_MAX_OBSERVE_LIMIT, &arg_options.max_observe_per_user);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --max-observe-per-user '%s': 1 to %d", optarg,
                                                       MANAGER_MAX_OBSERVE_LIMIT);
                        break;
                case ARG_IDLE_TIMEOUT:
                        r = parse_duration(optarg, &arg_options.idle_usec);
                        if (r < 0 || arg_options.idle_usec > ENGINE_MAX_DURATION_USEC)
                                return log_error_errno(r < 0 ? r : -ERANGE,
                                                       "Invalid --idle-timeout '%s': a duration of at most 7 days, "
                                                       "0 for none", optarg);
                        break;
                case ARG_SITE_LINGER:
                        r = parse_duration(optarg, &arg_options.site_linger_usec);
                        if (r < 0 || arg_options.site_linger_usec > ENGINE_SITE_LINGER_MAX_USEC)
                                return log_error_errno(r < 0 ? r : -ERANGE,
                                                       "Invalid --site-linger '%s': a duration of at most %s, "
                                                       "0 to detach at once", optarg,
                                                       FORMAT_DURATION(ENGINE_SITE_LINGER_MAX_USEC));
                        break;
                case ARG_SITE_CACHE:
                        r = parse_duration(optarg, &arg_options.site_cache_usec);
                        if (r < 0 || arg_options.site_cache_usec > ENGINE_MAX_DURATION_USEC)
                                return log_error_errno(r < 0 ? r : -ERANGE,
                                                       "Invalid --site-cache '%s': a duration of at most 7 days, "
                                                       "0 to turn the cache off", optarg);
                        break;
                case ARG_SITE_CACHE_MAX:
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || end == optarg || v < 0 || v > 4096)
                                return log_error_errno(-EINVAL, "Invalid --site-cache-max '%s': 0 to 4096", optarg);
                        arg_options.site_cache_max = (unsigned) v;
                        break;
                case ARG_MAX_PER_FUNCTION:
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || end == optarg || v < 1 || v > ENGINE_MAX_SLOTS_LIMIT)
                                return log_error_errno(-EINVAL, "Invalid --max-per-function '%s': 1 to %d", optarg,
                                                       ENGINE_MAX_SLOTS_LIMIT);
                        arg_options.max_per_function = (uint32_t) v;
                        break;
                case ARG_LOG_LEVEL:
                        r = parse_level(optarg);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --log-level '%s'", optarg);
                        log_set_max_level(r);
                        break;
                case ARG_LOG_TARGET:
                        if (strcmp(optarg, "auto") && strcmp(optarg, "journal") && strcmp(optarg, "stderr"))
                                return log_error_errno(-EINVAL, "Invalid --log-target '%s'", optarg);
                        log_set_target(optarg);
                        break;
                case ARG_KEEP_CAPS:
                        arg_keep_caps = true;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(-EINVAL, "injectd takes no arguments");
        if (arg_options.reserved_active >= arg_options.max_active)
                return log_error_errno(-EINVAL, "--reserved-active=%u leaves nothing of --max-active=%u for users",
                                       arg_options.reserved_active, arg_options.max_active);
        if (arg_options.connections_reserved >= arg_options.connections_max)
                return log_error_errno(-EINVAL,
                                       "--reserved-connections=%u leaves nothing of --max-connections=%u for users",
                                       arg_options.connections_reserved, arg_options.connections_max);
        return 1;
}

/* Descriptors beside the Varlink connections: the bus, BPF objects, the
 * state directory, the event loop's own. */
#define FDS_BESIDE_CONNECTIONS 256U

/* Each Varlink connection holds a descriptor, and injections and BPF
 * objects hold more. Outside systemd (whose unit sets LimitNOFILE=) the
 * soft limit is often 1024: raise it to the hard limit, which needs no
 * privilege and is safe for a daemon that polls with epoll, never
 * select(). If even that is short of what the connection limit needs,
 * say so now: past it accept() fails with EMFILE, and peers wait in the
 * listen backlog until others close (the log says that too). */
static void raise_fd_limit(unsigned connections_max) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
                log_warning_errno(negative_errno(), "Cannot read the file descriptor limit, ignoring: %m");
                return;
        }
        if (rl.rlim_cur < rl.rlim_max) {
                rlim_t soft = rl.rlim_cur;

                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
                        log_warning_errno(negative_errno(), "Cannot raise the file descriptor limit to %llu, ignoring: %m",
                                          (unsigned long long) rl.rlim_max);
                        rl.rlim_cur = soft;
                }
        }
        if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t) connections_max + FDS_BESIDE_CONNECTIONS)
                log_warning("The file descriptor limit, %llu, is short of the %u Varlink connections allowed "
                            "(--max-connections) and %u more: connections past it wait until others close. "
                            "Raise LimitNOFILE= (ulimit -n).", (unsigned long long) rl.rlim_cur, connections_max,
                            FDS_BESIDE_CONNECTIONS);
}

static int run(int argc, char **argv) {
        /* Freed in reverse: the front ends first, while the core they call
         * is still whole, then the core. */
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(bus_api_freep) BusApi *bus = NULL;
        _cleanup_(varlink_api_freep) VarlinkApi *varlink = NULL;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r;
        if (geteuid() != 0)
                return log_error_errno(-EPERM, "injectd must run as root (it owns /sys/fs/bpf/injectd).");
        raise_fd_limit(arg_options.connections_max);
        if (!arg_keep_caps) {
                r = privileges_drop();
                if (r < 0)
                        return r;
        }

        r = manager_new(&arg_options, &m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up: %m");
        /* The front ends register with the core before it starts, so that
         * they hear of the injections it adopts. */
        r = bus_api_new(m, &bus);
        if (r < 0)
                return r;
        r = varlink_api_new(m, &varlink);
        if (r < 0)
                return r;
        /* polkit is asked over the same connection. */
        r = manager_start(m, bus->bus);
        if (r < 0)
                return r;
        /* Probe the kernel now rather than at the first request, and say
         * in the log what it offers and why not. */
        if (engine_probe(m->engine))
                kernel_probe_log(engine_probe(m->engine));

        log_info("injectd %s running (polkit %s, %zu injection(s) adopted).", PROJECT_VERSION,
                 polkit_mode_to_string(arg_options.polkit_mode), m->n_injections);
        (void) sd_notify(false, "READY=1\nSTATUS=Serving requests.");
        r = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1");
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

int main(int argc, char **argv) {
        int r = run(argc, argv);

        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
