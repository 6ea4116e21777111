/* SPDX-License-Identifier: MIT */
#pragma once

/* The requester behind a unique name, the owner handle of its Inject
 * calls (bus-requester.c): when the name goes, its requests still waiting
 * for polkit are dropped (manager_requester_gone()). */

#include "bus-api.h"
#include "cleanup.h"

/* bus_requester_get() returns a new reference; each request holds one
 * until its answer. A name that had already gone comes back marked so:
 * call bus_requester_check_gone() once its request is made, which drops it
 * unless it detached. */
int bus_requester_get(BusApi *b, const char *name, BusRequester **ret);
BusRequester *bus_requester_ref(BusRequester *rq);
BusRequester *bus_requester_unref(BusRequester *rq);
DEFINE_TRIVIAL_CLEANUP_FUNC(BusRequester *, bus_requester_unref);
void bus_requester_check_gone(BusRequester *rq);
void bus_requesters_free(BusApi *b);
