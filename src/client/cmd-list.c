/* SPDX-License-Identifier: MIT */
/* injectctl list, show, cancel, watch */

#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "format-table.h"
#include "cli.h"
#include "cmd-list.h"
#include "json-util.h"
#include "parse-util.h"

static const char *injection_value_str(json_object *doc, char *buf, size_t n) {
        const char *error;
        int64_t value = 0;

        if (json_get_string(doc, "error", &error) >= 0)
                return error;
        (void) json_get_i64(doc, "value", INT64_MIN, INT64_MAX, &value);
        snprintf(buf, n, "%" PRId64, value);
        return buf;
}

static uint64_t get_u64(json_object *doc, const char *key) {
        uint64_t v = 0;

        (void) json_get_u64(doc, key, 0, UINT64_MAX, &v);
        return v;
}

static const char *get_str(json_object *doc, const char *key) {
        const char *s = NULL;

        (void) json_get_string(doc, key, &s);
        return s ?: "";
}

static int print_injections_table(json_object *list) {
        _cleanup_(table_freep) Table *table = NULL;
        size_t n = json_object_array_length(list);
        int r;

        r = table_new(&table, "ID", "FUNCTION", "VALUE", "SCOPE", "LEFT", "SEEN", "MATCHED", "INJECTED", "GUARDED",
                      NULL);
        if (r < 0)
                return r;
        for (size_t col = 4; col <= 8; col++)
                (void) table_set_align(table, col, TABLE_ALIGN_RIGHT);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                char vbuf[32], lbuf[FORMAT_DURATION_MAX];
                uint64_t injected = get_u64(e, "faults_injected");

                (void) table_add_cell(table, TABLE_COLOR_NONE, get_str(e, "id"));
                (void) table_add_cell(table, TABLE_COLOR_BOLD, get_str(e, "function"));
                (void) table_add_cell(table, TABLE_COLOR_NONE, injection_value_str(e, vbuf, sizeof(vbuf)));
                (void) table_add_cell(table, TABLE_COLOR_NONE, get_str(e, "scope"));
                (void) table_add_cell(table, TABLE_COLOR_NONE, format_left(lbuf, sizeof(lbuf), get_u64(e, "remaining_usec")));
                (void) table_add_cellf(table, TABLE_COLOR_NONE, "%" PRIu64, get_u64(e, "calls_seen"));
                (void) table_add_cellf(table, TABLE_COLOR_NONE, "%" PRIu64, get_u64(e, "calls_matched"));
                (void) table_add_cellf(table, injected ? TABLE_COLOR_RED : TABLE_COLOR_NONE, "%" PRIu64, injected);
                (void) table_add_cellf(table, TABLE_COLOR_NONE, "%" PRIu64, get_u64(e, "calls_guarded"));
        }
        return table_print(table, stdout, arg_color ? TABLE_PRINT_COLOR : 0);
}

static void print_injection_details(json_object *doc) {
        char vbuf[32], lbuf[FORMAT_DURATION_MAX];
        json_object *callers;
        uint64_t v;
        double p;

        printf("          Id: %s\n", get_str(doc, "id"));
        printf("    Function: %s\n", get_str(doc, "function"));
        printf("       Value: %s", injection_value_str(doc, vbuf, sizeof(vbuf)));
        if (json_object_object_get_ex(doc, "error", NULL))
                printf(" (%" PRId64 ")", (int64_t) json_object_get_int64(json_object_object_get(doc, "value")));
        printf("\n");
        printf("     Backend: %s\n", get_str(doc, "backend"));
        printf("       Scope: %s\n", get_str(doc, "scope"));
        printf("       Owner: uid %" PRIu64 "\n", get_u64(doc, "owner_uid"));
        printf("       State: %s\n", get_str(doc, "state"));
        printf("        Left: %s\n", format_left(lbuf, sizeof(lbuf), get_u64(doc, "remaining_usec")));
        printf("    Detached: %s\n", json_object_get_boolean(json_object_object_get(doc, "detach")) ? "yes" : "no");
        if (*get_str(doc, "comm"))
                printf("        Comm: %s\n", get_str(doc, "comm"));
        if (json_get_array(doc, "callers", &callers) >= 0) {
                printf("     Callers:");
                for (size_t i = 0; i < json_object_array_length(callers); i++)
                        printf(" %s", json_object_get_string(json_object_array_get_idx(callers, i)));
                printf("\n");
        }
        if (json_get_u64(doc, "after", 0, UINT64_MAX, &v) >= 0)
                printf("       After: %" PRIu64 "\n", v);
        if (json_get_u64(doc, "every", 0, UINT64_MAX, &v) >= 0)
                printf("       Every: %" PRIu64 "\n", v);
        if (json_get_u64(doc, "times", 0, UINT64_MAX, &v) >= 0)
                printf("       Times: %" PRIu64 "\n", v);
        if (json_object_object_get_ex(doc, "probability", NULL)) {
                p = json_object_get_double(json_object_object_get(doc, "probability"));
                printf(" Probability: %g%%\n", p);
        }
        if (json_object_object_get_ex(doc, "ignore_gfp_wait", NULL) ||
            json_object_object_get_ex(doc, "ignore_gfp_highmem", NULL) ||
            json_object_object_get_ex(doc, "min_order", NULL) || json_object_object_get_ex(doc, "min_size", NULL) ||
            *get_str(doc, "cache")) {
                printf("   Arguments:");
                if (json_object_object_get_ex(doc, "ignore_gfp_wait", NULL))
                        printf(" ignore-gfp-wait");
                if (json_object_object_get_ex(doc, "ignore_gfp_highmem", NULL))
                        printf(" ignore-gfp-highmem");
                if (json_get_u64(doc, "min_order", 0, UINT64_MAX, &v) >= 0)
                        printf(" min-order=%" PRIu64, v);
                if (json_get_u64(doc, "min_size", 0, UINT64_MAX, &v) >= 0)
                        printf(" min-size=%" PRIu64, v);
                if (*get_str(doc, "cache"))
                        printf(" cache=%s", get_str(doc, "cache"));
                printf("\n");
        }
        if (*get_str(doc, "rule"))
                printf("        Rule: %s\n", get_str(doc, "rule"));
        printf("  Calls seen: %" PRIu64 "\n", get_u64(doc, "calls_seen"));
        printf("     Matched: %" PRIu64 "\n", get_u64(doc, "calls_matched"));
        printf("    Injected: %" PRIu64 "\n", get_u64(doc, "faults_injected"));
        printf("     Guarded: %" PRIu64 "\n", get_u64(doc, "calls_guarded"));
        /* Only when the event rate limit dropped some: then watch showed
         * fewer faults than were injected. */
        if (get_u64(doc, "events_suppressed") > 0)
                printf("  Suppressed: %" PRIu64 " events (rate limit)\n", get_u64(doc, "events_suppressed"));
        fflush(stdout);
}

/* For the commands that take injection ids: the arguments from optind on
 * must be ids; if they are, connects. Returns -1 to go on with *ret, else
 * the exit code (EXIT_USAGE naming the first that is not an id). */
static int connect_for_ids(int argc, char **argv, Transport **ret) {
        int r;

        for (int i = optind; i < argc; i++)
                if (!injection_id_is_valid(argv[i]))
                        return usage_error("'%s' is not an injection ID (16 hex digits)", argv[i]);
        r = connect_daemon(ret);
        return r < 0 ? -r : -1;
}

int cmd_list(int argc, char **argv) {
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_json_ json_object *list = NULL;
        bool all;
        int r;

        r = parse_plain_options(argc, argv, &all);
        if (r >= 0)
                return r;
        if (optind < argc)
                return usage_error("list takes no arguments");

        r = connect_daemon(&t);
        if (r < 0)
                return -r;
        r = transport_list_injections(t, all, &list);
        if (r < 0)
                return report_error(t, r, "Cannot list the injections");
        if (arg_json) {
                print_json(list, false);
                return 0;
        }
        if (json_object_array_length(list) == 0) {
                if (isatty(STDOUT_FILENO))
                        printf("No injections.\n");
                return 0;
        }
        r = print_injections_table(list);
        if (r < 0)
                return report_error(NULL, r, "Cannot print");
        return 0;
}

int cmd_show(int argc, char **argv) {
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_json_ json_object *list = NULL;
        json_object *doc;
        const char *id;
        int r;

        r = parse_plain_options(argc, argv, NULL);
        if (r >= 0)
                return r;
        if (argc - optind != 1)
                return usage_error("show takes one injection ID");
        r = connect_for_ids(argc, argv, &t);
        if (r >= 0)
                return r;
        id = argv[optind];
        r = transport_list_injections(t, false, &list);
        if (r < 0)
                return report_error(t, r, "Cannot list the injections");
        doc = injection_find(list, id);
        /* Root may see everyone's; root in a container is refused that
         * (not privileged), and then the injection is simply not its own. */
        if (!doc && geteuid() == 0) {
                json_object_put(TAKE_PTR(list));
                if (transport_list_injections(t, true, &list) >= 0)
                        doc = injection_find(list, id);
        }
        if (!doc) {
                fprintf(stderr, "injectctl: NoSuchInjection: No injection '%s' of yours is armed\n", id);
                return EXIT_REFUSED;
        }
        if (arg_json)
                print_json(doc, false);
        else
                print_injection_details(doc);
        return 0;
}

int cmd_cancel(int argc, char **argv) {
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_json_ json_object *list = NULL;
        bool all;
        int ret = 0, r;

        r = parse_plain_options(argc, argv, &all);
        if (r >= 0)
                return r;
        if (all == (optind < argc))
                return usage_error("cancel takes injection IDs or --all");
        r = connect_for_ids(argc, argv, &t);
        if (r >= 0)
                return r;

        if (all) {
                r = transport_list_injections(t, false, &list);
                if (r < 0)
                        return report_error(t, r, "Cannot list the injections");
                for (size_t i = 0; i < json_object_array_length(list); i++) {
                        const char *id = json_object_get_string(
                                        json_object_object_get(json_object_array_get_idx(list, i), "id"));

                        r = transport_cancel(t, id);
                        /* It may have ended meanwhile. */
                        if (r == -EREMOTEIO && strcmp(transport_error_name(t), "NoSuchInjection") == 0)
                                continue;
                        if (r < 0)
                                ret = report_error(t, r, "Cannot cancel");
                }
                return ret;
        }

        for (int i = optind; i < argc; i++) {
                r = transport_cancel(t, argv[i]);
                if (r < 0)
                        ret = report_error(t, r, "Cannot cancel");
                if (r == -EHOSTDOWN)
                        break;
        }
        return ret;
}

/* watch ID...: the watched injections not yet removed. */
typedef struct WatchState {
        char *const *ids;
        bool *gone;
        size_t n, n_left;
} WatchState;

/* Returns 1 (stop) once every watched injection has been removed. */
static int watch_removed(WatchState *w, const char *id) {
        for (size_t i = 0; i < w->n; i++)
                if (!w->gone[i] && strcmp(w->ids[i], id) == 0) {
                        w->gone[i] = true;
                        w->n_left--;
                        break;
                }
        return w->n > 0 && w->n_left == 0;
}

static int on_event(json_object *event, void *userdata) {
        WatchState *w = userdata;
        const char *type = get_str(event, "type"), *id = get_str(event, "id");
        char tbuf[32];
        struct tm tm;
        time_t now = time(NULL);

        if (arg_json) {
                print_json(event, true);
                return strcmp(type, "removed") == 0 ? watch_removed(w, id) : 0;
        }
        if (strcmp(type, "watching") == 0) {
                /* A status line, not an event: on stderr, so that a script
                 * (or a test) knows the stream is on before it makes the
                 * fault it waits for, and stdout holds only events. */
                fprintf(stderr, "Watching; Ctrl-C stops.\n");
                fflush(stdout);
                return 0;
        }
        (void) strftime(tbuf, sizeof(tbuf), "%H:%M:%S", localtime_r(&now, &tm));
        printf("%s %s %-8s", tbuf, id, type);
        if (strcmp(type, "fault") == 0) {
                int64_t value = json_object_get_int64(json_object_object_get(event, "value"));

                printf(" pid %" PRIu64 " (%s) %s -> %" PRId64, get_u64(event, "pid"), get_str(event, "comm"),
                       get_str(event, "function"), value);
        } else if (strcmp(type, "removed") == 0) {
                if (*get_str(event, "reason"))
                        printf(" reason %s", get_str(event, "reason"));
        } else {
                json_object *doc = json_object_object_get(event, "injection");

                if (doc)
                        printf(" %s seen %" PRIu64 " matched %" PRIu64 " injected %" PRIu64 " guarded %" PRIu64,
                               get_str(doc, "function"), get_u64(doc, "calls_seen"),
                               get_u64(doc, "calls_matched"), get_u64(doc, "faults_injected"),
                               get_u64(doc, "calls_guarded"));
        }
        printf("\n");
        fflush(stdout);
        return strcmp(type, "removed") == 0 ? watch_removed(w, id) : 0;
}

/* Ctrl-C is how a watch without IDs ends: that is success. Every event is
 * flushed as it is printed, so nothing is lost by leaving at once. The
 * handler is installed, not inherited: a shell starts background jobs
 * with SIGINT ignored. */
static void on_watch_stop(int sig) {
        _exit(0);
}

int cmd_watch(int argc, char **argv) {
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_free_ bool *gone = NULL;
        WatchState state;
        int r;

        r = parse_plain_options(argc, argv, NULL);
        if (r < 0)
                r = connect_for_ids(argc, argv, &t);
        if (r >= 0)
                return r;
        gone = calloc(argc - optind + 1, sizeof(bool));
        if (!gone)
                return report_error(NULL, -ENOMEM, "Out of memory");
        state = (WatchState) { .ids = argv + optind, .gone = gone, .n = argc - optind, .n_left = argc - optind };
        {
                struct sigaction sa = { .sa_handler = on_watch_stop };

                (void) sigaction(SIGINT, &sa, NULL);
                (void) sigaction(SIGTERM, &sa, NULL);
        }
        /* argv is NULL-terminated, so argv + optind is a NULL-terminated list. */
        /* With IDs, it ends when they all have; without, on Ctrl-C. */
        r = transport_watch(t, argv + optind, on_event, &state);
        if (r < 0)
                return report_error(t, r, "Watching failed");
        return 0;
}
