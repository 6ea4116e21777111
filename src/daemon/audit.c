/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "audit.h"
#include "cleanup.h"
#include "log.h"

void audit_log(int level, const AuditRecord *a, const char *fmt, ...) {
        char msg[1024], f[16][320];
        const char *fields[17];
        size_t n = 0;
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

#define ADD(...)                                                        \
        do {                                                            \
                if (n < ELEMENTSOF(f)) {                                \
                        (void) snprintf(f[n], sizeof(f[n]), __VA_ARGS__); \
                        fields[n] = f[n];                               \
                        n++;                                            \
                }                                                       \
        } while (0)

        ADD("INJECTD_EVENT=%s", a->event);
        if (a->id)
                ADD("INJECTD_ID=%016" PRIx64, a->id);
        if (a->caller) {
                ADD("INJECTD_UID=%u", (unsigned) a->caller->uid);
                ADD("INJECTD_PID=%d", (int) a->caller->pid);
                ADD("INJECTD_TRANSPORT=%s", transport_to_string(a->caller->transport));
                if (a->caller->user_name)
                        ADD("INJECTD_USER=%s", a->caller->user_name);
        } else if (a->owner_uid)
                ADD("INJECTD_UID=%" PRIu32, *a->owner_uid);
        if (a->function)
                ADD("INJECTD_FUNCTION=%s", a->function);
        if (a->value)
                ADD("INJECTD_VALUE=%" PRId64, *a->value);
        if (a->scope)
                ADD("INJECTD_SCOPE=%s", a->scope);
        if (a->result)
                ADD("INJECTD_RESULT=%s", a->result);
        if (a->rule)
                ADD("INJECTD_RULE=%s", a->rule);
        if (a->polkit)
                ADD("INJECTD_POLKIT=%s", a->polkit);
        if (a->reason)
                ADD("INJECTD_REASON=%s", a->reason);
        if (a->cgroup)
                ADD("INJECTD_CALLER_CGROUP=%s", a->cgroup);
#undef ADD
        fields[n] = NULL;
        (void) log_struct(level, msg, fields);
}
