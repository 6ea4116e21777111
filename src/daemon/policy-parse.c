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
#include "policy-internal.h"

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
