/* SPDX-License-Identifier: MIT */
/* flood-client: one user's flood of connections or subscriptions, for
 * tests/vm/test-attack-flood.sh.
 *
 *   flood-client varlink SOCKET MAX
 *       In rounds R = 1, 2, ...: opens Varlink connections to SOCKET,
 *       each answering one GetInfo call, until one is refused or MAX are
 *       open, and prints
 *         round R opened N
 *         round R refused ERROR MESSAGE      (or "refused none")
 *       then holds the connections until the server has closed them all
 *       (the idle timeout), prints "round R closed", and starts over.
 *   flood-client subscribe MAX
 *       Opens system bus connections, each calling Manager.Subscribe(),
 *       until one is refused or MAX are subscribed. Prints
 *         subscribed N
 *         refused ERROR MESSAGE      (or "refused none")
 *       then holds them until killed.
 *
 * Exit status 0 when it has held until the end, 1 on an unexpected
 * failure (a call that neither succeeded nor was refused with an error),
 * 2 on usage errors. */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "json-util.h"
#include "varlink.h"

#define MAX_CLIENTS 4096
/* Each answer within this long, on a loaded TCG machine. */
#define WAIT_USEC (UINT64_C(120) * UINT64_C(1000000))

/* One round: opens connections until refused or max, prints what
 * happened, and holds them until the server has closed them all. */
static int flood_varlink_round(const char *path, unsigned max, unsigned round) {
        static VarlinkClient *clients[MAX_CLIENTS];
        static struct pollfd fds[MAX_CLIENTS];
        unsigned n = 0, open;
        const char *error = NULL, *message = "";
        json_object *params = NULL;
        int r;

        for (; n < max; n++) {
                r = varlink_client_connect(path, &clients[n]);
                if (r < 0) {
                        fprintf(stderr, "connect %u: %s\n", n, strerror(-r));
                        return 1;
                }
                varlink_client_set_timeout(clients[n], WAIT_USEC);
                r = varlink_client_call(clients[n], "org.varlink.service.GetInfo", NULL, &params, &error);
                if (r < 0) {
                        fprintf(stderr, "GetInfo on connection %u: %s (no answer, not a refusal)\n", n, strerror(-r));
                        return 1;
                }
                if (error) {
                        (void) json_get_string(params, "message", &message);
                        printf("round %u opened %u\nround %u refused %s %s\n", round, n, round, error, message);
                        json_object_put(params);
                        clients[n] = varlink_client_free(clients[n]);
                        break;
                }
                json_object_put(params);
                params = NULL;
        }
        if (n == max)
                printf("round %u opened %u\nround %u refused none\n", round, n, round);
        fflush(stdout);

        for (unsigned i = 0; i < n; i++)
                fds[i] = (struct pollfd) { .fd = varlink_client_get_fd(clients[i]), .events = POLLIN };
        for (open = n; open > 0;) {
                if (poll(fds, n, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return 1;
                }
                for (unsigned i = 0; i < n; i++) {
                        char c;

                        if (fds[i].fd < 0 || !fds[i].revents)
                                continue;
                        if (recv(fds[i].fd, &c, 1, MSG_DONTWAIT) > 0) {
                                fprintf(stderr, "unexpected data on connection %u\n", i);
                                return 1;
                        }
                        fds[i].fd = -1;
                        clients[i] = varlink_client_free(clients[i]);
                        open--;
                }
        }
        printf("round %u closed\n", round);
        fflush(stdout);
        return 0;
}

/* As an attacker would: again and again, until killed. */
static int flood_varlink(const char *path, unsigned max) {
        for (unsigned round = 1;; round++) {
                int r = flood_varlink_round(path, max, round);
                if (r != 0)
                        return r;
        }
}

static int flood_subscribe(unsigned max) {
        static sd_bus *buses[MAX_CLIENTS];
        unsigned n = 0;
        int r;

        for (; n < max; n++) {
                sd_bus_error error = SD_BUS_ERROR_NULL;

                r = sd_bus_open_system(&buses[n]);
                if (r < 0) {
                        fprintf(stderr, "bus connection %u: %s\n", n, strerror(-r));
                        return 1;
                }
                (void) sd_bus_set_method_call_timeout(buses[n], WAIT_USEC);
                r = sd_bus_call_method(buses[n], "org.injectd.Injector1", "/org/injectd/Injector1",
                                       "org.injectd.Injector1.Manager", "Subscribe", &error, NULL, NULL);
                if (r < 0) {
                        if (!error.name) {
                                fprintf(stderr, "Subscribe %u: %s\n", n, strerror(-r));
                                return 1;
                        }
                        printf("subscribed %u\nrefused %s %s\n", n, error.name, error.message ?: "");
                        fflush(stdout);
                        sd_bus_error_free(&error);
                        break;
                }
        }
        if (n == max) {
                printf("subscribed %u\nrefused none\n", n);
                fflush(stdout);
        }

        /* Held until killed; the signals they receive are left unread. */
        for (;;)
                pause();
}

int main(int argc, char **argv) {
        long max;

        if (argc == 4 && strcmp(argv[1], "varlink") == 0) {
                max = strtol(argv[3], NULL, 10);
                if (max < 1 || max > MAX_CLIENTS)
                        return 2;
                return flood_varlink(argv[2], max);
        }
        if (argc == 3 && strcmp(argv[1], "subscribe") == 0) {
                max = strtol(argv[2], NULL, 10);
                if (max < 1 || max > MAX_CLIENTS)
                        return 2;
                return flood_subscribe(max);
        }
        fprintf(stderr, "usage: flood-client varlink SOCKET MAX | subscribe MAX\n");
        return 2;
}
