/* SPDX-License-Identifier: MIT */
/* bus-inject-fd: Inject over D-Bus with a cgroup passed as a file
 * descriptor, which busctl and gdbus cannot send. For the VM tests.
 *
 *   bus-inject-fd CGROUP-DIR FUNCTION ERROR COMM
 *
 * The injection is detached. Prints the id, or the D-Bus error name and
 * message; exits 0 or 1. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

int main(int argc, char **argv) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *bus = NULL;
        const char *id;
        int fd, r;

        if (argc != 5) {
                fprintf(stderr, "usage: bus-inject-fd CGROUP-DIR FUNCTION ERROR COMM\n");
                return 2;
        }
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
        r = sd_bus_call_method(bus, "org.injectd.Injector1", "/org/injectd/Injector1",
                               "org.injectd.Injector1.Manager", "Inject", &error, &reply, "a{sv}", 5,
                               "function", "s", argv[2], "error", "s", argv[3], "comm", "s", argv[4],
                               "detach", "b", 1, "cgroup_fd", "h", fd);
        if (r < 0) {
                printf("%s: %s\n", error.name ?: "?", error.message ?: strerror(-r));
                return 1;
        }
        r = sd_bus_message_read(reply, "s", &id);
        if (r < 0)
                return 1;
        printf("%s\n", id);
        sd_bus_message_unref(reply);
        sd_bus_unref(bus);
        close(fd);
        return 0;
}
