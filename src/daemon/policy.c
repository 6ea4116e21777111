/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "duration.h"
#include "errno-name.h"
#include "json-reader.h"
#include "json-util.h"
#include "parse-util.h"
#include "policy.h"
#include "strv.h"

struct Policy {
        PolicyRule **rules;
        size_t n_rules;
        PolicyProblem *problems;
        size_t n_problems;
        bool has_errors;
};

/* Kernel symbols are at most KSYM_NAME_LEN (512) bytes; a pattern longer
 * than this is a mistake. */
#define FUNCTION_PATTERN_MAX 255

static const char *const policy_scope_table[_POLICY_SCOPE_MAX] = {
        [POLICY_SCOPE_CGROUP]  = "cgroup",
        [POLICY_SCOPE_PROCESS] = "process",
        [POLICY_SCOPE_GLOBAL]  = "global",
};

const char *policy_scope_to_string(PolicyScope s) {
        if ((unsigned) s >= _POLICY_SCOPE_MAX)
                return NULL;
        return policy_scope_table[s];
}

int policy_scope_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (int i = 0; i < _POLICY_SCOPE_MAX; i++)
                if (strcmp(policy_scope_table[i], s) == 0)
                        return i;
        return -EINVAL;
}

static const char *const policy_denial_error_table[_POLICY_DENIAL_MAX] = {
        [POLICY_DENIAL_NONE]     = NULL,
        [POLICY_DENIAL_USER]     = POLICY_ERROR_USER_NOT_IN_POLICY,
        [POLICY_DENIAL_FUNCTION] = POLICY_ERROR_FUNCTION_NOT_ALLOWED,
        [POLICY_DENIAL_VALUE]    = POLICY_ERROR_ERROR_NOT_ALLOWED,
        [POLICY_DENIAL_SCOPE]    = POLICY_ERROR_SCOPE_NOT_ALLOWED,
        [POLICY_DENIAL_DURATION] = POLICY_ERROR_DURATION_TOO_LONG,
};

const char *policy_denial_to_error_name(PolicyDenial d) {
        if ((unsigned) d >= _POLICY_DENIAL_MAX)
                return NULL;
        return policy_denial_error_table[d];
}

/* ---- Rules, problems, the policy ---- */

static PolicyRule *policy_rule_free(PolicyRule *r) {
        if (!r)
                return NULL;

        free(r->name);
        free(r->description);
        free(r->file);
        free(r->uids);
        free(r->gids);
        for (size_t i = 0; i < r->n_functions; i++)
                free(r->functions[i]);
        free(r->functions);
        free(r->errors);
        free(r->retvals);
        free(r);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(PolicyRule *, policy_rule_free)

static void policy_problem_done(PolicyProblem *pr) {
        free(pr->path);
        free(pr->message);
        *pr = (PolicyProblem) {};
}

Policy *policy_free(Policy *p) {
        if (!p)
                return NULL;

        for (size_t i = 0; i < p->n_rules; i++)
                policy_rule_free(p->rules[i]);
        free(p->rules);
        for (size_t i = 0; i < p->n_problems; i++)
                policy_problem_done(&p->problems[i]);
        free(p->problems);
        free(p);
        return NULL;
}

static int policy_add_problemv(Policy *p, PolicyProblemLevel level, const char *path, unsigned line,
                               const char *fmt, va_list ap) {
        _cleanup_free_ char *reason = NULL, *message = NULL, *path_copy = NULL;
        PolicyProblem *a;
        int k;

        if (vasprintf(&reason, fmt, ap) < 0) {
                reason = NULL;
                return -ENOMEM;
        }

        if (line > 0)
                k = asprintf(&message, "%s:%u: %s", path, line, reason);
        else
                k = asprintf(&message, "%s: %s", path, reason);
        if (k < 0) {
                message = NULL;
                return -ENOMEM;
        }

        path_copy = strdup(path);
        if (!path_copy)
                return -ENOMEM;

        a = reallocarray(p->problems, p->n_problems + 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        p->problems = a;

        p->problems[p->n_problems++] = (PolicyProblem) {
                .level = level,
                .path = TAKE_PTR(path_copy),
                .line = line,
                .message = TAKE_PTR(message),
        };
        if (level == POLICY_PROBLEM_ERROR)
                p->has_errors = true;
        return 0;
}

_printf_(5, 6)
static int policy_add_problem(Policy *p, PolicyProblemLevel level, const char *path, unsigned line,
                              const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = policy_add_problemv(p, level, path, line, fmt, ap);
        va_end(ap);
        return r;
}

/* Drops the problems recorded after the first n, e.g. the warnings of a
 * file that ended up refused. */
static void policy_truncate_problems(Policy *p, size_t n) {
        while (p->n_problems > n)
                policy_problem_done(&p->problems[--p->n_problems]);
}

const PolicyProblem *policy_problems(const Policy *p, size_t *ret_n) {
        if (!p) {
                if (ret_n)
                        *ret_n = 0;
                return NULL;
        }
        if (ret_n)
                *ret_n = p->n_problems;
        return p->problems;
}

bool policy_has_errors(const Policy *p) {
        return p && p->has_errors;
}

size_t policy_n_rules(const Policy *p) {
        return p ? p->n_rules : 0;
}

const PolicyRule *policy_rule(const Policy *p, size_t i) {
        if (!p || i >= p->n_rules)
                return NULL;
        return p->rules[i];
}

static ssize_t policy_rule_index(const Policy *p, const char *name) {
        for (size_t i = 0; i < p->n_rules; i++)
                if (strcmp(p->rules[i]->name, name) == 0)
                        return (ssize_t) i;
        return -1;
}

const PolicyRule *policy_find_rule(const Policy *p, const char *name) {
        ssize_t i;

        if (!p || !name)
                return NULL;
        i = policy_rule_index(p, name);
        return i < 0 ? NULL : p->rules[i];
}

/* ---- Parsing one file ---- */

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

_printf_(5, 6)
static int rule_error(RuleContext *rc, const char *key, size_t elem, bool want_key, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (k < 0) {
                reason = NULL;
                return -ENOMEM;
        }

        return file_error(rc->file, rule_locate(rc, key, elem, want_key), "%s: %s", rc->label, reason);
}

_printf_(4, 5)
static int rule_warning(RuleContext *rc, const char *key, size_t elem, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (k < 0) {
                reason = NULL;
                return -ENOMEM;
        }

        return policy_add_problem(rc->file->policy, POLICY_PROBLEM_WARNING, rc->file->path,
                                  rule_locate(rc, key, elem, false), "%s: %s", rc->label, reason);
}

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

/* An optional, non-empty array. *ret is NULL if absent (or null). */
static int rule_get_array(RuleContext *rc, const char *key, json_object **ret, size_t *ret_n) {
        json_object *a;
        int r;

        r = json_get_array(rc->obj, key, &a);
        if (r == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return rule_error(rc, key, SIZE_MAX, false, "\"%s\" must be an array", key);
        if (json_object_array_length(a) == 0)
                return rule_error(rc, key, SIZE_MAX, false,
                                  "\"%s\" must not be empty (an empty list would allow nothing; leave the key out)",
                                  key);

        *ret = a;
        *ret_n = json_object_array_length(a);
        return 0;
}

/* "users" or "groups": names resolved now, numbers taken as they are. */
static int rule_parse_subjects(RuleContext *rc, PolicyRule *rule, bool users) {
        const char *key = users ? "users" : "groups";
        const char *what = users ? "user" : "group";
        _cleanup_free_ uint32_t *ids = NULL;
        size_t n, n_ids = 0;
        json_object *a;
        int r;

        r = rule_get_array(rc, key, &a, &n);
        if (r < 0 || !a)
                return r;

        ids = calloc(n, sizeof(*ids));
        if (!ids)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *s;
                uint64_t u;

                r = json_get_u64(e, NULL, 0, UINT32_MAX - 1, &u);
                if (r == -ERANGE)
                        return rule_error(rc, key, i, false, "%s id out of range", what);
                if (r >= 0) {
                        ids[n_ids++] = (uint32_t) u;
                        continue;
                }

                r = json_get_string(e, NULL, &s);
                if (r < 0 || s[0] == '\0')
                        return rule_error(rc, key, i, false,
                                          "\"%s\" entries must be %s names or numeric ids", key, what);

                if (strcmp(s, "*") == 0) {
                        if (!users)
                                return rule_error(rc, key, i, false,
                                                  "\"*\" is not valid in \"groups\"; write \"users\": [\"*\"] to name every user");
                        rule->all_users = true;
                        continue;
                }

                r = parse_uid(s, &ids[n_ids]);
                if (r == -ERANGE)
                        return rule_error(rc, key, i, false, "%s id \"%s\" out of range", what, s);
                if (r >= 0) {
                        n_ids++;
                        continue;
                }

                errno = 0;
                if (users) {
                        struct passwd *pw = getpwnam(s);

                        if (pw) {
                                ids[n_ids++] = pw->pw_uid;
                                continue;
                        }
                } else {
                        struct group *gr = getgrnam(s);

                        if (gr) {
                                ids[n_ids++] = gr->gr_gid;
                                continue;
                        }
                }

                if (errno == 0 || errno == ENOENT || errno == ESRCH)
                        r = rule_warning(rc, key, i, "unknown %s \"%s\", ignoring", what, s);
                else
                        r = rule_warning(rc, key, i, "cannot look up %s \"%s\" (%s), ignoring",
                                         what, s, strerror(errno));
                if (r < 0)
                        return r;
        }

        if (users) {
                rule->uids = (uid_t *) TAKE_PTR(ids);
                rule->n_uids = n_ids;
        } else {
                rule->gids = (gid_t *) TAKE_PTR(ids);
                rule->n_gids = n_ids;
        }
        return 1;
}

static int rule_parse_functions(RuleContext *rc, PolicyRule *rule) {
        json_object *a;
        size_t n;
        int r;

        r = rule_get_array(rc, "functions", &a, &n);
        if (r < 0 || !a)
                return r;

        rule->functions = calloc(n, sizeof(char *));
        if (!rule->functions)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                const char *s, *why;

                r = json_get_string(json_object_array_get_idx(a, i), NULL, &s);
                if (r < 0)
                        return rule_error(rc, "functions", i, false,
                                          "\"functions\" entries must be strings");

                why = function_pattern_invalid(s);
                if (why)
                        return rule_error(rc, "functions", i, false,
                                          "invalid function pattern \"%s\": %s", s, why);

                rule->functions[i] = strdup(s);
                if (!rule->functions[i])
                        return -ENOMEM;
                rule->n_functions = i + 1;
        }

        return 1;
}

static int rule_parse_errors(RuleContext *rc, PolicyRule *rule) {
        json_object *a;
        size_t n;
        int r;

        r = rule_get_array(rc, "errors", &a, &n);
        if (r < 0 || !a)
                return r;

        rule->errors = calloc(n, sizeof(int));
        if (!rule->errors)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                const char *s, *suggestion;
                int64_t v;
                int err;

                r = json_get_i64(e, NULL, -ERRNO_MAX, ERRNO_MAX, &v);
                if (r >= 0 && v == 0)
                        r = -ERANGE;
                if (r == -ERANGE)
                        return rule_error(rc, "errors", i, false,
                                          "error numbers must lie in 1..%d (or -%d..-1)", ERRNO_MAX, ERRNO_MAX);
                if (r >= 0) {
                        rule->errors[rule->n_errors++] = (int) (v < 0 ? -v : v);
                        continue;
                }

                r = json_get_string(e, NULL, &s);
                if (r < 0)
                        return rule_error(rc, "errors", i, false,
                                          "\"errors\" entries must be errno names, numbers or \"*\"");

                if (strcmp(s, "*") == 0) {
                        rule->any_errno = true;
                        continue;
                }

                r = errno_from_name(s, &err);
                if (r < 0) {
                        if (errno_suggest(s, &suggestion) >= 0)
                                return rule_error(rc, "errors", i, false,
                                                  "unknown error \"%s\" (did you mean %s?)", s, suggestion);
                        return rule_error(rc, "errors", i, false, "unknown error \"%s\"", s);
                }
                rule->errors[rule->n_errors++] = err;
        }

        return 1;
}

static int rule_parse_retvals(RuleContext *rc, PolicyRule *rule) {
        json_object *a;
        size_t n;
        int r;

        r = rule_get_array(rc, "retvals", &a, &n);
        if (r < 0 || !a)
                return r;

        rule->retvals = calloc(n, sizeof(int64_t));
        if (!rule->retvals)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                r = json_get_i64(json_object_array_get_idx(a, i), NULL, INT64_MIN, INT64_MAX,
                                 &rule->retvals[i]);
                if (r == -ERANGE)
                        return rule_error(rc, "retvals", i, false, "return value out of range");
                if (r < 0)
                        return rule_error(rc, "retvals", i, false, "\"retvals\" entries must be integers");
                rule->n_retvals = i + 1;
        }

        return 1;
}

static int rule_parse_scopes(RuleContext *rc, PolicyRule *rule) {
        json_object *a;
        size_t n;
        int r;

        r = rule_get_array(rc, "scopes", &a, &n);
        if (r < 0 || !a)
                return r;

        for (size_t i = 0; i < n; i++) {
                const char *s;
                int scope;

                r = json_get_string(json_object_array_get_idx(a, i), NULL, &s);
                if (r < 0)
                        return rule_error(rc, "scopes", i, false, "\"scopes\" entries must be strings");

                scope = policy_scope_from_string(s);
                if (scope < 0)
                        return rule_error(rc, "scopes", i, false,
                                          "unknown scope \"%s\" (expected \"cgroup\", \"process\" or \"global\")", s);
                rule->scopes |= 1u << scope;
        }

        return 1;
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

static int rule_parse(FileContext *c, json_object *rules, size_t index, PolicyRule **ret) {
        static const char *const keys[] = {
                "name", "description", "enabled", "users", "groups", "functions",
                "errors", "retvals", "scopes", "max-duration", "max-active", NULL,
        };
        _cleanup_(policy_rule_freep) PolicyRule *rule = NULL;
        RuleContext rc = {
                .file = c,
                .obj = json_object_array_get_idx(rules, index),
                .index = index,
        };
        int has_users, has_groups, has_functions, has_errors, has_retvals, has_scopes,
                has_duration, has_active;
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

        r = json_get_string(rc.obj, "description", &s);
        if (r >= 0) {
                rule->description = strdup(s);
                if (!rule->description)
                        return -ENOMEM;
        } else if (r != -ENOENT)
                return rule_error(&rc, "description", SIZE_MAX, false, "\"description\" must be a string");

        /* Each returns 1 if the key is there, 0 if not. */
        has_users = r = rule_parse_subjects(&rc, rule, true);
        if (r < 0)
                return r;
        has_groups = r = rule_parse_subjects(&rc, rule, false);
        if (r < 0)
                return r;
        has_functions = r = rule_parse_functions(&rc, rule);
        if (r < 0)
                return r;
        has_errors = r = rule_parse_errors(&rc, rule);
        if (r < 0)
                return r;
        has_retvals = r = rule_parse_retvals(&rc, rule);
        if (r < 0)
                return r;
        has_scopes = r = rule_parse_scopes(&rc, rule);
        if (r < 0)
                return r;
        has_duration = r = rule_parse_max_duration(&rc, rule);
        if (r < 0)
                return r;
        has_active = r = rule_parse_max_active(&rc, rule);
        if (r < 0)
                return r;

        /* A disabled rule only needs its name: it exists to switch off an
         * earlier rule of that name. What else it says is still checked. */
        if (rule->enabled) {
                if (!has_users && !has_groups)
                        return rule_error(&rc, NULL, SIZE_MAX, false,
                                          "no subjects: \"users\" or \"groups\" is required");
                if (!has_functions)
                        return rule_error(&rc, NULL, SIZE_MAX, false, "\"functions\" is required");
                if (!has_errors && !has_retvals)
                        return rule_error(&rc, NULL, SIZE_MAX, false,
                                          "\"errors\" or \"retvals\" is required");
                if (!has_scopes)
                        return rule_error(&rc, NULL, SIZE_MAX, false, "\"scopes\" is required");
                if (!has_duration)
                        return rule_error(&rc, NULL, SIZE_MAX, false, "\"max-duration\" is required");
                if (!has_active)
                        return rule_error(&rc, NULL, SIZE_MAX, false, "\"max-active\" is required");
        }

        *ret = TAKE_PTR(rule);
        return 0;
}

typedef struct FileRules {
        PolicyRule **rules;
        size_t n;
} FileRules;

static void file_rules_done(FileRules *f) {
        for (size_t i = 0; i < f->n; i++)
                policy_rule_free(f->rules[i]);
        free(f->rules);
        *f = (FileRules) {};
}

/* Parses c->text into rules. On -EBADMSG, c->error says why; *ret_names
 * (if the text was valid JSON) then holds the rule names the file
 * declares, a NULL-terminated array borrowing from *ret_json. */
static int file_parse(FileContext *c, FileRules *ret, json_object **ret_json) {
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
        *ret_json = json_object_get(obj);

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

/* A file that is refused after it parsed as JSON still withdraws the rules
 * it names: a broken override must not bring back the rule it was written
 * to replace or disable. */
static int policy_withdraw_names(Policy *p, const char *path, json_object *obj) {
        json_object *rules;
        int r;

        if (json_get_array(obj, "rules", &rules) < 0)
                return 0;

        for (size_t i = 0; i < json_object_array_length(rules); i++) {
                PolicyRule *old;
                const char *name;
                ssize_t k;

                if (json_get_string(json_object_array_get_idx(rules, i), "name", &name) < 0)
                        continue;

                k = policy_rule_index(p, name);
                if (k < 0)
                        continue;

                old = p->rules[k];
                r = policy_add_problem(p, POLICY_PROBLEM_WARNING, path, 0,
                                       "rule \"%s\" of %s:%u is withdrawn, as this file redefines it but was refused",
                                       old->name, old->file, old->line);
                if (r < 0)
                        return r;

                policy_rule_free(old);
                memmove(p->rules + k, p->rules + k + 1, (p->n_rules - (size_t) k - 1) * sizeof(PolicyRule *));
                p->n_rules--;
        }

        return 0;
}

/* Later definitions replace earlier ones of the same name in place, so
 * the effect order is where a name first appeared. */
static int policy_merge(Policy *p, FileRules *f) {
        size_t n_new = 0;
        PolicyRule **a;

        for (size_t i = 0; i < f->n; i++)
                if (policy_rule_index(p, f->rules[i]->name) < 0)
                        n_new++;

        a = reallocarray(p->rules, p->n_rules + n_new + 1, sizeof(PolicyRule *));
        if (!a)
                return -ENOMEM;
        p->rules = a;

        for (size_t i = 0; i < f->n; i++) {
                ssize_t k = policy_rule_index(p, f->rules[i]->name);

                if (k >= 0) {
                        policy_rule_free(p->rules[k]);
                        p->rules[k] = TAKE_PTR(f->rules[i]);
                } else
                        p->rules[p->n_rules++] = TAKE_PTR(f->rules[i]);
        }

        file_rules_done(f);
        return 0;
}

static int read_fd(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;

        for (;;) {
                ssize_t k;

                if (len == size) {
                        char *b;

                        if (size > max)
                                return -EFBIG;
                        size = size == 0 ? 4096 : size * 2;
                        b = realloc(buf, size + 1);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }

                k = read(fd, buf + len, size - len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }

        if (len > max)
                return -EFBIG;

        buf[len] = '\0';
        *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Who may have written what we are about to trust. */
static const char *stat_insecure(const struct stat *st, uid_t owner_uid, char *buf, size_t n) {
        if (st->st_uid != owner_uid) {
                (void) snprintf(buf, n, "owned by uid %u, not %u", (unsigned) st->st_uid, (unsigned) owner_uid);
                return buf;
        }
        if (st->st_mode & S_IWOTH) {
                (void) snprintf(buf, n, "world-writable (mode %04o)", (unsigned) (st->st_mode & 07777));
                return buf;
        }
        if (st->st_mode & S_IWGRP) {
                (void) snprintf(buf, n, "group-writable (mode %04o)", (unsigned) (st->st_mode & 07777));
                return buf;
        }
        return NULL;
}

static int policy_load_file(Policy *p, int dir_fd, const char *dir, const char *name, uid_t owner_uid) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_json_ json_object *json = NULL;
        _cleanup_(file_rules_done) FileRules f = {};
        _cleanup_close_ int fd = -1;
        struct stat st, lst;
        const char *insecure, *what = "";
        size_t len, n_problems = p->n_problems;
        FileContext c;
        char buf[64];
        int r;

        if (asprintf(&path, "%s/%s", dir, name) < 0) {
                path = NULL;
                return -ENOMEM;
        }

        if (fstatat(dir_fd, name, &lst, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(lst.st_mode))
                what = "symlink target ";

        /* Follows symlinks; what counts is the file opened, checked
         * through the fd, so nothing can be swapped in between.
         * O_NONBLOCK: a FIFO must not hang the daemon before fstat()
         * refuses it. */
        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "cannot open: %s; refusing", strerror(errno));

        if (fstat(fd, &st) < 0)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "cannot stat: %s; refusing", strerror(errno));

        if (!S_ISREG(st.st_mode))
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "%snot a regular file; refusing", what);

        insecure = stat_insecure(&st, owner_uid, buf, sizeof(buf));
        if (insecure)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "%s%s; refusing", what, insecure);

        if ((uint64_t) st.st_size > POLICY_FILE_SIZE_MAX)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "larger than %" PRIu64 " bytes; refusing", POLICY_FILE_SIZE_MAX);

        r = read_fd(fd, POLICY_FILE_SIZE_MAX, &text, &len);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "larger than %" PRIu64 " bytes; refusing", POLICY_FILE_SIZE_MAX);
        if (r < 0)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "cannot read: %s; refusing", strerror(-r));

        c = (FileContext) {
                .policy = p,
                .path = path,
                .text = text,
                .len = len,
        };

        r = file_parse(&c, &f, &json);
        c.positions = json_positions_free(c.positions);
        if (r == -EBADMSG) {
                _cleanup_free_ char *error = TAKE_PTR(c.error);

                /* Warnings about rules of a refused file would only distract. */
                policy_truncate_problems(p, n_problems);
                r = policy_add_problem(p, POLICY_PROBLEM_ERROR, path, c.error_line, "%s; file refused", error);
                if (r < 0)
                        return r;
                return json ? policy_withdraw_names(p, path, json) : 0;
        }
        free(c.error);
        if (r < 0)
                return r;

        return policy_merge(p, &f);
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int policy_load_dir(Policy *p, const char *dir, uid_t owner_uid) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        _cleanup_close_ int fd = -1;
        size_t n = 0;
        const char *insecure;
        struct stat st;
        char buf[64];
        int r;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, dir, 0,
                                          "cannot open directory: %s; refusing", strerror(errno));
        }

        if (fstat(fd, &st) < 0)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, dir, 0,
                                          "cannot stat directory: %s; refusing", strerror(errno));

        insecure = stat_insecure(&st, owner_uid, buf, sizeof(buf));
        if (insecure)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, dir, 0,
                                          "directory %s; refusing all its files", insecure);

        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        fd = -1; /* owned by d now */

        names = calloc(1, sizeof(char *));
        if (!names)
                return -ENOMEM;

        for (;;) {
                struct dirent *de;
                size_t l;
                char **a;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return policy_add_problem(p, POLICY_PROBLEM_ERROR, dir, 0,
                                                          "cannot read directory: %s; refusing", strerror(errno));
                        break;
                }

                l = strlen(de->d_name);
                if (de->d_name[0] == '.' || l <= 5 || strcmp(de->d_name + l - 5, ".json") != 0)
                        continue;

                a = reallocarray(names, n + 2, sizeof(char *));
                if (!a)
                        return -ENOMEM;
                names = a;
                names[n] = strdup(de->d_name);
                if (!names[n])
                        return -ENOMEM;
                names[++n] = NULL;
        }

        /* strcmp(), not the locale's collation: the order must not depend
         * on the environment the daemon happens to start in. */
        qsort(names, n, sizeof(char *), compare_names);

        for (size_t i = 0; i < n; i++) {
                r = policy_load_file(p, dirfd(d), dir, names[i], owner_uid);
                if (r < 0)
                        return r;
        }

        return 0;
}

int policy_load(const char *const *dirs, uid_t owner_uid, Policy **ret) {
        _cleanup_(policy_freep) Policy *p = NULL;
        int r;

        if (!dirs || !ret)
                return -EINVAL;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;

        for (const char *const *d = dirs; *d; d++) {
                r = policy_load_dir(p, *d, owner_uid);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(p);
        return 0;
}

/* ---- Evaluation ---- */

bool policy_rule_applies(const PolicyRule *r, const PolicySubject *s) {
        if (!r || !s || !r->enabled)
                return false;
        if (r->all_users)
                return true;

        for (size_t i = 0; i < r->n_uids; i++)
                if (r->uids[i] == s->uid)
                        return true;

        for (size_t i = 0; i < r->n_gids; i++) {
                if (r->gids[i] == s->gid)
                        return true;
                for (size_t k = 0; k < s->n_groups; k++)
                        if (r->gids[i] == s->groups[k])
                                return true;
        }

        return false;
}

int policy_rules_for(const Policy *p, const PolicySubject *s, const PolicyRule ***ret, size_t *ret_n) {
        const PolicyRule **a = NULL;
        size_t n = 0;

        if (!p || !s || !ret || !ret_n)
                return -EINVAL;

        for (size_t i = 0; i < p->n_rules; i++) {
                const PolicyRule **b;

                if (!policy_rule_applies(p->rules[i], s))
                        continue;

                b = reallocarray(a, n + 1, sizeof(*a));
                if (!b) {
                        free(a);
                        return -ENOMEM;
                }
                a = b;
                a[n++] = p->rules[i];
        }

        *ret = a;
        *ret_n = n;
        return 0;
}

static bool rule_matches_function(const PolicyRule *r, const char *function) {
        for (size_t i = 0; i < r->n_functions; i++)
                if (fnmatch(r->functions[i], function, 0) == 0)
                        return true;
        return false;
}

static bool request_is_errno(const PolicyRequest *q) {
        return q->is_errno && q->retval >= -ERRNO_MAX && q->retval <= -1;
}

static bool rule_allows_value(const PolicyRule *r, const PolicyRequest *q) {
        if (request_is_errno(q)) {
                if (r->any_errno)
                        return true;
                for (size_t i = 0; i < r->n_errors; i++)
                        if (r->errors[i] == (int) -q->retval)
                                return true;
        }

        for (size_t i = 0; i < r->n_retvals; i++)
                if (r->retvals[i] == q->retval)
                        return true;

        return false;
}

/* How far r goes along with q: the first check it fails, or NONE. */
static PolicyDenial rule_evaluate(const PolicyRule *r, const PolicyRequest *q) {
        if (!rule_matches_function(r, q->function))
                return POLICY_DENIAL_FUNCTION;
        if (!rule_allows_value(r, q))
                return POLICY_DENIAL_VALUE;
        if (!(r->scopes & (1u << q->scope)))
                return POLICY_DENIAL_SCOPE;
        if (q->duration_usec > r->max_duration_usec)
                return POLICY_DENIAL_DURATION;
        return POLICY_DENIAL_NONE;
}

/* Appends to buf[0..n) at *l, truncating with "..." if full. */
_printf_(4, 5)
static void append(char *buf, size_t n, size_t *l, const char *fmt, ...) {
        va_list ap;
        int k;

        if (*l >= n - 1)
                return;

        va_start(ap, fmt);
        k = vsnprintf(buf + *l, n - *l, fmt, ap);
        va_end(ap);

        if (k < 0)
                return;
        if ((size_t) k >= n - *l) {
                *l = n - 1;
                if (n >= 4)
                        memcpy(buf + n - 4, "...", 4);
                return;
        }
        *l += (size_t) k;
}

static void format_values(const PolicyRule *r, char *buf, size_t n) {
        size_t l = 0;

        buf[0] = '\0';
        if (r->any_errno)
                append(buf, n, &l, "any error");
        for (size_t i = 0; i < r->n_errors; i++) {
                const char *name = errno_to_name(r->errors[i]);

                if (name)
                        append(buf, n, &l, "%s%s", l > 0 ? ", " : "", name);
                else
                        append(buf, n, &l, "%s%d", l > 0 ? ", " : "", r->errors[i]);
        }
        for (size_t i = 0; i < r->n_retvals; i++)
                append(buf, n, &l, "%sretval %" PRId64, l > 0 ? ", " : "", r->retvals[i]);
}

static void format_scopes(unsigned scopes, char *buf, size_t n) {
        size_t l = 0;

        buf[0] = '\0';
        for (int i = 0; i < _POLICY_SCOPE_MAX; i++)
                if (scopes & (1u << i))
                        append(buf, n, &l, "%s%s", l > 0 ? ", " : "", policy_scope_table[i]);
}

static const char *subject_label(const PolicySubject *s, char *buf, size_t n) {
        if (s->user_name)
                (void) snprintf(buf, n, "user '%s'", s->user_name);
        else
                (void) snprintf(buf, n, "uid %u", (unsigned) s->uid);
        return buf;
}

static void decision_describe(PolicyDecision *d, const PolicyRule *rule, const PolicySubject *s,
                              const PolicyRequest *q) {
        char who[96], list[256];
        const char *ename;

        switch (d->denial) {
        case POLICY_DENIAL_NONE:
                (void) snprintf(d->message, sizeof(d->message), "Allowed by policy rule '%s'.", rule->name);
                break;

        case POLICY_DENIAL_USER:
                (void) snprintf(d->message, sizeof(d->message),
                                "No policy rule lets %s inject faults.", subject_label(s, who, sizeof(who)));
                break;

        case POLICY_DENIAL_FUNCTION:
                (void) snprintf(d->message, sizeof(d->message),
                                "No policy rule lets %s make '%s' fail.",
                                subject_label(s, who, sizeof(who)), q->function);
                break;

        case POLICY_DENIAL_VALUE:
                format_values(rule, list, sizeof(list));
                ename = request_is_errno(q) ? errno_to_name((int) -q->retval) : NULL;
                if (request_is_errno(q) && ename)
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' does not allow error %s for '%s' (allowed: %s).",
                                        rule->name, ename, q->function, list);
                else if (request_is_errno(q))
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' does not allow error %" PRId64 " for '%s' (allowed: %s).",
                                        rule->name, -q->retval, q->function, list);
                else
                        (void) snprintf(d->message, sizeof(d->message),
                                        "Policy rule '%s' does not allow return value %" PRId64 " for '%s' (allowed: %s).",
                                        rule->name, q->retval, q->function, list);
                break;

        case POLICY_DENIAL_SCOPE:
                format_scopes(rule->scopes, list, sizeof(list));
                (void) snprintf(d->message, sizeof(d->message),
                                "Policy rule '%s' does not allow scope '%s' for '%s' (allowed: %s).",
                                rule->name, policy_scope_table[q->scope], q->function, list);
                break;

        case POLICY_DENIAL_DURATION:
                (void) snprintf(d->message, sizeof(d->message),
                                "Duration %s exceeds the limit of %s set by policy rule '%s'.",
                                FORMAT_DURATION(q->duration_usec), FORMAT_DURATION(rule->max_duration_usec),
                                rule->name);
                break;

        default:
                d->message[0] = '\0';
        }
}

int policy_check(const Policy *p, const PolicySubject *s, const PolicyRequest *q, PolicyDecision *ret) {
        PolicyDenial best = POLICY_DENIAL_USER;
        const PolicyRule *best_rule = NULL;
        PolicyDecision d = {};

        if (!p || !s || !q || !ret || !q->function || q->function[0] == '\0' ||
            (unsigned) q->scope >= _POLICY_SCOPE_MAX)
                return -EINVAL;

        for (size_t i = 0; i < p->n_rules; i++) {
                const PolicyRule *r = p->rules[i];
                PolicyDenial e;

                if (!policy_rule_applies(r, s))
                        continue;

                e = rule_evaluate(r, q);
                if (e == POLICY_DENIAL_NONE) {
                        best = e;
                        best_rule = r;
                        break;
                }

                if (!best_rule || e > best ||
                    /* Of the rules that fail on duration only, name the
                     * most generous: it says how long one may ask for. */
                    (e == best && e == POLICY_DENIAL_DURATION &&
                     r->max_duration_usec > best_rule->max_duration_usec)) {
                        best = e;
                        best_rule = r;
                }
        }

        d.denial = best;
        d.allowed = best == POLICY_DENIAL_NONE;
        d.error_name = policy_denial_to_error_name(best);

        /* Only these name one rule; for the others no single rule refused. */
        if (best_rule && best != POLICY_DENIAL_FUNCTION)
                (void) snprintf(d.rule, sizeof(d.rule), "%s", best_rule->name);

        if (d.allowed) {
                d.max_active = best_rule->max_active;
                d.max_duration_usec = best_rule->max_duration_usec;
        } else if (best == POLICY_DENIAL_DURATION)
                d.max_duration_usec = best_rule->max_duration_usec;

        decision_describe(&d, best_rule, s, q);

        *ret = d;
        return 0;
}

bool policy_function_allowed(const Policy *p, const PolicySubject *s, const char *function) {
        if (!p || !s || !function)
                return false;

        for (size_t i = 0; i < p->n_rules; i++)
                if (policy_rule_applies(p->rules[i], s) && rule_matches_function(p->rules[i], function))
                        return true;

        return false;
}
