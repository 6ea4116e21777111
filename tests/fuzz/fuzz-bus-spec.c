/* SPDX-License-Identifier: MIT */

/* D-Bus Inject's a{sv} (src/daemon/api/bus-spec.c) into request_from_json().
 * A D-Bus message cannot hold malformed data once sd-bus has accepted it,
 * so the input is not raw bytes but a recipe for the dictionary, which is
 * built with the sd-bus API as any client would:
 *
 *   repeat: KEY TYPE VALUE
 *     KEY    one byte: < 0xf0 picks a known key (modulo their number),
 *            else a length byte and that many bytes of key
 *     TYPE   one byte, modulo the types below (some the converter takes,
 *            some it must refuse)
 *     VALUE  fixed-size numbers; strings as a length byte and the bytes;
 *            "as" as a count byte (modulo 8) and that many strings
 *   An entry the input ends in is completed with zero bytes.
 *
 * What the converter accepts goes on to the one request validator, as in
 * the daemon, with its promises checked (fuzz-request.h). */

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bus-spec.h"
#include "fuzz-request.h"
#include "json-util.h"

static const char *const keys[] = {
        "function", "error", "retval", "duration_usec", "scope", "cgroup", "cgroup_fd", "pid", "pidfd",
        "comm", "callers", "after", "every", "times", "probability", "backend", "detach",
        "interactive",
};

static const char *const types[] = {
        "s", "b", "y", "n", "q", "i", "u", "x", "t", "d", "as", "h",
        /* refused */
        "o", "g", "ay", "(ii)", "a{sv}", "v",
};

static sd_bus *bus;
static int null_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        int fds[2];

        /* Messages are made on a bus object; it need not be connected to
         * anything that answers, only be started (and so able to carry
         * fds), on one end of a socketpair nobody reads. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) < 0 ||
            sd_bus_new(&bus) < 0 ||
            sd_bus_set_fd(bus, fds[0], fds[0]) < 0 ||
            sd_bus_start(bus) < 0)
                abort();
        null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null_fd < 0)
                abort();
        return 0;
}

typedef struct Reader {
        const uint8_t *p, *end;
} Reader;

/* n bytes of input; past its end, zeros, so that an entry cut short
 * still completes and the message stays well-formed. */
static void take(Reader *r, void *buf, size_t n) {
        size_t k = (size_t) (r->end - r->p) < n ? (size_t) (r->end - r->p) : n;

        memset(buf, 0, n);
        memcpy(buf, r->p, k);
        r->p += k;
}

/* A length byte and that many bytes. */
static void take_string(Reader *r, char buf[static 256]) {
        uint8_t n;

        take(r, &n, 1);
        take(r, buf, n);
        buf[n] = '\0';
}

/* Appends one value of type t: 0, or < 0 if sd-bus refuses it (invalid
 * UTF-8, say), which is not the converter's business. */
static int append_value(sd_bus_message *m, Reader *r, const char *t) {
        union {
                uint8_t y;
                int16_t n;
                uint16_t q;
                int32_t i;
                uint32_t u;
                int64_t x;
                uint64_t t;
                double d;
                int b;
                int32_t ii[2];
        } v = {};
        char s[256];
        int k;

        if (strchr("sog", t[0]) && !t[1]) {
                take_string(r, s);
                return sd_bus_message_append_basic(m, t[0], s);
        }
        if (strcmp(t, "as") == 0 || strcmp(t, "ay") == 0) {
                uint8_t n;

                take(r, &n, 1);
                k = sd_bus_message_open_container(m, 'a', t + 1);
                for (unsigned i = 0; k >= 0 && i < n % 8u; i++)
                        k = append_value(m, r, t + 1);
                return k < 0 ? k : sd_bus_message_close_container(m);
        }
        if (strcmp(t, "(ii)") == 0) {
                take(r, v.ii, sizeof(v.ii));
                return sd_bus_message_append(m, "(ii)", v.ii[0], v.ii[1]);
        }
        if (strcmp(t, "a{sv}") == 0)
                return sd_bus_message_append(m, "a{sv}", 1, "function", "s", "x");
        if (strcmp(t, "v") == 0)
                return sd_bus_message_append(m, "v", "s", "nested");
        if (t[0] == 'h')
                return sd_bus_message_append_basic(m, 'h', &null_fd);
        if (t[0] == 'b') {
                take(r, &v.y, 1);
                v.b = v.y & 1;
                return sd_bus_message_append_basic(m, 'b', &v.b);
        }

        static const uint8_t sizes[128] = { ['y'] = 1, ['n'] = 2, ['q'] = 2, ['i'] = 4, ['u'] = 4,
                                            ['x'] = 8, ['t'] = 8, ['d'] = 8 };
        take(r, &v, sizes[(unsigned char) t[0]]);
        return sd_bus_message_append_basic(m, t[0], &v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_json_ json_object *spec = NULL;
        Reader r = { data, data + size };
        int fds[REQUEST_FDS_MAX], k;
        size_t n_fds = 0;
        uint8_t b;

        if (sd_bus_message_new_method_call(bus, &m, "org.injectd.Injector1", "/org/injectd/Injector1",
                                           "org.injectd.Injector1.Manager", "Inject") < 0 ||
            sd_bus_message_open_container(m, 'a', "{sv}") < 0)
                abort();

        while (r.p < r.end) {
                char key[256];
                const char *t;

                take(&r, &b, 1);
                if (b < 0xf0)
                        snprintf(key, sizeof(key), "%s", keys[b % (sizeof(keys) / sizeof(keys[0]))]);
                else
                        take_string(&r, key);
                take(&r, &b, 1);
                t = types[b % (sizeof(types) / sizeof(types[0]))];

                if (sd_bus_message_open_container(m, 'e', "sv") < 0)
                        abort();
                /* What sd-bus refuses (a key or string that is not UTF-8)
                 * it would never deliver either. */
                if (sd_bus_message_append_basic(m, 's', key) < 0 ||
                    sd_bus_message_open_container(m, 'v', t) < 0 ||
                    append_value(m, &r, t) < 0)
                        return 0;
                if (sd_bus_message_close_container(m) < 0 || sd_bus_message_close_container(m) < 0)
                        abort();
        }

        if (sd_bus_message_close_container(m) < 0 ||
            sd_bus_message_seal(m, 1, 0) < 0 ||
            sd_bus_message_rewind(m, true) < 0)
                abort();

        k = bus_read_inject_spec(m, &spec, fds, &n_fds, &error);
        if (k < 0)
                return 0;
        FUZZ_ASSERT(spec && json_object_is_type(spec, json_type_object));
        FUZZ_ASSERT(!sd_bus_error_is_set(&error));
        FUZZ_ASSERT(n_fds <= 2);

        /* An fd key is an index among the fds read, and only an h is. */
        for (const char *const *key = (const char *const[]) { "cgroup_fd", "pidfd", NULL }; *key; key++) {
                json_object *v;

                if (json_object_object_get_ex(spec, *key, &v))
                        FUZZ_ASSERT(json_object_is_type(v, json_type_int) &&
                                    json_object_get_int64(v) >= 0 && (size_t) json_object_get_int64(v) < n_fds);
        }
        (void) fuzz_check_request(spec);
        return 0;
}
