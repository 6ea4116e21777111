/* SPDX-License-Identifier: MIT */
#pragma once

/* Scope-bound cleanup, so every early return frees what it must and
 * ownership transfers are explicit (TAKE_PTR/TAKE_FD). */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Defines func##p(type *p) that calls func(*p) when *p is non-NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)         \
        static inline void func##p(type *p) {           \
                if (*p)                                 \
                        func(*p);                       \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Closes without disturbing errno, since cleanup runs on error paths. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -1;
}

static inline void closep(int *fd) {
        (void) safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

/* Returns the value and leaves NULL (or -1) behind, for ownership transfer. */
#define TAKE_PTR(p)                             \
        ({                                      \
                __typeof__(p) _tp = (p);        \
                (p) = NULL;                     \
                _tp;                            \
        })

#define TAKE_FD(fd)                             \
        ({                                      \
                int _tf = (fd);                 \
                (fd) = -1;                      \
                _tf;                            \
        })

/* libc returns -1 with errno; callers want a negative errno. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
