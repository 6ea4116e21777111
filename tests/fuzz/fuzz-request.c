/* SPDX-License-Identifier: MIT */

/* The injection request parser (src/daemon/request.c): the input is the
 * "parameters" JSON of a Varlink Inject call, parsed as the Varlink front
 * end parses it, then validated by request_from_json(), the one validator
 * both APIs share. An accepted request must be within every limit the
 * engine relies on; a refused one must say why. */


#include "fuzz.h"
#include "fuzz-request.h"
#include "json-reader.h"
#include "json-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_json_ json_object *o = NULL;

        if (json_parse_strict((const char *) data, size, JSON_PARSE_OBJECT, &o) < 0)
                return 0;

        fuzz_check_request(o);
        return 0;
}
