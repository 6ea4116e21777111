/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <string.h>

#include "scope-kind.h"

static const char *const scope_kind_table[_SCOPE_KIND_MAX] = {
        [SCOPE_KIND_CGROUP]  = "cgroup",
        [SCOPE_KIND_PROCESS] = "process",
        [SCOPE_KIND_GLOBAL]  = "global",
        [SCOPE_KIND_DEVICE]  = "device",
};

const char *scope_kind_to_string(ScopeKind k) {
        if ((unsigned) k >= _SCOPE_KIND_MAX)
                return NULL;
        return scope_kind_table[k];
}

int scope_kind_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (ScopeKind k = 0; k < _SCOPE_KIND_MAX; k++)
                if (strcmp(scope_kind_table[k], s) == 0)
                        return k;
        return -EINVAL;
}
