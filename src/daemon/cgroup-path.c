/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-path.h"
#include "cleanup.h"

/* Absolute, no empty, "." or ".." component, nothing mountinfo would
 * escape (space, tab, newline, backslash). A trailing "/" is allowed. */
static bool path_is_plain(const char *path) {
        if (path[0] != '/' || strpbrk(path, " \t\n\\"))
                return false;
        for (const char *p = path + 1; *p;) {
                size_t n = strcspn(p, "/");

                if (n == 0 && p[n] != 0)
                        return false;           /* "//" */
                if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += n;
                if (*p == '/')
                        p++;
        }
        return true;
}

/* Whether mount point mp holds path: path is mp, or below it. */
static bool below(const char *path, const char *mp) {
        size_t n = strlen(mp);

        if (strcmp(mp, "/") == 0)
                return true;
        return strncmp(path, mp, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* One mountinfo line's root, mount point and file system type:
 * "id parent major:minor root mount-point options [optional...] - type ...". */
static int mountinfo_line(const char *line, char root[static 4096], char mp[static 4096], char type[static 64]) {
        const char *sep;

        if (sscanf(line, "%*u %*u %*u:%*u %4095s %4095s", root, mp) != 2)
                return -EIO;
        sep = strstr(line, " - ");
        if (!sep || sscanf(sep + 3, "%63s", type) != 1)
                return -EIO;
        return 0;
}

int cgroup_path_translate_mountinfo(FILE *f, const char *path, const char *cgroup_root, char **ret) {
        _cleanup_free_ char *line = NULL, *best_root = NULL, *best_type = NULL;
        size_t cap = 0, best_len = 0;
        const char *rest;
        bool found = false;
        char *out;
        int k;

        if (!path_is_plain(path))
                return -EINVAL;

        while (getline(&line, &cap, f) > 0) {
                char root[4096], mp[4096], type[64];

                if (mountinfo_line(line, root, mp, type) < 0)
                        return -EIO;
                if (!below(path, mp) || (found && strlen(mp) < best_len))
                        continue;
                /* The later of two mounts on one point is the one on top. */
                free(best_root);
                free(best_type);
                best_root = strdup(root);
                best_type = strdup(type);
                if (!best_root || !best_type)
                        return -ENOMEM;
                best_len = strlen(mp);
                found = true;
        }
        if (!found)
                return -EMEDIUMTYPE;
        if (strcmp(best_type, "cgroup2") != 0)
                return -EMEDIUMTYPE;
        /* best_len bytes of path are the mount point ("/" counts as 0). */
        rest = best_len == 1 ? path : path + best_len;
        if (strcmp(best_root, "/") == 0)
                k = asprintf(&out, "%s%s", cgroup_root, rest);
        else
                k = asprintf(&out, "%s%s%s", cgroup_root, best_root, rest);
        if (k < 0)
                return -ENOMEM;
        *ret = out;
        return 0;
}

int cgroup_root_from_mountinfo(FILE *f, char **ret) {
        _cleanup_free_ char *line = NULL, *found = NULL;
        size_t cap = 0;

        while (getline(&line, &cap, f) > 0) {
                char root[4096], mp[4096], type[64];

                if (mountinfo_line(line, root, mp, type) < 0)
                        return -EIO;
                if (strcmp(type, "cgroup2") != 0 || strcmp(root, "/") != 0)
                        continue;
                free(found);
                found = strdup(mp);
                if (!found)
                        return -ENOMEM;
        }
        if (!found)
                return -ENOENT;
        *ret = TAKE_PTR(found);
        return 0;
}

int cgroup_path_translate(pid_t pid, const char *path, char **ret) {
        _cleanup_fclose_ FILE *mine = NULL, *theirs = NULL;
        _cleanup_free_ char *root = NULL;
        char p[64];
        int r;

        mine = fopen("/proc/self/mountinfo", "re");
        if (!mine)
                return negative_errno();
        r = cgroup_root_from_mountinfo(mine, &root);
        if (r < 0)
                return r;
        snprintf(p, sizeof(p), "/proc/%d/mountinfo", (int) pid);
        theirs = fopen(p, "re");
        if (!theirs)
                return negative_errno();
        return cgroup_path_translate_mountinfo(theirs, path, root, ret);
}
