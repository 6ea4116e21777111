/* SPDX-License-Identifier: MIT */
/* A fault's kernel stack, named and never shown as addresses. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "fault-stack.h"
#include "json-build.h"
#include "json-util.h"

typedef struct Frames {
        uint32_t n;
        uint32_t first;                         /* the failed function's frame, or 0 */
        bool named[INJECT_STACK_DEPTH];
        char sym[INJECT_STACK_DEPTH][256];
} Frames;

/* Names the frames. Returns whether a frame from the failed function down
 * is unnamed, or a negative errno when there are no symbols at all. */
static int frames_name(Engine *e, const char *function, const struct inject_event *ev, Frames *f) {
        size_t fn_len = strlen(function);
        bool found = false;
        int r;

        f->n = ev->n_stack < INJECT_STACK_DEPTH ? ev->n_stack : INJECT_STACK_DEPTH;
        f->first = 0;
        for (uint32_t i = 0; i < f->n; i++) {
                if (ev->stack[i] == 0) {
                        f->n = i;
                        break;
                }
                r = engine_symbolize(e, ev->stack[i], f->sym[i], sizeof(f->sym[i]));
                if (r < 0 && r != -ENOENT)
                        return r;
                f->named[i] = r >= 0;
        }
        for (uint32_t i = 0; i < f->n && !found; i++)
                if (f->named[i] && strncmp(f->sym[i], function, fn_len) == 0 && f->sym[i][fn_len] == '+') {
                        f->first = i;
                        found = true;
                }
        for (uint32_t i = f->first; i < f->n; i++)
                if (!f->named[i])
                        return 1;
        return 0;
}

json_object *fault_stack_to_json(Engine *e, const char *function, const struct inject_event *ev) {
        _cleanup_json_ json_object *a = json_object_new_array();
        _cleanup_free_ Frames *f = calloc(1, sizeof(Frames));
        int r;

        if (!a || !f)
                return NULL;
        r = frames_name(e, function, ev, f);
        if (r > 0 && engine_refresh_symbols(e) > 0)
                r = frames_name(e, function, ev, f);
        if (r < 0)
                return TAKE_PTR(a);     /* no symbols: no stack */
        for (uint32_t i = f->first; i < f->n; i++)
                if (json_append_string(a, f->named[i] ? f->sym[i] : "?") < 0)
                        return NULL;
        return TAKE_PTR(a);
}
