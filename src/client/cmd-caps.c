/* SPDX-License-Identifier: MIT */
/* injectctl caps, injectctl functions */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "format-table.h"
#include "cli.h"
#include "cmd-caps.h"
#include "json-build.h"
#include "json-util.h"

static const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

/* The doctor report's names for the capabilities document's keys; a key
 * this client does not know (a newer daemon) is shown as it is. */
static const struct {
        const char *key;
        const char *title;
} feature_titles[] = {
        { "bpf",                  "BPF" },
        { "btf",                  "vmlinux BTF" },
        { "tracing",              "tracing programs" },
        { "kprobes",              "kprobes" },
        { "override",             "bpf_override_return" },
        { "error_injection_list", "error-injection list" },
        { "fmod_ret_lsm",         "fmod_ret on LSM hooks" },
        { "fmod_ret_listed",      "fmod_ret on listed functions" },
};

static const char *feature_title(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(feature_titles); i++)
                if (strcmp(feature_titles[i].key, key) == 0)
                        return feature_titles[i].title;
        return key;
}

/* ", " between the strings of a JSON array; NULL if it has none. */
static char *join_array(json_object *a) {
        _cleanup_free_ char *s = NULL;
        size_t n = a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

        for (size_t i = 0; i < n; i++) {
                const char *v = json_object_get_string(json_object_array_get_idx(a, i));
                char *t;

                if (asprintf(&t, "%s%s%s", s ?: "", s ? ", " : "", v ?: "?") < 0)
                        return NULL;
                free(s);
                s = t;
        }
        return TAKE_PTR(s);
}

/* "reason (missing CONFIG_A, CONFIG_B)": the reason, and for an
 * unavailable feature the options the kernel's configuration lacks; if
 * the daemon could not read the configuration, what it would take. The
 * first version of the document had only errno, reason and needs. */
static char *feature_why(json_object *o, bool config_readable) {
        _cleanup_free_ char *missing = NULL, *needs_list = NULL;
        json_object *a;
        const char *reason = NULL, *needs = NULL;
        bool avail = false;
        char *s = NULL;

        (void) json_get_bool(o, "available", &avail);
        (void) json_get_string(o, "reason", &reason);
        (void) json_get_string(o, "needs", &needs);
        if (avail)
                return strdup(reason ?: "");
        if (json_get_array(o, "missing_config", &a) >= 0)
                missing = join_array(a);
        if (json_get_array(o, "needs_config", &a) >= 0)
                needs_list = join_array(a);
        else if (needs)
                needs_list = strdup(needs);
        if (missing)
                (void) asprintf(&s, "%s (missing %s)", reason ?: "", missing);
        else if (needs_list && !config_readable)
                (void) asprintf(&s, "%s (needs %s)", reason ?: "", needs_list);
        else
                s = strdup(reason ?: "");
        return s;
}

static int add_feature_row(Table *table, const char *title, json_object *o, bool config_readable) {
        _cleanup_free_ char *why = NULL;
        bool avail = false;

        (void) json_get_bool(o, "available", &avail);
        why = feature_why(o, config_readable);
        if (!why)
                return -ENOMEM;
        (void) table_add_cell(table, TABLE_COLOR_NONE, title);
        (void) table_add_cell(table, avail ? TABLE_COLOR_GREEN : TABLE_COLOR_RED, yes_no(avail));
        (void) table_add_cell(table, TABLE_COLOR_NONE, why);
        return 0;
}

static void print_kernel(json_object *caps, bool *ret_config_readable) {
        json_object *cfg, *ld;
        const char *kernel = "?", *lockdown = NULL, *ld_source = NULL, *source = NULL, *tried = NULL;
        bool readable = false, exact = true;

        (void) json_get_string(caps, "kernel", &kernel);
        if (json_get_object(caps, "lockdown", &ld) >= 0) {
                (void) json_get_string(ld, "mode", &lockdown);
                (void) json_get_string(ld, "source", &ld_source);
                (void) json_get_bool(ld, "exact", &exact);
        }
        if (json_get_object(caps, "kernel_config", &cfg) >= 0) {
                (void) json_get_bool(cfg, "readable", &readable);
                (void) json_get_string(cfg, "source", &source);
                (void) json_get_string(cfg, "tried", &tried);
        }
        printf("Kernel:           %s\n", kernel);
        if (source)
                printf("Configuration:    %s\n", source);
        else if (tried)
                printf("Configuration:    not readable (%s)\n", tried);
        if (lockdown)
                printf("Lockdown:         %s%s (%s)\n", exact ? "" : "at least ", lockdown, ld_source ?: "?");
        *ret_config_readable = readable;
}

static void print_injection(json_object *caps, bool config_readable) {
        _cleanup_free_ char *why = NULL;
        json_object *o;
        bool avail = false;

        if (json_get_object(caps, "injection", &o) < 0)
                return;
        (void) json_get_bool(o, "available", &avail);
        why = feature_why(o, config_readable);
        printf("Injection:        %s: %s\n", avail ? "available" : "UNAVAILABLE", why ?: "");
}

static void print_functions(json_object *caps) {
        json_object *f;
        int64_t any = 0, k = 0, fm = 0, listed = 0, lsm = 0, allowed = 0;

        if (json_get_object(caps, "functions", &f) < 0)
                return;
        (void) json_get_i64(f, "injectable", 0, INT64_MAX, &any);
        (void) json_get_i64(f, "kprobe", 0, INT64_MAX, &k);
        (void) json_get_i64(f, "fmod_ret", 0, INT64_MAX, &fm);
        (void) json_get_i64(f, "listed", 0, INT64_MAX, &listed);
        (void) json_get_i64(f, "lsm_hooks", 0, INT64_MAX, &lsm);
        (void) json_get_i64(f, "allowed", 0, INT64_MAX, &allowed);
        printf("Functions:        %" PRId64 " injectable: %" PRId64 " by kprobe, %" PRId64 " by fmod_ret "
               "(%" PRId64 " on the error-injection list, %" PRId64 " LSM hooks)\n", any, k, fm, listed, lsm);
        printf("                  %" PRId64 " of them allowed for you (injectctl functions --allowed)\n", allowed);
}

static void print_rule(json_object *rule) {
        _cleanup_free_ char *functions = NULL, *errors = NULL, *retvals = NULL, *scopes = NULL;
        json_object *a;
        const char *name = "?";
        uint64_t dur = 0;
        int64_t max_active = 0;

        (void) json_get_string(rule, "name", &name);
        (void) json_get_u64(rule, "max_duration_usec", 0, UINT64_MAX, &dur);
        (void) json_get_i64(rule, "max_active", 0, INT64_MAX, &max_active);
        if (json_get_array(rule, "functions", &a) >= 0)
                functions = join_array(a);
        if (json_get_array(rule, "errors", &a) >= 0)
                errors = join_array(a);
        if (json_get_array(rule, "retvals", &a) >= 0)
                retvals = join_array(a);
        if (json_get_array(rule, "scopes", &a) >= 0)
                scopes = join_array(a);
        printf("  rule %s:\n", name);
        printf("    functions     %s\n", functions ?: "(none)");
        printf("    errors        %s%s%s\n", errors ?: "(none)", retvals ? "; return values " : "", retvals ?: "");
        printf("    scopes        %s\n", scopes ?: "(none)");
        printf("    at most       %s, %" PRId64 " active\n", FORMAT_DURATION(dur), max_active);
}

static void print_policy(json_object *caps) {
        json_object *p, *rules;
        const char *user = NULL;
        bool root = false;
        int64_t uid = -1;
        size_t n;

        if (json_get_object(caps, "policy", &p) < 0)
                return;
        (void) json_get_bool(p, "root", &root);
        (void) json_get_string(p, "user", &user);
        (void) json_get_i64(p, "uid", 0, UINT32_MAX, &uid);
        if (root) {
                uint64_t dur = 0;

                (void) json_get_u64(p, "max_duration_usec", 0, UINT64_MAX, &dur);
                printf("Policy for you:   root: the JSON policy does not apply; any function, value and scope, "
                       "for %s by default\n", FORMAT_DURATION(dur));
                return;
        }
        n = json_get_array(p, "rules", &rules) >= 0 ? json_object_array_length(rules) : 0;
        if (n == 0) {
                printf("Policy for you:   no rule names %s (uid %" PRId64 "): you cannot inject; an administrator "
                       "can add one in /etc/injectd/policy.d\n", user ?: "you", uid);
                return;
        }
        printf("Policy for you:   %s (uid %" PRId64 "), %zu rule%s:\n", user ?: "?", uid, n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++)
                print_rule(json_object_array_get_idx(rules, i));
}

int cmd_caps(int argc, char **argv) {
        _cleanup_(transport_freep) Transport *t = NULL;
        _cleanup_json_ json_object *caps = NULL;
        _cleanup_(table_freep) Table *table = NULL;
        static const char *const old_features[] = { "bpf", "tracing", "btf", "error_injection_list" };
        json_object *o, *limits, *group;
        bool config_readable = false;
        const char *s;
        int64_t n;
        int r;

        r = parse_plain_options(argc, argv, NULL);
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

        print_kernel(caps, &config_readable);
        print_injection(caps, config_readable);
        printf("\n");

        r = table_new(&table, "FEATURE", "OK", "WHY", NULL);
        if (r < 0)
                return report_error(NULL, r, "Cannot make a table");
        if (json_get_object(caps, "features", &group) >= 0) {
                json_object_object_foreach(group, key, f) {
                        r = add_feature_row(table, feature_title(key), f, config_readable);
                        if (r < 0)
                                return report_error(NULL, r, "Out of memory");
                }
        } else
                /* A daemon from before the features object. */
                for (size_t i = 0; i < ELEMENTSOF(old_features); i++)
                        if (json_get_object(caps, old_features[i], &o) >= 0) {
                                r = add_feature_row(table, feature_title(old_features[i]), o, config_readable);
                                if (r < 0)
                                        return report_error(NULL, r, "Out of memory");
                        }
        if (json_get_object(caps, "backends", &group) >= 0) {
                json_object_object_foreach(group, name, b) {
                        _cleanup_free_ char *label = NULL;

                        if (asprintf(&label, "backend %s", name) < 0)
                                return report_error(NULL, -ENOMEM, "Out of memory");
                        r = add_feature_row(table, label, b, config_readable);
                        if (r < 0)
                                return report_error(NULL, r, "Out of memory");
                }
        }
        r = table_print(table, stdout, arg_color ? TABLE_PRINT_COLOR : 0);
        if (r < 0)
                return report_error(NULL, r, "Cannot print");
        printf("\n");

        print_functions(caps);
        print_policy(caps);
        if (json_get_string(caps, "polkit", &s) >= 0)
                printf("polkit:           %s\n", s);
        if (json_get_i64(caps, "active_injections", 0, INT64_MAX, &n) >= 0)
                printf("Your injections:  %" PRId64 "\n", n);
        if (json_get_object(caps, "limits", &limits) >= 0) {
                uint64_t v;

                if (json_get_u64(limits, "max_duration_usec", 0, UINT64_MAX, &v) >= 0)
                        printf("Longest duration: %s\n", FORMAT_DURATION(v));
                if (json_get_u64(limits, "max_active", 0, UINT64_MAX, &v) >= 0)
                        printf("Most active:      %" PRIu64 " (all users together)\n", v);
                if (json_get_u64(limits, "max_per_function", 0, UINT64_MAX, &v) >= 0)
                        printf("Most per function: %" PRIu64 "\n", v);
                if (json_get_u64(limits, "rate_per_minute", 0, UINT64_MAX, &v) >= 0)
                        printf("Rate per minute:  %" PRIu64 "\n", v);
                if (json_get_u64(limits, "max_callers", 0, UINT64_MAX, &v) >= 0)
                        printf("Most callers:     %" PRIu64 "\n", v);
        }
        return 0;
}

enum {
        ARG_TYPE = ARG_COMMAND_BASE,
        ARG_ALLOWED,
};

/* The guards of the listed functions that have some: calls the daemon
 * never fails, whatever an injection says. */
static void print_guards(json_object *functions) {
        size_t n = json_object_array_length(functions);

        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(functions, i), *guards;
                const char *name = "";
                size_t k;

                if (json_get_array(e, "guards", &guards) < 0 || (k = json_object_array_length(guards)) == 0)
                        continue;
                (void) json_get_string(e, "name", &name);
                printf("\n%s is never failed when ", name);
                for (size_t j = 0; j < k; j++)
                        printf("%s%s", j == 0 ? "" : j + 1 == k ? ", or when " : ", when ",
                               json_object_get_string(json_object_array_get_idx(guards, j)));
                printf(".\n");
        }
}

/* The argument filters of the listed functions that take some (inject's
 * --ignore-gfp-wait and the like, the SPEC keys of the same names). */
static void print_filters(json_object *functions) {
        size_t n = json_object_array_length(functions);

        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(functions, i), *filters;
                const char *name = "";
                bool device = false;
                size_t k;

                (void) json_get_bool(e, "device_scope", &device);
                if (device) {
                        (void) json_get_string(e, "name", &name);
                        printf("\n%s takes a device scope: --device DEV fails its calls about that block device, "
                               "in any context.\n", name);
                }
                if (json_get_array(e, "filters", &filters) < 0 || (k = json_object_array_length(filters)) == 0)
                        continue;
                (void) json_get_string(e, "name", &name);
                printf("\n%s takes the argument filters:\n", name);
                for (size_t j = 0; j < k; j++) {
                        json_object *f = json_object_array_get_idx(filters, j);
                        const char *fname = "", *desc = "";

                        (void) json_get_string(f, "name", &fname);
                        (void) json_get_string(f, "description", &desc);
                        /* The request's key, as an option: min_order is --min-order. */
                        printf("  --");
                        for (const char *p = fname; *p; p++)
                                putchar(*p == '_' ? '-' : *p);
                        printf("%s  %s\n", strncmp(fname, "ignore", 6) == 0 ? "" :
                               strcmp(fname, "cache") == 0 ? " NAME" : " N", desc);
                }
        }
}

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
                r = json_append(out, json_object_get(e));
                if (r < 0)
                        return report_error(NULL, r, "Cannot list the functions");
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
        print_guards(out);
        print_filters(out);
        if (!only_allowed && isatty(STDOUT_FILENO))
                printf("\n%zu functions.\n", n);
        return 0;
}

int cmd_reload_policy(int argc, char **argv) {
        _cleanup_(transport_freep) Transport *t = NULL;
        int r;

        r = parse_plain_options(argc, argv, NULL);
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
