/* SPDX-License-Identifier: MIT */
/* burst-client: a burst of concurrent Inject calls from one user, for
 * tests/vm/test-daemon-polkit-burst.sh.
 *
 *   burst-client SOCKET FUNCTION ERROR N HANGUPS
 *
 * Forks N + HANGUPS idle children (the scopes: one process scope each, so
 * that no two injections share function and scope), then opens one Varlink
 * connection per child and sends Inject on every one of them before reading
 * any answer, so that the daemon has them all at once:
 *   - HANGUPS / 2 connections first, each closed right after its call (a
 *     requester gone while polkit is asked for it),
 *   - then the N connections whose answers are awaited,
 *   - then the other hang-ups, closed the same way (gone while their check
 *     still waits its turn).
 * Then it reads the N answers, in whatever order they come, and prints
 *   served K
 *   refused NAME COUNT FIRST-MESSAGE        (one line per error name)
 *   unanswered M                            (closed or no answer in time)
 *   holding
 * and holds the connections, so their injections stay armed, until killed
 * (SIGTERM): the injections then end with their requesters. The children
 * die with it (PR_SET_PDEATHSIG).
 *
 * Exit status: 0 once holding (whatever the answers were: the script
 * judges them), 1 on a failure of its own, 2 on usage errors. */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#define MAX_CONNS 1000U
/* Every answer within this long. The daemon answers as polkit's answers
 * come, a few a second under TCG with ASan. Only a daemon that stopped
 * answering trips it. */
#define WAIT_SEC 400
#define REPLY_MAX 65536

typedef struct Conn {
        int fd;
        char *buf;
        size_t have;
        bool done;
} Conn;

typedef struct Refusal {
        char name[128];
        char message[256];
        unsigned count;
} Refusal;

static Conn conns[MAX_CONNS];
static Refusal refusals[32];
static unsigned n_refusals;

static pid_t spawn_idle_child(void) {
        pid_t parent = getpid(), pid;

        pid = fork();
        if (pid != 0)
                return pid;
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(0);
        for (;;)
                pause();
}

static int connect_to(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

/* Connects and sends Inject for a process scope of pid; returns the fd. */
static int send_inject(const char *path, const char *function, const char *error, pid_t pid) {
        char msg[512];
        int fd, n;

        fd = connect_to(path);
        if (fd < 0)
                return fd;
        n = snprintf(msg, sizeof(msg),
                     "{\"method\":\"org.injectd.Injector.Inject\",\"parameters\":{\"function\":\"%s\","
                     "\"error\":\"%s\",\"scope\":\"process\",\"pid\":%d,\"duration_usec\":600000000}}",
                     function, error, (int) pid);
        /* The NUL ends the message. A short message on a fresh socket goes
         * in one send. */
        if (send(fd, msg, (size_t) n + 1, MSG_NOSIGNAL) != n + 1) {
                int r = errno ? -errno : -EIO;

                close(fd);
                return r;
        }
        return fd;
}

static void note_refusal(const char *name, const char *message) {
        for (unsigned i = 0; i < n_refusals; i++)
                if (strcmp(refusals[i].name, name) == 0) {
                        refusals[i].count++;
                        return;
                }
        if (n_refusals == sizeof(refusals) / sizeof(refusals[0]))
                return;
        snprintf(refusals[n_refusals].name, sizeof(refusals[n_refusals].name), "%s", name);
        snprintf(refusals[n_refusals].message, sizeof(refusals[n_refusals].message), "%s", message);
        refusals[n_refusals++].count = 1;
}

/* One answer: served when it names an injection id, refused otherwise. */
static bool judge(const char *text) {
        json_object *o = json_tokener_parse(text), *v, *p;
        const char *name = "(not JSON)", *message = text;
        bool served = false;

        if (o && json_object_object_get_ex(o, "error", &v)) {
                name = json_object_get_string(v);
                message = "";
                if (json_object_object_get_ex(o, "parameters", &p) && json_object_object_get_ex(p, "message", &v))
                        message = json_object_get_string(v);
        } else if (o && json_object_object_get_ex(o, "parameters", &p) && json_object_object_get_ex(p, "id", &v))
                served = true;
        else if (o)
                name = "(no id, no error)";
        if (!served)
                note_refusal(name, message);
        json_object_put(o);
        return served;
}

int main(int argc, char **argv) {
        static struct pollfd pfd[MAX_CONNS];
        const char *path, *function, *error;
        unsigned n, hangups, served = 0, unanswered = 0, left;
        time_t deadline;

        if (argc != 6) {
                fprintf(stderr, "usage: burst-client SOCKET FUNCTION ERROR N HANGUPS\n");
                return 2;
        }
        path = argv[1];
        function = argv[2];
        error = argv[3];
        n = (unsigned) strtoul(argv[4], NULL, 10);
        hangups = (unsigned) strtoul(argv[5], NULL, 10);
        if (n == 0 || n > MAX_CONNS || hangups > MAX_CONNS - n) {
                fprintf(stderr, "burst-client: N must be 1 to %u, N + HANGUPS at most that\n", MAX_CONNS);
                return 2;
        }

        pid_t targets[MAX_CONNS];
        for (unsigned i = 0; i < n + hangups; i++) {
                targets[i] = spawn_idle_child();
                if (targets[i] < 0) {
                        fprintf(stderr, "burst-client: fork: %s\n", strerror(errno));
                        return 1;
                }
        }

        /* All calls out before any answer is read. */
        for (unsigned i = 0; i < n + hangups; i++) {
                bool hangup = i < hangups / 2 || i >= hangups / 2 + n;
                int fd = send_inject(path, function, error, targets[i]);

                if (fd < 0) {
                        fprintf(stderr, "burst-client: call %u: %s\n", i, strerror(-fd));
                        return 1;
                }
                if (hangup) {
                        close(fd);
                        continue;
                }
                conns[i - hangups / 2] = (Conn) { .fd = fd };
        }
        fprintf(stderr, "burst-client: %u calls sent, %u hung up\n", n + hangups, hangups);

        deadline = time(NULL) + WAIT_SEC;
        for (left = n; left > 0 && time(NULL) < deadline;) {
                unsigned k = 0;

                for (unsigned i = 0; i < n; i++)
                        if (!conns[i].done)
                                pfd[k++] = (struct pollfd) { .fd = conns[i].fd, .events = POLLIN };
                if (poll(pfd, k, 1000) < 0 && errno != EINTR) {
                        fprintf(stderr, "burst-client: poll: %s\n", strerror(errno));
                        return 1;
                }
                for (unsigned i = 0, j = 0; i < n; i++) {
                        Conn *c = &conns[i];
                        char *nul;
                        ssize_t got;

                        if (c->done)
                                continue;
                        if (!(pfd[j++].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        if (!c->buf && !(c->buf = malloc(REPLY_MAX))) {
                                fprintf(stderr, "burst-client: out of memory\n");
                                return 1;
                        }
                        got = recv(c->fd, c->buf + c->have, REPLY_MAX - 1 - c->have, MSG_DONTWAIT);
                        if (got < 0 && (errno == EAGAIN || errno == EINTR))
                                continue;
                        if (got <= 0 || c->have + (size_t) got >= REPLY_MAX - 1) {
                                /* Closed, reset, or an answer too long to be one. */
                                c->done = true;
                                unanswered++;
                                left--;
                                continue;
                        }
                        c->have += (size_t) got;
                        nul = memchr(c->buf, 0, c->have);
                        if (!nul)
                                continue;
                        c->done = true;
                        left--;
                        if (judge(c->buf))
                                served++;
                }
        }
        unanswered += left;

        printf("served %u\n", served);
        for (unsigned i = 0; i < n_refusals; i++)
                printf("refused %s %u %s\n", refusals[i].name, refusals[i].count, refusals[i].message);
        printf("unanswered %u\n", unanswered);
        printf("holding\n");
        fflush(stdout);
        for (;;)
                pause();
}
