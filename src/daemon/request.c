/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errno-name.h"
#include "json-dispatch.h"
#include "json-util.h"
#include "request.h"
#include "scope-kind.h"

const char *request_scope_to_string(RequestScope s) {
        static const ScopeKind kind[_REQUEST_SCOPE_MAX] = {
                [REQUEST_SCOPE_OWN_CGROUP] = SCOPE_KIND_CGROUP,
                [REQUEST_SCOPE_CGROUP] = SCOPE_KIND_CGROUP,
                [REQUEST_SCOPE_PROCESS] = SCOPE_KIND_PROCESS,
                [REQUEST_SCOPE_GLOBAL] = SCOPE_KIND_GLOBAL,
                [REQUEST_SCOPE_DEVICE] = SCOPE_KIND_DEVICE,
        };

        return s >= 0 && s < _REQUEST_SCOPE_MAX ? scope_kind_to_string(kind[s]) : NULL;
}

void request_done(InjectRequest *r) {
        free(r->function);
        free(r->cgroup_path);
        free(r->comm);
        free(r->cache);
        free(r->device);
        for (size_t i = 0; i < r->n_callers; i++)
                free(r->callers[i]);
        if (r->cgroup_fd >= 0)
                (void) close(r->cgroup_fd);
        if (r->pidfd >= 0)
                (void) close(r->pidfd);
        if (r->backing_fd >= 0)
                (void) close(r->backing_fd);
        *r = INJECT_REQUEST_NULL;
}

/* What the table fills in: the request, and what says which keys came. */
typedef struct RequestFields {
        InjectRequest req;
        bool has_error, has_retval;
        uint64_t pid;
        bool ignore_gfp_wait, ignore_gfp_highmem;
        uint64_t min_order, min_size;   /* UINT64_MAX: not given */
        uint64_t kernel_log;
} RequestFields;

/* "error": an errno name, or a number. */
static int parse_error(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        RequestFields *f = dest;
        uint64_t u;
        int en;

        if (json_object_is_type(v, json_type_string)) {
                const char *s = json_object_get_string(v), *near = NULL;

                if (errno_from_name(s, &en) < 0) {
                        if (errno_suggest(s, &near) >= 0 && near)
                                return json_dispatch_refuse_full(err, -EINVAL, key,
                                                                 "Unknown errno '%.64s' (did you mean %s?)", s, near);
                        return json_dispatch_refuse_full(err, -EINVAL, key, "Unknown errno '%.64s'", s);
                }
        } else {
                if (json_get_u64(v, NULL, 1, ERRNO_MAX, &u) < 0)
                        return json_dispatch_refuse(err, -EINVAL, key,
                                                    "must be an errno name or a number from 1 to 4095");
                en = (int) u;
        }
        f->req.retval = -en;
        f->req.is_errno = true;
        f->has_error = true;
        return 0;
}

static int parse_retval(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        RequestFields *f = dest;

        /* One sentence for both a wrong type and a wrong value. */
        if (json_get_i64(v, NULL, -4095, 4095, &f->req.retval) < 0)
                return json_dispatch_refuse(err, -EINVAL, key, "must be an integer from -4095 to 4095");
        f->has_retval = true;
        return 0;
}

/* A string of 1..REQUEST_MAX_STRING bytes (the entry's range), shorter
 * than limit: the kernel's size for it. */
static int parse_short_string(const char *key, json_object *v, char **dest, const JsonDispatch *d,
                              JsonDispatchError *err, size_t limit, const char *what) {
        int r;

        r = json_dispatch_string(key, v, dest, d, err);
        if (r < 0)
                return r;
        if (strlen(*dest) >= limit)
                return json_dispatch_refuse(err, -EINVAL, key, "%s", what);
        return 0;
}

static int parse_function(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        return parse_short_string(key, v, dest, d, err, INJECT_FUNC_LEN, "must be shorter than 64 characters");
}

static int parse_comm(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        return parse_short_string(key, v, dest, d, err, INJECT_COMM_LEN,
                                  "must be at most 15 characters (the kernel's TASK_COMM_LEN)");
}

static int parse_scope(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        static const RequestScope by_kind[_SCOPE_KIND_MAX] = {
                [SCOPE_KIND_CGROUP] = REQUEST_SCOPE_OWN_CGROUP,  /* until "cgroup" names one */
                [SCOPE_KIND_PROCESS] = REQUEST_SCOPE_PROCESS,
                [SCOPE_KIND_GLOBAL] = REQUEST_SCOPE_GLOBAL,
                [SCOPE_KIND_DEVICE] = REQUEST_SCOPE_DEVICE,
        };
        RequestScope *scope = dest;
        const char *s;
        int k;

        if (json_get_string(v, NULL, &s) < 0 || (k = scope_kind_from_string(s)) < 0)
                return json_dispatch_refuse(err, -EINVAL, key, "must be " SCOPE_KIND_CHOICES);
        *scope = by_kind[k];
        return 0;
}

static int parse_callers(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        InjectRequest *req = dest;
        size_t n;

        if (!json_object_is_type(v, json_type_array))
                return json_dispatch_refuse(err, -EINVAL, key, "must be an array of kernel function names");
        n = json_object_array_length(v);
        if (n > INJECT_MAX_CALLERS)
                return json_dispatch_refuse(err, -E2BIG, key, "may name at most %d functions", INJECT_MAX_CALLERS);
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(v, i);
                const char *s;

                if (json_get_string(c, NULL, &s) < 0)
                        return json_dispatch_refuse(err, -EINVAL, key, "must be an array of kernel function names");
                if (!*s || strlen(s) >= INJECT_FUNC_LEN)
                        return json_dispatch_refuse(err, -EINVAL, key, "entries must be 1 to 63 characters");
                req->callers[req->n_callers] = strdup(s);
                if (!req->callers[req->n_callers])
                        return -ENOMEM;
                req->n_callers++;
        }
        return 0;
}

/* A percentage in (0, 100], kept in parts per million; never rounded to 0. */
static int parse_probability(const char *key, json_object *v, void *dest, const JsonDispatch *d,
                             JsonDispatchError *err) {
        uint32_t *ppm = dest;
        double x;

        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return json_dispatch_refuse(err, -EINVAL, key, "must be a number (percent)");
        x = json_object_get_double(v);
        if (!isfinite(x) || x <= 0 || x > 100)
                return json_dispatch_refuse(err, -EINVAL, key, "must be more than 0 and at most 100 (percent)");
        *ppm = (uint32_t) llround(x * (INJECT_PPM / 100)) ?: 1;
        return 0;
}

static int parse_backend(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        Backend *backend = dest;
        const char *s;
        int b;

        if (json_get_string(v, NULL, &s) < 0 || (b = backend_from_string(s)) < 0)
                return json_dispatch_refuse(err, -EINVAL, key, "must be \"auto\", \"kprobe\" or \"fmod_ret\"");
        *backend = b;
        return 0;
}

/* "cgroup_fd", "pidfd": an fd that came with the call, by its index among
 * them (Varlink: the message's SCM_RIGHTS; D-Bus: the front end numbers
 * the 'h' values it read). Whether the call brought that many is for the
 * request pipeline, which holds the fds. */
static int parse_fd_index(const char *key, json_object *v, void *dest, const JsonDispatch *d, JsonDispatchError *err) {
        int64_t i;

        if (!json_object_is_type(v, json_type_int) || (i = json_object_get_int64(v)) < 0 || i >= REQUEST_FDS_MAX)
                return json_dispatch_refuse(err, -EINVAL, key,
                                            "must be the index (0 to %d) of a file descriptor sent with the call",
                                            REQUEST_FDS_MAX - 1);
        *(int *) dest = (int) i;
        return 0;
}

#define FIELD(name) offsetof(RequestFields, name)

/* The keys of an Inject request (request.h), in the order they are
 * checked; what a key's value must be is in its parser. */
static const JsonDispatch request_table[] = {
        { "function",      JSON_DISPATCH_STRING,   parse_function,       FIELD(req.function), JSON_DISPATCH_MANDATORY,
          .min = 1, .max = REQUEST_MAX_STRING },
        { "error",         JSON_DISPATCH_ANY,      parse_error,          0 },
        { "retval",        JSON_DISPATCH_ANY,      parse_retval,         0 },
        { "duration_usec", JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    FIELD(req.duration_usec), 0,
          .min = 1, .max = ENGINE_MAX_DURATION_USEC },
        { "scope",         JSON_DISPATCH_ANY,      parse_scope,          FIELD(req.scope) },
        { "cgroup",        JSON_DISPATCH_STRING,   json_dispatch_string, FIELD(req.cgroup_path), 0,
          .min = 1, .max = REQUEST_MAX_STRING },
        { "cgroup_fd",     JSON_DISPATCH_ANY,      parse_fd_index,       FIELD(req.cgroup_fd_index) },
        { "pid",           JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    FIELD(pid), 0, .min = 1, .max = INT32_MAX },
        { "pidfd",         JSON_DISPATCH_ANY,      parse_fd_index,       FIELD(req.pidfd_index) },
        { "device",        JSON_DISPATCH_STRING,   json_dispatch_string, FIELD(req.device), 0,
          .min = 1, .max = REQUEST_MAX_STRING },
        { "backing_fd",    JSON_DISPATCH_ANY,      parse_fd_index,       FIELD(req.backing_fd_index) },
        { "comm",          JSON_DISPATCH_STRING,   parse_comm,           FIELD(req.comm), 0,
          .min = 1, .max = REQUEST_MAX_STRING },
        { "callers",       JSON_DISPATCH_ANY,      parse_callers,        FIELD(req) },
        { "after",         JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    FIELD(req.after), 0, .max = UINT64_MAX / 2 },
        { "every",         JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    FIELD(req.every), 0,
          .min = 1, .max = UINT64_MAX / 2 },
        { "times",         JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    FIELD(req.times), 0,
          .min = 1, .max = UINT64_MAX / 2 },
        { "probability",   JSON_DISPATCH_ANY,      parse_probability,    FIELD(req.probability_ppm) },
        { "ignore_gfp_wait",    JSON_DISPATCH_BOOLEAN,  json_dispatch_bool, FIELD(ignore_gfp_wait) },
        { "ignore_gfp_highmem", JSON_DISPATCH_BOOLEAN,  json_dispatch_bool, FIELD(ignore_gfp_highmem) },
        { "min_order",     JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    FIELD(min_order), 0, .max = 63 },
        { "min_size",      JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    FIELD(min_size), 0,
          .min = 1, .max = UINT32_MAX },
        { "cache",         JSON_DISPATCH_STRING,   json_dispatch_string, FIELD(req.cache), 0,
          .min = 1, .max = REQUEST_MAX_STRING },
        { "kernel_log",    JSON_DISPATCH_UNSIGNED, json_dispatch_u64,    FIELD(kernel_log), 0, .max = 2 },
        { "backend",       JSON_DISPATCH_ANY,      parse_backend,        FIELD(req.backend) },
        { "detach",        JSON_DISPATCH_BOOLEAN,  json_dispatch_bool,   FIELD(req.detach) },
        { "interactive",   JSON_DISPATCH_BOOLEAN,  json_dispatch_bool,   FIELD(req.interactive) },
        {}
};

/* What no single key can say: the keys that go together. */
static int check_combinations(RequestFields *f, InjectError *err) {
        if (f->has_error == f->has_retval)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                        "Exactly one of 'error' (an errno name or number) and 'retval' is required");

        if (f->req.cgroup_path) {
                if (f->req.scope != REQUEST_SCOPE_OWN_CGROUP)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                "'cgroup' only goes with scope \"cgroup\"");
                f->req.scope = REQUEST_SCOPE_CGROUP;
        }
        if (f->req.cgroup_fd_index >= 0) {
                if (f->req.scope != REQUEST_SCOPE_OWN_CGROUP && f->req.scope != REQUEST_SCOPE_CGROUP)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                "'cgroup_fd' only goes with scope \"cgroup\"");
                if (f->req.cgroup_path)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                "Give one of 'cgroup' and 'cgroup_fd', not both");
                f->req.scope = REQUEST_SCOPE_CGROUP;
        }
        if (f->pid > 0) {
                if (f->req.scope != REQUEST_SCOPE_PROCESS)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                "'pid' only goes with scope \"process\"");
                f->req.pid = (pid_t) f->pid;
        }
        if (f->req.pidfd_index >= 0) {
                if (f->req.scope != REQUEST_SCOPE_PROCESS)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                "'pidfd' only goes with scope \"process\"");
                if (f->pid > 0)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                "Give one of 'pid' and 'pidfd', not both");
        }

        if (f->req.device) {
                if (f->req.scope != REQUEST_SCOPE_OWN_CGROUP && f->req.scope != REQUEST_SCOPE_DEVICE)
                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                "'device' only goes with scope \"device\"");
                f->req.scope = REQUEST_SCOPE_DEVICE;
        } else if (f->req.scope == REQUEST_SCOPE_DEVICE)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                        "Scope \"device\" needs 'device', the block device's name (\"loop3\")");
        if (f->req.backing_fd_index >= 0 && f->req.scope != REQUEST_SCOPE_DEVICE)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                        "'backing_fd' only goes with scope \"device\"");

        f->req.kernel_log = (unsigned) f->kernel_log;

        /* Which filters apply to the function is the engine's to say. */
        f->req.arg_filters = (ArgFilters) {
                .mask = (f->ignore_gfp_wait ? INJECT_FILTER_GFP_WAIT : 0) |
                        (f->ignore_gfp_highmem ? INJECT_FILTER_GFP_HIGHMEM : 0) |
                        (f->min_order != UINT64_MAX ? INJECT_FILTER_MIN_ORDER : 0) |
                        (f->min_size != UINT64_MAX ? INJECT_FILTER_MIN_SIZE : 0) |
                        (f->req.cache ? INJECT_FILTER_CACHE : 0),
                .min_order = f->min_order != UINT64_MAX ? (uint32_t) f->min_order : 0,
                .min_size = f->min_size != UINT64_MAX ? (uint32_t) f->min_size : 0,
                .cache = f->req.cache,
        };
        return 0;
}

int request_from_json(json_object *o, InjectRequest *ret, InjectError *err) {
        RequestFields f = { .req = INJECT_REQUEST_NULL, .min_order = UINT64_MAX, .min_size = UINT64_MAX };
        JsonDispatchError derr = {};
        int r;

        if (!json_object_is_type(o, json_type_object))
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT, "The request must be an object");

        r = json_dispatch(o, request_table, 0, &f, &derr);
        if (r == -ENOMEM)
                goto fail;
        if (r < 0) {
                /* Unknown and missing keys are invalid arguments like the rest. */
                r = inject_error_set(err, r == -EBADMSG || r == -ENXIO ? -EINVAL : r,
                                     INJECT_ERROR_INVALID_ARGUMENT, "%s", derr.message);
                goto fail;
        }
        r = check_combinations(&f, err);
        if (r < 0)
                goto fail;

        *ret = f.req;
        return 0;

fail:
        request_done(&f.req);
        return r;
}
