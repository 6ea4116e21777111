/* SPDX-License-Identifier: MIT */
/* injectctl failcmd: the options of the kernel's
 * tools/testing/fault-injection/failcmd.sh, mapped onto one injection
 * scoped to the command, so that scripts written for the kernel's
 * framework run without root. failcmd.sh writes the debugfs attributes of
 * failslab (or fail_page_alloc, by FAILCMD_TYPE) and runs the command
 * with /proc/self/make-it-fail set, which its children inherit: that is
 * run's process scope, and the attributes are a SPEC for run:
 *
 *   --probability P   probability=P% (default 1, as failcmd.sh; 0: nothing fails)
 *   --interval N      every=N (the kernel's interval counts the calls that
 *                     reach it, as every counts matched calls)
 *   --times N         times=N (default 1, as failcmd.sh; -1: unlimited; 0: nothing fails)
 *   --ignore-gfp-wait, --ignore-gfp-highmem, --min-order
 *                     the argument filters of the same names, with the
 *                     kernel's defaults (Y, Y, 1: mm/failslab.c,
 *                     mm/page_alloc.c); a default failcmd.sh leaves as
 *                     debugfs holds it, which is the kernel's unless
 *                     someone changed it
 *   --verbose N       kernel-log=N: the kernel log records of fail_dump(),
 *                     written by the daemon (src/daemon/fault-kmsg.c) if
 *                     policy allows (default 0, failcmd.sh leaves the
 *                     attribute as it is)
 *   --space 0, --task-filter Y
 *                     what injectd does anyway
 *
 *   --cache-filter Y  failslab's: only caches marked in
 *                     /sys/kernel/slab/NAME/failslab (root marks them);
 *                     injectd's cache filter names one cache, so exactly
 *                     one must be marked, and it becomes cache=NAME
 *
 * What injectd cannot express is refused by name, never ignored: a space
 * budget, every task (--task-filter N), stack address ranges, the OOM
 * sysctl, several marked caches. */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "cmd-failcmd.h"
#include "cmd-run.h"
#include "spec.h"

enum {
        ARG_PROBABILITY = ARG_COMMAND_BASE,
        ARG_INTERVAL,
        ARG_TIMES,
        ARG_SPACE,
        ARG_VERBOSE,
        ARG_TASK_FILTER,
        ARG_UNSUPPORTED,        /* options injectd cannot express: refused by name */
        ARG_IGNORE_GFP_WAIT,
        ARG_IGNORE_GFP_HIGHMEM,
        ARG_MIN_ORDER,
        ARG_CACHE_FILTER,
        ARG_CACHE,
        ARG_FOR,
};

/* y, Y, 1, on / n, N, 0, off: what the kernel's debugfs bools take (kstrtobool). */
static int parse_yes_no(const char *opt, const char *s, bool *ret) {
        if (strcmp(s, "y") == 0 || strcmp(s, "Y") == 0 || strcmp(s, "1") == 0 || strcmp(s, "on") == 0)
                *ret = true;
        else if (strcmp(s, "n") == 0 || strcmp(s, "N") == 0 || strcmp(s, "0") == 0 || strcmp(s, "off") == 0)
                *ret = false;
        else
                return usage_error("--%s: '%s' is not Y or N", opt, s);
        return 0;
}

#define SLAB_ROOT "/sys/kernel/slab"

/* The one slab cache marked for failslab's cache-filter, into *ret. A
 * merged cache (a link there) cannot be marked: the kernel refuses. */
static int marked_cache(char **ret) {
        _cleanup_(closedirp) DIR *d = opendir(SLAB_ROOT);
        _cleanup_free_ char *found = NULL;
        struct dirent *de;
        unsigned n = 0;

        if (!d)
                return usage_error("--cache-filter=Y: cannot read %s: %m", SLAB_ROOT);
        while ((de = readdir(d))) {
                char path[512], v[4] = "";
                FILE *f;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), SLAB_ROOT "/%s/failslab", de->d_name);
                f = fopen(path, "re");
                if (!f && errno == EACCES)
                        return usage_error("--cache-filter=Y: the caches' failslab marks are root's to read ("
                                           SLAB_ROOT "/NAME/failslab is mode 0400); name the cache with "
                                           "--cache NAME");
                if (!f)
                        continue;
                if (fgets(v, sizeof(v), f) && v[0] == '1' && n++ == 0) {
                        found = strdup(de->d_name);
                        if (!found) {
                                fclose(f);
                                return report_error(NULL, -ENOMEM, "Out of memory");
                        }
                }
                fclose(f);
        }
        if (n == 0)
                return usage_error("--cache-filter=Y: no slab cache is marked (as root: echo 1 > "
                                   SLAB_ROOT "/NAME/failslab), or name one with --cache NAME");
        if (n > 1)
                return usage_error("--cache-filter=Y: %u slab caches are marked in " SLAB_ROOT "/*/failslab; "
                                   "injectd filters one cache: name it with --cache NAME", n);
        *ret = TAKE_PTR(found);
        return 0;
}

/* A decimal integer in [min, max]. */
static int parse_int(const char *opt, const char *s, long long min, long long max, long long *ret) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno || end == s || *end || v < min || v > max)
                return usage_error("--%s: '%s' is not a number from %lld to %lld", opt, s, min, max);
        *ret = v;
        return 0;
}

int cmd_failcmd(int argc, char **argv) {
        static const struct option options[] = {
                { "probability",        required_argument, NULL, ARG_PROBABILITY },
                { "interval",           required_argument, NULL, ARG_INTERVAL },
                { "times",              required_argument, NULL, ARG_TIMES },
                { "space",              required_argument, NULL, ARG_SPACE },
                { "verbose",            required_argument, NULL, ARG_VERBOSE },
                { "task-filter",        required_argument, NULL, ARG_TASK_FILTER },
                { "stacktrace-depth",   required_argument, NULL, ARG_UNSUPPORTED },
                { "require-start",      required_argument, NULL, ARG_UNSUPPORTED },
                { "require-end",        required_argument, NULL, ARG_UNSUPPORTED },
                { "reject-start",       required_argument, NULL, ARG_UNSUPPORTED },
                { "reject-end",         required_argument, NULL, ARG_UNSUPPORTED },
                { "oom-kill-allocating-task", required_argument, NULL, ARG_UNSUPPORTED },
                { "ignore-gfp-wait",    required_argument, NULL, ARG_IGNORE_GFP_WAIT },
                { "ignore-gfp-highmem", required_argument, NULL, ARG_IGNORE_GFP_HIGHMEM },
                { "min-order",          required_argument, NULL, ARG_MIN_ORDER },
                { "cache-filter",       required_argument, NULL, ARG_CACHE_FILTER },
                { "cache",              required_argument, NULL, ARG_CACHE },
                { "for",                required_argument, NULL, ARG_FOR },
                GLOBAL_OPTIONS
        };
        const char *type = getenv("FAILCMD_TYPE") ?: "failslab", *function, *cache = NULL, *duration = NULL;
        bool page, ignore_wait = true, ignore_highmem = true, cache_filter = false;
        _cleanup_free_ char *marked = NULL;
        long long probability = 1, interval = 1, times = 1, min_order = 1, verbose = 0, v;
        _cleanup_free_ char **rargv = NULL;
        char buf[512];
        size_t n;
        int c, idx = -1, r, rargc = 0;

        if (strcmp(type, "failslab") == 0)
                function = "should_failslab";
        else if (strcmp(type, "fail_page_alloc") == 0)
                function = "should_fail_alloc_page";
        else
                return usage_error("FAILCMD_TYPE='%s': failcmd knows failslab and fail_page_alloc", type);
        page = type[0] == 'f' && type[5] == 'p';

        /* "+": the options stop at the command, as failcmd.sh's getopt
         * would with '--'. failcmd.sh's short options, too. */
        while ((c = getopt_long(argc, argv, "+:p:i:t:s:v:h", options, &idx)) >= 0) {
                const char *opt = c >= ARG_COMMAND_BASE && idx >= 0 ? options[idx].name : "";
                bool b;

                switch (c) {
                case 'p':
                case ARG_PROBABILITY:
                        r = parse_int("probability", optarg, 0, 100, &probability);
                        break;
                case 'i':
                case ARG_INTERVAL:
                        r = parse_int("interval", optarg, 0, INT64_MAX / 2, &interval);
                        break;
                case 't':
                case ARG_TIMES:
                        r = parse_int("times", optarg, -1, INT64_MAX / 2, &times);
                        break;
                case 's':
                case ARG_SPACE:
                        r = parse_int("space", optarg, INT32_MIN, INT32_MAX, &v);
                        if (r == 0 && v > 0)
                                return usage_error("--space=%s: injectd has no space budget (bytes allocated "
                                                   "before the first failure); skip calls with 'run --fail "
                                                   "FUNC,after=N' instead", optarg);
                        break;
                case 'v':
                case ARG_VERBOSE:
                        r = parse_int("verbose", optarg, 0, 2, &verbose);
                        break;
                case ARG_TASK_FILTER:
                        r = parse_yes_no(opt, optarg, &b);
                        if (r == 0 && !b)
                                return usage_error("--task-filter=%s: injectd fails only the command's own "
                                                   "processes, never every task", optarg);
                        break;
                case ARG_UNSUPPORTED:
                        return usage_error("--%s: injectd cannot express it (%s)", opt,
                                           strcmp(opt, "oom-kill-allocating-task") == 0 ?
                                           "a system-wide sysctl, /proc/sys/vm/oom_kill_allocating_task" :
                                           "stack address ranges; name kernel functions on the stack with "
                                           "'run --fail FUNC,caller=NAME' instead");
                case ARG_IGNORE_GFP_WAIT:
                        r = parse_yes_no(opt, optarg, &ignore_wait);
                        break;
                case ARG_IGNORE_GFP_HIGHMEM:
                case ARG_MIN_ORDER:
                        if (!page)
                                return usage_error("--%s is fail_page_alloc's (FAILCMD_TYPE=fail_page_alloc)", opt);
                        r = c == ARG_MIN_ORDER ? parse_int(opt, optarg, 0, 63, &min_order) :
                                parse_yes_no(opt, optarg, &ignore_highmem);
                        break;
                case ARG_CACHE_FILTER:
                case ARG_CACHE:
                        if (page)
                                return usage_error("--%s is failslab's", opt);
                        if (c == ARG_CACHE) {
                                cache = optarg;
                                r = 0;
                                break;
                        }
                        r = parse_yes_no(opt, optarg, &cache_filter);
                        break;
                case ARG_FOR:
                        duration = optarg;
                        r = 0;
                        break;
                default:
                        r = handle_global_option(c, optarg, argv);
                        if (r >= 0)
                                return r;
                        r = 0;
                }
                if (r != 0)
                        return r;
        }
        if (optind >= argc)
                return usage_error("failcmd needs a command");

        /* The kernel fails nothing with probability 0 or times 0
         * (lib/fault-inject.c), which injectd's triggers cannot say: no
         * injection at all then, and the command runs as it would. */
        if (probability == 0 || times == 0) {
                execvp(argv[optind], argv + optind);
                fprintf(stderr, "injectctl: Cannot run '%s': %m\n", argv[optind]);
                return errno == ENOENT ? 127 : 126;
        }
        if (cache_filter && !cache) {
                r = marked_cache(&marked);
                if (r != 0)
                        return r;
                cache = marked;
        }
        if (cache && strchr(cache, ','))
                return usage_error("--cache: '%s' is not a slab cache name", cache);
        n = snprintf(buf, sizeof(buf), "%s%s", function, page ? "" : ":ENOMEM");
        if (ignore_wait)
                n += snprintf(buf + n, sizeof(buf) - n, ",ignore-gfp-wait");
        if (interval > 1)
                n += snprintf(buf + n, sizeof(buf) - n, ",every=%lld", interval);
        if (times > 0)
                n += snprintf(buf + n, sizeof(buf) - n, ",times=%lld", times);
        if (probability < 100)
                n += snprintf(buf + n, sizeof(buf) - n, ",probability=%lld", probability);
        if (page && ignore_highmem)
                n += snprintf(buf + n, sizeof(buf) - n, ",ignore-gfp-highmem");
        if (page && min_order > 0)
                n += snprintf(buf + n, sizeof(buf) - n, ",min-order=%lld", min_order);
        if (cache)
                n += snprintf(buf + n, sizeof(buf) - n, ",cache=%.64s", cache);
        if (verbose > 0)
                n += snprintf(buf + n, sizeof(buf) - n, ",kernel-log=%lld", verbose);
        /* Said, so that the mapping is never a surprise. */
        fprintf(stderr, "injectctl failcmd: run --fail %s\n", buf);

        rargv = calloc((size_t) (argc - optind) + 7, sizeof(char *));
        if (!rargv)
                return report_error(NULL, -ENOMEM, "Out of memory");
        rargv[rargc++] = (char *) "run";
        rargv[rargc++] = (char *) "--fail";
        rargv[rargc++] = buf;
        if (duration) {
                rargv[rargc++] = (char *) "--for";
                rargv[rargc++] = (char *) duration;
        }
        rargv[rargc++] = (char *) "--";
        for (int i = optind; i < argc; i++)
                rargv[rargc++] = argv[i];
        optind = 0;     /* re-initialize getopt for run */
        return cmd_run(rargc, rargv);
}
