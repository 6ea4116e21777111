/* SPDX-License-Identifier: MIT */
#pragma once

/* UTF-8 validation, strict as RFC 3629: no overlong forms, no surrogates,
 * nothing beyond U+10FFFF. json-c's own check lets overlong forms through,
 * and the table printer must not pass malformed bytes to a terminal. */

#include <stdbool.h>
#include <stddef.h>

/* Returns the length (1..4) of the well-formed character at s[0..n), or 0
 * if s starts with a malformed or truncated one (or n is 0). Bytes below
 * 0x80, NUL included, are one character each. */
size_t utf8_char_len(const char *s, size_t n);

/* Whether all of s[0..n) is well-formed UTF-8. */
bool utf8_is_valid(const char *s, size_t n);
