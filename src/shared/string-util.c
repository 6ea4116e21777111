/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdio.h>

#include "string-util.h"

int vstrprintf(char **ret, const char *fmt, va_list ap) {
        char *s;

        if (vasprintf(&s, fmt, ap) < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int strprintf(char **ret, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vstrprintf(ret, fmt, ap);
        va_end(ap);
        return r;
}
