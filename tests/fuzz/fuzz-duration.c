/* SPDX-License-Identifier: MIT */

/* Durations (src/shared/duration.c): the input is parsed as a duration,
 * and as the raw value to format. duration.h promises that formatting is
 * exact, so whatever parses or is formatted must come back unchanged. */

#include <errno.h>

#include "duration.h"
#include "fuzz.h"

static void check_format(uint64_t usec) {
        char buf[FORMAT_DURATION_MAX];
        uint64_t back;

        FUZZ_ASSERT(format_duration(buf, sizeof(buf), usec) == buf);
        FUZZ_ASSERT(parse_duration(buf, &back) == 0);
        FUZZ_ASSERT(back == usec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = fuzz_strndup(data, size);
        uint64_t usec = 0;
        int r;

        r = parse_duration(s, &usec);
        FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r == 0)
                check_format(usec);

        usec = 0;
        memcpy(&usec, data, size < sizeof(usec) ? size : sizeof(usec));
        check_format(usec);
        return 0;
}
