/* SPDX-License-Identifier: MIT */

/* injectctl's --fail SPEC parser (src/client/spec.c): the input is one
 * SPEC as typed on the command line. An accepted SPEC must hold only what
 * spec.h promises; a refused one must come with a message. */

#include <errno.h>
#include <math.h>

#include "errno-name.h"
#include "fuzz.h"
#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(fail_spec_freep) FailSpec *spec = NULL;
        _cleanup_free_ char *s = fuzz_strndup(data, size), *message = NULL;
        double percent;
        int r;

        r = fail_spec_parse(s, &spec, &message);
        FUZZ_ASSERT(r == 0 || r == -EINVAL);
        if (r < 0) {
                FUZZ_ASSERT(!spec);
                FUZZ_ASSERT(message && strncmp(message, "invalid --fail '", 16) == 0);
        } else {
                FUZZ_ASSERT(spec && !message);
                FUZZ_ASSERT(function_name_is_valid(spec->function));
                FUZZ_ASSERT(spec->error >= 0 && spec->error <= ERRNO_MAX);
                FUZZ_ASSERT(spec->has_after || spec->after == 0);
                FUZZ_ASSERT(spec->probability == 0 || (spec->probability > 0 && spec->probability <= 100));
                FUZZ_ASSERT(spec->n_callers <= FAIL_SPEC_CALLERS_MAX);
                FUZZ_ASSERT(spec->n_callers == 0 ? !spec->callers : !spec->callers[spec->n_callers]);
                for (size_t i = 0; i < spec->n_callers; i++)
                        FUZZ_ASSERT(function_name_is_valid(spec->callers[i]));
        }

        r = parse_percent(s, &percent);
        FUZZ_ASSERT(r == 0 || r == -EINVAL);
        if (r == 0)
                FUZZ_ASSERT(isfinite(percent) && percent > 0 && percent <= 100);

        return 0;
}
