/* SPDX-License-Identifier: MIT */
/* Levenshtein distance, two rows at a time (edit-distance.h). */

#include <stdint.h>
#include <string.h>

#include "edit-distance.h"

static char ascii_upper(char c) {
        return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

size_t edit_distance(const char *a, const char *b) {
        size_t prev[EDIT_DISTANCE_MAX_LEN + 1], cur[EDIT_DISTANCE_MAX_LEN + 1];
        size_t la = strlen(a), lb = strlen(b);

        if (la > EDIT_DISTANCE_MAX_LEN || lb > EDIT_DISTANCE_MAX_LEN)
                return SIZE_MAX;

        for (size_t j = 0; j <= lb; j++)
                prev[j] = j;
        for (size_t i = 1; i <= la; i++) {
                cur[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t sub = prev[j - 1] + (ascii_upper(a[i - 1]) != ascii_upper(b[j - 1]));
                        size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
                        size_t m = sub < del ? sub : del;

                        cur[j] = m < ins ? m : ins;
                }
                memcpy(prev, cur, (lb + 1) * sizeof(size_t));
        }
        return prev[lb];
}
