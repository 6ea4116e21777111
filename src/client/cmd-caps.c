/* SPDX-License-Identifier: MIT */
/* injectctl caps, injectctl functions */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "format-table.h"
#include "injectctl.h"
#include "json-util.h"

/* For commands that take no options of their own: parses the global ones
 * and leaves optind at the first argument. Returns -1 to go on, else the
 * exit code. */
static int parse_plain(int argc, char **argv) {
        static const struct option options[] = { GLOBAL_OPTIONS };
        int c, r;

        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                r = handle_global_option(c, optarg, argv);
                if (r >= 0)
                        return r;
        }
        return -1;
}

static const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

int cmd_caps(int argc, char **argv) {
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_json_ json_object *caps = NULL;
        _cleanup_(table_freep) Table *table = NULL;
        static const char *const features[] = { "bpf", "tracing", "btf", "error_injection_list" };
        json_object *o, *limits;
        const char *s;
        int64_t n;
        int r;

        r = parse_plain(argc, argv);
        if (r >= 0)
                return r;
        if (optind < argc)
                return usage_error("caps takes no arguments");

        r = connect_daemon(&t);
        if (r < 0)
                return -r;
        r = transport_get_capabilities(t, &caps);
        if (r < 0)
                return report_error(t, r, "Cannot get the capabilities");

        if (arg_json) {
                print_json(caps, false);
                return 0;
        }

        if (json_get_string(caps, "kernel", &s) >= 0)
                printf("Kernel:             %s\n", s);
        if (json_get_string(caps, "polkit", &s) >= 0)
                printf("polkit:             %s\n", s);
        if (json_get_i64(caps, "active_injections", 0, INT64_MAX, &n) >= 0)
                printf("Your injections:    %" PRId64 "\n", n);
        if (json_get_object(caps, "limits", &limits) >= 0) {
                uint64_t v;

                if (json_get_u64(limits, "max_duration_usec", 0, UINT64_MAX, &v) >= 0)
                        printf("Longest duration:   %s\n", FORMAT_DURATION(v));
                if (json_get_u64(limits, "max_active", 0, UINT64_MAX, &v) >= 0)
                        printf("Most active:        %" PRIu64 "\n", v);
                if (json_get_u64(limits, "max_per_function", 0, UINT64_MAX, &v) >= 0)
                        printf("Most per function:  %" PRIu64 "\n", v);
                if (json_get_u64(limits, "rate_per_minute", 0, UINT64_MAX, &v) >= 0)
                        printf("Rate per minute:    %" PRIu64 "\n", v);
                if (json_get_u64(limits, "max_callers", 0, UINT64_MAX, &v) >= 0)
                        printf("Most callers:       %" PRIu64 "\n", v);
        }
        printf("\n");

        r = table_new(&table, "FEATURE", "AVAILABLE", "REASON", NULL);
        if (r < 0)
                return report_error(NULL, r, "Cannot make a table");

        for (int pass = 0; pass < 2; pass++) {
                json_object *group = caps;
                size_t n_names = ELEMENTSOF(features);

                if (pass == 1) {
                        if (json_get_object(caps, "backends", &group) < 0)
                                break;
                        n_names = json_object_object_length(group);
                }
                if (pass == 0) {
                        for (size_t i = 0; i < n_names; i++) {
                                bool avail = false;
                                const char *reason = NULL, *needs = NULL;
                                _cleanup_free_ char *why = NULL;

                                if (json_get_object(caps, features[i], &o) < 0)
                                        continue;
                                (void) json_get_bool(o, "available", &avail);
                                (void) json_get_string(o, "reason", &reason);
                                (void) json_get_string(o, "needs", &needs);
                                if (reason && needs && asprintf(&why, "%s (needs %s)", reason, needs) < 0)
                                        return report_error(NULL, -ENOMEM, "Out of memory");
                                (void) table_add_cell(table, TABLE_COLOR_NONE, features[i]);
                                (void) table_add_cell(table, avail ? TABLE_COLOR_GREEN : TABLE_COLOR_RED, yes_no(avail));
                                (void) table_add_cell(table, TABLE_COLOR_NONE, why ?: reason ?: "");
                        }
                } else {
                        json_object_object_foreach(group, name, b) {
                                bool avail = false;
                                const char *reason = NULL;
                                _cleanup_free_ char *label = NULL;

                                (void) json_get_bool(b, "available", &avail);
                                (void) json_get_string(b, "reason", &reason);
                                if (asprintf(&label, "backend %s", name) < 0)
                                        return report_error(NULL, -ENOMEM, "Out of memory");
                                (void) table_add_cell(table, TABLE_COLOR_NONE, label);
                                (void) table_add_cell(table, avail ? TABLE_COLOR_GREEN : TABLE_COLOR_RED, yes_no(avail));
                                (void) table_add_cell(table, TABLE_COLOR_NONE, reason ?: "");
                        }
                }
        }
        r = table_print(table, stdout, arg_color ? TABLE_PRINT_COLOR : 0);
        if (r < 0)
                return report_error(NULL, r, "Cannot print");
        return 0;
}

enum {
        ARG_TYPE = ARG_COMMAND_BASE,
        ARG_ALLOWED,
};

int cmd_functions(int argc, char **argv) {
        static const struct option options[] = {
                { "type",    required_argument, NULL, ARG_TYPE },
                { "allowed", no_argument,       NULL, ARG_ALLOWED },
                GLOBAL_OPTIONS
        };
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_json_ json_object *list = NULL, *out = NULL;
        _cleanup_(table_freep) Table *table = NULL;
        const char *type = NULL, *pattern = NULL;
        bool only_allowed = false;
        size_t n;
        int c, r;

        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0)
                switch (c) {
                case ARG_TYPE:
                        if (!strcasecmp(optarg, "NULL") || !strcasecmp(optarg, "ERRNO") ||
                            !strcasecmp(optarg, "ERRNO_NULL") || !strcasecmp(optarg, "TRUE") ||
                            !strcasecmp(optarg, "LSM"))
                                type = optarg;
                        else
                                return usage_error("--type: unknown type '%s' (NULL, ERRNO, ERRNO_NULL, TRUE, LSM)",
                                                   optarg);
                        break;
                case ARG_ALLOWED:
                        only_allowed = true;
                        break;
                default:
                        r = handle_global_option(c, optarg, argv);
                        if (r >= 0)
                                return r;
                }
        if (optind < argc)
                pattern = argv[optind++];
        if (optind < argc)
                return usage_error("functions takes at most one GLOB");
        if (pattern && strlen(pattern) > 256)
                return usage_error("the GLOB must be at most 256 characters");

        r = connect_daemon(&t);
        if (r < 0)
                return -r;
        r = transport_list_functions(t, pattern, &list);
        if (r < 0)
                return report_error(t, r, "Cannot list the functions");

        out = json_object_new_array();
        if (!out)
                return report_error(NULL, -ENOMEM, "Out of memory");
        n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                const char *ftype = "";
                bool allowed = false;

                (void) json_get_string(e, "type", &ftype);
                (void) json_get_bool(e, "allowed", &allowed);
                if (type && strcasecmp(type, ftype) != 0)
                        continue;
                if (only_allowed && !allowed)
                        continue;
                json_object_array_add(out, json_object_get(e));
        }

        if (arg_json) {
                print_json(out, false);
                return 0;
        }

        r = table_new(&table, "FUNCTION", "TYPE", "BACKENDS", "ALLOWED", "MODULE", NULL);
        if (r < 0)
                return report_error(NULL, r, "Cannot make a table");
        n = json_object_array_length(out);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(out, i), *backends;
                const char *name = "", *ftype = "", *module = NULL;
                char buf[64] = "";
                bool allowed = false;

                (void) json_get_string(e, "name", &name);
                (void) json_get_string(e, "type", &ftype);
                (void) json_get_string(e, "module", &module);
                (void) json_get_bool(e, "allowed", &allowed);
                if (json_get_array(e, "backends", &backends) >= 0)
                        for (size_t j = 0; j < json_object_array_length(backends); j++) {
                                const char *b = json_object_get_string(json_object_array_get_idx(backends, j));

                                if (strlen(buf) + strlen(b ?: "") + 2 < sizeof(buf)) {
                                        if (j > 0)
                                                strcat(buf, ",");
                                        strcat(buf, b ?: "");
                                }
                        }
                (void) table_add_cell(table, TABLE_COLOR_NONE, name);
                (void) table_add_cell(table, TABLE_COLOR_NONE, ftype);
                (void) table_add_cell(table, TABLE_COLOR_NONE, buf);
                (void) table_add_cell(table, allowed ? TABLE_COLOR_GREEN : TABLE_COLOR_GREY, yes_no(allowed));
                (void) table_add_cell(table, TABLE_COLOR_NONE, module ?: "");
        }
        r = table_print(table, stdout, arg_color ? TABLE_PRINT_COLOR : 0);
        if (r < 0)
                return report_error(NULL, r, "Cannot print");
        if (!only_allowed && isatty(STDOUT_FILENO))
                printf("\n%zu functions.\n", n);
        return 0;
}

int cmd_reload_policy(int argc, char **argv) {
        _cleanup_(transport_freep) Transport *t = NULL;
        int r;

        r = parse_plain(argc, argv);
        if (r >= 0)
                return r;
        if (optind < argc)
                return usage_error("reload-policy takes no arguments");
        r = connect_daemon(&t);
        if (r < 0)
                return -r;
        r = transport_reload_policy(t);
        if (r < 0)
                return report_error(t, r, "Cannot reload the policy");
        return 0;
}
