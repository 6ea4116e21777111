/* SPDX-License-Identifier: MIT */
#pragma once

#include <json-c/json.h>

#include "engine.h"

/* The failed call's kernel stack as a JSON array of symbols, innermost
 * first, starting at the failed function: the frames above it (the BPF
 * program and, for fmod_ret, its trampoline) are ours, not the caller's.
 *
 * No kernel address is ever shown, to anyone: it would give away where the
 * kernel sits in memory (KASLR). A frame no symbol covers is "?". When one
 * of the caller's frames cannot be named, the symbols are read again first
 * (a module or BPF program loaded since; engine_refresh_symbols() limits
 * how often). Without symbols at all (/proc/kallsyms unreadable or hidden)
 * the stack is empty. NULL when out of memory. */
json_object *fault_stack_to_json(Engine *e, const char *function, const struct inject_event *ev);
