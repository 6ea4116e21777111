/* SPDX-License-Identifier: MIT */

/* The Varlink message parsers (src/shared/varlink.c), without I/O. The
 * input is cut at NUL bytes as on the wire, and every piece goes through
 * both the server's call parser and the client's reply parser. What either
 * accepts must be what docs/varlink-protocol.md allows, and its parameters
 * must survive the trip back: a server that echoes them (or a client that
 * sends them on) must produce a message the other side parses. */

#include <errno.h>

#include "fuzz.h"
#include "json-reader.h"
#include "json-util.h"
#include "utf8.h"
#include "varlink.h"

/* Serializes parameters the way varlink.c does for the wire, and parses the
 * result strictly, as the peer would. */
static void check_round_trip(json_object *parameters) {
        _cleanup_json_ json_object *back = NULL;
        const char *s;
        size_t len;
        int r;

        s = json_object_to_json_string_length(parameters, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        FUZZ_ASSERT(s);
        /* Parsed input was valid UTF-8, so its serialization is. */
        FUZZ_ASSERT(utf8_is_valid(s, len));
        /* A NUL inside a string must go out escaped, never as a message end. */
        FUZZ_ASSERT(!memchr(s, 0, len));

        r = json_parse_strict(s, len, JSON_PARSE_OBJECT, &back);
        if (r < 0)
                fprintf(stderr, "cannot parse back our own serialization: %s\n", s);
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(json_object_equal(parameters, back));
}

static void check_message(const char *text, size_t len) {
        _cleanup_(varlink_call_done) VarlinkCall call = {};
        _cleanup_(varlink_reply_done) VarlinkReply reply = {};
        int r;

        r = varlink_call_parse(text, len, &call);
        FUZZ_ASSERT(r == 0 || r == -EBADMSG || r == -ENOMEM);
        if (r == 0) {
                FUZZ_ASSERT(call.message && call.method && call.parameters);
                FUZZ_ASSERT(varlink_qualified_name_is_valid(call.method));
                FUZZ_ASSERT(json_object_is_type(call.parameters, json_type_object));
                FUZZ_ASSERT((call.flags & (VARLINK_METHOD_MORE | VARLINK_METHOD_ONEWAY)) !=
                            (VARLINK_METHOD_MORE | VARLINK_METHOD_ONEWAY));
                check_round_trip(call.parameters);
        }

        r = varlink_reply_parse(text, len, &reply);
        FUZZ_ASSERT(r == 0 || r == -EBADMSG || r == -ENOMEM);
        if (r == 0) {
                FUZZ_ASSERT(reply.message && reply.parameters);
                FUZZ_ASSERT(json_object_is_type(reply.parameters, json_type_object));
                FUZZ_ASSERT(!reply.error || varlink_qualified_name_is_valid(reply.error));
                FUZZ_ASSERT(!(reply.error && reply.continues));
                check_round_trip(reply.parameters);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *p = (const char *) data, *end = p + size;

        /* The pieces are not NUL-terminated when they end the input, as
         * in the server's buffer: the parsers must not need it. */
        while (p < end) {
                const char *nul = memchr(p, 0, end - p);
                size_t len = nul ? (size_t) (nul - p) : (size_t) (end - p);

                check_message(p, len);
                p += len + 1;
        }
        return 0;
}
