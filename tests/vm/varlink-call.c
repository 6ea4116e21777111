/* SPDX-License-Identifier: MIT */
/* varlink-call: one Varlink call through our client module (src/shared/
 * varlink.c), for the VM tests; the raw-socket side is tested with socat.
 *
 *   varlink-call [--more [--count N]] [--no-timeout] SOCKET METHOD [PARAMETERS-JSON]
 *   varlink-call --validate-idl FILE
 *
 * Prints each reply as one JSON line {"parameters": ..., "error": ...}.
 * Exit status: 0 reply, 1 error reply, 2 usage, 3 connection failure. With
 * --more it stops after N replies, or at the final one. --no-timeout
 * waits for a reply as long as it takes (the client's default is 30 s):
 * for a call held open on purpose, such as an Observe session.
 *
 * --validate-idl checks that FILE ("-": standard input) is a well-formed
 * interface description (varlink_idl_validate(), the server's own check):
 * exit 0 if it is, else 1 with "FILE:line:column: what is wrong". */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-reader.h"
#include "json-util.h"
#include "varlink-idl.h"
#include "varlink.h"

static long count_left = -1;
static int saw_error;

static void print_reply(json_object *params, const char *error) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "parameters", params ? json_object_get(params) : json_object_new_object());
        if (error) {
                json_object_object_add(o, "error", json_object_new_string(error));
                saw_error = 1;
        }
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        fflush(stdout);
        json_object_put(o);
}

static int on_reply(VarlinkClient *c, json_object *params, const char *error, bool continues, void *userdata) {
        print_reply(params, error);
        if (count_left > 0 && --count_left == 0)
                return 1;
        return 0;
}

static int validate_idl(const char *path) {
        _cleanup_free_ char *text = NULL, *message = NULL;
        size_t n = 0, cap = 0;
        FILE *f;
        int r;

        f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
        if (!f) {
                fprintf(stderr, "varlink-call: cannot open '%s': %s\n", path, strerror(errno));
                return 2;
        }
        for (;;) {
                if (n + 4096 + 1 > cap) {
                        char *t = realloc(text, cap = n + 4096 + 1);

                        if (!t) {
                                fprintf(stderr, "varlink-call: out of memory\n");
                                return 2;
                        }
                        text = t;
                }
                size_t k = fread(text + n, 1, cap - n - 1, f);
                if (k == 0)
                        break;
                n += k;
        }
        r = ferror(f);
        if (f != stdin)
                fclose(f);
        if (r) {
                fprintf(stderr, "varlink-call: cannot read '%s'\n", path);
                return 2;
        }
        text[n] = 0;
        if (strlen(text) != n) {
                fprintf(stderr, "%s: the description contains a NUL byte\n", path);
                return 1;
        }
        r = varlink_idl_validate(text, &message);
        if (r == -EBADMSG) {
                fprintf(stderr, "%s:%s\n", path, message ?: "invalid");
                return 1;
        }
        if (r < 0) {
                fprintf(stderr, "varlink-call: cannot validate '%s': %s\n", path, strerror(-r));
                return 2;
        }
        return 0;
}

int main(int argc, char **argv) {
        _cleanup_(varlink_client_freep) VarlinkClient *c = NULL;
        json_object *params = NULL, *reply = NULL;
        const char *error = NULL;
        bool more = false, no_timeout = false;
        int i = 1, r;

        if (argc == 3 && strcmp(argv[1], "--validate-idl") == 0)
                return validate_idl(argv[2]);
        for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
                if (strcmp(argv[i], "--more") == 0)
                        more = true;
                else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
                        count_left = atol(argv[++i]);
                else if (strcmp(argv[i], "--no-timeout") == 0)
                        no_timeout = true;
                else {
                        fprintf(stderr, "varlink-call: unknown option '%s'\n", argv[i]);
                        return 2;
                }
        }
        if (argc - i < 2 || argc - i > 3) {
                fprintf(stderr, "usage: varlink-call [--more [--count N]] [--no-timeout] SOCKET METHOD [PARAMETERS-JSON]\n"
                                "       varlink-call --validate-idl FILE\n");
                return 2;
        }
        if (argc - i == 3 && json_parse_strict(argv[i + 2], strlen(argv[i + 2]), JSON_PARSE_OBJECT, &params) < 0) {
                fprintf(stderr, "varlink-call: the parameters are not a JSON object\n");
                return 2;
        }
        r = varlink_client_connect(argv[i], &c);
        if (r < 0) {
                fprintf(stderr, "varlink-call: cannot connect to '%s': %s\n", argv[i], strerror(-r));
                return 3;
        }
        if (no_timeout)
                varlink_client_set_timeout(c, VARLINK_TIMEOUT_INFINITY);
        if (more)
                r = varlink_client_call_more(c, argv[i + 1], params, on_reply, NULL);
        else {
                r = varlink_client_call(c, argv[i + 1], params, &reply, &error);
                if (r >= 0)
                        print_reply(reply, error);
                json_object_put(reply);
        }
        json_object_put(params);
        if (r < 0) {
                fprintf(stderr, "varlink-call: %s failed: %s\n", argv[i + 1], strerror(-r));
                return 3;
        }
        return saw_error ? 1 : 0;
}
