/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/random.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include <bpf/bpf.h>

#include "cleanup.h"
#include "pin.h"

int pin_check_bpffs(const char *path) {
        _cleanup_free_ char *parent = strdup(path);
        struct statfs sfs;
        char *slash;

        if (!parent)
                return -ENOMEM;
        slash = strrchr(parent, '/');
        if (slash && slash != parent)
                *slash = 0;
        if (statfs(parent, &sfs) < 0)
                return negative_errno();
        return sfs.f_type == BPF_FS_MAGIC ? 0 : -ENOMEDIUM;
}

int pin_path(char *buf, size_t n, const char *dir, const char *name) {
        return snprintf(buf, n, "%s/%s", dir, name) >= (int) n ? -ENAMETOOLONG : 0;
}

/* bpf_obj_pin() on the fd, not bpf_map__pin() or bpf_link__pin(): libbpf
 * remembers an object's first pin path and refuses another, but a cached
 * site is pinned again when it is re-attached, and the path it would
 * remember is the temporary one anyway. */
int pin_dir_create(const char *pin_root, const char *dir, const Pin *pins, size_t n, const char **ret_failed) {
        char tmp[PATH_MAX], p[PATH_MAX];
        uint64_t rnd = 0;
        int r;

        if (ret_failed)
                *ret_failed = NULL;
        (void) getrandom(&rnd, sizeof(rnd), 0);
        if (snprintf(tmp, sizeof(tmp), "%s/" PIN_TMP_PREFIX "%016llx", pin_root, (unsigned long long) rnd) >=
            (int) sizeof(tmp))
                return -ENAMETOOLONG;
        if (mkdir(tmp, 0700) < 0)
                return negative_errno();

        for (size_t i = 0; i < n; i++) {
                r = pin_path(p, sizeof(p), tmp, pins[i].name);
                if (r >= 0 && bpf_obj_pin(pins[i].fd, p) < 0)
                        r = negative_errno();
                if (r < 0) {
                        if (ret_failed)
                                *ret_failed = pins[i].name;
                        goto fail;
                }
        }
        if (rename(tmp, dir) < 0) {
                r = negative_errno();
                goto fail;
        }
        return 0;

fail:
        (void) pin_dir_remove(tmp);
        return r;
}

int pin_dir_remove(const char *dir) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r = 0;

        d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : negative_errno();
        while ((de = readdir(d))) {
                char p[PATH_MAX];

                if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
                        continue;
                if (pin_path(p, sizeof(p), dir, de->d_name) < 0)
                        continue;
                if (unlink(p) < 0 && errno != ENOENT)
                        r = negative_errno();
        }
        if (rmdir(dir) < 0 && errno != ENOENT)
                r = negative_errno();
        return r;
}
