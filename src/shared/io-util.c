/* SPDX-License-Identifier: MIT */
#include <errno.h>
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
