/* SPDX-License-Identifier: MIT */
#pragma once

#include "manager.h"

/* Drops every request still waiting for polkit, unanswered (the manager
 * is going away). */
void pending_requests_free(Manager *m);
