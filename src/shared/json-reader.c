/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-reader.h"
#include "utf8.h"

/* The positions of one array's elements or one object's members, in
 * document order (which is json-c's iteration order for objects). */
typedef struct Container {
        json_object *obj;
        JsonPosition *values;
        JsonPosition *keys;     /* objects only */
        size_t n, alloc;
} Container;

struct JsonPositions {
        JsonPosition root;
        Container *containers;  /* sorted by obj once the document is read */
        size_t n_containers, alloc;
};

typedef struct Reader {
        const char *s;
        size_t len;
        size_t i;

        /* Newlines only occur in white space outside strings, so counting
         * them there is enough to know the line of every token. */
        unsigned line;
        size_t line_start;

        /* A string's decoded contents, NUL-terminated; reused. */
        char *buf;
        size_t buf_alloc;

        JsonReadError *error;
        JsonPositions *positions;       /* NULL if not recording */
} Reader;

static void container_done(Container *c) {
        free(c->values);
        free(c->keys);
        *c = (Container) {};
}

JsonPositions *json_positions_free(JsonPositions *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_containers; i++)
                container_done(&p->containers[i]);
        free(p->containers);
        free(p);
        return NULL;
}

/* Makes r->buf hold at least n bytes. */
static int buf_reserve(Reader *r, size_t n) {
        size_t a = r->buf_alloc > 0 ? r->buf_alloc : 64;
        char *b;

        if (n <= r->buf_alloc)
                return 0;
        while (a < n)
                a *= 2;
        b = realloc(r->buf, a);
        if (!b)
                return -ENOMEM;
        r->buf = b;
        r->buf_alloc = a;
        return 0;
}

static JsonPosition position_here(const Reader *r) {
        return (JsonPosition) {
                .offset = r->i,
                .line = r->line,
                .column = (unsigned) (r->i - r->line_start + 1),
        };
}

/* For errors, which may lie at the end of the text. */
static JsonPosition position_of_offset(const char *s, size_t len, size_t offset) {
        JsonPosition p = { .offset = offset, .line = 1 };
        size_t line_start = 0;

        if (offset > len)
                offset = len;
        if (offset == len && offset > 0 && s[offset - 1] == '\n')
                offset--;

        for (size_t i = 0; i < offset; i++)
                if (s[i] == '\n') {
                        p.line++;
                        line_start = i + 1;
                }
        p.column = (unsigned) (offset - line_start + 1);
        return p;
}

static int fail(Reader *r, size_t offset, int error, const char *reason) {
        if (r->error->message[0] == '\0') {
                (void) snprintf(r->error->message, sizeof(r->error->message), "%s", reason);
                r->error->position = position_of_offset(r->s, r->len, offset);
        }
        return error;
}

_printf_(3, 4)
static int failf(Reader *r, size_t offset, const char *fmt, ...) {
        char reason[sizeof(r->error->message)];
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(reason, sizeof(reason), fmt, ap);
        va_end(ap);
        return fail(r, offset, -EBADMSG, reason);
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_alnum(char c) {
        return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int hex_value(char c) {
        if (is_digit(c))
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static void skip_space(Reader *r) {
        while (r->i < r->len && is_space(r->s[r->i])) {
                if (r->s[r->i] == '\n')
                        r->line_start = r->i + 1, r->line++;
                r->i++;
        }
}

static bool at(const Reader *r, char c) {
        return r->i < r->len && r->s[r->i] == c;
}

static int unexpected(Reader *r, size_t offset) {
        unsigned char c;

        if (offset >= r->len)
                return fail(r, r->len, -EBADMSG, "unexpected end of file");

        c = (unsigned char) r->s[offset];
        if (c == '\0')
                return fail(r, offset, -EBADMSG, "NUL byte");
        if (c >= 0x21 && c < 0x7f)
                return failf(r, offset, "unexpected character '%c'", c);
        return failf(r, offset, "unexpected byte 0x%02x", c);
}

/* The four hex digits of a \u escape at s[i], or -1. */
static int read_hex4(const Reader *r, size_t i) {
        int v = 0;

        for (size_t k = 0; k < 4; k++) {
                int h = i + k < r->len ? hex_value(r->s[i + k]) : -1;

                if (h < 0)
                        return -1;
                v = v * 16 + h;
        }
        return v;
}

static size_t utf8_encode(char *p, uint32_t c) {
        if (c < 0x80) {
                p[0] = (char) c;
                return 1;
        }
        if (c < 0x800) {
                p[0] = (char) (0xc0 | (c >> 6));
                p[1] = (char) (0x80 | (c & 0x3f));
                return 2;
        }
        if (c < 0x10000) {
                p[0] = (char) (0xe0 | (c >> 12));
                p[1] = (char) (0x80 | ((c >> 6) & 0x3f));
                p[2] = (char) (0x80 | (c & 0x3f));
                return 3;
        }
        p[0] = (char) (0xf0 | (c >> 18));
        p[1] = (char) (0x80 | ((c >> 12) & 0x3f));
        p[2] = (char) (0x80 | ((c >> 6) & 0x3f));
        p[3] = (char) (0x80 | (c & 0x3f));
        return 4;
}

/* A \u escape at r->i (the backslash), with its low surrogate if it is a
 * high one; appends the character to r->buf at *n. */
static int read_unicode_escape(Reader *r, size_t *n) {
        int c = read_hex4(r, r->i + 2), low;

        if (c < 0)
                return fail(r, r->i, -EBADMSG, "invalid \\u escape");

        if (c >= 0xdc00 && c <= 0xdfff)
                return fail(r, r->i, -EBADMSG, "invalid \\u escape (unpaired surrogate)");
        if (c >= 0xd800 && c <= 0xdbff) {
                if (r->i + 7 >= r->len || r->s[r->i + 6] != '\\' || r->s[r->i + 7] != 'u' ||
                    (low = read_hex4(r, r->i + 8)) < 0xdc00 || low > 0xdfff)
                        return fail(r, r->i, -EBADMSG, "invalid \\u escape (unpaired surrogate)");
                c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
                r->i += 6;
        }

        *n += utf8_encode(r->buf + *n, (uint32_t) c);
        r->i += 6;
        return 0;
}

/* At the opening quote; leaves r->i after the closing one and the decoded
 * contents in r->buf[0..*ret_len), NUL-terminated. The decoded form is
 * never longer than the raw one. */
static int read_string(Reader *r, size_t *ret_len) {
        size_t start = ++r->i, end, n = 0;
        int k;

        end = start;
        while (end < r->len && r->s[end] != '"')
                end += r->s[end] == '\\' ? 2 : 1;
        if (end > r->len)
                end = r->len;

        k = buf_reserve(r, end - start + 1);
        if (k < 0)
                return k;

        while (r->i < r->len) {
                unsigned char c = (unsigned char) r->s[r->i];

                if (c == '"') {
                        r->buf[n] = '\0';
                        r->i++;
                        *ret_len = n;
                        return 0;
                }
                if (c == '\0')
                        return fail(r, r->i, -EBADMSG, "NUL byte in a string");
                if (c < 0x20)
                        return fail(r, r->i, -EBADMSG, "control character in a string (write it as an escape)");

                if (c == '\\') {
                        static const char escapes[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
                        char e = r->i + 1 < r->len ? r->s[r->i + 1] : '\0';
                        const char *p;

                        if (e == 'u') {
                                k = read_unicode_escape(r, &n);
                                if (k < 0)
                                        return k;
                                continue;
                        }
                        for (p = escapes; *p && *p != e; p += 2)
                                ;
                        if (e == '\0' || !*p)
                                return fail(r, r->i, -EBADMSG, "invalid escape sequence");
                        r->buf[n++] = p[1];
                        r->i += 2;
                        continue;
                }

                if (c >= 0x80) {
                        size_t l = utf8_char_len(r->s + r->i, r->len - r->i);

                        if (l == 0)
                                return fail(r, r->i, -EBADMSG, "invalid UTF-8");
                        memcpy(r->buf + n, r->s + r->i, l);
                        n += l;
                        r->i += l;
                        continue;
                }

                r->buf[n++] = (char) c;
                r->i++;
        }

        return fail(r, r->len, -EBADMSG, "unexpected end of file in a string");
}

/* The magnitude of the integer digits s[0..n), if it fits in 64 bits. */
static bool parse_magnitude(const char *s, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned d = (unsigned) (s[i] - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

static int read_number(Reader *r, json_object **ret) {
        size_t start = r->i, digits;
        bool integer = true, negative = false;
        json_object *o;
        uint64_t u;

        if (r->s[r->i] == '-') {
                negative = true;
                r->i++;
        }
        digits = r->i;

        if (at(r, '0'))
                r->i++;
        else if (r->i < r->len && r->s[r->i] >= '1' && r->s[r->i] <= '9')
                while (r->i < r->len && is_digit(r->s[r->i]))
                        r->i++;
        else
                return fail(r, start, -EBADMSG, "invalid number");

        if (at(r, '.')) {
                integer = false;
                r->i++;
                if (r->i >= r->len || !is_digit(r->s[r->i]))
                        return fail(r, start, -EBADMSG, "invalid number");
                while (r->i < r->len && is_digit(r->s[r->i]))
                        r->i++;
        }

        if (at(r, 'e') || at(r, 'E')) {
                integer = false;
                r->i++;
                if (at(r, '+') || at(r, '-'))
                        r->i++;
                if (r->i >= r->len || !is_digit(r->s[r->i]))
                        return fail(r, start, -EBADMSG, "invalid number");
                while (r->i < r->len && is_digit(r->s[r->i]))
                        r->i++;
        }

        /* "01", "1.2.3", "1x": the number must end here. */
        if (r->i < r->len && (is_alnum(r->s[r->i]) || strchr(".+-", r->s[r->i])))
                return fail(r, start, -EBADMSG, "invalid number");

        if (integer) {
                if (!parse_magnitude(r->s + digits, r->i - digits, &u) ||
                    (negative && u > (uint64_t) INT64_MAX + 1))
                        return fail(r, start, -ERANGE, "integer out of range");

                if (negative)
                        o = json_object_new_int64(u == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) u);
                else if (u <= INT64_MAX)
                        o = json_object_new_int64((int64_t) u);
                else
                        o = json_object_new_uint64(u);
        } else {
                size_t n = r->i - start;
                int k;

                /* strtod() wants a terminated string; json-c keeps the text,
                 * so that the number is written back as it came. */
                k = buf_reserve(r, n + 1);
                if (k < 0)
                        return k;
                memcpy(r->buf, r->s + start, n);
                r->buf[n] = '\0';
                o = json_object_new_double_s(strtod(r->buf, NULL), r->buf);
        }
        if (!o)
                return -ENOMEM;

        *ret = o;
        return 0;
}

static int read_literal(Reader *r, const char *word, json_object **ret) {
        size_t n = strlen(word);

        if (r->len - r->i < n || memcmp(r->s + r->i, word, n) != 0 ||
            (r->i + n < r->len && is_alnum(r->s[r->i + n])))
                return unexpected(r, r->i);
        r->i += n;

        if (word[0] == 'n') {
                *ret = NULL;
                return 0;
        }
        *ret = json_object_new_boolean(word[0] == 't');
        return *ret ? 0 : -ENOMEM;
}

/* Records the position of a container's next element or member; key is
 * NULL for arrays. */
static int container_add(Reader *r, Container *c, const JsonPosition *key, JsonPosition value) {
        if (!r->positions)
                return 0;

        if (c->n == c->alloc) {
                size_t a = c->alloc > 0 ? c->alloc * 2 : 8;
                JsonPosition *p;

                p = reallocarray(c->values, a, sizeof(JsonPosition));
                if (!p)
                        return -ENOMEM;
                c->values = p;
                if (key) {
                        p = reallocarray(c->keys, a, sizeof(JsonPosition));
                        if (!p)
                                return -ENOMEM;
                        c->keys = p;
                }
                c->alloc = a;
        }

        if (key)
                c->keys[c->n] = *key;
        c->values[c->n++] = value;
        return 0;
}

/* Hands a finished container's positions to the document. */
static int container_close(Reader *r, Container *c, json_object *obj) {
        JsonPositions *p = r->positions;

        if (!p)
                return 0;

        if (p->n_containers == p->alloc) {
                size_t a = p->alloc > 0 ? p->alloc * 2 : 8;
                Container *q = reallocarray(p->containers, a, sizeof(Container));

                if (!q)
                        return -ENOMEM;
                p->containers = q;
                p->alloc = a;
        }
        c->obj = obj;
        p->containers[p->n_containers++] = *c;
        *c = (Container) {};
        return 0;
}

static int read_value(Reader *r, unsigned depth, JsonPosition *ret_position, json_object **ret);

/* One member "key": value of obj, at r->i. */
static int read_member(Reader *r, unsigned depth, json_object *obj, Container *c) {
        _cleanup_json_ json_object *value = NULL;
        _cleanup_free_ char *key = NULL;
        JsonPosition key_position, value_position;
        size_t key_offset, len;
        int k;

        skip_space(r);
        if (!at(r, '"')) {
                if (at(r, '}'))
                        return fail(r, r->i, -EBADMSG, "expected a quoted key (trailing comma?)");
                if (r->i < r->len)
                        return fail(r, r->i, -EBADMSG, "expected a quoted key");
                return unexpected(r, r->i);
        }

        key_offset = r->i;
        key_position = position_here(r);
        k = read_string(r, &len);
        if (k < 0)
                return k;

        /* The key as written, for messages. */
#define RAW_KEY (int) (r->i - key_offset - 2), r->s + key_offset + 1
        if (memchr(r->buf, 0, len))
                return failf(r, key_offset, "key \"%.*s\" contains a NUL character", RAW_KEY);
        if (json_object_object_get_ex(obj, r->buf, NULL))
                return failf(r, key_offset, "duplicate key \"%.*s\"", RAW_KEY);
#undef RAW_KEY

        /* r->buf is reused for the strings of the value. */
        key = strndup(r->buf, len);
        if (!key)
                return -ENOMEM;

        skip_space(r);
        if (!at(r, ':'))
                return r->i < r->len ? fail(r, r->i, -EBADMSG, "expected ':' after the key")
                                     : unexpected(r, r->i);
        r->i++;

        k = read_value(r, depth + 1, &value_position, &value);
        if (k < 0)
                return k;

        if (json_object_object_add_ex(obj, key, value, JSON_C_OBJECT_ADD_KEY_IS_NEW) < 0)
                return -ENOMEM;
        TAKE_PTR(value);

        return container_add(r, c, &key_position, value_position);
}

/* One element of array, at r->i. */
static int read_element(Reader *r, unsigned depth, json_object *array, Container *c) {
        _cleanup_json_ json_object *value = NULL;
        JsonPosition position;
        int k;

        skip_space(r);
        if (at(r, ']'))
                return fail(r, r->i, -EBADMSG, "expected a value (trailing comma?)");

        k = read_value(r, depth + 1, &position, &value);
        if (k < 0)
                return k;

        if (json_object_array_add(array, value) < 0)
                return -ENOMEM;
        TAKE_PTR(value);

        return container_add(r, c, NULL, position);
}

/* An object or an array, at its '{' or '['. */
static int read_container(Reader *r, unsigned depth, json_object **ret) {
        _cleanup_(container_done) Container c = {};
        _cleanup_json_ json_object *o = NULL;
        bool object = r->s[r->i] == '{';
        char close = object ? '}' : ']';
        int k;

        o = object ? json_object_new_object() : json_object_new_array();
        if (!o)
                return -ENOMEM;

        r->i++;
        skip_space(r);
        if (!at(r, close))
                for (;;) {
                        k = object ? read_member(r, depth, o, &c) : read_element(r, depth, o, &c);
                        if (k < 0)
                                return k;

                        skip_space(r);
                        if (at(r, ',')) {
                                r->i++;
                                continue;
                        }
                        if (at(r, close))
                                break;
                        if (r->i >= r->len)
                                return unexpected(r, r->i);
                        return fail(r, r->i, -EBADMSG, object ? "expected ',' or '}' (missing comma?)"
                                                              : "expected ',' or ']' (missing comma?)");
                }
        r->i++;

        k = container_close(r, &c, o);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(o);
        return 0;
}

/* depth: the containers around this value. */
static int read_value(Reader *r, unsigned depth, JsonPosition *ret_position, json_object **ret) {
        size_t len;
        int k;

        skip_space(r);
        if (r->i >= r->len)
                return unexpected(r, r->i);

        *ret_position = position_here(r);

        switch (r->s[r->i]) {
        case '{':
        case '[':
                if (depth >= JSON_DEPTH_MAX)
                        return fail(r, r->i, -EBADMSG, "nesting too deep");
                return read_container(r, depth, ret);
        case '"':
                k = read_string(r, &len);
                if (k < 0)
                        return k;
                *ret = json_object_new_string_len(r->buf, (int) len);
                return *ret ? 0 : -ENOMEM;
        case 't':
                return read_literal(r, "true", ret);
        case 'f':
                return read_literal(r, "false", ret);
        case 'n':
                return read_literal(r, "null", ret);
        default:
                if (r->s[r->i] == '-' || is_digit(r->s[r->i]))
                        return read_number(r, ret);
                return unexpected(r, r->i);
        }
}

static int compare_containers(const void *a, const void *b) {
        uintptr_t x = (uintptr_t) ((const Container *) a)->obj, y = (uintptr_t) ((const Container *) b)->obj;

        return x < y ? -1 : x > y;
}

int json_read(const char *text, size_t len, JsonReadFlags flags,
              json_object **ret, JsonPositions **ret_positions, JsonReadError *reterr) {
        _cleanup_(json_positions_freep) JsonPositions *positions = NULL;
        _cleanup_json_ json_object *obj = NULL;
        JsonReadError error = {};
        Reader r = {
                .s = text,
                .len = len,
                .line = 1,
                .error = &error,
        };
        int k;

        if ((!text && len > 0) || !ret)
                return -EINVAL;
        if (len > INT32_MAX)
                return -E2BIG;

        if (ret_positions) {
                positions = calloc(1, sizeof(*positions));
                if (!positions)
                        return -ENOMEM;
                r.positions = positions;
        }

        skip_space(&r);
        if (r.i >= r.len)
                k = fail(&r, 0, -EBADMSG, "empty file");
        else
                k = read_value(&r, 0, positions ? &positions->root : &(JsonPosition) {}, &obj);
        if (k >= 0) {
                skip_space(&r);
                if (r.i < r.len)
                        k = r.s[r.i] == '\0' ? fail(&r, r.i, -EBADMSG, "NUL byte")
                                             : fail(&r, r.i, -EBADMSG, "trailing data after the JSON value");
        }
        free(r.buf);
        if (k < 0) {
                if (reterr && error.message[0] != '\0')
                        *reterr = error;
                return k;
        }

        if ((flags & JSON_READ_OBJECT) && !json_object_is_type(obj, json_type_object))
                return -EINVAL;

        /* qsort() and bsearch() want an array, even of no elements. */
        if (positions && positions->n_containers > 0)
                qsort(positions->containers, positions->n_containers, sizeof(Container), compare_containers);

        *ret = TAKE_PTR(obj);
        if (ret_positions)
                *ret_positions = TAKE_PTR(positions);
        return 0;
}

static const Container *positions_find(const JsonPositions *p, json_object *obj) {
        Container key = { .obj = obj };

        if (!p || !obj || p->n_containers == 0)
                return NULL;
        return bsearch(&key, p->containers, p->n_containers, sizeof(Container), compare_containers);
}

int json_positions_root(const JsonPositions *p, JsonPosition *ret) {
        if (!p || !ret)
                return -ENOENT;
        *ret = p->root;
        return 0;
}

int json_positions_element(const JsonPositions *p, json_object *array, size_t index, JsonPosition *ret) {
        const Container *c = positions_find(p, array);

        if (!c || c->keys || index >= c->n || !ret)
                return -ENOENT;
        *ret = c->values[index];
        return 0;
}

int json_positions_member(const JsonPositions *p, json_object *object, const char *key,
                          JsonPosition *ret_key, JsonPosition *ret_value) {
        const Container *c = positions_find(p, object);
        size_t i = 0;

        if (!c || !c->keys || !key)
                return -ENOENT;

        json_object_object_foreach(object, k, v) {
                (void) v;
                if (i >= c->n)
                        break;
                if (strcmp(k, key) == 0) {
                        if (ret_key)
                                *ret_key = c->keys[i];
                        if (ret_value)
                                *ret_value = c->values[i];
                        return 0;
                }
                i++;
        }
        return -ENOENT;
}

int json_parse_strict(const char *buf, size_t len, JsonParseFlags flags, json_object **ret) {
        /* The one strict reader, without positions. */
        return json_read(buf, len, (flags & JSON_PARSE_OBJECT) ? JSON_READ_OBJECT : 0, ret, NULL, NULL);
}
