/* SPDX-License-Identifier: MIT */
/* explore's leftover detector (explore-leftover.h). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "explore-leftover.h"
#include "time-util.h"

/* How long a leftover may take to go away by itself before it is the
 * run's, and how often it is looked at meanwhile. A loop device whose
 * autoclear is set (losetup -d while it was open, mount -o loop) detaches
 * at its last close, and that close can come after the run's tree has
 * ended: udev's workers (blkid) open a new loop device on its uevent and
 * close it when they are done; an fput from a kernel thread is deferred to
 * a workqueue (delayed_fput); umount -l lets go of the device once its
 * last user does. None of these has an event that an unprivileged
 * process can wait for on every kernel (/sys is not inotify-able, a loop
 * device's detach sends a uevent only where udev listens), so the state
 * is read again every LEFTOVER_SETTLE_STEP_USEC until nothing differs, for
 * at most LEFTOVER_SETTLE_USEC: 3 s, many times what udev's probe takes
 * under TCG on a loaded host. Only a run that left something pays it. */
#define LEFTOVER_SETTLE_USEC (3 * USEC_PER_SEC)
#define LEFTOVER_SETTLE_STEP_USEC (50 * UINT64_C(1000))

void leftover_snapshot_done(LeftoverSnapshot *s) {
        for (size_t i = 0; i < s->n_loops; i++) {
                free(s->loops[i].name);
                free(s->loops[i].backing);
        }
        for (size_t i = 0; i < s->n_mounts; i++) {
                free(s->mounts[i].target);
                free(s->mounts[i].fstype);
                free(s->mounts[i].source);
                free(s->mounts[i].view);
        }
        for (size_t i = 0; i < s->n_holders; i++) {
                free(s->holders[i].device);
                free(s->holders[i].holder);
        }
        free(s->loops);
        free(s->mounts);
        free(s->holders);
        *s = (LeftoverSnapshot) {};
}

void leftovers_done(Leftovers *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->v[i].kind);
                free(l->v[i].title);
                free(l->v[i].signature);
                free(l->v[i].text);
        }
        free(l->v);
        *l = (Leftovers) {};
}

int leftover_add_loop(LeftoverSnapshot *s, const char *name, const char *backing, bool autoclear) {
        LeftoverLoop *v = realloc(s->loops, (s->n_loops + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        s->loops = v;
        v[s->n_loops] = (LeftoverLoop) { .name = strdup(name), .backing = strdup(backing), .autoclear = autoclear,
                                         .held = -1 };
        s->n_loops++;
        return v[s->n_loops - 1].name && v[s->n_loops - 1].backing ? 0 : -ENOMEM;
}

int leftover_add_holder(LeftoverSnapshot *s, const char *device, const char *holder) {
        LeftoverHolder *v = realloc(s->holders, (s->n_holders + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        s->holders = v;
        v[s->n_holders] = (LeftoverHolder) { .device = strdup(device), .holder = strdup(holder) };
        s->n_holders++;
        return v[s->n_holders - 1].device && v[s->n_holders - 1].holder ? 0 : -ENOMEM;
}

/* mountinfo's octal escapes (\040 for a space, \011, \012, \134), in place. */
static void unescape_octal(char *s) {
        char *o = s;

        for (; *s; s++)
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
                    s[3] <= '7') {
                        *o++ = (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
                        s += 3;
                } else
                        *o++ = *s;
        *o = 0;
}

/* One line of mountinfo: "ID PARENT MAJ:MIN ROOT TARGET OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS".
 * 1 when added, 0 when the line is not one, -ENOMEM. */
static int parse_mountinfo_line(LeftoverSnapshot *s, char *line, const char *view) {
        char *field[6], *save = NULL, *tok, *fstype = NULL, *source = NULL;
        LeftoverMount *v, *m;
        unsigned long id;
        size_t n = 0;

        while (n < 6 && (tok = strtok_r(n == 0 ? line : NULL, " ", &save)))
                field[n++] = tok;
        if (n < 6)
                return 0;
        /* The optional fields end at "-". */
        for (tok = strtok_r(NULL, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
                if (strcmp(tok, "-") == 0) {
                        fstype = strtok_r(NULL, " ", &save);
                        source = strtok_r(NULL, " ", &save);
                        break;
                }
        if (!fstype)
                return 0;
        errno = 0;
        id = strtoul(field[0], &tok, 10);
        if (errno || *tok)
                return 0;
        v = realloc(s->mounts, (s->n_mounts + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        s->mounts = v;
        unescape_octal(field[4]);
        if (source)
                unescape_octal(source);
        m = &v[s->n_mounts++];
        *m = (LeftoverMount) { .id = id, .target = strdup(field[4]), .fstype = strdup(fstype),
                               .source = strdup(source ?: "none"), .view = strdup(view) };
        return m->target && m->fstype && m->source && m->view ? 1 : -ENOMEM;
}

int leftover_parse_mountinfo(LeftoverSnapshot *s, const char *text, const char *view) {
        _cleanup_free_ char *copy = strdup(text);
        char *save = NULL;
        int r;

        if (!copy)
                return -ENOMEM;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                r = parse_mountinfo_line(s, line, view);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A whole small file (sysfs, procfs), its last newline dropped; NULL when
 * it cannot be read (*ret_errno says why: -ENOMEM matters). */
static char *read_text(const char *path, int *ret_errno) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t size = 0;
        FILE *m;

        *ret_errno = 0;
        if (!f) {
                *ret_errno = -errno;
                return NULL;
        }
        m = open_memstream(&buf, &size);
        if (!m) {
                *ret_errno = -ENOMEM;
                return NULL;
        }
        for (int c; (c = fgetc(f)) != EOF;)
                fputc(c, m);
        if (fclose(m) != 0) {
                free(buf);
                *ret_errno = -ENOMEM;
                return NULL;
        }
        if (size > 0 && buf[size - 1] == '\n')
                buf[size - 1] = 0;
        return buf;
}

static bool same_mount_ns(void) {
        char a[64], b[64];
        ssize_t na = readlink("/proc/self/ns/mnt", a, sizeof(a) - 1), nb = readlink("/proc/1/ns/mnt", b, sizeof(b) - 1);

        return na > 0 && nb > 0 && na == nb && memcmp(a, b, (size_t) na) == 0;
}

int leftover_snapshot(LeftoverSnapshot *ret) {
        _cleanup_(leftover_snapshot_done) LeftoverSnapshot s = {};
        _cleanup_free_ char *self = NULL, *init = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        /* Loop devices attached: only those have loop/backing_file. */
        d = opendir("/sys/block");
        while (d && (de = readdir(d))) {
                _cleanup_free_ char *backing = NULL, *autoclear = NULL;
                char path[PATH_MAX];
                _cleanup_(closedirp) DIR *h = NULL;
                struct dirent *he;

                if (de->d_name[0] == '.')
                        continue;
                if (strncmp(de->d_name, "loop", 4) == 0) {
                        snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", de->d_name);
                        backing = read_text(path, &r);
                        if (r == -ENOMEM)
                                return r;
                        if (backing) {
                                snprintf(path, sizeof(path), "/sys/block/%s/loop/autoclear", de->d_name);
                                autoclear = read_text(path, &r);
                                if (r == -ENOMEM)
                                        return r;
                                r = leftover_add_loop(&s, de->d_name, backing, autoclear && autoclear[0] == '1');
                                if (r < 0)
                                        return r;
                        }
                }
                snprintf(path, sizeof(path), "/sys/block/%s/holders", de->d_name);
                h = opendir(path);
                while (h && (he = readdir(h)))
                        if (he->d_name[0] != '.' && (r = leftover_add_holder(&s, de->d_name, he->d_name)) < 0)
                                return r;
        }

        /* Mounts: ours, and the initial namespace's when it is another
         * and we may read it (root; else it is left out, and docs/explore.md
         * says so). */
        self = read_text("/proc/self/mountinfo", &r);
        if (r == -ENOMEM || (self && (r = leftover_parse_mountinfo(&s, self, "self")) < 0))
                return r;
        if (!same_mount_ns()) {
                init = read_text("/proc/1/mountinfo", &r);
                if (r == -ENOMEM || (init && (r = leftover_parse_mountinfo(&s, init, "init")) < 0))
                        return r;
        }
        *ret = s;
        s = (LeftoverSnapshot) {};
        return 0;
}

static const LeftoverLoop *find_loop(const LeftoverSnapshot *s, const LeftoverLoop *l) {
        for (size_t i = 0; i < s->n_loops; i++)
                if (strcmp(s->loops[i].name, l->name) == 0 && strcmp(s->loops[i].backing, l->backing) == 0)
                        return &s->loops[i];
        return NULL;
}

void leftover_probe_held(const LeftoverSnapshot *before, LeftoverSnapshot *after) {
        for (size_t i = 0; i < after->n_loops; i++) {
                LeftoverLoop *l = &after->loops[i];
                char path[PATH_MAX];
                int fd;

                if (find_loop(before, l))
                        continue;
                /* O_EXCL on a block device: an exclusive open, refused
                 * (EBUSY) while a file system or another exclusive opener
                 * has it. Read-only and closed at once, it writes nothing
                 * and sends no uevent; were the holder to close it
                 * meanwhile, our close would detach an autoclear device,
                 * as the holder's would have. */
                snprintf(path, sizeof(path), "/dev/%s", l->name);
                fd = open(path, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
                if (fd >= 0) {
                        l->held = 0;
                        (void) close(fd);
                } else
                        l->held = errno == EBUSY ? 1 : -1;
        }
}

/* "under the run's directory DIR" or "the run's own file" for a path
 * (" (deleted)" dropped), or NULL. */
static const char *whose(const LeftoverRun *run, const char *path, bool *ret_deleted) {
        static const char deleted[] = " (deleted)";
        size_t n = strlen(path), nd;

        *ret_deleted = n > strlen(deleted) && strcmp(path + n - strlen(deleted), deleted) == 0;
        if (*ret_deleted)
                n -= strlen(deleted);
        if (!run)
                return NULL;
        for (size_t i = 0; i < run->n_files; i++)
                if (strlen(run->files[i]) == n && strncmp(run->files[i], path, n) == 0)
                        return "the run's own file";
        nd = run->dir ? strlen(run->dir) : 0;
        while (nd > 1 && run->dir[nd - 1] == '/')
                nd--;
        if (nd > 0 && n > nd && strncmp(path, run->dir, nd) == 0 && path[nd] == '/')
                return "under the run's directory";
        return NULL;
}

static int add(Leftovers *ret, const char *kind, char *title, char *signature, char *text) {
        Leftover *v;

        if (!title || !signature || !text) {
                free(title);
                free(signature);
                free(text);
                return -ENOMEM;
        }
        v = realloc(ret->v, (ret->n + 1) * sizeof(*v));
        if (!v) {
                free(title);
                free(signature);
                free(text);
                return -ENOMEM;
        }
        ret->v = v;
        v[ret->n++] = (Leftover) { .kind = strdup(kind), .title = title, .signature = signature, .text = text };
        return v[ret->n - 1].kind ? 0 : -ENOMEM;
}

static char *aprintf(const char *fmt, ...) _printf_(1, 2);
static char *aprintf(const char *fmt, ...) {
        va_list ap;
        char *s = NULL;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

static int diff_loops(const LeftoverSnapshot *before, const LeftoverSnapshot *after, const LeftoverRun *run,
                      Leftovers *ret) {
        int n = 0, r;

        for (size_t i = 0; i < after->n_loops; i++) {
                const LeftoverLoop *l = &after->loops[i];
                const char *held, *sig, *of;
                bool deleted;

                if (find_loop(before, l))
                        continue;
                of = whose(run, l->backing, &deleted);
                held = l->held > 0 ? ", held open (an exclusive open says EBUSY: a file system or another "
                                     "exclusive opener has it)" :
                       l->held == 0 ? ", not held open" : "";
                sig = l->held > 0 ? "leftover: a loop device left attached, held open" :
                      l->autoclear ? "leftover: a loop device left attached, autoclear set" :
                                     "leftover: a loop device left attached";
                r = add(ret, "loop",
                        aprintf("loop device /dev/%s left attached (backing file %s%s%s)%s%s", l->name, l->backing,
                                of ? ", " : "", of ?: "", held,
                                l->autoclear && l->held != 0 ? "; its autoclear is set: it detaches at its last "
                                                               "close, which has not come" : ""),
                        aprintf("%s", sig),
                        aprintf("device: /dev/%s\nbacking file: %.*s%s\nwhose: %s\nautoclear: %s\nheld open: %s",
                                l->name, (int) (strlen(l->backing) - (deleted ? strlen(" (deleted)") : 0)),
                                l->backing, deleted ? " (deleted since)" : "",
                                of ?: "not the run's directory nor its files, as far as explore can tell",
                                l->autoclear ? "yes" : "no",
                                l->held > 0 ? "yes (O_EXCL open: EBUSY)" : l->held == 0 ? "no" : "unknown"));
                if (r < 0)
                        return r;
                n++;
        }
        return n;
}

static bool has_mount(const LeftoverSnapshot *s, const LeftoverMount *m, size_t upto) {
        for (size_t i = 0; i < upto; i++)
                if (s->mounts[i].id == m->id && strcmp(s->mounts[i].target, m->target) == 0)
                        return true;
        return false;
}

static int diff_mounts(const LeftoverSnapshot *before, const LeftoverSnapshot *after, const LeftoverRun *run,
                       Leftovers *ret) {
        int n = 0, r;

        for (size_t i = 0; i < after->n_mounts; i++) {
                const LeftoverMount *m = &after->mounts[i];
                const char *of_target, *of_source;
                bool deleted;

                /* Mount IDs are system-wide: one seen in both views, or
                 * twice, is said once. */
                if (has_mount(before, m, before->n_mounts) || has_mount(after, m, i))
                        continue;
                of_target = whose(run, m->target, &deleted);
                of_source = whose(run, m->source, &deleted);
                r = add(ret, "mount",
                        aprintf("%s mount of %s left on %s%s%s%s", m->fstype, m->source, m->target,
                                of_target || of_source ? " (" : "", of_target ?: of_source ?: "",
                                of_target || of_source ? ")" : ""),
                        aprintf("leftover: a %s mount left", m->fstype),
                        aprintf("mount point: %s\nfile system: %s\nsource: %s\nmount ID: %lu\nseen in: %s\nwhose: %s",
                                m->target, m->fstype, m->source, m->id,
                                strcmp(m->view, "init") == 0 ? "the initial mount namespace (/proc/1/mountinfo)" :
                                                               "explore's own mount namespace",
                                of_target ?: of_source ?: "not the run's directory nor its files, as far as explore "
                                                          "can tell"));
                if (r < 0)
                        return r;
                n++;
        }
        return n;
}

static int diff_holders(const LeftoverSnapshot *before, const LeftoverSnapshot *after, Leftovers *ret) {
        int n = 0, r;

        for (size_t i = 0; i < after->n_holders; i++) {
                const LeftoverHolder *h = &after->holders[i];
                bool known = false;

                for (size_t k = 0; k < before->n_holders && !known; k++)
                        known = strcmp(before->holders[k].device, h->device) == 0 &&
                                strcmp(before->holders[k].holder, h->holder) == 0;
                if (known)
                        continue;
                r = add(ret, "holder", aprintf("block device /dev/%s left held by %s", h->device, h->holder),
                        aprintf("leftover: a block device left held by another"),
                        aprintf("device: /dev/%s\nheld by: %s (/sys/block/%s/holders/%s)", h->device, h->holder,
                                h->device, h->holder));
                if (r < 0)
                        return r;
                n++;
        }
        return n;
}

int leftover_diff(const LeftoverSnapshot *before, const LeftoverSnapshot *after, const LeftoverRun *run,
                  Leftovers *ret) {
        int a, b, c;

        a = diff_loops(before, after, run, ret);
        if (a < 0)
                return a;
        b = diff_mounts(before, after, run, ret);
        if (b < 0)
                return b;
        c = diff_holders(before, after, ret);
        if (c < 0)
                return c;
        return a + b + c;
}

int leftover_check(const LeftoverSnapshot *before, const LeftoverRun *run, Leftovers *ret) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + LEFTOVER_SETTLE_USEC;

        for (;;) {
                _cleanup_(leftover_snapshot_done) LeftoverSnapshot after = {};
                _cleanup_(leftovers_done) Leftovers l = {};
                int r;

                r = leftover_snapshot(&after);
                if (r < 0)
                        return r;
                leftover_probe_held(before, &after);
                r = leftover_diff(before, &after, run, &l);
                if (r < 0)
                        return r;
                if (r == 0 || now_usec(CLOCK_MONOTONIC) >= deadline) {
                        *ret = l;
                        l = (Leftovers) {};
                        return r;
                }
                (void) nanosleep(&(struct timespec) { .tv_nsec = (long) (LEFTOVER_SETTLE_STEP_USEC * NSEC_PER_USEC) }, NULL);
        }
}
