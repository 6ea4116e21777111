/* SPDX-License-Identifier: MIT */

/* A server's table of interfaces and methods: what a connection looks a
 * call up in, what org.varlink.service describes, and where the server
 * binds both its own methods and its owner's. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "varlink-internal.h"

Interface *methods_find_interface(VarlinkServer *s, const char *name, size_t n) {
        for (size_t i = 0; i < s->n_interfaces; i++)
                if (strlen(s->interfaces[i].name) == n && memcmp(s->interfaces[i].name, name, n) == 0)
                        return &s->interfaces[i];
        return NULL;
}

Method *methods_find(VarlinkServer *s, const char *name) {
        for (size_t i = 0; i < s->n_methods; i++)
                if (strcmp(s->methods[i].name, name) == 0)
                        return &s->methods[i];
        return NULL;
}

int methods_add(VarlinkServer *s, const char *name, unsigned fds_max, VarlinkMethodFn callback, void *userdata) {
        _cleanup_free_ char *n = NULL;
        Method *p;

        if (methods_find(s, name))
                return -EEXIST;

        n = strdup(name);
        if (!n)
                return -ENOMEM;

        p = reallocarray(s->methods, s->n_methods + 1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        s->methods = p;
        s->methods[s->n_methods++] = (Method) {
                .name = TAKE_PTR(n),
                .callback = callback,
                .userdata = userdata,
                .fds_max = fds_max,
        };
        return 0;
}
