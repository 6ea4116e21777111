/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cleanup.h"
#include "inject.h"
#include "io-util.h"
#include "log.h"
#include "pin.h"
#include "scope-tags.h"
#include "tags.h"
#include "tags.skel.h"

/* A fork storm during arming could keep changing the tree under the tagging
 * pass forever; past this many passes the scope is left as it stands. */
#define TAGS_MAX_PASSES 16

DEFINE_TRIVIAL_CLEANUP_FUNC(struct btf *, btf__free);
DEFINE_TRIVIAL_CLEANUP_FUNC(ScopeTagsProgram *, scope_tags_program_free);

/* Names under <pin_root>/tags. The iterator's link is pinned too: a later
 * engine (after a restart) runs the pass without loading anything. */
#define TAGS_DIR "tags"
#define PIN_ROOTS "roots"
#define PIN_FORK "fork"
#define PIN_SYNC "sync"
#define PIN_SUBTREE "subtree"       /* the program inject_tag_subtree, for links of one process each */

/* A walk that visits more processes than pids can exist is going round in
 * circles (a list read while it changed): the whole-machine pass then. */
#define TAGS_WALK_MAX 4194304       /* PID_MAX_LIMIT */

int scope_tags_map_new(void) {
        _cleanup_(btf__freep) struct btf *btf = NULL;
        int key_id, u64_id, arr_id, value_id, r, fd;

        /* The kernel wants BTF for the key and value of local storage. */
        btf = btf__new_empty();
        if (!btf)
                return negative_errno();
        key_id = btf__add_int(btf, "int", sizeof(int), BTF_INT_SIGNED);
        u64_id = btf__add_int(btf, "unsigned long long", sizeof(__u64), 0);
        if (key_id < 0 || u64_id < 0)
                return key_id < 0 ? key_id : u64_id;
        arr_id = btf__add_array(btf, key_id, u64_id, INJECT_MAX_TAGS);
        if (arr_id < 0)
                return arr_id;
        value_id = btf__add_struct(btf, "inject_tag", sizeof(struct inject_tag));
        if (value_id < 0)
                return value_id;
        r = btf__add_field(btf, "tags", arr_id, 0, 0);
        if (r < 0)
                return r;
        r = btf__load_into_kernel(btf);
        if (r < 0)
                return r;

        LIBBPF_OPTS(bpf_map_create_opts, opts,
                    .map_flags = BPF_F_NO_PREALLOC,
                    .btf_fd = btf__fd(btf),
                    .btf_key_type_id = key_id,
                    .btf_value_type_id = value_id);
        fd = bpf_map_create(BPF_MAP_TYPE_TASK_STORAGE, "task_tags", sizeof(int), sizeof(struct inject_tag), 0,
                            &opts);
        return fd < 0 ? negative_errno() : fd;
}

static int tags_path(char *buf, size_t n, const char *pin_root, const char *name) {
        int k = name ? snprintf(buf, n, "%s/" TAGS_DIR "/%s", pin_root, name) :
                       snprintf(buf, n, "%s/" TAGS_DIR, pin_root);
        return k < 0 || (size_t) k >= n ? -ENAMETOOLONG : 0;
}

/* Opens what is pinned as <pin_root>/tags/name. */
static int tags_open(const char *pin_root, const char *name) {
        char p[PATH_MAX];
        int fd, r;

        r = tags_path(p, sizeof(p), pin_root, name);
        if (r < 0)
                return r;
        fd = bpf_obj_get(p);
        return fd < 0 ? negative_errno() : fd;
}

static int unpin_dir(const char *dir) {
        static const char *const names[] = { PIN_FORK, PIN_SYNC, PIN_SUBTREE, PIN_ROOTS };
        char p[PATH_MAX];
        int r = 0;

        /* The fork program first: nothing copies tags once no root is left. */
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                if (pin_path(p, sizeof(p), dir, names[i]) < 0)
                        return -ENAMETOOLONG;
                if (unlink(p) < 0 && errno != ENOENT)
                        r = negative_errno();
        }
        if (rmdir(dir) < 0 && errno != ENOENT)
                r = negative_errno();
        return r;
}

int scope_tags_remove(const char *pin_root) {
        char dir[PATH_MAX];
        int r;

        r = tags_path(dir, sizeof(dir), pin_root, NULL);
        if (r < 0)
                return r;
        return unpin_dir(dir);
}

/* The programs loaded and attached, held by this process. Closing the
 * links detaches them unless they are pinned. */
struct ScopeTagsProgram {
        struct tags_bpf *skel;
        struct bpf_link *fork;
        struct bpf_link *sync;
        uint32_t task_tags_id;          /* the task-storage map they were loaded against */
};

ScopeTagsProgram *scope_tags_program_free(ScopeTagsProgram *p) {
        if (!p)
                return NULL;
        bpf_link__destroy(p->fork);
        bpf_link__destroy(p->sync);
        tags_bpf__destroy(p->skel);
        free(p);
        return NULL;
}

static int map_id(int fd, uint32_t *ret) {
        struct bpf_map_info info = {};
        uint32_t len = sizeof(info);

        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return negative_errno();
        *ret = info.id;
        return 0;
}

/* Loads (verifies) and attaches the programs, against the task-storage map
 * tags_fd. */
static int tags_load(int tags_fd, uint64_t ns_per_tick, ScopeTagsProgram **ret) {
        _cleanup_(scope_tags_program_freep) ScopeTagsProgram *p = NULL;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        r = map_id(tags_fd, &p->task_tags_id);
        if (r < 0)
                return r;
        p->skel = tags_bpf__open();
        if (!p->skel)
                return negative_errno();
        p->skel->rodata->ns_per_tick = ns_per_tick;
        r = bpf_map__reuse_fd(p->skel->maps.task_tags, tags_fd);
        if (r < 0)
                return r;
        r = tags_bpf__load(p->skel);
        if (r < 0)
                return r;
        p->fork = bpf_program__attach(p->skel->progs.inject_tag_fork);
        if (!p->fork)
                return negative_errno();
        p->sync = bpf_program__attach_iter(p->skel->progs.inject_tag_sync, NULL);
        if (!p->sync)
                return negative_errno();
        *ret = TAKE_PTR(p);
        return 0;
}

int scope_tags_prepare(ScopeTagsProgram **held, int tags_fd, uint64_t ns_per_tick) {
        uint32_t id;
        int r;

        if (*held) {
                r = map_id(tags_fd, &id);
                if (r < 0)
                        return r;
                if (id == (*held)->task_tags_id)
                        return 0;
                /* Another engine pinned a task-storage map of its own since. */
                *held = scope_tags_program_free(*held);
        }
        return tags_load(tags_fd, ns_per_tick, held);
}

/* Pins the programs, and their roots map, as <pin_root>/tags, built under
 * a temporary name (pin.h): the held ones when held is given (loaded
 * first if need be), else ones loaded for the occasion. */
static int tags_attach(const char *pin_root, ScopeTagsProgram **held, int tags_fd, uint64_t ns_per_tick) {
        _cleanup_(scope_tags_program_freep) ScopeTagsProgram *own = NULL;
        ScopeTagsProgram *p;
        char dir[PATH_MAX];
        int r;

        r = tags_path(dir, sizeof(dir), pin_root, NULL);
        if (r < 0)
                return r;
        if (held) {
                r = scope_tags_prepare(held, tags_fd, ns_per_tick);
                p = *held;
        } else {
                r = tags_load(tags_fd, ns_per_tick, &own);
                p = own;
        }
        if (r < 0)
                return r;

        return pin_dir_create(pin_root, dir, (const Pin[]) {
                                      { PIN_ROOTS, bpf_map__fd(p->skel->maps.roots) },
                                      { PIN_SYNC, bpf_link__fd(p->sync) },
                                      { PIN_SUBTREE, bpf_program__fd(p->skel->progs.inject_tag_subtree) },
                                      { PIN_FORK, bpf_link__fd(p->fork) },
                              }, 4, NULL);
}

/* One pass of inject_tag_sync over every task. Counts what it reports. */
static int tags_pass(int link_fd, size_t *visited, size_t *ret_changed, size_t *ret_over, size_t *ret_failed) {
        _cleanup_close_ int fd = -1;
        size_t changed = 0, over = 0, failed = 0, seen = 0;
        char buf[4096];
        ssize_t k;

        fd = bpf_iter_create(link_fd);
        if (fd < 0)
                return negative_errno();
        while ((k = read_retry(fd, buf, sizeof(buf))) != 0) {
                if (k < 0)
                        return (int) k;
                for (ssize_t i = 0; i < k; i++) {
                        seen += buf[i] == '.';
                        changed += buf[i] == 'w';
                        over += buf[i] == 'o';
                        failed += buf[i] == 'e';
                }
        }
        *visited += seen;
        *ret_changed = changed;
        *ret_over = over;
        *ret_failed = failed;
        return 0;
}

/* Passes until one changes nothing. A task forked during a pass, by a
 * parent the pass had not reached yet, starts with its parent's old tags,
 * and the pass may already be past it; the next pass fixes it. Once a pass
 * changes nothing, every task had its tags right when the pass saw it, so
 * every fork since copied right ones too. */
static int tags_sync(const char *pin_root, size_t *visited, size_t *ret_over) {
        _cleanup_close_ int link_fd = -1;
        size_t changed = 0, over = 0, failed = 0;
        int r;

        link_fd = tags_open(pin_root, PIN_SYNC);
        if (link_fd < 0)
                return link_fd;
        for (int i = 0; i < TAGS_MAX_PASSES; i++) {
                r = tags_pass(link_fd, visited, &changed, &over, &failed);
                if (r < 0)
                        return r;
                if (changed == 0 && failed == 0)
                        break;
        }
        /* A task left untagged (no memory for its tags, say) would escape
         * its scope: say so rather than arm something that does not hold. */
        if (failed > 0)
                return -ENOMEM;
        *ret_over = over;
        return 0;
}

/* The walk of the subtrees of the roots an arm added: why not every task on
 * the machine, and why one top-down pass suffices.
 *
 * A root's subtree is its threads, the processes they are the real_parent
 * of, and so on down. Visiting a process means running inject_tag_subtree
 * over its threads alone (an iterator link with bpf_iter_link_info.task.pid,
 * Linux 6.1): each thread's tags are recomputed from its ancestry and its
 * children are listed, to be visited next. The cost is a link, an iterator
 * and a read per process of the subtree, nothing per task outside it: an
 * arm for `injectctl run` (a held child with no children yet) visits one
 * task. /proc/PID/task/TID/children would list children too, but needs
 * CONFIG_PROC_CHILDREN, which the test kernels and many others lack; a
 * walk of task->children in BPF needs only what 6.1 has.
 *
 * Forks during the walk. The root is in the roots map and inject_tag_fork
 * attached before the walk starts. A thread's children are read after the
 * thread is tagged (with a full barrier between, see tags.bpf.c): a child
 * linked before the read is listed and visited, and its own visit computes
 * its tags from its ancestry, whatever the fork program copied; a child
 * linked after the read got, from the fork program, the tags of a parent
 * already tagged, and so did everything forked below it since. New threads
 * of a process being visited join its thread list at the end, where the
 * iterator still finds them, or come from a thread already tagged.
 *
 * Exits during the walk. A process that exits hands its children to a
 * reaper: another of its threads, a subreaper above it (which may be in the
 * subtree, its children already read) or init. A child so moved may be
 * missed; the walk notices every way that can happen, and walks again:
 * a thread's children list that changed as it was read (inject_tag_subtree
 * checks each child's real_parent, INJECT_TAG_REC_LOST), a process listed
 * but gone before its visit (no thread shown), a process whose real_parent
 * is not the one that listed it any more (reparented, or its pid reused).
 * A task reparented to init before its visit is outside the subtree and is
 * left alone, as the whole-machine pass would leave it.
 *
 * The walk costs as long as the subtree takes, and only that: a large
 * process tree under --pid is the one case that costs. scope_tags_apply()
 * walks it in one go; scope_tags_begin() and scope_tags_walk_step() let
 * the daemon walk it a bounded number of processes per turn of its event
 * loop (engine_arm_begin(), issue 29). */

typedef struct TagsVisit {
        uint32_t tgid;
        uint32_t parent;        /* the tgid that listed it; 0 for a root */
} TagsVisit;

typedef struct TagsWalk {
        TagsVisit *todo;
        size_t n_todo, allocated;
        size_t visited;         /* tasks, in every pass */
        size_t over, failed;    /* this pass's */
        bool lost;              /* this pass may have missed a task */
} TagsWalk;

static void tags_walk_done(TagsWalk *w) {
        free(w->todo);
}

static int tags_walk_push(TagsWalk *w, uint32_t tgid, uint32_t parent) {
        if (w->n_todo == w->allocated) {
                size_t m = w->allocated ? w->allocated * 2 : 16;
                TagsVisit *v = reallocarray(w->todo, m, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                w->todo = v;
                w->allocated = m;
        }
        w->todo[w->n_todo++] = (TagsVisit) { tgid, parent };
        return 0;
}

static int tags_walk_record(TagsWalk *w, const TagsVisit *v, const struct inject_tag_rec *rec, size_t *threads) {
        switch (rec->kind) {
        case INJECT_TAG_REC_TASK:
                /* A kernel before 6.1 ignores the link's pid and shows
                 * every task. */
                if (rec->tgid != v->tgid)
                        return -EOPNOTSUPP;
                (*threads)++;
                w->visited++;
                if (v->parent && rec->parent != v->parent)
                        w->lost = true;
                w->over += !!(rec->flags & INJECT_TAG_OVER);
                w->failed += !!(rec->flags & INJECT_TAG_FAILED);
                return 0;
        case INJECT_TAG_REC_CHILD:
                return tags_walk_push(w, rec->tgid, v->tgid);
        case INJECT_TAG_REC_LOST:
                w->lost = true;
                return 0;
        default:
                return -EBADMSG;
        }
}

/* Runs inject_tag_subtree over the threads of one process. */
static int tags_visit(int prog_fd, TagsWalk *w, TagsVisit v) {
        union bpf_iter_link_info linfo = { .task.pid = v.tgid };
        LIBBPF_OPTS(bpf_link_create_opts, opts, .iter_info = &linfo, .iter_info_len = sizeof(linfo));
        _cleanup_close_ int link_fd = -1, fd = -1;
        struct inject_tag_rec buf[128];
        size_t have = 0, threads = 0;
        ssize_t k;
        int r;

        link_fd = bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, &opts);
        if (link_fd < 0)
                return negative_errno();
        fd = bpf_iter_create(link_fd);
        if (fd < 0)
                return negative_errno();
        for (;;) {
                size_t whole;

                k = read_retry(fd, (char *) buf + have, sizeof(buf) - have);
                if (k < 0)
                        return (int) k;
                if (k == 0)
                        break;
                have += (size_t) k;
                whole = have / sizeof(buf[0]);
                for (size_t i = 0; i < whole; i++) {
                        r = tags_walk_record(w, &v, &buf[i], &threads);
                        if (r < 0)
                                return r;
                }
                have -= whole * sizeof(buf[0]);
                memmove(buf, buf + whole, have);
        }
        if (have > 0)
                return -EBADMSG;
        /* Gone before its visit: its children went to a reaper, which the
         * walk may have read already. */
        if (threads == 0 && v.parent)
                w->lost = true;
        return 0;
}

/* The walk of the subtrees, in steps: each visits at most a given number
 * of processes, so that its caller (the daemon's event loop) serves other
 * requests between them. Spreading the walk over time changes none of the
 * reasoning above: forks are covered by the fork program from the moment
 * the root is in the roots map (before the first step), and every way a
 * task can be missed meanwhile (an exit, a reparenting, a reused pid) is
 * noticed as before and walked again. */
struct ScopeTagsWalk {
        char *pin_root;         /* for the whole-machine pass, if it comes to that */
        int prog_fd;
        uint32_t *roots;
        size_t n_roots;
        TagsWalk w;
        size_t visits;          /* this pass's */
        int pass;               /* passes begun */
        size_t visited;         /* tasks, in every pass */
        size_t over;            /* once done */
        bool done;
};

ScopeTagsWalk *scope_tags_walk_free(ScopeTagsWalk *t) {
        if (!t)
                return NULL;
        safe_close(t->prog_fd);
        tags_walk_done(&t->w);
        free(t->roots);
        free(t->pin_root);
        free(t);
        return NULL;
}

static int walk_pass_start(ScopeTagsWalk *t) {
        int r;

        t->w.n_todo = 0;
        t->w.over = t->w.failed = 0;
        t->w.lost = false;
        t->visits = 0;
        t->pass++;
        for (size_t i = 0; i < t->n_roots; i++) {
                r = tags_walk_push(&t->w, t->roots[i], 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* No subtree program pinned (a set pinned by an engine from before it), a
 * kernel without per-process task iterators (before 6.1: the link refused,
 * or its pid ignored), exits that kept every pass from completing: every
 * task, then, in one go: this fallback is not stepped. */
static int walk_fallback(ScopeTagsWalk *t, int why) {
        size_t over = 0;
        int r;

        log_debug_errno(why, "Cannot tag the subtree of the process scope's root alone (%m); tagging every "
                        "task on the machine instead");
        r = tags_sync(t->pin_root, &t->visited, &over);
        if (r < 0)
                return r;
        t->over = over;
        t->done = true;
        return 0;
}

static int walk_step(ScopeTagsWalk *t, size_t budget) {
        int r;

        if (t->prog_fd < 0)
                return walk_fallback(t, t->prog_fd);
        /* Depth first: the list of processes to visit stays as short as
         * the tree is deep, times its breadth. */
        for (size_t k = 0; k < budget; k++) {
                if (t->w.n_todo == 0) {
                        /* A pass is over. */
                        if (!t->w.lost && t->w.failed == 0) {
                                t->over = t->w.over;
                                t->done = true;
                                return 0;
                        }
                        if (t->pass >= TAGS_MAX_PASSES) {
                                /* A task left untagged (no memory for its tags, say)
                                 * would escape its scope: say so rather than arm
                                 * something that does not hold. */
                                if (t->w.failed > 0)
                                        return -ENOMEM;
                                return walk_fallback(t, -EAGAIN);
                        }
                        r = walk_pass_start(t);
                        if (r < 0)
                                return r;
                }
                if (++t->visits > TAGS_WALK_MAX)
                        return walk_fallback(t, -ELOOP);
                r = tags_visit(t->prog_fd, &t->w, t->w.todo[--t->w.n_todo]);
                t->visited += t->w.visited;
                t->w.visited = 0;
                if (r == -ENOMEM || r == -EBADMSG)
                        return r;
                if (r < 0)
                        return walk_fallback(t, r);
        }
        /* The budget spent just as the pass ended: said at the next step. */
        return 1;
}

int scope_tags_walk_step(ScopeTagsWalk *t, size_t budget, size_t *ret_visited) {
        size_t before = t->visited;
        int r = 0;

        if (!t->done) {
                r = walk_step(t, budget ?: 1);
                if (r >= 0 && t->done)
                        log_debug("Tagged for %zu new process-scope root(s): %zu task(s) visited", t->n_roots,
                                  t->visited);
        }
        if (ret_visited)
                *ret_visited = t->visited - before;
        if (r < 0)
                return r;
        return t->done ? 0 : 1;
}

int scope_tags_walk_over(const ScopeTagsWalk *t) {
        return (int) (t->over > INT_MAX ? INT_MAX : t->over);
}

static bool roots_contain(const ScopeRoot *roots, size_t n, uint32_t tgid, const struct inject_root *v) {
        for (size_t i = 0; i < n; i++)
                if (roots[i].tgid == tgid)
                        return roots[i].tag == v->tag && roots[i].start_ticks == v->start_ticks;
        return false;
}

int scope_tags_begin(const char *pin_root, ScopeTagsProgram **held, int tags_fd, uint64_t ns_per_tick,
                     const ScopeRoot *roots, size_t n, uint32_t also, ScopeTagsWalk **ret) {
        _cleanup_(scope_tags_walk_freep) ScopeTagsWalk *t = NULL;
        _cleanup_close_ int roots_fd = -1;
        _cleanup_free_ uint32_t *added = NULL;
        char p[PATH_MAX];
        uint32_t key, next, *prev = NULL;
        size_t n_added = 0;
        int r;

        *ret = NULL;
        if (n == 0)
                return scope_tags_remove(pin_root);

        r = tags_path(p, sizeof(p), pin_root, PIN_FORK);
        if (r < 0)
                return r;
        if (access(p, F_OK) < 0) {
                if (errno != ENOENT)
                        return negative_errno();
                /* A half-removed set (fork unpinned first) is set up anew. */
                (void) scope_tags_remove(pin_root);
                r = tags_attach(pin_root, held, tags_fd, ns_per_tick);
                if (r < 0)
                        return r;
        }

        roots_fd = tags_open(pin_root, PIN_ROOTS);
        if (roots_fd < 0)
                return roots_fd;

        /* Stale roots out. Their tags stay on tasks until the next pass or
         * the tasks' end, and match nothing: no scopes map holds them. */
        while (bpf_map_get_next_key(roots_fd, prev, &next) == 0) {
                struct inject_root v;

                key = next;
                prev = &key;
                if (bpf_map_lookup_elem(roots_fd, &key, &v) == 0 && !roots_contain(roots, n, key, &v)) {
                        if (bpf_map_delete_elem(roots_fd, &key) < 0 && errno != ENOENT)
                                return negative_errno();
                        prev = NULL;    /* the walk restarts: the deleted key cannot lead on */
                }
        }

        added = calloc(n, sizeof(*added));
        if (!added)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct inject_root want = { .tag = roots[i].tag, .start_ticks = roots[i].start_ticks }, cur;

                if (bpf_map_lookup_elem(roots_fd, &roots[i].tgid, &cur) == 0 &&
                    cur.tag == want.tag && cur.start_ticks == want.start_ticks) {
                        /* In the map already, but another arm's walk of it
                         * may still be under way: walked again for this one. */
                        if (also && roots[i].tgid == also)
                                added[n_added++] = also;
                        continue;
                }
                if (bpf_map_update_elem(roots_fd, &roots[i].tgid, &want, BPF_ANY) < 0)
                        return negative_errno();
                added[n_added++] = roots[i].tgid;
        }
        if (n_added == 0)
                return 0;

        /* Only the tasks below the roots added can change: a task's tags
         * are the roots among its ancestors. */
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->prog_fd = -1;
        t->pin_root = strdup(pin_root);
        if (!t->pin_root)
                return -ENOMEM;
        t->roots = TAKE_PTR(added);
        t->n_roots = n_added;
        /* Without a subtree program, the first step falls back on the
         * whole-machine pass. */
        t->prog_fd = tags_open(pin_root, PIN_SUBTREE);
        if (t->prog_fd >= 0) {
                r = walk_pass_start(t);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

int scope_tags_apply(const char *pin_root, ScopeTagsProgram **held, int tags_fd, uint64_t ns_per_tick,
                     const ScopeRoot *roots, size_t n, size_t *ret_visited) {
        _cleanup_(scope_tags_walk_freep) ScopeTagsWalk *t = NULL;
        int r;

        *ret_visited = 0;
        r = scope_tags_begin(pin_root, held, tags_fd, ns_per_tick, roots, n, 0, &t);
        if (r < 0 || !t)
                return r;
        r = scope_tags_walk_step(t, SIZE_MAX, ret_visited);
        if (r < 0)
                return r;
        return scope_tags_walk_over(t);
}
