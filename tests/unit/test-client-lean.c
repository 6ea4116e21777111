/* SPDX-License-Identifier: MIT */
/* injectctl loads only what its transport needs: a Varlink run maps no
 * libsystemd (nor what libsystemd pulls in), which the D-Bus transport
 * loads at run time (src/client/dlopen-libsystemd.c). The dynamic
 * loader's own account (LD_DEBUG=libs) is the witness: it names every
 * library it loads, at start-up and at dlopen() alike, so the D-Bus run
 * below shows that the witness does see libsystemd when it is loaded.
 *
 *   test-client-lean PATH-TO-INJECTCTL */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "test-util.h"

static const char *binary;

/* Runs binary with args, stdin from /dev/null, LD_DEBUG=libs and the
 * given extra variable (or NULL), and returns the loader's and the
 * program's stderr with stdout, a new string. */
static char *run_traced(const char *extra_env, char *const *args) {
        char *argv[8] = { (char *) binary };
        size_t n = 0, size = 65536;
        _cleanup_free_ char *buf = malloc(size);
        int pipefd[2], status;
        ssize_t k;
        pid_t pid;

        ASSERT_NOT_NULL(buf);
        for (size_t i = 0; args[i] && i < 6; i++)
                argv[i + 1] = args[i];
        ASSERT_OK(pipe2(pipefd, O_CLOEXEC));
        pid = fork();
        ASSERT_OK(pid);
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(pipefd[1], STDOUT_FILENO) < 0 ||
                    dup2(pipefd[1], STDERR_FILENO) < 0)
                        _exit(126);
                if (setenv("LD_DEBUG", "libs", 1) < 0 || (extra_env && putenv((char *) extra_env) < 0))
                        _exit(126);
                execv(binary, argv);
                _exit(127);
        }
        close(pipefd[1]);
        while ((k = read(pipefd[0], buf + n, size - 1 - n)) > 0) {
                n += (size_t) k;
                if (n == size - 1) {
                        char *p = realloc(buf, size * 2);

                        ASSERT_NOT_NULL(p);
                        buf = p;
                        size *= 2;
                }
        }
        close(pipefd[0]);
        buf[n] = '\0';
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) >= 126)
                test_fail("'%s' could not be run (exit %d): %s", binary, WEXITSTATUS(status), buf);
        return TAKE_PTR(buf);
}

static bool loads(const char *trace, const char *library) {
        char needle[128];

        snprintf(needle, sizeof(needle), "find library=%s", library);
        return strstr(trace, needle) != NULL;
}

/* The libraries libsystemd brings along, none of which Varlink needs. */
static const char *const unwanted[] = {
        "libsystemd.so", "libgcrypt.so", "liblzma.so", "libzstd.so", "liblz4.so", "libcap.so",
};

static void assert_lean(const char *what, const char *trace) {
        if (!strstr(trace, "find library="))
                TEST_SKIP("the dynamic loader does not trace (LD_DEBUG=libs): %s", trace);
        for (size_t i = 0; i < sizeof(unwanted) / sizeof(unwanted[0]); i++)
                if (loads(trace, unwanted[i]))
                        test_fail("%s loaded %s, which Varlink does not need:\n%s", what, unwanted[i], trace);
}

static void test_varlink_version(void) {
        _cleanup_free_ char *trace = run_traced(NULL, (char *[]) { "--varlink", "--version", NULL });

        assert_lean("injectctl --varlink --version", trace);
}

/* A command that opens its transport: connecting to a socket that is not
 * there still loads nothing for D-Bus. */
static void test_varlink_connect(void) {
        _cleanup_free_ char *trace =
                run_traced(NULL, (char *[]) { "--varlink=/nonexistent/injectd.sock", "list", NULL });

        assert_lean("injectctl --varlink=/nonexistent/injectd.sock list", trace);
}

/* The D-Bus transport does load it, when used, and says so when the bus
 * is not there. */
static void test_bus_loads_libsystemd(void) {
        _cleanup_free_ char *trace = run_traced("DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/bus",
                                                (char *[]) { "list", NULL });

        if (!strstr(trace, "find library="))
                TEST_SKIP("the dynamic loader does not trace (LD_DEBUG=libs)");
        if (!loads(trace, "libsystemd.so.0"))
                test_fail("injectctl list (D-Bus) did not load libsystemd.so.0:\n%s", trace);
        if (!strstr(trace, "Cannot connect to the system bus"))
                test_fail("expected \"Cannot connect to the system bus\", seen:\n%s", trace);
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s PATH-TO-INJECTCTL\n", argv[0]);
                return EXIT_FAILURE;
        }
        binary = argv[1];

        TEST_RUN(test_varlink_version);
        TEST_RUN(test_varlink_connect);
        TEST_RUN(test_bus_loads_libsystemd);
        return 0;
}
