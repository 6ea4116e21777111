/* SPDX-License-Identifier: GPL-2.0 */
/* The task storage of process-scope tags (struct inject_tag, inject.h).
 * Every site program (inject.bpf.c) reads it and tags.bpf.c keeps it up to
 * date; the engine creates one map, pinned as injectd/task-tags, and makes
 * each program reuse it, so the definition must be the same in both. */
#ifndef INJECTD_TASK_TAGS_BPF_H
#define INJECTD_TASK_TAGS_BPF_H

struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct inject_tag);
} task_tags SEC(".maps");

#endif
