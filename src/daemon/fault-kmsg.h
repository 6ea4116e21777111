/* SPDX-License-Identifier: MIT */
#pragma once

#include "manager-types.h"

/* Writes the kernel log record of one injected fault of inj, if inj asks
 * for them (kernel_log) and the rate limit lets it (fault-kmsg.c says the
 * format and how it differs from the kernel's). Counts every fault, so
 * that "times" stays right. 1: written, 0: not asked or rate-limited,
 * < 0: /dev/kmsg refused it (logged at debug level; the fault stands). */
int fault_kmsg_write(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm);
