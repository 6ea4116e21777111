/* SPDX-License-Identifier: MIT */
/* What the policy tests share: policy.d directories of their own, files
 * written into them, loading with the owner check pointed at the uid
 * running the test, and the problems a load reports. */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "duration.h"
#include "policy-load.h"
#include "policy.h"
#include "policy-fixture.h"
#include "test-util.h"

char *make_dir(void) {
        char *d = strdup("/tmp/test-policy-XXXXXX");

        ASSERT_NOT_NULL(d);
        ASSERT_NOT_NULL(mkdtemp(d));
        /* mkdtemp() gives 0700; make it look like a real policy.d. */
        ASSERT_EQ(chmod(d, 0755), 0);
        return d;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) type;
        (void) ftw;
        return remove(path);
}

void remove_dir(char *d) {
        ASSERT_EQ(nftw(d, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
        free(d);
}

char *path_join(const char *dir, const char *name) {
        char *p;

        ASSERT_TRUE(asprintf(&p, "%s/%s", dir, name) > 0);
        return p;
}

void write_file_len(const char *dir, const char *name, const char *text, size_t len, mode_t mode) {
        char *p = path_join(dir, name);
        FILE *f = fopen(p, "we");

        ASSERT_NOT_NULL(f);
        ASSERT_EQ(fwrite(text, 1, len, f), len);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(chmod(p, mode), 0);
        free(p);
}

void write_file(const char *dir, const char *name, const char *text) {
        write_file_len(dir, name, text, strlen(text), 0644);
}

Policy *load_dirs(const char *const *dirs, uid_t owner) {
        Policy *p = NULL;

        ASSERT_RET(policy_load(dirs, owner, &p), 0);
        ASSERT_NOT_NULL(p);
        return p;
}

Policy *load1(const char *dir) {
        return load_dirs((const char *const[]) { dir, NULL }, getuid());
}

void dump_problems(const Policy *p) {
        const PolicyProblem *pr;
        size_t n;

        pr = policy_problems(p, &n);
        for (size_t i = 0; i < n; i++)
                fprintf(stderr, "  problem %zu (%s): %s\n", i,
                        pr[i].level == POLICY_PROBLEM_ERROR ? "error" : "warning", pr[i].message);
}

/* The problems must be exactly these messages, in this order; each given
 * as a printf format taking the directory once per %s. */
void assert_problems(const Policy *p, const char *dir, ...) {
        const PolicyProblem *pr;
        const char *fmt;
        size_t n, i = 0;
        va_list ap;

        pr = policy_problems(p, &n);
        va_start(ap, dir);
        while ((fmt = va_arg(ap, const char *))) {
                char *expected;

                ASSERT_TRUE(asprintf(&expected, fmt, dir, dir) > 0);
                if (i >= n) {
                        dump_problems(p);
                        test_fail("expected problem \"%s\", seen only %zu problems", expected, n);
                }
                ASSERT_STREQ(pr[i].message, expected);
                free(expected);
                i++;
        }
        va_end(ap);

        if (i != n) {
                dump_problems(p);
                test_fail("expected %zu problems, seen %zu", i, n);
        }
}

void assert_no_problems(const Policy *p) {
        assert_problems(p, NULL, NULL);
        ASSERT_FALSE(policy_has_errors(p));
}
