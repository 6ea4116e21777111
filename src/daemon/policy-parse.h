/* SPDX-License-Identifier: MIT */
#pragma once

/* One policy file's rules (policy-parse.c). */

#include <stddef.h>

#include <json-c/json.h>

#include "policy-model.h"

/* The rules of one file, in file order. */
typedef struct FileRules {
        PolicyRule **rules;
        size_t n;
} FileRules;

void file_rules_done(FileRules *f);

/* Parses text[0..len), the contents of the file path, into rules; warnings
 * (unknown users...) go to p's problems. Returns 0; -EBADMSG if the file
 * is refused, with the reason and its line (0 if none) in *reterr_message
 * and *reterr_line, and in *reterr_json the document, if the text was
 * valid JSON (for the rule names it declares), else NULL; -ENOMEM. */
int policy_file_parse(Policy *p, const char *path, const char *text, size_t len, FileRules *ret,
                      json_object **reterr_json, char **reterr_message, unsigned *reterr_line);
