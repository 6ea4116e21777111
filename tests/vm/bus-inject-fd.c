/* SPDX-License-Identifier: MIT */
/* bus-inject-fd: Inject over D-Bus with a cgroup passed as a file
 * descriptor, which busctl and gdbus cannot send. For the VM tests.
 *
 *   bus-inject-fd CGROUP-DIR FUNCTION ERROR COMM
 *   bus-inject-fd --pidfd FD FUNCTION ERROR COMM
 *
 *   bus-inject-fd --backing FD DEVICE FUNCTION ERROR
 *
 * The second form sends the inherited fd FD as "pidfd" (scope "process"),
 * whatever it is (tests/vm/pidfd-call.py hold puts one on fd 3). The
 * third sends FD as "backing_fd" with scope "device" on DEVICE, whatever
 * FD is and however it was opened (an attacker's choice, not injectctl's).
 * The injection is detached. Prints the id, or the D-Bus error name and
 * message; exits 0 or 1. */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "cleanup.h"

int main(int argc, char **argv) {
        /* Freed on every way out: the VM tests run this under LeakSanitizer
         * too, and a refusal is one of its normal outcomes. */
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *id;
        int r;

        bool pidfd = argc == 6 && strcmp(argv[1], "--pidfd") == 0;
        bool backing = argc == 6 && strcmp(argv[1], "--backing") == 0;

        if (argc != 5 && !pidfd && !backing) {
                fprintf(stderr, "usage: bus-inject-fd CGROUP-DIR|--pidfd FD FUNCTION ERROR COMM\n"
                                "       bus-inject-fd --backing FD DEVICE FUNCTION ERROR\n");
                return 2;
        }
        if (pidfd || backing) {
                fd = fcntl(atoi(argv[2]), F_DUPFD_CLOEXEC, 3);
                argv++;
        } else
                fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "bus-inject-fd: %s: %m\n", argv[1]);
                return 2;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "bus-inject-fd: cannot connect to the system bus: %s\n", strerror(-r));
                return 2;
        }
        if (backing)
                r = sd_bus_call_method(bus, "org.injectd.Injector1", "/org/injectd/Injector1",
                                       "org.injectd.Injector1.Manager", "Inject", &error, &reply, "a{sv}", 6,
                                       "function", "s", argv[3], "error", "s", argv[4], "detach", "b", 1,
                                       "duration_usec", "t", (uint64_t) 60000000, "device", "s", argv[2],
                                       "backing_fd", "h", fd);
        else if (pidfd)
                r = sd_bus_call_method(bus, "org.injectd.Injector1", "/org/injectd/Injector1",
                                       "org.injectd.Injector1.Manager", "Inject", &error, &reply, "a{sv}", 6,
                                       "function", "s", argv[2], "error", "s", argv[3], "comm", "s", argv[4],
                                       "detach", "b", 1, "scope", "s", "process", "pidfd", "h", fd);
        else
                r = sd_bus_call_method(bus, "org.injectd.Injector1", "/org/injectd/Injector1",
                                       "org.injectd.Injector1.Manager", "Inject", &error, &reply, "a{sv}", 5,
                                       "function", "s", argv[2], "error", "s", argv[3], "comm", "s", argv[4],
                                       "detach", "b", 1, "cgroup_fd", "h", fd);
        if (r < 0) {
                printf("%s: %s\n", error.name ?: "?", error.message ?: strerror(-r));
                return 1;
        }
        r = sd_bus_message_read(reply, "s", &id);
        if (r < 0) {
                fprintf(stderr, "bus-inject-fd: cannot read the reply: %s\n", strerror(-r));
                return 1;
        }
        printf("%s\n", id);
        return 0;
}
