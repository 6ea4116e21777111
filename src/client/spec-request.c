/* SPDX-License-Identifier: MIT */
/* A --fail SPEC as an Inject request (spec-request.h). */

#include <string.h>

#include "cleanup.h"
#include "errno-name.h"
#include "json-util.h"
#include "spec-request.h"

static void add_default_value(Transport *t, const FailSpec *spec, json_object *req) {
        _cleanup_json_ json_object *list = NULL;
        const char *type = "";

        if (transport_list_functions(t, spec->function, &list) >= 0 && json_object_array_length(list) == 1)
                (void) json_get_string(json_object_array_get_idx(list, 0), "type", &type);
        if (strcmp(type, "TRUE") == 0)
                json_object_object_add(req, "retval", json_object_new_int(1));
        else if (strcmp(type, "NULL") == 0)
                json_object_object_add(req, "retval", json_object_new_int(0));
        else
                json_object_object_add(req, "error", json_object_new_string("ENOMEM"));
}

json_object *fail_spec_request(Transport *t, const FailSpec *spec, pid_t pid, uint64_t duration) {
        json_object *req = json_object_new_object();

        if (!req)
                return NULL;
        json_object_object_add(req, "function", json_object_new_string(spec->function));
        if (spec->error) {
                const char *name = errno_to_name(spec->error);

                json_object_object_add(req, "error",
                                       name ? json_object_new_string(name) : json_object_new_int(spec->error));
        } else
                add_default_value(t, spec, req);
        json_object_object_add(req, "scope", json_object_new_string("process"));
        json_object_object_add(req, "pid", json_object_new_int64(pid));
        if (duration > 0)
                json_object_object_add(req, "duration_usec", json_object_new_uint64(duration));
        if (spec->has_after)
                json_object_object_add(req, "after", json_object_new_uint64(spec->after));
        if (spec->every)
                json_object_object_add(req, "every", json_object_new_uint64(spec->every));
        if (spec->times)
                json_object_object_add(req, "times", json_object_new_uint64(spec->times));
        if (spec->probability > 0)
                json_object_object_add(req, "probability", json_object_new_double(spec->probability));
        if (spec->n_callers > 0) {
                json_object *a = json_object_new_array();

                for (size_t i = 0; i < spec->n_callers; i++)
                        json_object_array_add(a, json_object_new_string(spec->callers[i]));
                json_object_object_add(req, "callers", a);
        }
        return req;
}
