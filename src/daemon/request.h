/* SPDX-License-Identifier: MIT */
#pragma once

/* The request model shared by both front ends. D-Bus converts its a{sv}
 * into the same JSON object Varlink receives, and request_from_json() is
 * the one parser and validator, so both APIs accept and refuse exactly the
 * same requests with the same errors. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "engine.h"
#include "inject-error.h"

typedef enum RequestScope {
        REQUEST_SCOPE_OWN_CGROUP,       /* default: the caller's own cgroup */
        REQUEST_SCOPE_CGROUP,           /* an explicit cgroup: fd (D-Bus) or path */
        REQUEST_SCOPE_PROCESS,          /* a pid (default: the caller) and its descendants */
        REQUEST_SCOPE_GLOBAL,
        REQUEST_SCOPE_DEVICE,           /* a block device, by name */
        _REQUEST_SCOPE_MAX,
} RequestScope;

const char *request_scope_to_string(RequestScope s);

#define REQUEST_MAX_STRING 256          /* any string field */
#define REQUEST_FDS_MAX 4               /* fds one request may bring (Varlink's VARLINK_MESSAGE_FDS_MAX) */

typedef struct InjectRequest {
        char *function;
        int64_t retval;
        bool is_errno;                  /* given as "error": policy matches errno names */
        uint64_t duration_usec;         /* 0: not given, the policy's cap applies */
        RequestScope scope;
        char *cgroup_path;
        /* The fds the request names, by their index among those the call
         * brought (-1: none); the request pipeline dups them into
         * cgroup_fd and pidfd, which request_done() closes. */
        int cgroup_fd_index, pidfd_index, backing_fd_index;
        int cgroup_fd;
        int pidfd;                      /* REQUEST_SCOPE_PROCESS: the process, named in any pid namespace */
        char *device;                   /* REQUEST_SCOPE_DEVICE: "loop3", "/dev/loop3" or "7:3" */
        int backing_fd;                 /* REQUEST_SCOPE_DEVICE: the loop device's backing file, opened by
                                         * the caller, which shows it is the caller's (device-owner.h) */
        pid_t pid;                      /* REQUEST_SCOPE_PROCESS; 0: the caller (or pidfd's) */
        char *comm;
        char *callers[INJECT_MAX_CALLERS];
        size_t n_callers;
        uint64_t after, every, times;
        uint32_t probability_ppm;
        ArgFilters arg_filters;         /* .cache points to cache */
        unsigned kernel_log;            /* 0: none; 1: a kernel log record per fault; 2: with its stack
                                         * (the kernel's fault-injection "verbose" levels) */
        char *cache;
        Backend backend;
        bool detach;
        bool interactive;
} InjectRequest;

#define INJECT_REQUEST_NULL \
        ((InjectRequest) { .cgroup_fd_index = -1, .pidfd_index = -1, .backing_fd_index = -1, .cgroup_fd = -1, \
                           .pidfd = -1, .backing_fd = -1 })

/* Keys: function (string), error (string name or positive integer) or
 * retval (integer), duration_usec (integer > 0), scope ("cgroup", "process",
 * "global", "device"), cgroup (string path), cgroup_fd (fd index), pid
 * (integer), pidfd (fd index), device (string), backing_fd (fd index),
 * comm (string), callers
 * (array of strings), after, every, times (integers), probability (number,
 * percent in (0, 100]), the argument filters ignore_gfp_wait,
 * ignore_gfp_highmem (booleans), min_order, min_size (integers), cache
 * (string), kernel_log (0..2), backend ("auto", "kprobe", "fmod_ret"),
 * detach, interactive (booleans). Anything else is refused by name. The keys are
 * one table in request.c (json-dispatch.h); a refusal is InvalidArgument
 * with a sentence that names the key. */
int request_from_json(json_object *o, InjectRequest *ret, InjectError *err);
void request_done(InjectRequest *r);
