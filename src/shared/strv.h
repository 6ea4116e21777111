/* SPDX-License-Identifier: MIT */
#pragma once

/* A string list: a NULL-terminated array of strings the list owns. */

#include <stdlib.h>

static inline char **strv_free(char **l) {
        if (l) {
                for (char **i = l; *i; i++)
                        free(*i);
                free(l);
        }
        return NULL;
}

static inline void strv_freep(char ***l) {
        *l = strv_free(*l);
}
