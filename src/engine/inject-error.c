/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "inject-error.h"

int inject_error_set(InjectError *e, int r, const char *name, const char *fmt, ...) {
        va_list ap;

        if (!e || e->name)      /* the first, most specific, explanation wins */
                return r;
        e->name = name;
        va_start(ap, fmt);
        (void) vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
        return r;
}
