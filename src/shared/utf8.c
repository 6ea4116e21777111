/* SPDX-License-Identifier: MIT */

#include "utf8.h"

size_t utf8_char_len(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;
        unsigned char lo = 0x80, hi = 0xbf;
        size_t len;

        if (n == 0)
                return 0;

        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                len = 2;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
                len = 3;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
                len = 4;
        else
                return 0; /* continuation byte, 0xc0/0xc1 (overlong), > U+10FFFF */

        if (n < len)
                return 0;

        /* The second byte carries the remaining restrictions (RFC 3629,
         * section 4): overlong 3- and 4-byte forms, surrogates, and
         * 4-byte forms beyond U+10FFFF. */
        if (p[0] == 0xe0)
                lo = 0xa0;
        else if (p[0] == 0xed)
                hi = 0x9f;
        else if (p[0] == 0xf0)
                lo = 0x90;
        else if (p[0] == 0xf4)
                hi = 0x8f;

        if (p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;

        return len;
}

bool utf8_is_valid(const char *s, size_t n) {
        while (n > 0) {
                size_t k = utf8_char_len(s, n);

                if (k == 0)
                        return false;
                s += k;
                n -= k;
        }

        return true;
}
