/* SPDX-License-Identifier: MIT */

/* One policy file's rules: the JSON read with the shared strict reader,
 * each rule checked key by key, and every refusal placed on the line of
 * what it is about (docs/policy.md, "Problems"). */

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "duration.h"
#include "errno-name.h"
#include "json-reader.h"
#include "json-util.h"
#include "parse-util.h"
#include "policy-cgroup.h"
#include "policy-model.h"
#include "policy-parse.h"

/* Kernel symbols are at most KSYM_NAME_LEN (512) bytes; a pattern longer
 * than this is a mistake. */
#define FUNCTION_PATTERN_MAX 255

typedef struct FileContext {
        Policy *policy;
        const char *path;
        const char *text;
        size_t len;

        json_object *top;               /* the parsed text, borrowed */
        json_object *rules;             /* its "rules" array, once known */
        JsonPositions *positions;       /* where its values and keys stand */

        char *error;            /* the reason the file is refused */
        unsigned error_line;
} FileContext;

typedef struct RuleContext {
        FileContext *file;
        json_object *obj;       /* rules[index], whatever its type */
        size_t index;
        unsigned line;          /* of the rule's '{' */
        char label[POLICY_RULE_NAME_MAX + 16];
} RuleContext;

/* The line of the top-level value, or of the key (want_key) or the value
 * of its member key. */
static unsigned file_locate(FileContext *c, const char *key, bool want_key) {
        JsonPosition root = { .line = 1 }, k, v;

        (void) json_positions_root(c->positions, &root);
        if (!key || json_positions_member(c->positions, c->top, key, &k, &v) < 0)
                return root.line;
        return want_key ? k.line : v.line;
}

/* Records why the file is refused; returns -EBADMSG (or -ENOMEM). */
_printf_(3, 4)
static int file_error(FileContext *c, unsigned line, const char *fmt, ...) {
        va_list ap;
        int k;

        free(c->error);
        va_start(ap, fmt);
        k = vasprintf(&c->error, fmt, ap);
        va_end(ap);
        if (k < 0) {
                c->error = NULL;
                return -ENOMEM;
        }
        c->error_line = line;
        return -EBADMSG;
}

/* The line of rules[index], or of its member key (want_key) or its value,
 * or of element elem (if != SIZE_MAX) of that value. What is not there is
 * placed on the line of what would hold it. */
static unsigned rule_locate(RuleContext *rc, const char *key, size_t elem, bool want_key) {
        JsonPositions *p = rc->file->positions;
        JsonPosition rule = { .line = 1 }, k, v;

        (void) json_positions_element(p, rc->file->rules, rc->index, &rule);
        if (!key || json_positions_member(p, rc->obj, key, &k, &v) < 0)
                return rule.line;
        if (elem == SIZE_MAX)
                return want_key ? k.line : v.line;
        (void) json_positions_element(p, json_object_object_get(rc->obj, key), elem, &v);
        return v.line;
}

/* Refuses the file (level ERROR: returns -EBADMSG) or warns (returns 0),
 * about what rule_locate() finds. */
_printf_(6, 7)
static int rule_problem(RuleContext *rc, PolicyProblemLevel level, const char *key, size_t elem, bool want_key,
                        const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        unsigned line = rule_locate(rc, key, elem, want_key);
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (k < 0) {
                reason = NULL;
                return -ENOMEM;
        }

        if (level == POLICY_PROBLEM_ERROR)
                return file_error(rc->file, line, "%s: %s", rc->label, reason);
        return policy_add_problem(rc->file->policy, level, rc->file->path, line, "%s: %s", rc->label, reason);
}

#define rule_error(rc, key, elem, want_key, ...) \
        rule_problem(rc, POLICY_PROBLEM_ERROR, key, elem, want_key, __VA_ARGS__)
#define rule_warning(rc, key, elem, ...) \
        rule_problem(rc, POLICY_PROBLEM_WARNING, key, elem, false, __VA_ARGS__)

static bool is_alnum(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool rule_name_is_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > POLICY_RULE_NAME_MAX || !is_alnum(s[0]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_alnum(s[i]) && !strchr("._-", s[i]))
                        return false;
        return true;
}

/* Kernel function names are C identifiers, plus '.' for compiler clones
 * (foo.isra.0, foo.cold). Patterns add fnmatch()'s * ? and [...] classes;
 * anything else (a backslash, a space, an unclosed '[') is a mistake.
 * Returns NULL if p is valid, else why not. */
static const char *function_pattern_invalid(const char *p) {
        size_t n = strlen(p);

        if (n == 0)
                return "empty";
        if (n > FUNCTION_PATTERN_MAX)
                return "too long";

        for (size_t i = 0; i < n; i++) {
                char c = p[i];

                if (is_alnum(c) || c == '_' || c == '.' || c == '*' || c == '?')
                        continue;

                if (c == ']')
                        return "']' without '['";
                if (c != '[')
                        return "character not allowed in a function name or pattern";

                i++;
                if (i < n && (p[i] == '!' || p[i] == '^'))
                        i++;
                if (i < n && p[i] == ']')
                        return "empty [] class";
                for (; i < n && p[i] != ']'; i++)
                        if (!is_alnum(p[i]) && p[i] != '_' && p[i] != '.' && p[i] != '-')
                                return "character not allowed in a [] class";
                if (i >= n)
                        return "'[' without ']'";
        }

        return NULL;
}

/* Parses element i of the n in the list key into rule; returns 0, or
 * rule_error()'s return. Called with i == 0 first, to allocate. */
typedef int (*ElementParseFn)(RuleContext *rc, PolicyRule *rule, const char *key, json_object *e, size_t i, size_t n);

/* The optional, non-empty array key, element by element. Returns 1 if the
 * key is there, 0 if not (or null). */
static int rule_parse_list(RuleContext *rc, PolicyRule *rule, const char *key, ElementParseFn parse) {
        json_object *a;
        size_t n;
        int r;

        r = json_get_array(rc->obj, key, &a);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return rule_error(rc, key, SIZE_MAX, false, "\"%s\" must be an array", key);
        n = json_object_array_length(a);
        if (n == 0)
                return rule_error(rc, key, SIZE_MAX, false,
                                  "\"%s\" must not be empty (an empty list would allow nothing; leave the key out)",
                                  key);

        for (size_t i = 0; i < n; i++) {
                r = parse(rc, rule, key, json_object_array_get_idx(a, i), i, n);
                if (r < 0)
                        return r;
        }
        return 1;
}

/* "users" or "groups": names resolved now, numbers taken as they are;
 * unknown names are dropped with a warning. */
static int parse_subject(RuleContext *rc, PolicyRule *rule, const char *key, json_object *e, size_t i, size_t n) {
        bool users = strcmp(key, "users") == 0;
        const char *what = users ? "user" : "group";
        uint32_t **ids = users ? &rule->uids : &rule->gids;
        size_t *n_ids = users ? &rule->n_uids : &rule->n_gids;
        const char *s;
        uint64_t u;
        int r;

        if (i == 0 && !(*ids = calloc(n, sizeof(uint32_t))))
                return -ENOMEM;

        r = json_get_u64(e, NULL, 0, UINT32_MAX - 1, &u);
        if (r == -ERANGE)
                return rule_error(rc, key, i, false, "%s id out of range", what);
        if (r >= 0) {
                (*ids)[(*n_ids)++] = (uint32_t) u;
                return 0;
        }

        r = json_get_string(e, NULL, &s);
        if (r < 0 || s[0] == '\0')
                return rule_error(rc, key, i, false, "\"%s\" entries must be %s names or numeric ids", key, what);

        if (strcmp(s, "*") == 0) {
                if (!users)
                        return rule_error(rc, key, i, false,
                                          "\"*\" is not valid in \"groups\"; write \"users\": [\"*\"] to name every user");
                rule->all_users = true;
                return 0;
        }

        r = parse_uid(s, &(*ids)[*n_ids]);
        if (r == -ERANGE)
                return rule_error(rc, key, i, false, "%s id \"%s\" out of range", what, s);
        if (r >= 0) {
                (*n_ids)++;
                return 0;
        }

        errno = 0;
        if (users) {
                struct passwd *pw = getpwnam(s);

                if (pw) {
                        (*ids)[(*n_ids)++] = pw->pw_uid;
                        return 0;
                }
        } else {
                struct group *gr = getgrnam(s);

                if (gr) {
                        (*ids)[(*n_ids)++] = gr->gr_gid;
                        return 0;
                }
        }

        if (errno == 0 || errno == ENOENT || errno == ESRCH)
                return rule_warning(rc, key, i, "unknown %s \"%s\", ignoring", what, s);
        return rule_warning(rc, key, i, "cannot look up %s \"%s\" (%s), ignoring", what, s, strerror(errno));
}

static int parse_function(RuleContext *rc, PolicyRule *rule, const char *key, json_object *e, size_t i, size_t n) {
        const char *s, *why;

        if (i == 0 && !(rule->functions = calloc(n, sizeof(char *))))
                return -ENOMEM;

        if (json_get_string(e, NULL, &s) < 0)
                return rule_error(rc, key, i, false, "\"functions\" entries must be strings");

        why = function_pattern_invalid(s);
        if (why)
                return rule_error(rc, key, i, false, "invalid function pattern \"%s\": %s", s, why);

        rule->functions[i] = strdup(s);
        if (!rule->functions[i])
                return -ENOMEM;
        rule->n_functions = i + 1;
        return 0;
}

/* "cgroups": patterns of the caller's cgroup, checked now so that a typo
 * refuses the file rather than matching nothing (or too much). */
static int parse_cgroup(RuleContext *rc, PolicyRule *rule, const char *key, json_object *e, size_t i, size_t n) {
        const char *s, *why;

        if (i == 0 && !(rule->cgroups = calloc(n, sizeof(char *))))
                return -ENOMEM;

        if (json_get_string(e, NULL, &s) < 0)
                return rule_error(rc, key, i, false, "\"cgroups\" entries must be strings");

        why = policy_cgroup_pattern_invalid(s);
        if (why)
                return rule_error(rc, key, i, false, "invalid cgroup pattern \"%s\": %s", s, why);

        rule->cgroups[i] = strdup(s);
        if (!rule->cgroups[i])
                return -ENOMEM;
        rule->n_cgroups = i + 1;
        return 0;
}

static int parse_error(RuleContext *rc, PolicyRule *rule, const char *key, json_object *e, size_t i, size_t n) {
        const char *s, *suggestion;
        int64_t v;
        int r, err;

        if (i == 0 && !(rule->errors = calloc(n, sizeof(int))))
                return -ENOMEM;

        r = json_get_i64(e, NULL, -ERRNO_MAX, ERRNO_MAX, &v);
        if (r >= 0 && v == 0)
                r = -ERANGE;
        if (r == -ERANGE)
                return rule_error(rc, key, i, false,
                                  "error numbers must lie in 1..%d (or -%d..-1)", ERRNO_MAX, ERRNO_MAX);
        if (r >= 0) {
                rule->errors[rule->n_errors++] = (int) (v < 0 ? -v : v);
                return 0;
        }

        if (json_get_string(e, NULL, &s) < 0)
                return rule_error(rc, key, i, false, "\"errors\" entries must be errno names, numbers or \"*\"");

        if (strcmp(s, "*") == 0) {
                rule->any_errno = true;
                return 0;
        }

        if (errno_from_name(s, &err) < 0) {
                if (errno_suggest(s, &suggestion) >= 0)
                        return rule_error(rc, key, i, false, "unknown error \"%s\" (did you mean %s?)", s, suggestion);
                return rule_error(rc, key, i, false, "unknown error \"%s\"", s);
        }
        rule->errors[rule->n_errors++] = err;
        return 0;
}

static int parse_retval(RuleContext *rc, PolicyRule *rule, const char *key, json_object *e, size_t i, size_t n) {
        int r;

        if (i == 0 && !(rule->retvals = calloc(n, sizeof(int64_t))))
                return -ENOMEM;

        r = json_get_i64(e, NULL, INT64_MIN, INT64_MAX, &rule->retvals[i]);
        if (r == -ERANGE)
                return rule_error(rc, key, i, false, "return value out of range");
        if (r < 0)
                return rule_error(rc, key, i, false, "\"retvals\" entries must be integers");
        rule->n_retvals = i + 1;
        return 0;
}

static int parse_scope(RuleContext *rc, PolicyRule *rule, const char *key, json_object *e, size_t i, size_t n) {
        const char *s;
        int scope;

        if (json_get_string(e, NULL, &s) < 0)
                return rule_error(rc, key, i, false, "\"scopes\" entries must be strings");

        scope = policy_scope_from_string(s);
        if (scope < 0)
                return rule_error(rc, key, i, false,
                                  "unknown scope \"%s\" (expected \"cgroup\", \"process\", \"global\", "
                                  "\"device\", \"foreign-cgroup\", \"foreign-process\" or \"foreign-device\")", s);
        rule->scopes |= 1u << scope;
        /* Who may fail others' processes may fail their own. */
        if (scope == POLICY_SCOPE_FOREIGN_CGROUP)
                rule->scopes |= 1u << POLICY_SCOPE_CGROUP;
        if (scope == POLICY_SCOPE_FOREIGN_PROCESS)
                rule->scopes |= 1u << POLICY_SCOPE_PROCESS;
        if (scope == POLICY_SCOPE_FOREIGN_DEVICE)
                rule->scopes |= 1u << POLICY_SCOPE_DEVICE;
        return 0;
}

/* "devices": patterns of block device names ("nvme1n1", "sd[b-d]"), the
 * disks "foreign-device" grants. Names are the kernel's, as in /sys/block. */
static int parse_device(RuleContext *rc, PolicyRule *rule, const char *key, json_object *e, size_t i, size_t n) {
        const char *s;

        if (i == 0 && !(rule->devices = calloc(n, sizeof(char *))))
                return -ENOMEM;
        if (json_get_string(e, NULL, &s) < 0)
                return rule_error(rc, key, i, false, "\"devices\" entries must be strings");
        if (!*s || strlen(s) > 64 || strchr(s, '/'))
                return rule_error(rc, key, i, false,
                                  "invalid device pattern \"%s\": a block device's kernel name (as in /sys/block), "
                                  "without /dev/, with * ? [...] if wanted", s);
        rule->devices[i] = strdup(s);
        if (!rule->devices[i])
                return -ENOMEM;
        rule->n_devices = i + 1;
        return 0;
}

static int rule_parse_max_duration(RuleContext *rc, PolicyRule *rule) {
        const char *s;
        int r;

        r = json_get_string(rc->obj, "max-duration", &s);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return rule_error(rc, "max-duration", SIZE_MAX, false,
                                  "\"max-duration\" must be a string such as \"10min\"");

        r = parse_duration(s, &rule->max_duration_usec);
        if (r == -ERANGE)
                return rule_error(rc, "max-duration", SIZE_MAX, false,
                                  "\"max-duration\" \"%s\" is out of range", s);
        if (r < 0)
                return rule_error(rc, "max-duration", SIZE_MAX, false,
                                  "\"max-duration\" \"%s\" is not a duration (such as \"10min\")", s);
        if (rule->max_duration_usec == 0)
                return rule_error(rc, "max-duration", SIZE_MAX, false,
                                  "\"max-duration\" must be longer than zero");
        return 1;
}

static int rule_parse_max_active(RuleContext *rc, PolicyRule *rule) {
        uint64_t u;
        int r;

        r = json_get_u64(rc->obj, "max-active", 1, UINT_MAX, &u);
        if (r == -ENOENT)
                return 0;
        if (r == -ERANGE)
                return rule_error(rc, "max-active", SIZE_MAX, false,
                                  "\"max-active\" must lie in 1..%u", UINT_MAX);
        if (r < 0)
                return rule_error(rc, "max-active", SIZE_MAX, false, "\"max-active\" must be an integer");

        rule->max_active = (unsigned) u;
        return 1;
}

static int rule_parse_kernel_log(RuleContext *rc, PolicyRule *rule) {
        int r;

        r = json_get_bool(rc->obj, "kernel-log", &rule->kernel_log);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return rule_error(rc, "kernel-log", SIZE_MAX, false, "\"kernel-log\" must be true or false");
        return 1;
}

/* The keys of a rule beyond its name, description and "enabled", in the
 * order they are checked; each parser returns 1 if its key is there, 0 if
 * not. */
enum {
        RULE_USERS,
        RULE_GROUPS,
        RULE_CGROUPS,
        RULE_FUNCTIONS,
        RULE_ERRORS,
        RULE_RETVALS,
        RULE_SCOPES,
        RULE_MAX_DURATION,
        RULE_MAX_ACTIVE,
        RULE_KERNEL_LOG,
        RULE_DEVICES,
        _RULE_KEY_MAX,
};

static const struct {
        const char *key;
        ElementParseFn element;                         /* a list, element by element */
        int (*value)(RuleContext *rc, PolicyRule *rule); /* or a single value */
} rule_keys[_RULE_KEY_MAX] = {
        [RULE_USERS]        = { "users",        .element = parse_subject },
        [RULE_GROUPS]       = { "groups",       .element = parse_subject },
        [RULE_CGROUPS]      = { "cgroups",      .element = parse_cgroup },
        [RULE_FUNCTIONS]    = { "functions",    .element = parse_function },
        [RULE_ERRORS]       = { "errors",       .element = parse_error },
        [RULE_RETVALS]      = { "retvals",      .element = parse_retval },
        [RULE_SCOPES]       = { "scopes",       .element = parse_scope },
        [RULE_MAX_DURATION] = { "max-duration", .value = rule_parse_max_duration },
        [RULE_MAX_ACTIVE]   = { "max-active",   .value = rule_parse_max_active },
        [RULE_KERNEL_LOG]   = { "kernel-log",   .value = rule_parse_kernel_log },
        [RULE_DEVICES]      = { "devices",      .element = parse_device },
};

static int rule_parse(FileContext *c, json_object *rules, size_t index, PolicyRule **ret) {
        static const char *const keys[] = {
                "name", "description", "enabled", "deny", "users", "groups", "cgroups", "functions",
                "errors", "retvals", "scopes", "max-duration", "max-active", "kernel-log", "devices", NULL,
        };
        _cleanup_(policy_rule_freep) PolicyRule *rule = NULL;
        RuleContext rc = {
                .file = c,
                .obj = json_object_array_get_idx(rules, index),
                .index = index,
        };
        bool has[_RULE_KEY_MAX];
        const char *name, *s, *unknown;
        int r;

        (void) snprintf(rc.label, sizeof(rc.label), "rule #%zu", index + 1);
        rc.line = rule_locate(&rc, NULL, SIZE_MAX, false);

        if (!json_object_is_type(rc.obj, json_type_object))
                return rule_error(&rc, NULL, SIZE_MAX, false, "must be an object");

        r = json_get_string(rc.obj, "name", &name);
        if (r == -ENOENT)
                return rule_error(&rc, NULL, SIZE_MAX, false, "\"name\" is required");
        if (r < 0)
                return rule_error(&rc, "name", SIZE_MAX, false, "\"name\" must be a string");
        if (!rule_name_is_valid(name))
                return rule_error(&rc, "name", SIZE_MAX, false,
                                  "invalid rule name \"%s\" (1..%d of A-Z a-z 0-9 . _ -, starting with a letter or digit)",
                                  name, POLICY_RULE_NAME_MAX);
        (void) snprintf(rc.label, sizeof(rc.label), "rule \"%s\"", name);

        r = json_check_keys(rc.obj, keys, &unknown);
        if (r < 0)
                return rule_error(&rc, unknown, SIZE_MAX, true, "unknown key \"%s\"", unknown);

        rule = calloc(1, sizeof(*rule));
        if (!rule)
                return -ENOMEM;
        rule->line = rc.line;
        rule->enabled = true;
        rule->name = strdup(name);
        rule->file = strdup(c->path);
        if (!rule->name || !rule->file)
                return -ENOMEM;

        r = json_get_bool(rc.obj, "enabled", &rule->enabled);
        if (r < 0 && r != -ENOENT)
                return rule_error(&rc, "enabled", SIZE_MAX, false, "\"enabled\" must be true or false");

        r = json_get_bool(rc.obj, "deny", &rule->deny);
        if (r < 0 && r != -ENOENT)
                return rule_error(&rc, "deny", SIZE_MAX, false, "\"deny\" must be true or false");

        r = json_get_string(rc.obj, "description", &s);
        if (r >= 0) {
                rule->description = strdup(s);
                if (!rule->description)
                        return -ENOMEM;
        } else if (r != -ENOENT)
                return rule_error(&rc, "description", SIZE_MAX, false, "\"description\" must be a string");

        for (size_t k = 0; k < _RULE_KEY_MAX; k++) {
                r = rule_keys[k].element ? rule_parse_list(&rc, rule, rule_keys[k].key, rule_keys[k].element)
                                         : rule_keys[k].value(&rc, rule);
                if (r < 0)
                        return r;
                has[k] = r > 0;
        }

        /* A deny rule refuses every value, scope and duration of its
         * functions: a key that seems to narrow it would mislead. */
        if (rule->deny) {
                static const unsigned allow_only[] = {
                        RULE_ERRORS, RULE_RETVALS, RULE_SCOPES, RULE_MAX_DURATION, RULE_MAX_ACTIVE,
                        RULE_KERNEL_LOG, RULE_DEVICES,
                };

                for (size_t k = 0; k < ELEMENTSOF(allow_only); k++)
                        if (has[allow_only[k]])
                                return rule_error(&rc, rule_keys[allow_only[k]].key, SIZE_MAX, true,
                                                  "\"%s\" is not allowed in a deny rule (it refuses its "
                                                  "functions whatever the value, scope or duration)",
                                                  rule_keys[allow_only[k]].key);
        }

        /* A disabled rule only needs its name: it exists to switch off an
         * earlier rule of that name. What else it says is still checked. */
        if (rule->enabled && rule->deny) {
                if (!has[RULE_USERS] && !has[RULE_GROUPS])
                        return rule_error(&rc, NULL, SIZE_MAX, false,
                                          "no subjects: \"users\" or \"groups\" is required");
                if (!has[RULE_FUNCTIONS])
                        return rule_error(&rc, NULL, SIZE_MAX, false,
                                          "\"functions\" is required (write [\"*\"] to deny every function)");
        } else if (rule->enabled) {
                if (!has[RULE_USERS] && !has[RULE_GROUPS])
                        return rule_error(&rc, NULL, SIZE_MAX, false,
                                          "no subjects: \"users\" or \"groups\" is required");
                if (!has[RULE_FUNCTIONS])
                        return rule_error(&rc, NULL, SIZE_MAX, false, "\"functions\" is required");
                if (!has[RULE_ERRORS] && !has[RULE_RETVALS])
                        return rule_error(&rc, NULL, SIZE_MAX, false,
                                          "\"errors\" or \"retvals\" is required");
                if (!has[RULE_SCOPES])
                        return rule_error(&rc, NULL, SIZE_MAX, false, "\"scopes\" is required");
                if (!has[RULE_MAX_DURATION])
                        return rule_error(&rc, NULL, SIZE_MAX, false, "\"max-duration\" is required");
                if (!has[RULE_MAX_ACTIVE])
                        return rule_error(&rc, NULL, SIZE_MAX, false, "\"max-active\" is required");
                /* An empty list never means every device. */
                if ((rule->scopes & (1u << POLICY_SCOPE_FOREIGN_DEVICE)) && !has[RULE_DEVICES])
                        return rule_error(&rc, "scopes", SIZE_MAX, false,
                                          "\"foreign-device\" needs \"devices\", the block devices it grants");
                if (has[RULE_DEVICES] && !(rule->scopes & (1u << POLICY_SCOPE_FOREIGN_DEVICE)))
                        return rule_error(&rc, "devices", SIZE_MAX, false,
                                          "\"devices\" goes with scope \"foreign-device\", which it narrows");
        }

        *ret = TAKE_PTR(rule);
        return 0;
}


static int file_parse(FileContext *c, FileRules *ret, json_object **reterr_json) {
        static const char *const top_keys[] = { "rules", NULL };
        _cleanup_json_ json_object *obj = NULL;
        _cleanup_(file_rules_done) FileRules f = {};
        JsonReadError e;
        json_object *rules;
        const char *unknown;
        size_t n;
        int r;

        r = json_read(c->text, c->len, 0, &obj, &c->positions, &e);
        if (r == -EBADMSG || r == -ERANGE)
                return file_error(c, e.position.line, "invalid JSON: %s", e.message);
        if (r < 0)
                return r;
        c->top = obj;

        if (!json_object_is_type(obj, json_type_object))
                return file_error(c, file_locate(c, NULL, false),
                                  "the top level must be an object with a \"rules\" array");

        r = json_check_keys(obj, top_keys, &unknown);
        if (r < 0)
                return file_error(c, file_locate(c, unknown, true),
                                  "unknown key \"%s\" (expected \"rules\")", unknown);

        r = json_get_array(obj, "rules", &rules);
        if (r >= 0)
                c->rules = rules;
        if (r == -ENOENT)
                return file_error(c, file_locate(c, NULL, false), "\"rules\" is required");
        if (r < 0)
                return file_error(c, file_locate(c, "rules", false),
                                  "\"rules\" must be an array");

        /* From here on the caller may want the names. */
        *reterr_json = json_object_get(obj);

        n = json_object_array_length(rules);
        f.rules = calloc(n > 0 ? n : 1, sizeof(PolicyRule *));
        if (!f.rules)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                PolicyRule *rule = NULL;

                r = rule_parse(c, rules, i, &rule);
                if (r < 0)
                        return r;

                for (size_t k = 0; k < f.n; k++)
                        if (strcmp(f.rules[k]->name, rule->name) == 0) {
                                RuleContext rc = {
                                        .file = c,
                                        .obj = json_object_array_get_idx(rules, i),
                                        .index = i,
                                };
                                unsigned first = f.rules[k]->line;

                                (void) snprintf(rc.label, sizeof(rc.label), "rule \"%s\"", rule->name);
                                policy_rule_free(rule);
                                return rule_error(&rc, "name", SIZE_MAX, false,
                                                  "duplicate rule name (first defined on line %u)", first);
                        }

                f.rules[f.n++] = rule;
        }

        *ret = f;
        f = (FileRules) {};
        return 0;
}


void file_rules_done(FileRules *f) {
        for (size_t i = 0; i < f->n; i++)
                policy_rule_free(f->rules[i]);
        free(f->rules);
        *f = (FileRules) {};
}

int policy_file_parse(Policy *p, const char *path, const char *text, size_t len, FileRules *ret,
                      json_object **reterr_json, char **reterr_message, unsigned *reterr_line) {
        _cleanup_json_ json_object *json = NULL;
        FileContext c = {
                .policy = p,
                .path = path,
                .text = text,
                .len = len,
        };
        int r;

        r = file_parse(&c, ret, &json);
        json_positions_free(c.positions);
        if (r == -EBADMSG) {
                *reterr_json = TAKE_PTR(json);
                *reterr_message = c.error;
                *reterr_line = c.error_line;
                return r;
        }
        free(c.error);
        return r;
}
