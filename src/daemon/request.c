/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errno-name.h"
#include "json-util.h"
#include "request.h"

static const char *const scope_table[_REQUEST_SCOPE_MAX] = {
        [REQUEST_SCOPE_OWN_CGROUP] = "cgroup",
        [REQUEST_SCOPE_CGROUP] = "cgroup",
        [REQUEST_SCOPE_PROCESS] = "process",
        [REQUEST_SCOPE_GLOBAL] = "global",
};

const char *request_scope_to_string(RequestScope s) {
        return s >= 0 && s < _REQUEST_SCOPE_MAX ? scope_table[s] : NULL;
}

void request_done(InjectRequest *r) {
        free(r->function);
        free(r->cgroup_path);
        free(r->comm);
        for (size_t i = 0; i < r->n_callers; i++)
                free(r->callers[i]);
        if (r->cgroup_fd >= 0)
                (void) close(r->cgroup_fd);
        *r = INJECT_REQUEST_NULL;
}

static int bad(InjectError *err, const char *key, const char *what) {
        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT, "'%s' %s", key, what);
}

/* A present key must have the right type and range; -ENOENT means absent. */
static int get_string(json_object *o, const char *key, char **ret, InjectError *err) {
        const char *s;
        int r;

        r = json_get_string(o, key, &s);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return bad(err, key, "must be a string");
        if (!*s || strlen(s) > REQUEST_MAX_STRING)
                return bad(err, key, "must be 1 to 256 characters");
        *ret = strdup(s);
        return *ret ? 1 : -ENOMEM;
}

static int get_u64(json_object *o, const char *key, uint64_t min, uint64_t max, uint64_t *ret, InjectError *err) {
        int r;

        r = json_get_u64(o, key, min, max, ret);
        if (r == -ENOENT)
                return 0;
        if (r == -ERANGE)
                return inject_error_set(err, -ERANGE, INJECT_ERROR_INVALID_ARGUMENT,
                                        "'%s' must be an integer from %llu to %llu", key,
                                        (unsigned long long) min, (unsigned long long) max);
        if (r < 0)
                return bad(err, key, "must be a non-negative integer");
        return 1;
}

static int get_bool(json_object *o, const char *key, bool *ret, InjectError *err) {
        int r = json_get_bool(o, key, ret);

        if (r == -ENOENT)
                return 0;
        return r < 0 ? bad(err, key, "must be a boolean") : 1;
}

static int parse_value(json_object *o, InjectRequest *req, InjectError *err) {
        json_object *e = NULL, *v = NULL;
        bool has_e, has_v;

        has_e = json_object_object_get_ex(o, "error", &e) && e;
        has_v = json_object_object_get_ex(o, "retval", &v) && v;
        if (has_e == has_v)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                        "Exactly one of 'error' (an errno name or number) and 'retval' is required");
        if (has_e) {
                int en, r;

                if (json_object_is_type(e, json_type_string)) {
                        r = errno_from_name(json_object_get_string(e), &en);
                        if (r < 0) {
                                const char *near = NULL;

                                if (errno_suggest(json_object_get_string(e), &near) >= 0 && near)
                                        return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                                "Unknown errno '%.64s' (did you mean %s?)",
                                                                json_object_get_string(e), near);
                                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT,
                                                        "Unknown errno '%.64s'", json_object_get_string(e));
                        }
                } else {
                        uint64_t u;

                        r = json_get_u64(o, "error", 1, ERRNO_MAX, &u);
                        if (r < 0)
                                return bad(err, "error", "must be an errno name or a number from 1 to 4095");
                        en = (int) u;
                }
                req->retval = -en;
                req->is_errno = true;
                return 0;
        }
        if (json_get_i64(o, "retval", -4095, 4095, &req->retval) < 0)
                return bad(err, "retval", "must be an integer from -4095 to 4095");
        return 0;
}

static int parse_callers(json_object *o, InjectRequest *req, InjectError *err) {
        json_object *a;
        size_t n;
        int r;

        r = json_get_array(o, "callers", &a);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return bad(err, "callers", "must be an array of kernel function names");
        n = json_object_array_length(a);
        if (n > INJECT_MAX_CALLERS)
                return inject_error_set(err, -E2BIG, INJECT_ERROR_INVALID_ARGUMENT,
                                        "'callers' may name at most %d functions", INJECT_MAX_CALLERS);
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(a, i);
                const char *s;

                if (!json_object_is_type(c, json_type_string))
                        return bad(err, "callers", "must be an array of kernel function names");
                s = json_object_get_string(c);
                if (!*s || strlen(s) >= INJECT_FUNC_LEN)
                        return bad(err, "callers", "entries must be 1 to 63 characters");
                req->callers[req->n_callers] = strdup(s);
                if (!req->callers[req->n_callers])
                        return -ENOMEM;
                req->n_callers++;
        }
        return 0;
}

int request_from_json(json_object *o, InjectRequest *ret, InjectError *err) {
        static const char *const keys[] = {
                "function", "error", "retval", "duration_usec", "scope", "cgroup", "pid", "comm",
                "callers", "after", "every", "times", "probability", "backend", "detach", "interactive",
                NULL
        };
        InjectRequest req = INJECT_REQUEST_NULL;
        const char *unknown = NULL, *s;
        json_object *p;
        uint64_t u;
        int r;

        if (!o || !json_object_is_type(o, json_type_object))
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT, "The request must be an object");
        if (json_check_keys(o, keys, &unknown) < 0)
                return inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT, "Unknown key '%.64s'",
                                        unknown ?: "?");

        r = get_string(o, "function", &req.function, err);
        if (r == 0)
                r = inject_error_set(err, -EINVAL, INJECT_ERROR_INVALID_ARGUMENT, "'function' is required");
        if (r < 0)
                goto fail;
        if (strlen(req.function) >= INJECT_FUNC_LEN) {
                r = bad(err, "function", "must be shorter than 64 characters");
                goto fail;
        }
        r = parse_value(o, &req, err);
        if (r < 0)
                goto fail;
        r = get_u64(o, "duration_usec", 1, ENGINE_MAX_DURATION_USEC, &req.duration_usec, err);
        if (r < 0)
                goto fail;

        r = json_get_string(o, "scope", &s);
        if (r == -ENOENT)
                req.scope = REQUEST_SCOPE_OWN_CGROUP;
        else if (r < 0) {
                r = bad(err, "scope", "must be \"cgroup\", \"process\" or \"global\"");
                goto fail;
        } else if (strcmp(s, "cgroup") == 0)
                req.scope = REQUEST_SCOPE_OWN_CGROUP;
        else if (strcmp(s, "process") == 0)
                req.scope = REQUEST_SCOPE_PROCESS;
        else if (strcmp(s, "global") == 0)
                req.scope = REQUEST_SCOPE_GLOBAL;
        else {
                r = bad(err, "scope", "must be \"cgroup\", \"process\" or \"global\"");
                goto fail;
        }

        r = get_string(o, "cgroup", &req.cgroup_path, err);
        if (r < 0)
                goto fail;
        if (r > 0) {
                if (req.scope != REQUEST_SCOPE_OWN_CGROUP) {
                        r = bad(err, "cgroup", "only goes with scope \"cgroup\"");
                        goto fail;
                }
                req.scope = REQUEST_SCOPE_CGROUP;
        }
        r = get_u64(o, "pid", 1, INT32_MAX, &u, err);
        if (r < 0)
                goto fail;
        if (r > 0) {
                if (req.scope != REQUEST_SCOPE_PROCESS) {
                        r = bad(err, "pid", "only goes with scope \"process\"");
                        goto fail;
                }
                req.pid = (pid_t) u;
        }

        r = get_string(o, "comm", &req.comm, err);
        if (r < 0)
                goto fail;
        if (req.comm && strlen(req.comm) >= INJECT_COMM_LEN) {
                r = bad(err, "comm", "must be at most 15 characters (the kernel's TASK_COMM_LEN)");
                goto fail;
        }
        r = parse_callers(o, &req, err);
        if (r < 0)
                goto fail;
        if ((r = get_u64(o, "after", 0, UINT64_MAX / 2, &req.after, err)) < 0 ||
            (r = get_u64(o, "every", 1, UINT64_MAX / 2, &req.every, err)) < 0 ||
            (r = get_u64(o, "times", 1, UINT64_MAX / 2, &req.times, err)) < 0)
                goto fail;

        if (json_object_object_get_ex(o, "probability", &p) && p) {
                double d;

                if (!json_object_is_type(p, json_type_double) && !json_object_is_type(p, json_type_int)) {
                        r = bad(err, "probability", "must be a number (percent)");
                        goto fail;
                }
                d = json_object_get_double(p);
                if (!isfinite(d) || d <= 0 || d > 100) {
                        r = bad(err, "probability", "must be more than 0 and at most 100 (percent)");
                        goto fail;
                }
                req.probability_ppm = (uint32_t) llround(d * (INJECT_PPM / 100)) ?: 1;
        }

        r = json_get_string(o, "backend", &s);
        if (r == -ENOENT)
                req.backend = BACKEND_AUTO;
        else if (r < 0 || backend_from_string(s) < 0) {
                r = bad(err, "backend", "must be \"auto\", \"kprobe\" or \"fmod_ret\"");
                goto fail;
        } else
                req.backend = backend_from_string(s);

        if ((r = get_bool(o, "detach", &req.detach, err)) < 0 ||
            (r = get_bool(o, "interactive", &req.interactive, err)) < 0)
                goto fail;

        *ret = req;
        return 0;

fail:
        request_done(&req);
        return r;
}
