/* SPDX-License-Identifier: MIT */
/* injectctl-static (docs/containers.md) needs nothing from the image it
 * runs in: no program interpreter, no shared library (libsystemd and
 * json-c least of all), so ldd calls it not dynamic; it says it speaks only
 * Varlink, refuses --bus with a usage error, and talks Varlink by default.
 *
 *   test-client-static PATH-TO-INJECTCTL-STATIC */

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "test-util.h"

static const char *binary;

/* Runs argv with stdin from /dev/null, an empty environment, and its
 * stdout and stderr together in *ret_out. Returns the exit status, or
 * 128 + N for signal N. */
static int run(char *const *argv, char **ret_out) {
        static char *const empty_env[] = { NULL };
        char buf[4096];
        size_t n = 0;
        int pipefd[2], status;
        pid_t pid;
        ssize_t k;

        ASSERT_OK(pipe2(pipefd, O_CLOEXEC));
        pid = fork();
        ASSERT_OK(pid);
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(pipefd[1], STDOUT_FILENO) < 0 ||
                    dup2(pipefd[1], STDERR_FILENO) < 0)
                        _exit(126);
                execve(argv[0], argv, empty_env);
                _exit(127);
        }
        close(pipefd[1]);
        while ((k = read(pipefd[0], buf + n, sizeof(buf) - 1 - n)) > 0)
                n += (size_t) k;
        close(pipefd[0]);
        buf[n] = '\0';
        ASSERT_EQ(waitpid(pid, &status, 0), pid);

        *ret_out = strdup(buf);
        ASSERT_NOT_NULL(*ret_out);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define ASSERT_CONTAINS(haystack, needle)                                       \
        do {                                                                    \
                if (!strstr((haystack), (needle)))                              \
                        test_fail("expected output containing \"%s\", seen \"%s\"", \
                                  (needle), (haystack));                        \
        } while (false)

/* Reads size bytes at offset, or fails. */
static void read_at(int fd, void *buf, size_t size, off_t offset) {
        ASSERT_EQ(pread(fd, buf, size, offset), (ssize_t) size);
}

/* The ELF file itself: no PT_INTERP (the dynamic loader, which an image
 * without libc does not have), and no DT_NEEDED entry even if a
 * static-pie build has a dynamic section. */
static void test_elf(void) {
        _cleanup_close_ int fd = -EBADF;
        Elf64_Ehdr eh;
        unsigned needed = 0;

        fd = open(binary, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                test_fail("cannot open '%s': %s", binary, strerror(errno));
        read_at(fd, &eh, sizeof(eh), 0);
        ASSERT_TRUE(memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
        ASSERT_EQ(eh.e_ident[EI_CLASS], ELFCLASS64);
        ASSERT_EQ(eh.e_phentsize, sizeof(Elf64_Phdr));

        for (unsigned i = 0; i < eh.e_phnum; i++) {
                Elf64_Phdr ph;

                read_at(fd, &ph, sizeof(ph), (off_t) (eh.e_phoff + i * sizeof(ph)));
                if (ph.p_type == PT_INTERP)
                        test_fail("'%s' has a program interpreter (PT_INTERP): it is dynamically linked", binary);
                if (ph.p_type != PT_DYNAMIC)
                        continue;
                for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= ph.p_filesz; off += sizeof(Elf64_Dyn)) {
                        Elf64_Dyn d;

                        read_at(fd, &d, sizeof(d), (off_t) (ph.p_offset + off));
                        if (d.d_tag == DT_NULL)
                                break;
                        if (d.d_tag == DT_NEEDED)
                                needed++;
                }
        }
        ASSERT_EQ(needed, 0);
}

/* What ldd, the tool a user would ask, says. */
static void test_ldd(void) {
        char *argv[] = { (char *) "/usr/bin/ldd", (char *) binary, NULL };
        _cleanup_free_ char *out = NULL;

        if (access(argv[0], X_OK) < 0) {
                printf("no /usr/bin/ldd, not asking it\n");
                return;
        }
        /* ldd exits 1 for a file it calls not dynamic. */
        (void) run(argv, &out);
        ASSERT_CONTAINS(out, "not a dynamic executable");
        if (strstr(out, "libsystemd") || strstr(out, "libjson-c"))
                test_fail("ldd lists a library: %s", out);
}

static void test_version(void) {
        char *argv[] = { (char *) binary, (char *) "--version", NULL };
        _cleanup_free_ char *out = NULL;

        ASSERT_EQ(run(argv, &out), 0);
        ASSERT_CONTAINS(out, "(static, Varlink only)");
}

static void test_bus_refused(void) {
        char *argv[] = { (char *) binary, (char *) "--bus", (char *) "caps", NULL };
        char *after[] = { (char *) binary, (char *) "caps", (char *) "--bus", NULL };
        _cleanup_free_ char *out = NULL, *out2 = NULL;

        ASSERT_EQ(run(argv, &out), 2);
        ASSERT_CONTAINS(out, "speaks only Varlink");
        ASSERT_CONTAINS(out, "Try 'injectctl --help'.");
        /* After the command, too. */
        ASSERT_EQ(run(after, &out2), 2);
        ASSERT_CONTAINS(out2, "speaks only Varlink");
}

/* Without --varlink it goes to a Varlink socket, not the system bus: a
 * socket that is not there is "cannot be reached" (3) and named. */
static void test_default_varlink(void) {
        char *argv[] = { (char *) binary, (char *) "--varlink=/nonexistent/injectd.sock", (char *) "caps", NULL };
        char *plain[] = { (char *) binary, (char *) "list", NULL };
        _cleanup_free_ char *out = NULL, *out2 = NULL;
        int r;

        ASSERT_EQ(run(argv, &out), 3);
        ASSERT_CONTAINS(out, "Cannot connect to '/nonexistent/injectd.sock'");

        /* The default socket: on a machine where injectd runs this may
         * well answer; either way, no word of D-Bus. */
        r = run(plain, &out2);
        if (r == 3)
                ASSERT_CONTAINS(out2, "Cannot connect to '/run/injectd/org.injectd.Injector'");
        if (strstr(out2, "system bus"))
                test_fail("injectctl-static spoke of the system bus: %s", out2);
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s PATH-TO-INJECTCTL-STATIC\n", argv[0]);
                return EXIT_FAILURE;
        }
        binary = argv[1];

        TEST_RUN(test_elf);
        TEST_RUN(test_ldd);
        TEST_RUN(test_version);
        TEST_RUN(test_bus_refused);
        TEST_RUN(test_default_varlink);
        return 0;
}
