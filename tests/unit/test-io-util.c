/* SPDX-License-Identifier: MIT */
/* file_replace(): the report writer of explore, sweep and --report. The
 * attack it stops: another user plants a symlink at the path a report is
 * written to (/tmp/report.html -> a file of the victim's), and the victim's
 * injectctl writes through it. And read_small_file()/read_first_line(),
 * the one reader of sysfs and procfs values. */
#include <fcntl.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "io-util.h"
#include "test-util.h"

static int fill_text(FILE *f, void *userdata) {
        return fputs(userdata, f) < 0 ? -EIO : 0;
}

static int fill_fails(FILE *f, void *userdata) {
        (void) f;
        (void) userdata;
        return -ENOSPC;
}

static char *slurp(const char *path) {
        static char buf[256];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n < 0 ? 0 : n] = 0;
        return buf;
}

static size_t count_entries(const char *dir) {
        _cleanup_(closedirp) DIR *d = opendir(dir);
        size_t n = 0;

        for (struct dirent *e; d && (e = readdir(d));)
                n += e->d_name[0] != '.';
        return n;
}

int main(void) {
        char dir[] = "/tmp/test-io-util-XXXXXX", path[256], victim[256];
        struct stat st;

        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/report.html", dir);
        snprintf(victim, sizeof(victim), "%s/victim", dir);

        /* A new file, then a second one over it. */
        ASSERT_EQ(file_replace(path, fill_text, "one\n"), 0);
        ASSERT_STREQ(slurp(path), "one\n");
        ASSERT_EQ(file_replace(path, fill_text, "two\n"), 0);
        ASSERT_STREQ(slurp(path), "two\n");

        /* A symlink planted at the path is replaced, not written through. */
        ASSERT_EQ(unlink(path), 0);
        ASSERT_EQ(file_replace(victim, fill_text, "the victim's\n"), 0);
        ASSERT_EQ(symlink(victim, path), 0);
        ASSERT_EQ(file_replace(path, fill_text, "report\n"), 0);
        ASSERT_STREQ(slurp(victim), "the victim's\n");
        ASSERT_EQ(lstat(path, &st), 0);
        ASSERT_TRUE(S_ISREG(st.st_mode));
        ASSERT_STREQ(slurp(path), "report\n");

        /* A writer that fails leaves the old file and no temporary. */
        ASSERT_EQ(file_replace(path, fill_fails, NULL), -ENOSPC);
        ASSERT_STREQ(slurp(path), "report\n");
        ASSERT_EQ(count_entries(dir), 2u);

        /* A directory that is not there: an error, nothing created. */
        ASSERT_EQ(file_replace("/nonexistent-dir/report.json", fill_text, "x"), -ENOENT);

        /* A small file's start, and its first line; cut to the buffer; ""
         * for a file that is not there. */
        {
                char buf[8];

                ASSERT_EQ(file_replace(path, fill_text, "loop0\nmore\n"), 0);
                ASSERT_EQ(read_small_file(path, buf, sizeof(buf)), 0);
                ASSERT_STREQ(buf, "loop0\nm");
                ASSERT_EQ(read_first_line(path, buf, sizeof(buf)), 0);
                ASSERT_STREQ(buf, "loop0");
                ASSERT_EQ(file_replace(path, fill_text, "0123456789\n"), 0);
                ASSERT_EQ(read_first_line(path, buf, sizeof(buf)), 0);
                ASSERT_STREQ(buf, "0123456");
                ASSERT_EQ(file_replace(path, fill_text, ""), 0);
                ASSERT_EQ(read_first_line(path, buf, sizeof(buf)), 0);
                ASSERT_STREQ(buf, "");
                ASSERT_EQ(read_first_line("/nonexistent-dir/x", buf, sizeof(buf)), -ENOENT);
                ASSERT_STREQ(buf, "");
        }

        unlink(path);
        unlink(victim);
        rmdir(dir);
        return 0;
}
