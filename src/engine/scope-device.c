/* SPDX-License-Identifier: MIT */
/* Block devices named by users, found in sysfs (scope-device.h). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "parse-util.h"
#include "scope-device.h"

/* The functions whose arguments name a device: should_fail_bio() is the
 * block layer's fault point for every bio (fail_make_request's), called
 * at submission, from the task or the kworker that submits. */
static const struct {
        const char *function;
        enum inject_device_arg arg;
} device_args[] = {
        { "should_fail_bio", INJECT_DEVICE_ARG_BIO },
};

const char device_scope_functions[] = "should_fail_bio";

enum inject_device_arg device_arg_for(const char *function) {
        if (!function)
                return INJECT_DEVICE_ARG_NONE;
        for (size_t i = 0; i < sizeof(device_args) / sizeof(device_args[0]); i++)
                if (strcmp(device_args[i].function, function) == 0)
                        return device_args[i].arg;
        return INJECT_DEVICE_ARG_NONE;
}

/* The first line of a small sysfs file, without its newline. */
static int read_line(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = -1;
        ssize_t n;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        n = read_retry(fd, buf, size - 1);
        if (n < 0)
                return (int) n;
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return 0;
}

static int read_u64(const char *path, uint64_t *ret) {
        char buf[32];
        int r;

        r = read_line(path, buf, sizeof(buf));
        if (r < 0)
                return r;
        return parse_u64(buf, ret);
}

/* A kernel block device name as sysfs spells it: no '/', not "." or "..". */
static bool name_is_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= BLOCK_NAME_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      *s == '-' || *s == '_' || *s == '.' || *s == '!'))
                        return false;
        return true;
}

/* "MAJ:MIN" to the name sysfs gives that device: /sys/dev/block/MAJ:MIN
 * links to its directory. */
static int name_of_dev(const char *sys_root, const char *what, char name[BLOCK_NAME_MAX]) {
        char path[256], target[512];
        unsigned maj, min;
        const char *base;
        ssize_t n;
        int end = 0;

        if (sscanf(what, "%u:%u%n", &maj, &min, &end) != 2 || what[end] || what[0] < '0' || what[0] > '9')
                return -EINVAL;
        snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sys_root, maj, min);
        n = readlink(path, target, sizeof(target) - 1);
        if (n < 0)
                return errno == ENOENT ? -ENOENT : negative_errno();
        target[n] = 0;
        base = strrchr(target, '/');
        base = base ? base + 1 : target;
        if (!name_is_valid(base))
                return -EINVAL;
        snprintf(name, BLOCK_NAME_MAX, "%.31s", base);
        return 0;
}

int scope_device_lookup(const char *sys_root, const char *what, BlockDisk *ret) {
        char path[256], buf[64], name[BLOCK_NAME_MAX];
        BlockDisk d = {};
        struct stat st;
        unsigned maj, min;
        uint64_t v;
        int r;

        sys_root = sys_root ?: SYS_BLOCK_ROOT;
        if (!what)
                return -EINVAL;
        if (strncmp(what, "/dev/", 5) == 0)
                what += 5;
        if (strchr(what, ':')) {
                r = name_of_dev(sys_root, what, name);
                if (r < 0)
                        return r;
        } else {
                if (!name_is_valid(what))
                        return -EINVAL;
                snprintf(name, sizeof(name), "%s", what);
        }
        snprintf(path, sizeof(path), "%s/class/block/%s", sys_root, name);
        if (stat(path, &st) < 0)
                return errno == ENOENT ? -ENOENT : negative_errno();
        /* A partition is a directory of its disk's in /sys/block. */
        snprintf(path, sizeof(path), "%s/class/block/%s/partition", sys_root, name);
        if (access(path, F_OK) == 0) {
                char target[512], *slash;
                ssize_t n;

                snprintf(path, sizeof(path), "%s/class/block/%s", sys_root, name);
                n = readlink(path, target, sizeof(target) - 1);
                if (n > 0) {
                        target[n] = 0;
                        if ((slash = strrchr(target, '/')))
                                *slash = 0;
                        slash = strrchr(target, '/');
                        snprintf(ret->name, sizeof(ret->name), "%.31s", slash ? slash + 1 : target);
                }
                return -EISDIR;
        }
        snprintf(d.name, sizeof(d.name), "%s", name);
        snprintf(path, sizeof(path), "%s/block/%s/dev", sys_root, name);
        r = read_line(path, buf, sizeof(buf));
        if (r < 0)
                return r == -ENOENT ? -ENOENT : r;
        if (sscanf(buf, "%u:%u", &maj, &min) != 2)
                return -EIO;
        d.dev = makedev(maj, min);
        snprintf(path, sizeof(path), "%s/block/%s/diskseq", sys_root, name);
        r = read_u64(path, &v);
        if (r == -ENOENT || (r >= 0 && v == 0))
                return -ENOMEDIUM;      /* before 5.15 there is no diskseq: nothing to name the disk by */
        if (r < 0)
                return r;
        d.diskseq = v;
        snprintf(path, sizeof(path), "%s/block/%s/loop", sys_root, name);
        d.loop = access(path, F_OK) == 0;
        if (strncmp(name, "loop", 4) == 0 && !d.loop)
                return -ENOMEDIUM;      /* a loop device shows loop/ only while a file is attached */
        *ret = d;
        return 0;
}

bool scope_device_is_netdev(const char *sys_root, const char *what) {
        char path[256];

        if (!what || !name_is_valid(what))
                return false;
        snprintf(path, sizeof(path), "%s/class/net/%s", sys_root ?: SYS_BLOCK_ROOT, what);
        return access(path, F_OK) == 0;
}

int scope_device_alive(const char *sys_root, uint64_t diskseq, char ret_name[BLOCK_NAME_MAX]) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[512];
        struct dirent *de;

        sys_root = sys_root ?: SYS_BLOCK_ROOT;
        snprintf(path, sizeof(path), "%s/block", sys_root);
        d = opendir(path);
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                uint64_t v;

                if (de->d_name[0] == '.' || !name_is_valid(de->d_name))
                        continue;
                snprintf(path, sizeof(path), "%s/block/%s/diskseq", sys_root, de->d_name);
                if (read_u64(path, &v) < 0 || v != diskseq)
                        continue;
                if (ret_name)
                        snprintf(ret_name, BLOCK_NAME_MAX, "%.31s", de->d_name);
                return 1;
        }
        return 0;
}
