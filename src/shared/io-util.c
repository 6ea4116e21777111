/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io-util.h"

ssize_t read_retry(int fd, void *buf, size_t n) {
        for (;;) {
                ssize_t k = read(fd, buf, n);

                if (k >= 0)
                        return k;
                if (errno != EINTR)
                        return -errno;
        }
}

int read_small_file(const char *path, char *buf, size_t size) {
        int fd;
        ssize_t n;

        buf[0] = 0;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        n = read_retry(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return (int) n;
        buf[n] = 0;
        return 0;
}

int read_first_line(const char *path, char *buf, size_t size) {
        int r = read_small_file(path, buf, size);

        if (r < 0)
                return r;
        buf[strcspn(buf, "\n")] = 0;
        return 0;
}

int file_replace(const char *path, int (*fill)(FILE *f, void *userdata), void *userdata) {
        mode_t mask = umask(0);
        char *tmp = NULL;
        FILE *f = NULL;
        int fd, r = 0;

        (void) umask(mask);
        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        /* mkostemp creates with O_EXCL: it never opens what is there. */
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                free(tmp);
                return r;
        }
        if (fchmod(fd, 0666 & ~mask) < 0 || !(f = fdopen(fd, "w")))
                r = -errno;
        else {
                r = fill(f, userdata);
                if (fflush(f) != 0 || ferror(f))
                        r = r < 0 ? r : (errno ? -errno : -EIO);
        }
        if (f) {
                if (fclose(f) != 0 && r == 0)
                        r = errno ? -errno : -EIO;
        } else
                (void) close(fd);
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(tmp);
        free(tmp);
        return r;
}
