/* SPDX-License-Identifier: MIT */
#pragma once

/* What the parts of the policy module share: policy.c (the Policy object,
 * loading directories and files), policy-parse.c (one file's rules) and
 * policy-eval.c (decisions). Not for users of the module. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "policy.h"

struct Policy {
        PolicyRule **rules;             /* in effect order */
        size_t n_rules;
        PolicyProblem *problems;
        size_t n_problems;
        bool has_errors;
};

PolicyRule *policy_rule_free(PolicyRule *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolicyRule *, policy_rule_free)

/* The index of the rule called name in p->rules, or -1. */
ssize_t policy_rule_index(const Policy *p, const char *name);

/* Appends a problem "path:line: reason" (or "path: reason" if line is 0). */
int policy_add_problemv(Policy *p, PolicyProblemLevel level, const char *path, unsigned line,
                        const char *fmt, va_list ap);
_printf_(5, 6)
int policy_add_problem(Policy *p, PolicyProblemLevel level, const char *path, unsigned line,
                       const char *fmt, ...);

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
