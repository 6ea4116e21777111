/* SPDX-License-Identifier: MIT */

/* Loading a policy: directories in order, the files of each in strcmp()
 * order, each checked for who may have written it before policy-parse.c
 * reads its rules, which then replace or join those of earlier files
 * (the model, policy-model.c, holds the result). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "json-util.h"
#include "policy-load.h"
#include "policy-model.h"
#include "policy-parse.h"
#include "strv.h"

/* A file that is refused after it parsed as JSON still withdraws the rules
 * it names: a broken override must not bring back the rule it was written
 * to replace or disable. */
static int policy_withdraw_names(Policy *p, const char *path, json_object *obj) {
        json_object *rules;
        int r;

        if (json_get_array(obj, "rules", &rules) < 0)
                return 0;

        for (size_t i = 0; i < json_object_array_length(rules); i++) {
                PolicyRule *old;
                const char *name;
                ssize_t k;

                if (json_get_string(json_object_array_get_idx(rules, i), "name", &name) < 0)
                        continue;

                k = policy_rule_index(p, name);
                if (k < 0)
                        continue;

                old = p->rules[k];
                /* Withdrawing a deny rule would allow more than either
                 * file meant: it stays as it was. */
                if (old->deny && old->enabled) {
                        r = policy_add_problem(p, POLICY_PROBLEM_WARNING, path, 0,
                                               "deny rule \"%s\" of %s:%u stays in effect, although this file "
                                               "redefines it and was refused", old->name, old->file, old->line);
                        if (r < 0)
                                return r;
                        continue;
                }

                r = policy_add_problem(p, POLICY_PROBLEM_WARNING, path, 0,
                                       "rule \"%s\" of %s:%u is withdrawn, as this file redefines it but was refused",
                                       old->name, old->file, old->line);
                if (r < 0)
                        return r;

                policy_rule_free(old);
                memmove(p->rules + k, p->rules + k + 1, (p->n_rules - (size_t) k - 1) * sizeof(PolicyRule *));
                p->n_rules--;
        }

        return 0;
}

/* Later definitions replace earlier ones of the same name in place, so
 * the effect order is where a name first appeared. */
static int policy_merge(Policy *p, FileRules *f) {
        size_t n_new = 0;
        PolicyRule **a;

        for (size_t i = 0; i < f->n; i++)
                if (policy_rule_index(p, f->rules[i]->name) < 0)
                        n_new++;

        a = reallocarray(p->rules, p->n_rules + n_new + 1, sizeof(PolicyRule *));
        if (!a)
                return -ENOMEM;
        p->rules = a;

        for (size_t i = 0; i < f->n; i++) {
                ssize_t k = policy_rule_index(p, f->rules[i]->name);

                if (k >= 0) {
                        policy_rule_free(p->rules[k]);
                        p->rules[k] = TAKE_PTR(f->rules[i]);
                } else
                        p->rules[p->n_rules++] = TAKE_PTR(f->rules[i]);
        }

        file_rules_done(f);
        return 0;
}

static int read_fd(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;

        for (;;) {
                ssize_t k;

                if (len == size) {
                        char *b;

                        if (size > max)
                                return -EFBIG;
                        size = size == 0 ? 4096 : size * 2;
                        b = realloc(buf, size + 1);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }

                k = read(fd, buf + len, size - len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }

        if (len > max)
                return -EFBIG;

        buf[len] = '\0';
        *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Who may have written what we are about to trust. */
static const char *stat_insecure(const struct stat *st, uid_t owner_uid, char *buf, size_t n) {
        if (st->st_uid != owner_uid) {
                (void) snprintf(buf, n, "owned by uid %u, not %u", (unsigned) st->st_uid, (unsigned) owner_uid);
                return buf;
        }
        if (st->st_mode & S_IWOTH) {
                (void) snprintf(buf, n, "world-writable (mode %04o)", (unsigned) (st->st_mode & 07777));
                return buf;
        }
        if (st->st_mode & S_IWGRP) {
                (void) snprintf(buf, n, "group-writable (mode %04o)", (unsigned) (st->st_mode & 07777));
                return buf;
        }
        return NULL;
}

static int policy_load_file(Policy *p, int dir_fd, const char *dir, const char *name, uid_t owner_uid) {
        _cleanup_free_ char *path = NULL, *text = NULL, *error = NULL;
        _cleanup_json_ json_object *json = NULL;
        _cleanup_(file_rules_done) FileRules f = {};
        _cleanup_close_ int fd = -1;
        struct stat st, lst;
        const char *insecure, *what = "";
        size_t len, n_problems = p->n_problems;
        unsigned error_line = 0;
        char buf[64];
        int r;

        if (asprintf(&path, "%s/%s", dir, name) < 0) {
                path = NULL;
                return -ENOMEM;
        }

        if (fstatat(dir_fd, name, &lst, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(lst.st_mode))
                what = "symlink target ";

        /* Follows symlinks; what counts is the file opened, checked
         * through the fd, so nothing can be swapped in between.
         * O_NONBLOCK: a FIFO must not hang the daemon before fstat()
         * refuses it. */
        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "cannot open: %s; refusing", strerror(errno));

        if (fstat(fd, &st) < 0)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "cannot stat: %s; refusing", strerror(errno));

        if (!S_ISREG(st.st_mode))
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "%snot a regular file; refusing", what);

        insecure = stat_insecure(&st, owner_uid, buf, sizeof(buf));
        if (insecure)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "%s%s; refusing", what, insecure);

        if ((uint64_t) st.st_size > POLICY_FILE_SIZE_MAX)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "larger than %" PRIu64 " bytes; refusing", POLICY_FILE_SIZE_MAX);

        r = read_fd(fd, POLICY_FILE_SIZE_MAX, &text, &len);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "larger than %" PRIu64 " bytes; refusing", POLICY_FILE_SIZE_MAX);
        if (r < 0)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, path, 0,
                                          "cannot read: %s; refusing", strerror(-r));

        r = policy_file_parse(p, path, text, len, &f, &json, &error, &error_line);
        if (r == -EBADMSG) {
                /* Warnings about rules of a refused file would only distract. */
                policy_truncate_problems(p, n_problems);
                r = policy_add_problem(p, POLICY_PROBLEM_ERROR, path, error_line, "%s; file refused", error);
                if (r < 0)
                        return r;
                return json ? policy_withdraw_names(p, path, json) : 0;
        }
        if (r < 0)
                return r;

        return policy_merge(p, &f);
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int policy_load_dir(Policy *p, const char *dir, uid_t owner_uid) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        _cleanup_close_ int fd = -1;
        size_t n = 0;
        const char *insecure;
        struct stat st;
        char buf[64];
        int r;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, dir, 0,
                                          "cannot open directory: %s; refusing", strerror(errno));
        }

        if (fstat(fd, &st) < 0)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, dir, 0,
                                          "cannot stat directory: %s; refusing", strerror(errno));

        insecure = stat_insecure(&st, owner_uid, buf, sizeof(buf));
        if (insecure)
                return policy_add_problem(p, POLICY_PROBLEM_ERROR, dir, 0,
                                          "directory %s; refusing all its files", insecure);

        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        fd = -1; /* owned by d now */

        names = calloc(1, sizeof(char *));
        if (!names)
                return -ENOMEM;

        for (;;) {
                struct dirent *de;
                size_t l;
                char **a;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return policy_add_problem(p, POLICY_PROBLEM_ERROR, dir, 0,
                                                          "cannot read directory: %s; refusing", strerror(errno));
                        break;
                }

                l = strlen(de->d_name);
                if (de->d_name[0] == '.' || l <= 5 || strcmp(de->d_name + l - 5, ".json") != 0)
                        continue;

                a = reallocarray(names, n + 2, sizeof(char *));
                if (!a)
                        return -ENOMEM;
                names = a;
                names[n] = strdup(de->d_name);
                if (!names[n])
                        return -ENOMEM;
                names[++n] = NULL;
        }

        /* strcmp(), not the locale's collation: the order must not depend
         * on the environment the daemon happens to start in. */
        qsort(names, n, sizeof(char *), compare_names);

        for (size_t i = 0; i < n; i++) {
                r = policy_load_file(p, dirfd(d), dir, names[i], owner_uid);
                if (r < 0)
                        return r;
        }

        return 0;
}

int policy_load(const char *const *dirs, uid_t owner_uid, Policy **ret) {
        _cleanup_(policy_freep) Policy *p = NULL;
        int r;

        if (!dirs || !ret)
                return -EINVAL;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;

        for (const char *const *d = dirs; *d; d++) {
                r = policy_load_dir(p, *d, owner_uid);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(p);
        return 0;
}

