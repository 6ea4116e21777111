/* SPDX-License-Identifier: MIT */
/* What injectctl sends for --pid and --cgroup over Varlink: a pidfd and
 * the open directory, by index among the call's fds, never the number or
 * the path (which mean something else in the daemon's namespaces); and,
 * to a daemon whose Inject takes no fds (InvalidParameter "fds"), the
 * number and the path again. The daemon is a Varlink server in a thread
 * of this test that records what it got.
 * --device goes as its name, unresolved: the daemon looks it up in
 * /sys/block, which no namespace of the caller's changes (a loop device's
 * also brings its backing file's fd, "backing_fd": the VM scenario
 * device-scope shows that); a second scope option is refused before
 * anything is sent.
 *
 *   test-client-fds PATH-TO-INJECTCTL */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json-util.h"
#include "pidfd-util.h"
#include "test-util.h"
#include "varlink.h"

typedef struct Seen {
        unsigned calls;
        char params[1024];      /* the last call's parameters */
        pid_t pidfd_pid;        /* what its "pidfd" named, or 0 */
        ino_t cgroup_ino;       /* the inode of its "cgroup_fd", or 0 */
} Seen;

static Seen seen;
static atomic_bool stop;

static int method_inject(VarlinkConn *c, json_object *params, VarlinkMethodFlags flags, void *userdata) {
        _cleanup_json_ json_object *reply = NULL;
        int64_t i;

        seen.calls++;
        snprintf(seen.params, sizeof(seen.params), "%s", json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
        seen.pidfd_pid = 0;
        seen.cgroup_ino = 0;
        if (json_get_i64(params, "pidfd", 0, 3, &i) >= 0)
                ASSERT_OK(pidfd_get_pid(varlink_conn_peek_fd(c, (unsigned) i), &seen.pidfd_pid));
        if (json_get_i64(params, "cgroup_fd", 0, 3, &i) >= 0) {
                struct stat st;

                ASSERT_EQ(fstat(varlink_conn_peek_fd(c, (unsigned) i), &st), 0);
                seen.cgroup_ino = st.st_ino;
        }
        reply = json_tokener_parse("{\"id\": \"0123456789abcdef\", \"expires_usec\": 1, \"injection\": {}}");
        ASSERT_NOT_NULL(reply);
        return varlink_reply(c, reply);
}

static void *serve(void *userdata) {
        sd_event *e = userdata;

        while (!atomic_load(&stop))
                ASSERT_TRUE(sd_event_run(e, 10 * 1000) >= 0);
        return NULL;
}

/* Runs injectctl --varlink=path inject ... with scope_args, against a
 * server whose Inject takes fds or not; returns injectctl's exit status. */
static int run_against(const char *injectctl, bool takes_fds, char *const *scope_args, size_t n_scope) {
        _cleanup_(varlink_server_freep) VarlinkServer *s = NULL;
        sd_event *e = NULL;
        char path[] = "/tmp/test-client-fds.XXXXXX", sock[64], varlink_arg[80];
        char *argv[16];
        size_t n = 0;
        pthread_t thread;
        int status;
        pid_t pid;

        ASSERT_NOT_NULL(mkdtemp(path));
        snprintf(sock, sizeof(sock), "%s/socket", path);
        ASSERT_OK(sd_event_new(&e));
        ASSERT_OK(varlink_server_new(e, NULL, &s));
        if (takes_fds)
                ASSERT_OK(varlink_server_bind_method_fds(s, "org.injectd.Injector.Inject", 4, method_inject, NULL));
        else
                ASSERT_OK(varlink_server_bind_method(s, "org.injectd.Injector.Inject", method_inject, NULL));
        ASSERT_OK(varlink_server_listen_address(s, sock, 0600));
        atomic_store(&stop, false);
        seen = (Seen) {};
        ASSERT_EQ(pthread_create(&thread, NULL, serve, e), 0);

        snprintf(varlink_arg, sizeof(varlink_arg), "--varlink=%s", sock);
        argv[n++] = (char *) injectctl;
        argv[n++] = varlink_arg;
        argv[n++] = (char *) "inject";
        argv[n++] = (char *) "__x64_sys_getpgid";
        argv[n++] = (char *) "--error";
        argv[n++] = (char *) "EACCES";
        argv[n++] = (char *) "--detach";
        for (size_t i = 0; i < n_scope; i++)
                argv[n++] = scope_args[i];
        argv[n] = NULL;

        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);

                (void) dup2(null, STDOUT_FILENO);
                execv(injectctl, argv);
                _exit(127);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);

        atomic_store(&stop, true);
        ASSERT_EQ(pthread_join(thread, NULL), 0);
        s = varlink_server_free(s);
        sd_event_unref(e);
        (void) unlink(sock);
        (void) rmdir(path);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
        char pid_str[16], cgroup[] = "/tmp/test-client-fds-cg.XXXXXX";
        struct stat st;
        pid_t target;

        if (argc != 2) {
                fprintf(stderr, "usage: test-client-fds PATH-TO-INJECTCTL\n");
                return 2;
        }
        if (pidfd_open_pid(getpid()) == -ENOSYS) {
                printf("skipped: no pidfd_open() on this kernel\n");
                return EXIT_TEST_SKIP;
        }
        target = fork();
        ASSERT_TRUE(target >= 0);
        if (target == 0) {
                /* Gone with the test, also when an assertion ends it. */
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                pause();
                _exit(0);
        }
        snprintf(pid_str, sizeof(pid_str), "%d", (int) target);

        /* --pid: a pidfd of that process, not its number. */
        ASSERT_EQ(run_against(argv[1], true, (char *[]) { (char *) "--pid", pid_str }, 2), 0);
        ASSERT_EQ(seen.calls, 1);
        ASSERT_EQ(seen.pidfd_pid, target);
        ASSERT_NULL(strstr(seen.params, "\"pid\":"));

        /* To a daemon that takes no fds: refused before its handler,
         * then the number. */
        ASSERT_EQ(run_against(argv[1], false, (char *[]) { (char *) "--pid", pid_str }, 2), 0);
        ASSERT_EQ(seen.calls, 1);
        ASSERT_EQ(seen.pidfd_pid, 0);
        ASSERT_NOT_NULL(strstr(seen.params, "\"pid\":"));
        ASSERT_NULL(strstr(seen.params, "pidfd"));

        /* A pid that names no process is refused before any call. */
        ASSERT_TRUE(run_against(argv[1], true, (char *[]) { (char *) "--pid", (char *) "2147483647" }, 2) != 0);
        ASSERT_EQ(seen.calls, 0);

        /* --cgroup: the open directory (any directory does, for the
         * client; the daemon checks it is a cgroup). */
        ASSERT_NOT_NULL(mkdtemp(cgroup));
        ASSERT_EQ(stat(cgroup, &st), 0);
        ASSERT_EQ(run_against(argv[1], true, (char *[]) { (char *) "--cgroup", cgroup }, 2), 0);
        ASSERT_EQ(seen.cgroup_ino, st.st_ino);
        ASSERT_NULL(strstr(seen.params, "\"cgroup\":"));
        ASSERT_EQ(run_against(argv[1], false, (char *[]) { (char *) "--cgroup", cgroup }, 2), 0);
        ASSERT_EQ(seen.calls, 1);
        ASSERT_NOT_NULL(strstr(seen.params, "\"cgroup\":"));
        (void) rmdir(cgroup);

        /* --device: the name as given, with its scope; /dev/ is the
         * daemon's to strip, the path never opened. */
        ASSERT_EQ(run_against(argv[1], true, (char *[]) { (char *) "--device", (char *) "/dev/loop3" }, 2), 0);
        ASSERT_EQ(seen.calls, 1);
        ASSERT_NOT_NULL(strstr(seen.params, "\"scope\":\"device\""));
        ASSERT_NOT_NULL(strstr(seen.params, "\"device\":\"\\/dev\\/loop3\""));
        ASSERT_EQ(seen.pidfd_pid, 0);
        ASSERT_EQ(seen.cgroup_ino, 0);
        ASSERT_EQ(run_against(argv[1], true, (char *[]) { (char *) "--device", (char *) "7:3" }, 2), 0);
        ASSERT_NOT_NULL(strstr(seen.params, "\"device\":\"7:3\""));

        /* One scope option: a second is a usage error (2), nothing sent. */
        ASSERT_EQ(run_against(argv[1], true, (char *[]) { (char *) "--device", (char *) "loop3", (char *) "--pid", pid_str }, 4), 2);
        ASSERT_EQ(run_against(argv[1], true, (char *[]) { (char *) "--global", (char *) "--device", (char *) "loop3" }, 3), 2);
        ASSERT_EQ(run_against(argv[1], true, (char *[]) { (char *) "--device", (char *) "" }, 2), 2);
        ASSERT_EQ(seen.calls, 0);

        (void) kill(target, SIGKILL);
        (void) waitpid(target, NULL, 0);
        return 0;
}
