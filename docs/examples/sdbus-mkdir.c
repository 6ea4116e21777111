/* SPDX-License-Identifier: MIT */
/* A test in C, over D-Bus with sd-bus: mkdir(2) fails with EACCES for this
 * process while an injection is armed, and works again once it is
 * cancelled. Exit 0: pass, 1: fail, 77: skip (the kernel or the policy
 * cannot; the daemon's message says why).
 *
 *   cc sdbus-mkdir.c $(pkg-config --cflags --libs libsystemd) -o sdbus-mkdir
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strdupa(), %m */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#define BUS_NAME "org.injectd.Injector1"
#define ERROR_PREFIX "org.injectd.Injector1.Error."

/* Errors that mean "not here", not "broken". */
static int is_skip(const sd_bus_error *e) {
        static const char *const names[] = {
                "NotInjectable", "BackendUnavailable", "InjectionUnavailable", "UserNotInPolicy",
                "FunctionNotAllowed", "ErrorNotAllowed", "ScopeNotAllowed", "NotAuthorized",
        };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strncmp(e->name, ERROR_PREFIX, strlen(ERROR_PREFIX)) == 0 &&
                    strcmp(e->name + strlen(ERROR_PREFIX), names[i]) == 0)
                        return 1;
        return 0;
}

int main(void) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *bus = NULL;
        const char *id, *path;
        char dir[] = "/tmp/sdbus-mkdir.XXXXXX", sub[64];
        uint64_t expires, injected = 0;
        int pidfd, r, ret = 1;

        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(sub, sizeof(sub), "%s/new", dir);
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                printf("SKIP: no system bus: %s\n", strerror(-r));
                ret = 77;
                goto out;
        }
        /* This process, by pidfd: scope "process" is it and its children. */
        pidfd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        if (pidfd < 0) {
                perror("pidfd_open");
                goto out;
        }
        r = sd_bus_call_method(bus, BUS_NAME, "/org/injectd/Injector1", "org.injectd.Injector1.Manager",
                               "Inject", &error, &reply, "a{sv}", 5,
                               "function", "s", "__x64_sys_mkdir",
                               "error", "s", "EACCES",
                               "scope", "s", "process",
                               "pidfd", "h", pidfd,
                               "duration_usec", "t", (uint64_t) 60 * 1000000);
        close(pidfd);
        if (r < 0) {
                printf("%s: %s: %s\n", is_skip(&error) ? "SKIP" : "FAIL", error.name, error.message);
                ret = is_skip(&error) ? 77 : 1;
                goto out;
        }
        r = sd_bus_message_read(reply, "sot", &id, &path, &expires);
        if (r < 0) {
                printf("FAIL: cannot read Inject's reply: %s\n", strerror(-r));
                goto out;
        }
        path = strdupa(path);
        printf("injection %s armed\n", id);

        /* The code under test. The injection ends when this connection
         * closes, so the test cannot leave it behind. */
        if (mkdir(sub, 0755) == 0 || errno != EACCES) {
                printf("FAIL: mkdir under the fault: %s\n", strerror(errno));
                goto out;
        }
        r = sd_bus_get_property_trivial(bus, BUS_NAME, path, "org.injectd.Injector1.Injection",
                                        "FaultsInjected", &error, 't', &injected);
        if (r < 0 || injected != 1) {
                printf("FAIL: FaultsInjected: %" PRIu64 " (%s)\n", injected, r < 0 ? error.message : "read");
                goto out;
        }
        r = sd_bus_call_method(bus, BUS_NAME, path, "org.injectd.Injector1.Injection", "Cancel", &error,
                               NULL, "");
        if (r < 0) {
                printf("FAIL: Cancel: %s\n", error.message);
                goto out;
        }
        if (mkdir(sub, 0755) < 0) {
                printf("FAIL: mkdir after Cancel: %m\n");
                goto out;
        }
        printf("PASS: mkdir failed with EACCES once, and works after Cancel\n");
        ret = 0;
out:
        (void) rmdir(sub);
        (void) rmdir(dir);
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        return ret;
}
