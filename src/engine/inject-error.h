/* SPDX-License-Identifier: MIT */
#pragma once

/* A refusal worth explaining: a stable machine-readable name, which the
 * D-Bus and Varlink front ends map onto their error names, and a sentence for
 * the person who asked. Mirrors sd_bus_error, without tying the engine to a
 * bus. */

#include <stdarg.h>
#include <stddef.h>

typedef struct InjectError {
        const char *name;       /* one of the INJECT_ERROR_* strings, or NULL */
        char message[512];
} InjectError;

#define INJECT_ERROR_NOT_INJECTABLE      "NotInjectable"        /* function cannot be failed on this kernel */
#define INJECT_ERROR_BAD_VALUE           "BadValue"             /* return value outside the function's type */
#define INJECT_ERROR_BACKEND_UNAVAILABLE "BackendUnavailable"   /* asked-for backend cannot serve it */
#define INJECT_ERROR_BAD_SCOPE           "BadScope"             /* missing, unknown or vanished scope */
#define INJECT_ERROR_SCOPE_TAKEN         "ScopeTaken"           /* same function and scope already armed */
#define INJECT_ERROR_BAD_FILTER          "BadFilter"            /* comm, caller or trigger out of range */
#define INJECT_ERROR_BAD_DURATION        "BadDuration"
#define INJECT_ERROR_TOO_MANY            "TooManyInjections"
#define INJECT_ERROR_NO_SUCH_INJECTION   "NoSuchInjection"
#define INJECT_ERROR_KERNEL_REFUSED      "KernelRefused"        /* load or attach failed in the kernel */
#define INJECT_ERROR_UNAVAILABLE         "InjectionUnavailable" /* this kernel cannot inject at all */
#define INJECT_ERROR_INVALID_ARGUMENT    "InvalidArgument"      /* malformed request: unknown key, wrong type */
#define INJECT_ERROR_NOT_ALLOWED         "NotAllowed"           /* policy said no */
#define INJECT_ERROR_NOT_AUTHORIZED      "NotAuthorized"        /* polkit said no */
#define INJECT_ERROR_SCOPE_NOT_OWNED     "ScopeNotOwned"        /* the scope holds other users' processes */
#define INJECT_ERROR_LIMIT               "LimitExceeded"        /* per-user or global active limit, or rate */
#define INJECT_ERROR_AUTH_UNAVAILABLE    "AuthorizationUnavailable" /* polkit required but unreachable */

/* Fills e (if non-NULL) and returns r (a negative errno), so callers can
 * `return inject_error_set(e, -EINVAL, ..., "...")`. %m is not supported. */
int inject_error_set(InjectError *e, int r, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static inline int inject_error_is_set(const InjectError *e) {
        return e && e->name;
}
