/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "json-util.h"
#include "utf8.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free)

static bool json_is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

bool json_integer_fits(const char *p, size_t len) {
        static const char u64_max[] = "18446744073709551615";
        static const char i64_min_abs[] = "9223372036854775808";
        const char *limit = u64_max;
        size_t limit_len = sizeof(u64_max) - 1;

        if (len > 0 && p[0] == '-') {
                p++;
                len--;
                limit = i64_min_abs;
                limit_len = sizeof(i64_min_abs) - 1;
        }

        if (len != limit_len)
                return len < limit_len;

        /* Same number of digits: compare as strings. */
        return memcmp(p, limit, len) <= 0;
}

/* Checks p[0..len) against RFC 8259's number grammar,
 *     -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 * which json-c does not fully enforce even in strict mode: it takes "1.",
 * "1.e5", "00" and "-01". Sets *ret_integer if there is neither fraction
 * nor exponent. */
static int check_number(const char *p, size_t len, bool *ret_integer) {
        bool integer = true;
        size_t i = 0, n;

        if (i < len && p[i] == '-')
                i++;

        if (i < len && p[i] == '0')
                i++;
        else if (i < len && p[i] >= '1' && p[i] <= '9')
                while (i < len && is_digit(p[i]))
                        i++;
        else
                return -EBADMSG;

        if (i < len && p[i] == '.') {
                integer = false;
                for (i++, n = 0; i < len && is_digit(p[i]); i++)
                        n++;
                if (n == 0)
                        return -EBADMSG;
        }

        if (i < len && (p[i] == 'e' || p[i] == 'E')) {
                integer = false;
                i++;
                if (i < len && (p[i] == '+' || p[i] == '-'))
                        i++;
                for (n = 0; i < len && is_digit(p[i]); i++)
                        n++;
                if (n == 0)
                        return -EBADMSG;
        }

        if (i != len)
                return -EBADMSG;

        *ret_integer = integer;
        return 0;
}

/* A second, lexical pass over text json-c has already accepted, for what
 * its strict mode still lets through. Outside strings, valid JSON consists
 * of structural characters, white space, numbers and the letters of true,
 * false and null; anything else (a quote ', the N of NaN, the I of
 * Infinity) is json-c leniency. Numbers get their grammar checked. */
static int json_check_lexical(const char *buf, size_t len) {
        size_t i = 0;

        while (i < len) {
                char c = buf[i];

                if (c == '"') {
                        for (i++; i < len && buf[i] != '"'; i++) {
                                unsigned char u = (unsigned char) buf[i];

                                if (u < 0x20)
                                        return -EBADMSG;
                                if (u == '\\')
                                        i++; /* skip the escaped character */
                                else if (u >= 0x80) {
                                        /* json-c's UTF-8 check lets overlong
                                         * forms through. */
                                        size_t k = utf8_char_len(buf + i, len - i);

                                        if (k == 0)
                                                return -EBADMSG;
                                        i += k - 1;
                                }
                        }
                        i++; /* closing quote */
                        continue;
                }

                if (c == '-' || is_digit(c)) {
                        size_t start = i;
                        bool integer;
                        int r;

                        while (i < len && (c = buf[i], c == '-' || c == '+' || c == '.' ||
                                                       c == 'e' || c == 'E' || is_digit(c)))
                                i++;

                        r = check_number(buf + start, i - start, &integer);
                        if (r < 0)
                                return r;
                        if (integer && !json_integer_fits(buf + start, i - start))
                                return -ERANGE;
                        continue;
                }

                /* strchr() would match the terminating NUL, hence c != 0. */
                if (!json_is_space(c) && (c == '\0' || !strchr("{}[],:truefalsn", c)))
                        return -EBADMSG;
                i++;
        }

        return 0;
}

int json_parse_strict(const char *buf, size_t len, JsonParseFlags flags, json_object **ret) {
        _cleanup_(json_tokener_freep) struct json_tokener *tok = NULL;
        _cleanup_json_ json_object *obj = NULL;
        enum json_tokener_error e;
        size_t end;
        int r;

        if ((!buf && len > 0) || !ret)
                return -EINVAL;
        if (len > INT32_MAX)
                return -E2BIG;
        if (len == 0)
                return -EBADMSG;

        tok = json_tokener_new_ex(JSON_DEPTH_MAX);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);

        obj = json_tokener_parse_ex(tok, buf, (int) len);
        e = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);

        /* A number at the very end ("12") could still go on; json-c wants
         * the terminating NUL to know it is complete. buf need not have
         * one, so feed it separately. */
        if (e == json_tokener_continue) {
                obj = json_tokener_parse_ex(tok, "", 1);
                e = json_tokener_get_error(tok);
                end = len;
        }

        if (e != json_tokener_success)
                return -EBADMSG;

        /* json-c stops after the first value; only white space may follow. */
        for (size_t i = end; i < len; i++)
                if (!json_is_space(buf[i]))
                        return -EBADMSG;

        r = json_check_lexical(buf, end);
        if (r < 0)
                return r;

        if ((flags & JSON_PARSE_OBJECT) && !json_object_is_type(obj, json_type_object))
                return -EINVAL;

        *ret = TAKE_PTR(obj);
        return 0;
}

/* Looks up key, or takes obj itself for key == NULL, treating null as
 * missing and checking the type. */
static int json_get_typed(json_object *obj, const char *key, json_type type, json_object **ret) {
        json_object *v;

        if (key) {
                if (!json_object_is_type(obj, json_type_object))
                        return -EINVAL;
                if (!json_object_object_get_ex(obj, key, &v))
                        return -ENOENT;
        } else
                v = obj;

        /* json-c represents null as a NULL pointer. */
        if (!v)
                return -ENOENT;
        if (!json_object_is_type(v, type))
                return -EINVAL;

        *ret = v;
        return 0;
}

int json_get_string(json_object *obj, const char *key, const char **ret) {
        json_object *v;
        const char *s;
        int r;

        r = json_get_typed(obj, key, json_type_string, &v);
        if (r < 0)
                return r;

        s = json_object_get_string(v);
        if (strlen(s) != (size_t) json_object_get_string_len(v))
                return -EINVAL;

        if (ret)
                *ret = s;
        return 0;
}

int json_get_u64(json_object *obj, const char *key, uint64_t min, uint64_t max, uint64_t *ret) {
        json_object *v;
        uint64_t u;
        int r;

        r = json_get_typed(obj, key, json_type_int, &v);
        if (r < 0)
                return r;

        /* json-c keeps an int as int64 or, above INT64_MAX, as uint64, and
         * each getter clamps the other: a negative int64 reads as uint64 0,
         * so the sign has to be checked through the int64 getter. */
        if (json_object_get_int64(v) < 0)
                return -ERANGE;

        u = json_object_get_uint64(v);
        if (u < min || u > max)
                return -ERANGE;

        if (ret)
                *ret = u;
        return 0;
}

int json_get_i64(json_object *obj, const char *key, int64_t min, int64_t max, int64_t *ret) {
        json_object *v;
        int64_t i;
        int r;

        r = json_get_typed(obj, key, json_type_int, &v);
        if (r < 0)
                return r;

        /* A uint64 above INT64_MAX reads as INT64_MAX through the int64
         * getter; only the uint64 getter tells them apart. */
        i = json_object_get_int64(v);
        if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t) INT64_MAX)
                return -ERANGE;
        if (i < min || i > max)
                return -ERANGE;

        if (ret)
                *ret = i;
        return 0;
}

int json_get_bool(json_object *obj, const char *key, bool *ret) {
        json_object *v;
        int r;

        r = json_get_typed(obj, key, json_type_boolean, &v);
        if (r < 0)
                return r;

        if (ret)
                *ret = json_object_get_boolean(v);
        return 0;
}

int json_get_object(json_object *obj, const char *key, json_object **ret) {
        json_object *v;
        int r;

        r = json_get_typed(obj, key, json_type_object, &v);
        if (r < 0)
                return r;

        if (ret)
                *ret = v;
        return 0;
}

int json_get_array(json_object *obj, const char *key, json_object **ret) {
        json_object *v;
        int r;

        r = json_get_typed(obj, key, json_type_array, &v);
        if (r < 0)
                return r;

        if (ret)
                *ret = v;
        return 0;
}

int json_check_keys(json_object *obj, const char *const *allowed, const char **reterr_unknown) {
        if (!json_object_is_type(obj, json_type_object))
                return -EINVAL;

        json_object_object_foreach(obj, key, value) {
                bool found = false;

                (void) value;

                for (const char *const *a = allowed; a && *a; a++)
                        if (strcmp(*a, key) == 0) {
                                found = true;
                                break;
                        }

                if (!found) {
                        if (reterr_unknown)
                                *reterr_unknown = key;
                        return -EBADMSG;
                }
        }

        return 0;
}
