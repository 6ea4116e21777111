/* SPDX-License-Identifier: MIT */
#pragma once

/* explore's HTML report: one self-contained file (its style inline, no
 * script, no reference to anything outside it, so it opens anywhere with
 * no network), the findings first, then the plan's every run. Written
 * from the JSON report, so both say the same. */

#include <json-c/json.h>

/* Writes report (explore's JSON report) to path. Returns 0 or a negative
 * errno. */
int explore_write_html(const char *path, json_object *report);
