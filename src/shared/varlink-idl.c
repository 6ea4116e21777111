/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "utf8.h"
#include "varlink-idl.h"

/* Nesting of inline types and type prefixes the validator follows; deeper
 * descriptions are refused rather than recursed into. */
#define IDL_DEPTH_MAX 32U

#define INTERFACE_NAME_MAX 255U

static bool is_alpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_alnum(char c) {
        return is_alpha(c) || is_digit(c);
}

static bool is_upper(char c) {
        return c >= 'A' && c <= 'Z';
}

/* The checks below work on n bytes at s, so the validator can test tokens
 * in place. */

static bool interface_name_is_valid_n(const char *s, size_t n) {
        size_t components = 0, i = 0;

        if (n == 0 || n > INTERFACE_NAME_MAX || !is_alpha(s[0]))
                return false;

        while (i <= n) {
                size_t start = i;

                /* A component: alphanumerics with dashes only inside. */
                while (i < n && s[i] != '.') {
                        if (!is_alnum(s[i]) && s[i] != '-')
                                return false;
                        i++;
                }
                if (i == start || s[start] == '-' || s[i - 1] == '-')
                        return false;
                components++;
                i++; /* the dot, or one past the end */
        }

        return components >= 2;
}

static bool member_name_is_valid_n(const char *s, size_t n) {
        if (n == 0 || !is_upper(s[0]))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!is_alnum(s[i]))
                        return false;
        return true;
}

/* Field names and enum values: [A-Za-z](_?[A-Za-z0-9])* */
static bool field_name_is_valid_n(const char *s, size_t n) {
        if (n == 0 || !is_alpha(s[0]) || s[n - 1] == '_')
                return false;
        for (size_t i = 1; i < n; i++) {
                if (s[i] == '_') {
                        if (s[i - 1] == '_')
                                return false;
                } else if (!is_alnum(s[i]))
                        return false;
        }
        return true;
}

bool varlink_interface_name_is_valid(const char *name) {
        return name && interface_name_is_valid_n(name, strlen(name));
}

bool varlink_member_name_is_valid(const char *name) {
        return name && member_name_is_valid_n(name, strlen(name));
}

bool varlink_qualified_name_is_valid(const char *name) {
        const char *dot;

        if (!name)
                return false;
        dot = strrchr(name, '.');
        if (!dot)
                return false;
        return interface_name_is_valid_n(name, dot - name) && varlink_member_name_is_valid(dot + 1);
}

/* A growing list of borrowed (pointer, length) names, for duplicate and
 * reference checks. */
typedef struct NameList {
        struct {
                const char *s;
                size_t n;
                size_t at; /* offset in the text, for messages */
        } *items;
        size_t n_items;
} NameList;

static void name_list_done(NameList *l) {
        free(l->items);
        *l = (NameList) {};
}

static bool name_list_contains(const NameList *l, const char *s, size_t n) {
        for (size_t i = 0; i < l->n_items; i++)
                if (l->items[i].n == n && memcmp(l->items[i].s, s, n) == 0)
                        return true;
        return false;
}

static int name_list_add(NameList *l, const char *s, size_t n, size_t at) {
        __typeof__(l->items) p;

        p = reallocarray(l->items, l->n_items + 1, sizeof(*l->items));
        if (!p)
                return -ENOMEM;
        l->items = p;
        l->items[l->n_items++] = (__typeof__(*l->items)) { s, n, at };
        return 0;
}

typedef enum TokenType {
        TOKEN_EOF,
        TOKEN_WORD,  /* names and keywords: [A-Za-z0-9_.-]+, but not "->" */
        TOKEN_PUNCT, /* one of ( ) , : ? [ ] */
        TOKEN_ARROW, /* -> */
} TokenType;

typedef struct Parser {
        const char *text;
        size_t len;
        size_t pos;          /* where the next token starts looking */

        TokenType type;      /* the current token */
        size_t start, n;
        bool line_start;     /* first on its line */

        char *error;         /* the first error */
        NameList members;    /* declared methods, types and errors */
        NameList types;      /* declared types */
        NameList references; /* type names used */
        NameList methods;    /* declared methods */
} Parser;

static void parser_done(Parser *p) {
        free(p->error);
        name_list_done(&p->members);
        name_list_done(&p->types);
        name_list_done(&p->references);
        name_list_done(&p->methods);
}

/* Records the first error, at offset at, and returns -EBADMSG (or -ENOMEM
 * if there is no memory for the message). */
_printf_(3, 4)
static int parser_fail(Parser *p, size_t at, const char *fmt, ...) {
        unsigned line = 1, column = 1;
        _cleanup_free_ char *what = NULL;
        va_list ap;
        int r;

        if (p->error)
                return -EBADMSG;

        for (size_t i = 0; i < at && i < p->len; i++) {
                if (p->text[i] == '\n') {
                        line++;
                        column = 1;
                } else if (((unsigned char) p->text[i] & 0xc0) != 0x80)
                        column++; /* count characters, not UTF-8 bytes */
        }

        va_start(ap, fmt);
        r = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        if (asprintf(&p->error, "%u:%u: %s", line, column, what) < 0) {
                p->error = NULL;
                return -ENOMEM;
        }
        return -EBADMSG;
}

static bool is_word_char(const Parser *p, size_t i) {
        char c = p->text[i];

        if (c == '-')
                return !(i + 1 < p->len && p->text[i + 1] == '>');
        return is_alnum(c) || c == '_' || c == '.';
}

static int parser_next(Parser *p) {
        p->line_start = p->pos == 0;

        /* Skip white space and comments. */
        for (;;) {
                if (p->pos >= p->len)
                        break;
                char c = p->text[p->pos];
                if (c == '\n')
                        p->line_start = true;
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                        p->pos++;
                else if (c == '#')
                        while (p->pos < p->len && p->text[p->pos] != '\n')
                                p->pos++;
                else
                        break;
        }

        p->start = p->pos;
        if (p->pos >= p->len) {
                p->type = TOKEN_EOF;
                p->n = 0;
                return 0;
        }

        if (p->text[p->pos] == '-' && p->pos + 1 < p->len && p->text[p->pos + 1] == '>') {
                p->type = TOKEN_ARROW;
                p->n = 2;
        } else if (strchr("(),:?[]", p->text[p->pos])) {
                p->type = TOKEN_PUNCT;
                p->n = 1;
        } else if (is_word_char(p, p->pos)) {
                size_t i = p->pos;

                while (i < p->len && is_word_char(p, i))
                        i++;
                p->type = TOKEN_WORD;
                p->n = i - p->pos;
        } else {
                unsigned char u = (unsigned char) p->text[p->pos];

                if (u >= 0x20 && u < 0x7f)
                        return parser_fail(p, p->pos, "unexpected character '%c'", u);
                return parser_fail(p, p->pos, "unexpected character 0x%02x", u);
        }

        p->pos += p->n;
        return 0;
}

static bool token_is(const Parser *p, const char *s) {
        size_t n = strlen(s);

        return p->type != TOKEN_EOF && p->n == n && memcmp(p->text + p->start, s, n) == 0;
}

/* For messages: the current token, or "end of input". */
#define TOKEN_FMT "%s%.*s%s"
#define TOKEN_ARGS(p)                                                   \
        (p)->type == TOKEN_EOF ? "end of input" : "'",                  \
        (int) ((p)->type == TOKEN_EOF ? 0 : (p)->n), (p)->text + (p)->start, \
        (p)->type == TOKEN_EOF ? "" : "'"

static int parser_expect(Parser *p, const char *s) {
        if (!token_is(p, s))
                return parser_fail(p, p->start, "expected '%s', got " TOKEN_FMT, s, TOKEN_ARGS(p));
        return parser_next(p);
}

static int parse_type(Parser *p, unsigned depth);

/* After "(": a struct "(a: T, b: T)", an enum "(a, b)", or "()". The
 * current token is the one after "(". */
static int parse_struct_or_enum(Parser *p, unsigned depth, bool allow_enum) {
        NameList names = {};
        bool is_enum = false;
        int r;

        if (depth > IDL_DEPTH_MAX)
                return parser_fail(p, p->start, "types nested deeper than %u levels", IDL_DEPTH_MAX);

        r = parser_expect(p, "(");
        if (r < 0)
                goto finish;

        if (token_is(p, ")")) {
                r = parser_next(p);
                goto finish;
        }

        for (size_t i = 0;; i++) {
                size_t at = p->start, n = p->n;
                const char *name = p->text + p->start;

                if (p->type != TOKEN_WORD || !field_name_is_valid_n(name, n)) {
                        r = parser_fail(p, at, "expected a field name, got " TOKEN_FMT, TOKEN_ARGS(p));
                        goto finish;
                }
                if (name_list_contains(&names, name, n)) {
                        r = parser_fail(p, at, "duplicate %s '%.*s'", is_enum ? "enum value" : "field",
                                        (int) n, name);
                        goto finish;
                }
                r = name_list_add(&names, name, n, at);
                if (r < 0)
                        goto finish;

                r = parser_next(p);
                if (r < 0)
                        goto finish;

                /* The first element decides between struct and enum. */
                if (i == 0)
                        is_enum = allow_enum && !token_is(p, ":");

                if (!is_enum) {
                        r = parser_expect(p, ":");
                        if (r < 0)
                                goto finish;
                        r = parse_type(p, depth + 1);
                        if (r < 0)
                                goto finish;
                }

                if (token_is(p, ")"))
                        break;
                if (!token_is(p, ",")) {
                        r = parser_fail(p, p->start, "expected ',' or ')', got " TOKEN_FMT, TOKEN_ARGS(p));
                        goto finish;
                }
                r = parser_next(p);
                if (r < 0)
                        goto finish;
        }

        r = parser_next(p); /* the ")" */

finish:
        name_list_done(&names);
        return r;
}

static int parse_type(Parser *p, unsigned depth) {
        static const char *const builtin[] = { "bool", "int", "float", "string", "object" };
        int r;

        if (depth > IDL_DEPTH_MAX)
                return parser_fail(p, p->start, "types nested deeper than %u levels", IDL_DEPTH_MAX);

        if (token_is(p, "?")) {
                r = parser_next(p);
                if (r < 0)
                        return r;
                if (token_is(p, "?"))
                        return parser_fail(p, p->start, "'?' twice");
        }

        if (token_is(p, "[")) {
                r = parser_next(p);
                if (r < 0)
                        return r;
                if (token_is(p, "string")) {
                        r = parser_next(p);
                        if (r < 0)
                                return r;
                }
                r = parser_expect(p, "]");
                if (r < 0)
                        return r;
                return parse_type(p, depth + 1);
        }

        if (token_is(p, "("))
                return parse_struct_or_enum(p, depth + 1, /* allow_enum= */ true);

        if (p->type == TOKEN_WORD) {
                for (size_t i = 0; i < ELEMENTSOF(builtin); i++)
                        if (token_is(p, builtin[i]))
                                return parser_next(p);

                if (member_name_is_valid_n(p->text + p->start, p->n)) {
                        r = name_list_add(&p->references, p->text + p->start, p->n, p->start);
                        if (r < 0)
                                return r;
                        return parser_next(p);
                }
        }

        return parser_fail(p, p->start, "expected a type, got " TOKEN_FMT, TOKEN_ARGS(p));
}

static int parse_member(Parser *p) {
        enum { TYPE, METHOD, ERROR } kind;
        const char *name;
        size_t n, at;
        int r;

        if (token_is(p, "type"))
                kind = TYPE;
        else if (token_is(p, "method"))
                kind = METHOD;
        else if (token_is(p, "error"))
                kind = ERROR;
        else
                return parser_fail(p, p->start, "expected 'method', 'type' or 'error', got " TOKEN_FMT,
                                   TOKEN_ARGS(p));
        /* Declarations are separated by new lines. */
        if (!p->line_start)
                return parser_fail(p, p->start, "expected a new line before " TOKEN_FMT, TOKEN_ARGS(p));

        r = parser_next(p);
        if (r < 0)
                return r;

        name = p->text + p->start;
        n = p->n;
        at = p->start;
        if (p->type != TOKEN_WORD || !member_name_is_valid_n(name, n))
                return parser_fail(p, at, "expected a name (upper-case letter, then letters and digits), got "
                                   TOKEN_FMT, TOKEN_ARGS(p));
        if (name_list_contains(&p->members, name, n))
                return parser_fail(p, at, "duplicate member '%.*s'", (int) n, name);
        r = name_list_add(&p->members, name, n, at);
        if (r < 0)
                return r;
        if (kind == TYPE)
                r = name_list_add(&p->types, name, n, at);
        else if (kind == METHOD)
                r = name_list_add(&p->methods, name, n, at);
        if (r < 0)
                return r;

        r = parser_next(p);
        if (r < 0)
                return r;

        r = parse_struct_or_enum(p, 0, /* allow_enum= */ kind == TYPE);
        if (r < 0 || kind != METHOD)
                return r;

        if (p->type != TOKEN_ARROW)
                return parser_fail(p, p->start, "expected '->', got " TOKEN_FMT, TOKEN_ARGS(p));
        r = parser_next(p);
        if (r < 0)
                return r;

        return parse_struct_or_enum(p, 0, /* allow_enum= */ false);
}

static int parse_interface(Parser *p, size_t *ret_name_start, size_t *ret_name_len) {
        size_t start, n;
        int r;

        r = parser_next(p);
        if (r < 0)
                return r;

        if (!token_is(p, "interface"))
                return parser_fail(p, p->start, "expected 'interface', got " TOKEN_FMT, TOKEN_ARGS(p));
        r = parser_next(p);
        if (r < 0)
                return r;

        start = p->start;
        n = p->n;
        if (p->type != TOKEN_WORD || !interface_name_is_valid_n(p->text + start, n))
                return parser_fail(p, start, "expected an interface name (like org.example.iface), got "
                                   TOKEN_FMT, TOKEN_ARGS(p));
        r = parser_next(p);
        if (r < 0)
                return r;

        if (p->type == TOKEN_EOF)
                return parser_fail(p, p->start, "interface declares no method, type or error");

        while (p->type != TOKEN_EOF) {
                r = parse_member(p);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < p->references.n_items; i++)
                if (!name_list_contains(&p->types, p->references.items[i].s, p->references.items[i].n))
                        return parser_fail(p, p->references.items[i].at, "unknown type '%.*s'",
                                           (int) p->references.items[i].n, p->references.items[i].s);

        *ret_name_start = start;
        *ret_name_len = n;
        return 0;
}

int varlink_idl_parse(const char *text, char **ret_interface, char ***ret_methods, char **reterr_message) {
        _cleanup_(strv_freep) char **methods = NULL;
        _cleanup_free_ char *interface = NULL;
        Parser p = {};
        size_t start = 0, n = 0;
        int r;

        if (!text)
                return -EINVAL;

        p.text = text;
        p.len = strlen(text);

        if (!utf8_is_valid(text, p.len)) {
                size_t i = 0;

                while (i < p.len && utf8_char_len(text + i, p.len - i) > 0)
                        i += utf8_char_len(text + i, p.len - i);
                r = parser_fail(&p, i, "invalid UTF-8");
        } else
                r = parse_interface(&p, &start, &n);
        if (r < 0)
                goto finish;

        if (ret_interface) {
                interface = strndup(text + start, n);
                if (!interface) {
                        r = -ENOMEM;
                        goto finish;
                }
        }

        if (ret_methods) {
                methods = calloc(p.methods.n_items + 1, sizeof(char *));
                if (!methods) {
                        r = -ENOMEM;
                        goto finish;
                }
                for (size_t i = 0; i < p.methods.n_items; i++) {
                        methods[i] = strndup(p.methods.items[i].s, p.methods.items[i].n);
                        if (!methods[i]) {
                                r = -ENOMEM;
                                goto finish;
                        }
                }
        }

        if (ret_interface)
                *ret_interface = TAKE_PTR(interface);
        if (ret_methods)
                *ret_methods = TAKE_PTR(methods);
        r = 0;

finish:
        if (r == -EBADMSG && reterr_message)
                *reterr_message = TAKE_PTR(p.error);
        parser_done(&p);
        return r;
}

int varlink_idl_validate(const char *text, char **reterr_message) {
        return varlink_idl_parse(text, NULL, NULL, reterr_message);
}
