/* SPDX-License-Identifier: MIT */
/* A --fail SPEC as an Inject request (spec-request.h). */

#include <string.h>

#include "cleanup.h"
#include "errno-name.h"
#include "json-build.h"
#include "json-util.h"
#include "scope-kind.h"
#include "spec-request.h"

/* The value a function of this type can return when failing: ENOMEM,
 * or 1 for TRUE and 0 for NULL functions. */
static int add_default_value(Transport *t, const FailSpec *spec, json_object *req) {
        _cleanup_json_ json_object *list = NULL;
        const char *type = "";

        if (transport_list_functions(t, spec->function, &list) >= 0 && json_object_array_length(list) == 1)
                (void) json_get_string(json_object_array_get_idx(list, 0), "type", &type);
        if (strcmp(type, "TRUE") == 0)
                return json_add_i64(req, "retval", 1);
        if (strcmp(type, "NULL") == 0)
                return json_add_i64(req, "retval", 0);
        return json_add_string(req, "error", "ENOMEM");
}

/* An errno by name where it has one, else by number. */
static json_object *errno_json(int error) {
        const char *name = errno_to_name(error);

        return name ? json_object_new_string(name) : json_object_new_int(error);
}

int arg_filter_args_to_json(const ArgFilterArgs *a, json_object *req) {
        return json_add_pairs(req,
                              JSON_PAIR_IF(a->ignore_gfp_wait, JSON_PAIR_BOOL("ignore_gfp_wait", true)),
                              JSON_PAIR_IF(a->ignore_gfp_highmem, JSON_PAIR_BOOL("ignore_gfp_highmem", true)),
                              JSON_PAIR_IF(a->has_min_order, JSON_PAIR_U64("min_order", a->min_order)),
                              JSON_PAIR_IF(a->has_min_size, JSON_PAIR_U64("min_size", a->min_size)),
                              JSON_PAIR_IF(a->cache, JSON_PAIR_STRING("cache", a->cache)),
                              JSON_BUILD_END);
}

json_object *fail_spec_request(Transport *t, const FailSpec *spec, pid_t pid, uint64_t duration) {
        _cleanup_json_ json_object *req = NULL;

        if (json_build_object(&req,
                              JSON_PAIR_STRING("function", spec->function),
                              JSON_PAIR_IF(spec->error, JSON_PAIR_OBJECT("error", spec->error ? errno_json(spec->error) : NULL)),
                              JSON_BUILD_END) < 0)
                return NULL;
        if (!spec->error && add_default_value(t, spec, req) < 0)
                return NULL;
        if (json_add_pairs(req,
                           JSON_PAIR_STRING("scope", scope_kind_to_string(spec->device ? SCOPE_KIND_DEVICE :
                                                                          SCOPE_KIND_PROCESS)),
                           JSON_PAIR_IF(spec->device, JSON_PAIR_STRING("device", spec->device)),
                           JSON_PAIR_IF(!spec->device, JSON_PAIR_I64("pid", pid)),
                           JSON_PAIR_IF(duration > 0, JSON_PAIR_U64("duration_usec", duration)),
                           JSON_PAIR_IF(spec->has_after, JSON_PAIR_U64("after", spec->after)),
                           JSON_PAIR_IF(spec->every, JSON_PAIR_U64("every", spec->every)),
                           JSON_PAIR_IF(spec->times, JSON_PAIR_U64("times", spec->times)),
                           JSON_PAIR_IF(spec->probability > 0, JSON_PAIR_DOUBLE("probability", spec->probability)),
                           JSON_PAIR_IF(spec->kernel_log, JSON_PAIR_U64("kernel_log", spec->kernel_log)),
                           JSON_PAIR_IF(spec->n_callers > 0,
                                        JSON_PAIR_OBJECT("callers", spec->n_callers > 0 ?
                                                         json_new_strv((const char *const *) spec->callers,
                                                                       spec->n_callers) : NULL)),
                           JSON_BUILD_END) < 0 ||
            arg_filter_args_to_json(&spec->filters, req) < 0)
                return NULL;
        return TAKE_PTR(req);
}
