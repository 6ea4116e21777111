/* SPDX-License-Identifier: MIT */
/* polkit-check: runs one authorization check through the daemon's polkit
 * client (src/daemon/polkit.c) and prints its result as JSON, so the VM
 * scenario test-polkit.sh can compare it with polkit itself (pkcheck).
 *
 *   polkit-check --action ID (--pid PID [--uid UID] [--start-time T] | --bus-name | --gone-bus-name)
 *                [--mode auto|required|off] [--interactive] [--detail KEY=VALUE]...
 *                [--cancel-after MSEC] [--no-bus]
 *
 * Exit status, as pkcheck's: 0 authorized, 1 not authorized, 2 not authorized
 * but authentication could help (challenge), 3 dismissed, 127 polkit could
 * not answer, 126 usage; and 4 when --cancel-after cancelled the check. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "cleanup.h"
#include "errno-name.h"
#include "json-util.h"
#include "parse-util.h"
#include "polkit.h"
#include "scope.h"

#define EXIT_NOT_AUTHORIZED 1
#define EXIT_CHALLENGE 2
#define EXIT_DISMISSED 3
#define EXIT_CANCELLED 4
#define EXIT_USAGE 126
#define EXIT_ERROR 127

typedef struct State {
        sd_event *event;
        PolkitCheck *check;
        int exit_status;
} State;

static _noreturn_ void usage_error(const char *msg, const char *arg) {
        fprintf(stderr, "polkit-check: %s%s%s%s\n", msg, arg ? " '" : "", arg ?: "", arg ? "'" : "");
        fputs("Try 'polkit-check --help'.\n", stderr);
        exit(EXIT_USAGE);
}

static void help(void) {
        printf("Usage: polkit-check --action ID (--pid PID [--uid UID] [--start-time T] | --bus-name | --gone-bus-name)\n"
               "                    [--mode auto|required|off] [--interactive] [--detail KEY=VALUE]...\n"
               "                    [--cancel-after MSEC] [--no-bus]\n"
               "Runs one check through injectd's polkit client and prints the result as JSON.\n\n"
               "  --pid PID           subject unix-process PID (uid from /proc/PID unless --uid,\n"
               "                      start time from /proc/PID/stat unless --start-time)\n"
               "  --bus-name          subject system-bus-name: this program's own connection\n"
               "  --gone-bus-name     subject system-bus-name of a connection that has gone:\n"
               "                      a D-Bus caller that sent its request and exited\n"
               "  --interactive       AllowUserInteraction\n"
               "  --cancel-after MSEC free the check if no answer came by then\n"
               "  --no-bus            give the client no bus connection\n\n"
               "Exit status: 0 authorized, 1 not authorized, 2 challenge, 3 dismissed,\n"
               "4 cancelled, 126 usage, 127 polkit could not answer.\n");
}

/* The unique name of a second connection of ours, closed: the bus name of a
 * D-Bus caller that sent its request and exited before it was checked.
 * Returns once the bus itself says the name has no owner, so polkitd cannot
 * still find it (no race with the bus noticing the hang-up). */
static int gone_unique_name(sd_bus *bus, char *buf, size_t size) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *other = NULL;
        const char *name;
        int r;

        r = sd_bus_open_system(&other);
        if (r < 0)
                return r;
        r = sd_bus_get_unique_name(other, &name);
        if (r < 0)
                return r;
        snprintf(buf, size, "%s", name);
        other = sd_bus_flush_close_unref(other);

        for (;;) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

                r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetNameOwner", &error, &reply, "s", buf);
                if (r < 0)
                        return sd_bus_error_has_name(&error, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ? 0 : r;
                (void) usleep(10 * 1000);
        }
}

static void print_json(json_object *o) {
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        fflush(stdout);
}

static void on_result(const PolkitResult *result, void *userdata) {
        State *state = userdata;
        _cleanup_json_ json_object *o = json_object_new_object();

        /* The handle is ours: freeing it inside the callback must be safe. */
        state->check = polkit_check_free(state->check);

        json_object_object_add(o, "allowed", json_object_new_boolean(result->allowed));
        json_object_object_add(o, "challenge", json_object_new_boolean(result->challenge));
        json_object_object_add(o, "dismissed", json_object_new_boolean(result->dismissed));
        json_object_object_add(o, "how", json_object_new_string(result->how));
        json_object_object_add(o, "error",
                               result->error < 0 ? json_object_new_string(errno_to_name(result->error) ?: "?") : NULL);
        json_object_object_add(o, "errorName",
                               result->error_name ? json_object_new_string(result->error_name) : NULL);
        json_object_object_add(o, "errorMessage",
                               result->error_message ? json_object_new_string(result->error_message) : NULL);
        print_json(o);

        if (result->error < 0) {
                fprintf(stderr, "polkit-check: %s\n", result->error_message ?: strerror(-result->error));
                state->exit_status = EXIT_ERROR;
        } else if (result->allowed)
                state->exit_status = EXIT_SUCCESS;
        else if (result->dismissed)
                state->exit_status = EXIT_DISMISSED;
        else if (result->challenge)
                state->exit_status = EXIT_CHALLENGE;
        else
                state->exit_status = EXIT_NOT_AUTHORIZED;

        (void) sd_event_exit(state->event, 0);
}

static int on_cancel_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        State *state = userdata;
        _cleanup_json_ json_object *o = json_object_new_object();

        /* The client "went away": cancel. No callback may follow. */
        state->check = polkit_check_free(state->check);
        json_object_object_add(o, "cancelled", json_object_new_boolean(true));
        print_json(o);
        state->exit_status = EXIT_CANCELLED;

        /* Keep the loop running a little: a late callback would show up. */
        return sd_event_add_time_relative(state->event, NULL, CLOCK_MONOTONIC, 500 * 1000, 0, NULL, NULL);
}

int main(int argc, char *argv[]) {
        enum { ARG_ACTION = 0x100, ARG_PID, ARG_UID, ARG_START_TIME, ARG_BUS_NAME, ARG_GONE_BUS_NAME, ARG_MODE, ARG_INTERACTIVE,
               ARG_DETAIL, ARG_CANCEL_AFTER, ARG_NO_BUS };
        static const struct option options[] = {
                { "help",         no_argument,       NULL, 'h'              },
                { "action",       required_argument, NULL, ARG_ACTION       },
                { "pid",          required_argument, NULL, ARG_PID          },
                { "uid",          required_argument, NULL, ARG_UID          },
                { "start-time",   required_argument, NULL, ARG_START_TIME   },
                { "bus-name",     no_argument,       NULL, ARG_BUS_NAME     },
                { "gone-bus-name", no_argument,      NULL, ARG_GONE_BUS_NAME },
                { "mode",         required_argument, NULL, ARG_MODE         },
                { "interactive",  no_argument,       NULL, ARG_INTERACTIVE  },
                { "detail",       required_argument, NULL, ARG_DETAIL       },
                { "cancel-after", required_argument, NULL, ARG_CANCEL_AFTER },
                { "no-bus",       no_argument,       NULL, ARG_NO_BUS       },
                {}
        };
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(polkit_context_freep) PolkitContext *ctx = NULL;
        const char *action = NULL, *details[2 * 16 + 1] = {};
        uint64_t pid = 0, uid = UINT64_MAX, start_time = 0, cancel_after_ms = 0;
        bool have_start_time = false, bus_name = false, gone_bus_name = false, interactive = false, no_bus = false;
        PolkitMode mode = POLKIT_MODE_REQUIRED;
        PolkitSubject subject = {};
        char gone_name[128];
        size_t n_details = 0;
        State state = { .exit_status = EXIT_ERROR };
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                case ARG_ACTION:
                        action = optarg;
                        break;
                case ARG_PID:
                        if (parse_u64(optarg, &pid) < 0 || pid == 0 || pid > INT32_MAX)
                                usage_error("bad pid", optarg);
                        break;
                case ARG_UID:
                        if (parse_u64(optarg, &uid) < 0 || uid >= UINT32_MAX)
                                usage_error("bad uid", optarg);
                        break;
                case ARG_START_TIME:
                        if (parse_u64(optarg, &start_time) < 0)
                                usage_error("bad start time", optarg);
                        have_start_time = true;
                        break;
                case ARG_BUS_NAME:
                        bus_name = true;
                        break;
                case ARG_GONE_BUS_NAME:
                        bus_name = gone_bus_name = true;
                        break;
                case ARG_MODE:
                        r = polkit_mode_from_string(optarg);
                        if (r < 0)
                                usage_error("bad mode (auto, required, off)", optarg);
                        mode = r;
                        break;
                case ARG_INTERACTIVE:
                        interactive = true;
                        break;
                case ARG_DETAIL: {
                        char *eq;

                        if (2 * n_details + 2 >= ELEMENTSOF(details))
                                usage_error("too many details", NULL);
                        eq = strchr(optarg, '=');
                        if (!eq || eq == optarg)
                                usage_error("--detail wants KEY=VALUE, got", optarg);
                        *eq = 0;        /* argv is ours to cut */
                        details[2 * n_details] = optarg;
                        details[2 * n_details + 1] = eq + 1;
                        n_details++;
                        break;
                }
                case ARG_CANCEL_AFTER:
                        if (parse_u64(optarg, &cancel_after_ms) < 0 || cancel_after_ms == 0)
                                usage_error("bad --cancel-after", optarg);
                        break;
                case ARG_NO_BUS:
                        no_bus = true;
                        break;
                default:
                        exit(EXIT_USAGE);
                }
        if (optind < argc)
                usage_error("unexpected argument", argv[optind]);
        if (!action)
                usage_error("--action is required", NULL);
        if (!!pid == bus_name)
                usage_error("give exactly one of --pid, --bus-name and --gone-bus-name", NULL);

        r = sd_event_default(&event);
        if (r < 0) {
                fprintf(stderr, "polkit-check: Failed to allocate event loop: %s\n", strerror(-r));
                return EXIT_ERROR;
        }
        state.event = event;

        if (!no_bus) {
                r = sd_bus_open_system(&bus);
                if (r < 0) {
                        fprintf(stderr, "polkit-check: Failed to connect to the system bus: %s\n", strerror(-r));
                        return EXIT_ERROR;
                }
                r = sd_bus_attach_event(bus, event, 0);
                if (r < 0) {
                        fprintf(stderr, "polkit-check: Failed to attach the bus: %s\n", strerror(-r));
                        return EXIT_ERROR;
                }
        }

        if (bus_name) {
                if (!bus)
                        usage_error("--bus-name needs a bus connection", NULL);
                subject.kind = POLKIT_SUBJECT_BUS_NAME;
                if (gone_bus_name) {
                        r = gone_unique_name(bus, gone_name, sizeof(gone_name));
                        if (r < 0) {
                                fprintf(stderr, "polkit-check: Failed to leave a gone bus name: %s\n", strerror(-r));
                                return EXIT_ERROR;
                        }
                        subject.bus_name = gone_name;
                } else {
                        r = sd_bus_get_unique_name(bus, &subject.bus_name);
                        if (r < 0) {
                                fprintf(stderr, "polkit-check: Failed to get our unique name: %s\n", strerror(-r));
                                return EXIT_ERROR;
                        }
                }
        } else {
                subject.kind = POLKIT_SUBJECT_PROCESS;
                subject.pid = (pid_t) pid;
                if (uid == UINT64_MAX) {
                        char p[64];
                        struct stat st;

                        snprintf(p, sizeof(p), "/proc/%" PRIu64, pid);
                        if (stat(p, &st) < 0) {
                                fprintf(stderr, "polkit-check: Failed to stat '%s': %m\n", p);
                                return EXIT_ERROR;
                        }
                        uid = st.st_uid;
                }
                subject.uid = (uid_t) uid;
                if (!have_start_time) {
                        pid_t tgid;

                        r = scope_process((pid_t) pid, &tgid, &start_time);
                        if (r < 0) {
                                fprintf(stderr, "polkit-check: Failed to read the start time of %" PRIu64 ": %s\n",
                                        pid, strerror(-r));
                                return EXIT_ERROR;
                        }
                }
                subject.start_time = start_time;
        }

        r = polkit_context_new(event, bus, mode, &ctx);
        if (r < 0) {
                fprintf(stderr, "polkit-check: Failed to set up the polkit client: %s\n", strerror(-r));
                return EXIT_ERROR;
        }

        r = polkit_check_async(ctx, &subject, action, n_details > 0 ? details : NULL, interactive,
                               on_result, &state, &state.check);
        if (r < 0) {
                fprintf(stderr, "polkit-check: Failed to start the check: %s\n", strerror(-r));
                return EXIT_ERROR;
        }

        if (cancel_after_ms > 0) {
                r = sd_event_add_time_relative(event, NULL, CLOCK_MONOTONIC, cancel_after_ms * 1000, 0,
                                               on_cancel_timer, &state);
                if (r < 0) {
                        fprintf(stderr, "polkit-check: Failed to add a timer: %s\n", strerror(-r));
                        return EXIT_ERROR;
                }
        }

        r = sd_event_loop(event);
        if (r < 0) {
                fprintf(stderr, "polkit-check: Event loop failed: %s\n", strerror(-r));
                return EXIT_ERROR;
        }
        state.check = polkit_check_free(state.check);
        return state.exit_status;
}
