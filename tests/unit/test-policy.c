/* SPDX-License-Identifier: MIT */
/* The policy loader: files in temporary policy.d directories, with the
 * owner check pointed at the uid running the test: what loads, what is
 * refused and why, overrides, order and permissions. */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "duration.h"
#include "policy-load.h"
#include "policy.h"
#include "policy-fixture.h"
#include "test-util.h"

/* A valid file with one rule per line, to be edited line by line. */
#define BASE_LINES 13
static const char *const base_lines[BASE_LINES] = {
        "{",                                            /*  1 */
        "  \"rules\": [",                               /*  2 */
        "    {",                                        /*  3 */
        "      \"name\": \"r\",",                       /*  4 */
        "      \"groups\": [\"root\"],",                /*  5 */
        "      \"functions\": [\"should_failslab\"],",  /*  6 */
        "      \"errors\": [\"ENOMEM\"],",              /*  7 */
        "      \"scopes\": [\"cgroup\"],",              /*  8 */
        "      \"max-duration\": \"10min\",",           /*  9 */
        "      \"max-active\": 4",                      /* 10 */
        "    }",                                        /* 11 */
        "  ]",                                          /* 12 */
        "}",                                            /* 13 */
};

typedef struct Edit {
        unsigned line;          /* 1-based; 0 ends the list */
        const char *text;       /* replaces that line; may hold several */
} Edit;

static char *base_with(const Edit *edits) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        ASSERT_NOT_NULL(f);
        for (unsigned l = 1; l <= BASE_LINES; l++) {
                const char *text = base_lines[l - 1];

                for (const Edit *e = edits; e && e->line > 0; e++)
                        if (e->line == l)
                                text = e->text;
                fprintf(f, "%s\n", text);
        }
        ASSERT_EQ(fclose(f), 0);
        return buf;
}

/* Writes text as the only file of a fresh directory and checks that it is
 * refused with exactly "DIR/50-test.json:<expected>; file refused". */
static void check_refused_len(const char *text, size_t len, const char *expected) {
        char *dir = make_dir(), *fmt;
        Policy *p;

        write_file_len(dir, "50-test.json", text, len, 0644);
        p = load1(dir);

        ASSERT_TRUE(asprintf(&fmt, "%%s/50-test.json:%s; file refused", expected) > 0);
        assert_problems(p, dir, fmt, NULL);
        ASSERT_TRUE(policy_has_errors(p));
        ASSERT_EQ(policy_n_rules(p), 0);
        ASSERT_EQ(policy_problems(p, NULL)[0].level, POLICY_PROBLEM_ERROR);

        free(fmt);
        policy_free(p);
        remove_dir(dir);
}

static void check_refused(const char *text, const char *expected) {
        check_refused_len(text, strlen(text), expected);
}

static void check_edit_refused(const Edit *edits, const char *expected) {
        char *text = base_with(edits);

        check_refused(text, expected);
        free(text);
}

/* ---- Loading ---- */

static void test_scope_names(void) {
        ASSERT_STREQ(policy_scope_to_string(POLICY_SCOPE_CGROUP), "cgroup");
        ASSERT_STREQ(policy_scope_to_string(POLICY_SCOPE_PROCESS), "process");
        ASSERT_STREQ(policy_scope_to_string(POLICY_SCOPE_GLOBAL), "global");
        ASSERT_NULL(policy_scope_to_string(_POLICY_SCOPE_MAX));
        ASSERT_RET(policy_scope_from_string("process"), POLICY_SCOPE_PROCESS);
        ASSERT_RET(policy_scope_from_string("Process"), -EINVAL);
        ASSERT_RET(policy_scope_from_string(""), -EINVAL);
        ASSERT_STREQ(policy_denial_to_error_name(POLICY_DENIAL_NONE), NULL);
        ASSERT_STREQ(policy_denial_to_error_name(POLICY_DENIAL_USER), "UserNotInPolicy");
        ASSERT_STREQ(policy_denial_to_error_name(POLICY_DENIAL_DURATION), "DurationTooLong");
}

static void test_load_base(void) {
        char *dir = make_dir(), *text = base_with(NULL), *file = path_join(dir, "50-test.json");
        const PolicyRule *r;
        Policy *p;

        write_file(dir, "50-test.json", text);
        p = load1(dir);
        assert_no_problems(p);
        ASSERT_EQ(policy_n_rules(p), 1);

        r = policy_rule(p, 0);
        ASSERT_NOT_NULL(r);
        ASSERT_TRUE(r == policy_find_rule(p, "r"));
        ASSERT_NULL(policy_rule(p, 1));
        ASSERT_NULL(policy_find_rule(p, "R"));
        ASSERT_STREQ(r->name, "r");
        ASSERT_STREQ(r->file, file);
        ASSERT_EQ(r->line, 3);
        ASSERT_TRUE(r->enabled);
        ASSERT_NULL(r->description);
        ASSERT_FALSE(r->all_users);
        ASSERT_EQ(r->n_uids, 0);
        ASSERT_EQ(r->n_gids, 1);
        ASSERT_EQ(r->gids[0], 0);
        ASSERT_EQ(r->n_functions, 1);
        ASSERT_STREQ(r->functions[0], "should_failslab");
        ASSERT_FALSE(r->any_errno);
        ASSERT_EQ(r->n_errors, 1);
        ASSERT_EQ(r->errors[0], ENOMEM);
        ASSERT_EQ(r->n_retvals, 0);
        ASSERT_EQ(r->scopes, 1u << POLICY_SCOPE_CGROUP);
        ASSERT_EQ_U64(r->max_duration_usec, 10 * USEC_PER_MINUTE);
        ASSERT_EQ(r->max_active, 4);

        free(file);
        free(text);
        policy_free(p);
        remove_dir(dir);
}

static void test_load_every_key(void) {
        char *dir = make_dir();
        const PolicyRule *r;
        Policy *p;

        write_file(dir, "50-full.json",
                   "{ \"rules\": [\n"
                   "  { \"name\": \"full-1.x_y\", \"description\": \"all keys\", \"enabled\": true,\n"
                   "    \"users\": [\"root\", 1234, \"5678\"], \"groups\": [\"root\", 42, \"43\"],\n"
                   "    \"functions\": [\"__x64_sys_*\", \"should_fail?lab\", \"open_ctree\", \"foo.isra.[0-9]\", \"[!a]x\"],\n"
                   "    \"errors\": [\"enomem\", 5, -13, \"-2\", \"EWOULDBLOCK\"],\n"
                   "    \"retvals\": [1, 0, -9223372036854775808, 9223372036854775807],\n"
                   "    \"scopes\": [\"process\", \"global\", \"cgroup\", \"process\"],\n"
                   "    \"max-duration\": \"1h 30min\", \"max-active\": 4294967295 },\n"
                   "  { \"name\": \"any\", \"users\": [\"*\"], \"functions\": [\"*\"], \"errors\": [\"*\"],\n"
                   "    \"scopes\": [\"process\"], \"max-duration\": \"1.5s\", \"max-active\": 1 }\n"
                   "] }\n");
        p = load1(dir);
        assert_no_problems(p);
        ASSERT_EQ(policy_n_rules(p), 2);

        r = policy_rule(p, 0);
        ASSERT_STREQ(r->name, "full-1.x_y");
        ASSERT_STREQ(r->description, "all keys");
        ASSERT_EQ(r->line, 2);
        ASSERT_EQ(r->n_uids, 3);
        ASSERT_EQ(r->uids[0], 0);
        ASSERT_EQ(r->uids[1], 1234);
        ASSERT_EQ(r->uids[2], 5678);
        ASSERT_EQ(r->n_gids, 3);
        ASSERT_EQ(r->gids[0], 0);
        ASSERT_EQ(r->gids[1], 42);
        ASSERT_EQ(r->gids[2], 43);
        ASSERT_EQ(r->n_functions, 5);
        ASSERT_STREQ(r->functions[3], "foo.isra.[0-9]");
        ASSERT_EQ(r->n_errors, 5);
        ASSERT_EQ(r->errors[0], ENOMEM);
        ASSERT_EQ(r->errors[1], EIO);
        ASSERT_EQ(r->errors[2], EACCES);
        ASSERT_EQ(r->errors[3], ENOENT);
        ASSERT_EQ(r->errors[4], EAGAIN);
        ASSERT_EQ(r->n_retvals, 4);
        ASSERT_EQ(r->retvals[2], INT64_MIN);
        ASSERT_EQ(r->retvals[3], INT64_MAX);
        ASSERT_EQ(r->scopes, 7);
        ASSERT_EQ_U64(r->max_duration_usec, 90 * USEC_PER_MINUTE);
        ASSERT_EQ_U64(r->max_active, 4294967295u);

        r = policy_rule(p, 1);
        ASSERT_STREQ(r->name, "any");
        ASSERT_EQ(r->line, 9);
        ASSERT_TRUE(r->all_users);
        ASSERT_TRUE(r->any_errno);
        ASSERT_EQ(r->n_errors, 0);
        ASSERT_EQ_U64(r->max_duration_usec, 1500 * USEC_PER_MSEC);

        policy_free(p);
        remove_dir(dir);
}

static void test_load_empty_and_missing(void) {
        char *dir = make_dir(), *missing = path_join(dir, "does-not-exist");
        Policy *p;

        /* A missing directory is normal (/etc/injectd/policy.d often is). */
        p = load_dirs((const char *const[]) { missing, dir, NULL }, getuid());
        assert_no_problems(p);
        ASSERT_EQ(policy_n_rules(p), 0);
        policy_free(p);

        /* So are a file without rules, files not named *.json, hidden files. */
        write_file(dir, "10-empty.json", "{\"rules\": []}");
        write_file(dir, "20-notes.txt", "not json at all");
        write_file(dir, ".30-hidden.json", "not json either");
        write_file(dir, "40-x.json~", "a backup");
        write_file(dir, ".json", "no stem");
        p = load1(dir);
        assert_no_problems(p);
        ASSERT_EQ(policy_n_rules(p), 0);
        policy_free(p);

        ASSERT_RET(policy_load(NULL, 0, &p), -EINVAL);
        ASSERT_RET(policy_load((const char *const[]) { NULL }, 0, NULL), -EINVAL);
        ASSERT_NULL(policy_free(NULL));
        ASSERT_EQ(policy_n_rules(NULL), 0);

        free(missing);
        remove_dir(dir);
}

/* Syntax errors: the line of the first bad byte, json-c's leniencies
 * included. */
static void test_syntax_errors(void) {
        char deep[512];
        size_t l;

        check_edit_refused((const Edit[]) { { 5, "      \"groups\": [\"root\"]" }, {} },
                           "6: invalid JSON: expected ',' or '}' (missing comma?)");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": 4," }, {} },
                           "11: invalid JSON: expected a quoted key (trailing comma?)");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": [\"ENOMEM\",]," }, {} },
                           "7: invalid JSON: expected a value (trailing comma?)");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": [\"ENOMEM\" \"EIO\"]," }, {} },
                           "7: invalid JSON: expected ',' or ']' (missing comma?)");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": ['ENOMEM']," }, {} },
                           "7: invalid JSON: unexpected character '''");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": NaN" }, {} },
                           "10: invalid JSON: unexpected character 'N'");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": Infinity" }, {} },
                           "10: invalid JSON: unexpected character 'I'");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": 04" }, {} },
                           "10: invalid JSON: invalid number");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": 4." }, {} },
                           "10: invalid JSON: invalid number");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": 18446744073709551616" }, {} },
                           "10: invalid JSON: integer out of range");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": tru" }, {} },
                           "10: invalid JSON: unexpected character 't'");
        check_edit_refused((const Edit[]) { { 4, "      \"name\": \"a\tb\"," }, {} },
                           "4: invalid JSON: control character in a string (write it as an escape)");
        check_edit_refused((const Edit[]) { { 4, "      \"name\": \"a\\qb\"," }, {} },
                           "4: invalid JSON: invalid escape sequence");
        check_edit_refused((const Edit[]) { { 4, "      \"name\": \"a\\u12\"," }, {} },
                           "4: invalid JSON: invalid \\u escape");
        /* An overlong '/', which json-c's own UTF-8 check lets through. */
        check_edit_refused((const Edit[]) { { 4, "      \"description\": \"\xc0\xaf\", \"name\": \"r\"," }, {} },
                           "4: invalid JSON: invalid UTF-8");
        check_edit_refused((const Edit[]) { { 13, "} x" }, {} },
                           "13: invalid JSON: trailing data after the JSON value");
        check_edit_refused((const Edit[]) { { 13, "}\n{}" }, {} },
                           "14: invalid JSON: trailing data after the JSON value");
        check_edit_refused((const Edit[]) { { 5, "      groups: [\"root\"]," }, {} },
                           "5: invalid JSON: expected a quoted key");
        check_edit_refused((const Edit[]) { { 5, "      \"groups\" [\"root\"]," }, {} },
                           "5: invalid JSON: expected ':' after the key");
        /* Duplicate keys: json-c would silently keep the last. */
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": 4,\n      \"max-active\": 400" }, {} },
                           "11: invalid JSON: duplicate key \"max-active\"");
        check_edit_refused((const Edit[]) { { 4, "      \"name\": \"r\", \"n\\u0061me\": \"s\"," }, {} },
                           "4: invalid JSON: duplicate key \"n\\u0061me\"");

        /* Cut short: the error is on the last line, not the one after. */
        check_refused("{\n  \"rules\": [\n    {\n      \"name\": \"r\",\n",
                      "4: invalid JSON: unexpected end of file");
        check_refused("{\n  \"rules\": [\n    {\n      \"name\": \"r",
                      "4: invalid JSON: unexpected end of file in a string");
        check_refused("", "1: invalid JSON: empty file");
        check_refused("\n\n  \n", "1: invalid JSON: empty file");
        check_refused_len("{\"rules\": []}\n\0", 15, "2: invalid JSON: NUL byte");
        check_refused_len("{\"rules\": [],\n\"x\": \"a\0b\"}", 25, "2: invalid JSON: NUL byte in a string");

        /* 64 levels parse (then fail as policy), 65 do not. */
        l = (size_t) snprintf(deep, sizeof(deep), "{\n\"rules\": ");
        for (int i = 0; i < 63; i++)
                deep[l++] = '[';
        for (int i = 0; i < 63; i++)
                deep[l++] = ']';
        strcpy(deep + l, "}");
        check_refused(deep, "2: rule #1: must be an object");

        l = (size_t) snprintf(deep, sizeof(deep), "{\n\"rules\": ");
        for (int i = 0; i < 64; i++)
                deep[l++] = '[';
        for (int i = 0; i < 64; i++)
                deep[l++] = ']';
        strcpy(deep + l, "}");
        check_refused(deep, "2: invalid JSON: nesting too deep");
}

/* Semantic errors: the line of the offending key, value or element, or of
 * the rule for what is missing. */
static void test_semantic_errors(void) {
        /* The file's shape. */
        check_refused("[]\n", "1: the top level must be an object with a \"rules\" array");
        check_refused("\n  {}\n", "2: \"rules\" is required");
        check_refused("{\n  \"rules\": {}\n}\n", "2: \"rules\" must be an array");
        check_refused("{\n  \"rules\": [],\n  \"policy\": 1\n}\n", "3: unknown key \"policy\" (expected \"rules\")");
        check_edit_refused((const Edit[]) { { 3, "    42," }, { 4, "    {" }, {} },
                           "3: rule #1: must be an object");

        /* name */
        check_edit_refused((const Edit[]) { { 4, "" }, {} }, "3: rule #1: \"name\" is required");
        check_edit_refused((const Edit[]) { { 4, "      \"name\": 5," }, {} }, "4: rule #1: \"name\" must be a string");
        check_edit_refused((const Edit[]) { { 4, "      \"name\": \"has space\"," }, {} },
                           "4: rule #1: invalid rule name \"has space\" (1..64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)");
        check_edit_refused((const Edit[]) { { 4, "      \"name\": \"-x\"," }, {} },
                           "4: rule #1: invalid rule name \"-x\" (1..64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)");

        /* Unknown keys: the line of the key. */
        check_edit_refused((const Edit[]) { { 5, "      \"groups\": [\"root\"], \"colour\": \"red\"," }, {} },
                           "5: rule \"r\": unknown key \"colour\"");
        check_edit_refused((const Edit[]) { { 8, "      \"scopes\": [\"cgroup\"],\n      \"max_duration\":\n \"1s\"," }, {} },
                           "9: rule \"r\": unknown key \"max_duration\"");

        /* Types. */
        check_edit_refused((const Edit[]) { { 4, "      \"name\": \"r\", \"enabled\": \"no\"," }, {} },
                           "4: rule \"r\": \"enabled\" must be true or false");
        check_edit_refused((const Edit[]) { { 4, "      \"name\": \"r\", \"description\": [\"x\"]," }, {} },
                           "4: rule \"r\": \"description\" must be a string");
        check_edit_refused((const Edit[]) { { 5, "      \"groups\": \"root\"," }, {} },
                           "5: rule \"r\": \"groups\" must be an array");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\":\n        \"4\"" }, {} },
                           "11: rule \"r\": \"max-active\" must be an integer");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": 4.0" }, {} },
                           "10: rule \"r\": \"max-active\" must be an integer");

        /* Subjects. */
        check_edit_refused((const Edit[]) { { 5, "" }, {} },
                           "3: rule \"r\": no subjects: \"users\" or \"groups\" is required");
        check_edit_refused((const Edit[]) { { 5, "      \"groups\": []," }, {} },
                           "5: rule \"r\": \"groups\" must not be empty (an empty list would allow nothing; leave the key out)");
        check_edit_refused((const Edit[]) { { 5, "      \"groups\": [\"*\"]," }, {} },
                           "5: rule \"r\": \"*\" is not valid in \"groups\"; write \"users\": [\"*\"] to name every user");
        check_edit_refused((const Edit[]) { { 5, "      \"users\": [\n        \"root\",\n        true\n      ]," }, {} },
                           "7: rule \"r\": \"users\" entries must be user names or numeric ids");
        check_edit_refused((const Edit[]) { { 5, "      \"users\": [\"\"]," }, {} },
                           "5: rule \"r\": \"users\" entries must be user names or numeric ids");
        check_edit_refused((const Edit[]) { { 5, "      \"users\": [4294967295]," }, {} },
                           "5: rule \"r\": user id out of range");
        check_edit_refused((const Edit[]) { { 5, "      \"users\": [-1]," }, {} },
                           "5: rule \"r\": user id out of range");
        check_edit_refused((const Edit[]) { { 5, "      \"groups\": [\"4294967295\"]," }, {} },
                           "5: rule \"r\": group id \"4294967295\" out of range");

        /* Functions. */
        check_edit_refused((const Edit[]) { { 6, "" }, {} }, "3: rule \"r\": \"functions\" is required");
        check_edit_refused((const Edit[]) { { 6, "      \"functions\": [\"should_failslab\", \"__x64_sys_[abc\"]," }, {} },
                           "6: rule \"r\": invalid function pattern \"__x64_sys_[abc\": '[' without ']'");
        check_edit_refused((const Edit[]) { { 6, "      \"functions\": [\n        \"vfs read\"\n      ]," }, {} },
                           "7: rule \"r\": invalid function pattern \"vfs read\": character not allowed in a function name or pattern");
        check_edit_refused((const Edit[]) { { 6, "      \"functions\": [\"a]\"]," }, {} },
                           "6: rule \"r\": invalid function pattern \"a]\": ']' without '['");
        check_edit_refused((const Edit[]) { { 6, "      \"functions\": [\"a[]]\"]," }, {} },
                           "6: rule \"r\": invalid function pattern \"a[]]\": empty [] class");
        check_edit_refused((const Edit[]) { { 6, "      \"functions\": [\"a\\\\*\"]," }, {} },
                           "6: rule \"r\": invalid function pattern \"a\\*\": character not allowed in a function name or pattern");
        check_edit_refused((const Edit[]) { { 6, "      \"functions\": [\"\"]," }, {} },
                           "6: rule \"r\": invalid function pattern \"\": empty");
        check_edit_refused((const Edit[]) { { 6, "      \"functions\": [1]," }, {} },
                           "6: rule \"r\": \"functions\" entries must be strings");

        /* Errors and return values. */
        check_edit_refused((const Edit[]) { { 7, "" }, {} }, "3: rule \"r\": \"errors\" or \"retvals\" is required");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": [\n        \"ENOMEM\",\n        \"ENOMEMM\"\n      ]," }, {} },
                           "9: rule \"r\": unknown error \"ENOMEMM\" (did you mean ENOMEM?)");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": [\"no such thing at all\"]," }, {} },
                           "7: rule \"r\": unknown error \"no such thing at all\"");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": [0]," }, {} },
                           "7: rule \"r\": error numbers must lie in 1..4095 (or -4095..-1)");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": [4096]," }, {} },
                           "7: rule \"r\": error numbers must lie in 1..4095 (or -4095..-1)");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": [\"4096\"]," }, {} },
                           "7: rule \"r\": unknown error \"4096\"");
        check_edit_refused((const Edit[]) { { 7, "      \"errors\": [true]," }, {} },
                           "7: rule \"r\": \"errors\" entries must be errno names, numbers or \"*\"");
        check_edit_refused((const Edit[]) { { 7, "      \"retvals\": [\"one\"]," }, {} },
                           "7: rule \"r\": \"retvals\" entries must be integers");
        check_edit_refused((const Edit[]) { { 7, "      \"retvals\": [18446744073709551615]," }, {} },
                           "7: rule \"r\": return value out of range");

        /* Scopes. */
        check_edit_refused((const Edit[]) { { 8, "" }, {} }, "3: rule \"r\": \"scopes\" is required");
        check_edit_refused((const Edit[]) { { 8, "      \"scopes\": [\"cgroup\", \"system\"]," }, {} },
                           "8: rule \"r\": unknown scope \"system\" (expected \"cgroup\", \"process\", \"global\", "
                           "\"device\", \"foreign-cgroup\", \"foreign-process\" or \"foreign-device\")");
        /* A foreign device only where "devices" names it: never every device. */
        check_edit_refused((const Edit[]) { { 8, "      \"scopes\": [\"foreign-device\"]," }, {} },
                           "8: rule \"r\": \"foreign-device\" needs \"devices\", the block devices it grants");
        check_edit_refused((const Edit[]) { { 8, "      \"scopes\": [\"device\"], \"devices\": [\"sdb\"]," }, {} },
                           "8: rule \"r\": \"devices\" goes with scope \"foreign-device\", which it narrows");
        check_edit_refused((const Edit[]) { { 8, "      \"scopes\": [\"foreign-device\"], \"devices\": [\"/dev/sdb\"]," }, {} },
                           "8: rule \"r\": invalid device pattern \"/dev/sdb\": a block device's kernel name (as in "
                           "/sys/block), without /dev/, with * ? [...] if wanted");
        check_edit_refused((const Edit[]) { { 8, "      \"scopes\": []," }, {} },
                           "8: rule \"r\": \"scopes\" must not be empty (an empty list would allow nothing; leave the key out)");

        /* max-duration: required, a string, a duration, finite, > 0. */
        check_edit_refused((const Edit[]) { { 9, "" }, {} }, "3: rule \"r\": \"max-duration\" is required");
        check_edit_refused((const Edit[]) { { 9, "      \"max-duration\": null," }, {} },
                           "3: rule \"r\": \"max-duration\" is required");
        check_edit_refused((const Edit[]) { { 9, "      \"max-duration\": \"0\"," }, {} },
                           "9: rule \"r\": \"max-duration\" must be longer than zero");
        check_edit_refused((const Edit[]) { { 9, "      \"max-duration\": \"0s 0ms\"," }, {} },
                           "9: rule \"r\": \"max-duration\" must be longer than zero");
        check_edit_refused((const Edit[]) { { 9, "      \"max-duration\": \"10 parsecs\"," }, {} },
                           "9: rule \"r\": \"max-duration\" \"10 parsecs\" is not a duration (such as \"10min\")");
        check_edit_refused((const Edit[]) { { 9, "      \"max-duration\": \"infinity\"," }, {} },
                           "9: rule \"r\": \"max-duration\" \"infinity\" is not a duration (such as \"10min\")");
        check_edit_refused((const Edit[]) { { 9, "      \"max-duration\": \"-5min\"," }, {} },
                           "9: rule \"r\": \"max-duration\" \"-5min\" is out of range");
        check_edit_refused((const Edit[]) { { 9, "      \"max-duration\": 600," }, {} },
                           "9: rule \"r\": \"max-duration\" must be a string such as \"10min\"");

        /* max-active: required, >= 1. */
        check_edit_refused((const Edit[]) { { 9, "      \"max-duration\": \"10min\"" }, { 10, "" }, {} },
                           "3: rule \"r\": \"max-active\" is required");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": 0" }, {} },
                           "10: rule \"r\": \"max-active\" must lie in 1..4294967295");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": -1" }, {} },
                           "10: rule \"r\": \"max-active\" must lie in 1..4294967295");
        check_edit_refused((const Edit[]) { { 10, "      \"max-active\": 4294967296" }, {} },
                           "10: rule \"r\": \"max-active\" must lie in 1..4294967295");

        /* Rule names are unique within a file. */
        check_edit_refused((const Edit[]) { { 11, "    },\n    {\n      \"name\": \"s\", \"enabled\": false\n    },\n"
                                                  "    {\n      \"name\": \"r\",\n      \"enabled\": false\n    }" }, {} },
                           "16: rule \"r\": duplicate rule name (first defined on line 3)");

        /* An error in a later rule names that rule and its line. */
        check_edit_refused((const Edit[]) { { 11, "    },\n    {\n      \"name\": \"second\",\n      \"groups\": [\"root\"],\n"
                                                  "      \"functions\": [\"x\"]\n    }" }, {} },
                           "12: rule \"second\": \"errors\" or \"retvals\" is required");
}

/* A key written with escapes is the same key. */
static void test_escaped_keys(void) {
        char *dir = make_dir(), *text = base_with((const Edit[]) {
                { 4, "      \"n\\u0061me\": \"r\"," },
                { 10, "      \"max\\u002dactive\": 7" }, {} });
        Policy *p;

        write_file(dir, "50-test.json", text);
        p = load1(dir);
        assert_no_problems(p);
        ASSERT_EQ(policy_n_rules(p), 1);
        ASSERT_EQ(policy_rule(p, 0)->max_active, 7);
        policy_free(p);
        free(text);

        /* ... and an error about it still finds its line. */
        text = base_with((const Edit[]) { { 10, "      \"max-active\": 4, \"\\u0063olour\": 1" }, {} });
        check_refused(text, "10: rule \"r\": unknown key \"colour\"");
        free(text);
        remove_dir(dir);
}

static void test_unknown_subjects_warn(void) {
        char *dir = make_dir();
        const PolicyRule *r;
        Policy *p;

        write_file(dir, "50-test.json",
                   "{\n"
                   "  \"rules\": [\n"
                   "    {\n"
                   "      \"name\": \"people\",\n"
                   "      \"users\": [\"root\", \"no-such-user-injectd-test\",\n"
                   "                1234, \"5678\"],\n"
                   "      \"groups\": [\n"
                   "        \"no-such-group-injectd-test\",\n"
                   "        \"root\"\n"
                   "      ],\n"
                   "      \"functions\": [\"should_failslab\"], \"errors\": [\"ENOMEM\"],\n"
                   "      \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1\n"
                   "    }\n"
                   "  ]\n"
                   "}\n");
        p = load1(dir);
        assert_problems(p, dir,
                        "%s/50-test.json:5: rule \"people\": unknown user \"no-such-user-injectd-test\", ignoring",
                        "%s/50-test.json:8: rule \"people\": unknown group \"no-such-group-injectd-test\", ignoring",
                        NULL);
        ASSERT_FALSE(policy_has_errors(p));
        ASSERT_EQ(policy_problems(p, NULL)[0].level, POLICY_PROBLEM_WARNING);
        ASSERT_EQ(policy_problems(p, NULL)[1].line, 8);

        r = policy_find_rule(p, "people");
        ASSERT_NOT_NULL(r);
        ASSERT_EQ(r->n_uids, 3);
        ASSERT_EQ(r->uids[0], 0);
        ASSERT_EQ(r->uids[1], 1234);
        ASSERT_EQ(r->uids[2], 5678);
        ASSERT_EQ(r->n_gids, 1);
        ASSERT_EQ(r->gids[0], 0);

        policy_free(p);
        remove_dir(dir);
}

/* A bad file is skipped whole; the others load; warnings of the bad file
 * are not reported, only why it was refused. */
static void test_bad_file_skipped(void) {
        char *dir = make_dir();
        Policy *p;

        write_file(dir, "10-good.json",
                   "{\"rules\": [{\"name\": \"good\", \"users\": [1000], \"functions\": [\"f\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1}]}\n");
        write_file(dir, "20-bad.json",
                   "{\"rules\": [\n"
                   "  {\"name\": \"fine\", \"users\": [1000], \"functions\": [\"g\"], \"errors\": [\"EIO\"],\n"
                   "   \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1},\n"
                   "  {\"name\": \"broken\", \"users\": [\"no-such-user-injectd-test\"], \"functions\": [\"g\"],\n"
                   "   \"errors\": [\"EIO\"], \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 0}\n"
                   "]}\n");
        write_file(dir, "30-good.json",
                   "{\"rules\": [{\"name\": \"good2\", \"users\": [1000], \"functions\": [\"h\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1}]}\n");
        p = load1(dir);
        assert_problems(p, dir,
                        "%s/20-bad.json:5: rule \"broken\": \"max-active\" must lie in 1..4294967295; file refused",
                        NULL);
        ASSERT_TRUE(policy_has_errors(p));
        ASSERT_EQ(policy_n_rules(p), 2);
        ASSERT_STREQ(policy_rule(p, 0)->name, "good");
        ASSERT_STREQ(policy_rule(p, 1)->name, "good2");
        ASSERT_NULL(policy_find_rule(p, "fine"));       /* never half-applied */

        policy_free(p);
        remove_dir(dir);
}

static void test_override_by_name(void) {
        char *vendor = make_dir(), *admin = make_dir(), *f;
        const PolicyRule *r;
        Policy *p;

        write_file(vendor, "10-base.json",
                   "{\"rules\": [\n"
                   " {\"name\": \"a\", \"users\": [1000], \"functions\": [\"fa\"], \"errors\": [\"EIO\", \"ENOMEM\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1},\n"
                   " {\"name\": \"b\", \"users\": [1000], \"functions\": [\"fb\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1},\n"
                   " {\"name\": \"c\", \"users\": [1000], \"functions\": [\"fc\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1}\n"
                   "]}\n");
        /* Same directory, later file: replaces "c". */
        write_file(vendor, "20-more.json",
                   "{\"rules\": [\n"
                   " {\"name\": \"c\", \"groups\": [7], \"functions\": [\"fc2\"], \"retvals\": [1],\n"
                   "  \"scopes\": [\"cgroup\"], \"max-duration\": \"2min\", \"max-active\": 2}\n"
                   "]}\n");
        /* Admin directory: replaces "a" entirely, disables "b", adds "d". */
        write_file(admin, "50-site.json",
                   "{\"rules\": [\n"
                   " {\"name\": \"d\", \"users\": [1000], \"functions\": [\"fd\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1},\n"
                   " {\"name\": \"a\", \"users\": [2000], \"functions\": [\"fa2\"], \"errors\": [\"EPERM\"],\n"
                   "  \"scopes\": [\"global\"], \"max-duration\": \"3min\", \"max-active\": 9},\n"
                   " {\"name\": \"b\", \"enabled\": false}\n"
                   "]}\n");
        p = load_dirs((const char *const[]) { vendor, admin, NULL }, getuid());
        assert_no_problems(p);

        /* Effect order: where a name first appeared. */
        ASSERT_EQ(policy_n_rules(p), 4);
        ASSERT_STREQ(policy_rule(p, 0)->name, "a");
        ASSERT_STREQ(policy_rule(p, 1)->name, "b");
        ASSERT_STREQ(policy_rule(p, 2)->name, "c");
        ASSERT_STREQ(policy_rule(p, 3)->name, "d");

        r = policy_find_rule(p, "a");
        f = path_join(admin, "50-site.json");
        ASSERT_STREQ(r->file, f);
        free(f);
        ASSERT_EQ(r->line, 4);
        ASSERT_EQ(r->n_uids, 1);
        ASSERT_EQ(r->uids[0], 2000);
        ASSERT_EQ(r->n_functions, 1);
        ASSERT_STREQ(r->functions[0], "fa2");
        ASSERT_EQ(r->n_errors, 1);              /* nothing of the old "a" is left */
        ASSERT_EQ(r->errors[0], EPERM);
        ASSERT_EQ(r->scopes, 1u << POLICY_SCOPE_GLOBAL);
        ASSERT_EQ(r->max_active, 9);

        r = policy_find_rule(p, "b");
        ASSERT_FALSE(r->enabled);
        ASSERT_EQ(r->n_functions, 0);

        r = policy_find_rule(p, "c");
        f = path_join(vendor, "20-more.json");
        ASSERT_STREQ(r->file, f);
        free(f);
        ASSERT_EQ(r->n_uids, 0);
        ASSERT_EQ(r->n_gids, 1);
        ASSERT_EQ(r->n_retvals, 1);
        ASSERT_EQ(r->n_errors, 0);

        policy_free(p);

        /* The order of directories is the order of precedence. */
        p = load_dirs((const char *const[]) { admin, vendor, NULL }, getuid());
        assert_no_problems(p);
        r = policy_find_rule(p, "a");
        ASSERT_EQ(r->uids[0], 1000);
        ASSERT_TRUE(policy_find_rule(p, "b")->enabled);
        policy_free(p);

        remove_dir(vendor);
        remove_dir(admin);
}

/* Files load in strcmp() order, not in the order readdir() returns them. */
static void test_lexical_order(void) {
        char *dir = make_dir();
        Policy *p;

        for (int i = 9; i >= 0; i--) {
                char name[32], text[512];

                (void) snprintf(name, sizeof(name), "%c%d-x.json", i % 2 ? 'B' : 'a', i);
                (void) snprintf(text, sizeof(text),
                                "{\"rules\": [{\"name\": \"same\", \"users\": [1000], \"functions\": [\"f\"],"
                                " \"errors\": [\"EIO\"], \"scopes\": [\"process\"], \"max-duration\": \"1min\","
                                " \"max-active\": %d}]}", i + 1);
                write_file(dir, name, text);
        }
        p = load1(dir);
        assert_no_problems(p);
        ASSERT_EQ(policy_n_rules(p), 1);
        /* Uppercase sorts first in strcmp(); the last is "a8-x.json". */
        ASSERT_EQ(policy_rule(p, 0)->max_active, 9);
        policy_free(p);
        remove_dir(dir);
}

/* A refused override must not bring back the rule it replaced. */
static void test_refused_override_withdraws(void) {
        char *vendor = make_dir(), *admin = make_dir();
        PolicySubject alice = { .uid = 1000, .gid = 1000, .user_name = "alice" };
        PolicyDecision d;
        Policy *p;

        write_file(vendor, "10-base.json",
                   "{\"rules\": [\n"
                   " {\"name\": \"keep\", \"users\": [1000], \"functions\": [\"g\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1},\n"
                   " {\"name\": \"wide\", \"users\": [1000], \"functions\": [\"*\"], \"errors\": [\"*\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1h\", \"max-active\": 10}\n"
                   "]}\n");
        write_file(admin, "50-off.json",
                   "{\"rules\": [\n"
                   " {\"name\": \"wide\", \"enabled\": fals}\n"     /* syntax: names unknown */
                   "]}\n");
        p = load_dirs((const char *const[]) { vendor, admin, NULL }, getuid());
        assert_problems(p, admin, "%s/50-off.json:2: invalid JSON: unexpected character 'f'; file refused", NULL);
        /* A syntax error hides the names: "wide" stays (documented). */
        ASSERT_NOT_NULL(policy_find_rule(p, "wide"));
        policy_free(p);

        write_file(admin, "50-off.json",
                   "{\"rules\": [\n"
                   " {\"name\": \"wide\", \"enabled\": false, \"colour\": 1}\n"
                   "]}\n");
        /* A semantic error: the names are known and withdrawn. The
         * messages name both files, so build them by hand. */
        p = load_dirs((const char *const[]) { vendor, admin, NULL }, getuid());
        {
                const PolicyProblem *pr;
                char *expected;
                size_t n;

                pr = policy_problems(p, &n);
                if (n != 2)
                        dump_problems(p);
                ASSERT_EQ(n, 2);
                ASSERT_TRUE(asprintf(&expected, "%s/50-off.json:2: rule \"wide\": unknown key \"colour\"; file refused",
                                     admin) > 0);
                ASSERT_STREQ(pr[0].message, expected);
                ASSERT_EQ(pr[0].level, POLICY_PROBLEM_ERROR);
                free(expected);
                ASSERT_TRUE(asprintf(&expected,
                                     "%s/50-off.json: rule \"wide\" of %s/10-base.json:4 is withdrawn, "
                                     "as this file redefines it but was refused", admin, vendor) > 0);
                ASSERT_STREQ(pr[1].message, expected);
                ASSERT_EQ(pr[1].level, POLICY_PROBLEM_WARNING);
                free(expected);
        }
        ASSERT_NULL(policy_find_rule(p, "wide"));
        ASSERT_NOT_NULL(policy_find_rule(p, "keep"));
        ASSERT_EQ(policy_n_rules(p), 1);
        ASSERT_OK(policy_check(p, &alice, &(PolicyRequest) {
                .function = "vfs_read", .retval = -EIO, .is_errno = true,
                .scope = POLICY_SCOPE_PROCESS, .duration_usec = USEC_PER_SEC }, &d));
        ASSERT_FALSE(d.allowed);
        ASSERT_EQ(d.denial, POLICY_DENIAL_FUNCTION);
        policy_free(p);

        remove_dir(vendor);
        remove_dir(admin);
}

static void test_permissions(void) {
        char *dir = make_dir(), *good = make_dir(), *sub, *link_path, *target;
        Policy *p;

        write_file(good, "10-ok.json",
                   "{\"rules\": [{\"name\": \"ok\", \"users\": [1000], \"functions\": [\"f\"], \"errors\": [\"EIO\"],\n"
                   "  \"scopes\": [\"process\"], \"max-duration\": \"1min\", \"max-active\": 1}]}\n");

        /* World- and group-writable files. */
        write_file_len(dir, "10-world.json", "{\"rules\": []}", 13, 0666);
        write_file_len(dir, "20-group.json", "{\"rules\": []}", 13, 0620);
        write_file_len(dir, "30-fine.json", "{\"rules\": []}", 13, 0600);
        p = load1(dir);
        assert_problems(p, dir,
                        "%s/10-world.json: world-writable (mode 0666); refusing",
                        "%s/20-group.json: group-writable (mode 0620); refusing",
                        NULL);
        ASSERT_TRUE(policy_has_errors(p));
        ASSERT_EQ(policy_problems(p, NULL)[0].line, 0);
        policy_free(p);
        remove_dir(dir);

        /* Symlinks: the target is checked. */
        dir = make_dir();
        write_file_len(dir, "target-bad", "{\"rules\": []}", 13, 0646);
        link_path = path_join(dir, "10-link-bad.json");
        target = path_join(dir, "target-bad");
        ASSERT_EQ(symlink(target, link_path), 0);
        free(link_path);
        free(target);
        link_path = path_join(dir, "20-link-good.json");
        target = path_join(good, "10-ok.json");
        ASSERT_EQ(symlink(target, link_path), 0);
        free(link_path);
        free(target);
        link_path = path_join(dir, "30-dangling.json");
        ASSERT_EQ(symlink("/nonexistent/injectd-test", link_path), 0);
        free(link_path);
        p = load1(dir);
        assert_problems(p, dir,
                        "%s/10-link-bad.json: symlink target world-writable (mode 0646); refusing",
                        "%s/30-dangling.json: cannot open: No such file or directory; refusing",
                        NULL);
        ASSERT_EQ(policy_n_rules(p), 1);
        ASSERT_NOT_NULL(policy_find_rule(p, "ok"));
        policy_free(p);
        remove_dir(dir);

        /* Not regular files: a directory, a FIFO (which must not hang). */
        dir = make_dir();
        sub = path_join(dir, "10-dir.json");
        ASSERT_EQ(mkdir(sub, 0755), 0);
        free(sub);
        sub = path_join(dir, "20-fifo.json");
        ASSERT_EQ(mkfifo(sub, 0644), 0);
        free(sub);
        p = load1(dir);
        assert_problems(p, dir,
                        "%s/10-dir.json: not a regular file; refusing",
                        "%s/20-fifo.json: not a regular file; refusing",
                        NULL);
        policy_free(p);
        remove_dir(dir);

        /* The owner: the daemon passes 0; here someone else than us. */
        p = load_dirs((const char *const[]) { good, NULL }, getuid() + 1);
        {
                char *expected;

                ASSERT_TRUE(asprintf(&expected, "%s: directory owned by uid %u, not %u; refusing all its files",
                                     good, (unsigned) getuid(), (unsigned) getuid() + 1) > 0);
                ASSERT_EQ(policy_problems(p, NULL) ? 1 : 0, 1);
                ASSERT_STREQ(policy_problems(p, NULL)[0].message, expected);
                free(expected);
        }
        ASSERT_EQ(policy_n_rules(p), 0);
        policy_free(p);

        /* A file owned by someone else, in a directory we trust: only
         * root can give a file away, so check the file only as root. */
        if (getuid() == 0) {
                char *file = path_join(good, "20-theirs.json"), *expected;

                write_file(good, "20-theirs.json", "{\"rules\": []}");
                ASSERT_EQ(chown(file, 4242, 0), 0);
                p = load1(good);
                ASSERT_TRUE(asprintf(&expected, "%s: owned by uid 4242, not 0; refusing", file) > 0);
                ASSERT_EQ(policy_n_rules(p), 1);
                ASSERT_STREQ(policy_problems(p, NULL)[0].message, expected);
                free(expected);
                ASSERT_EQ(unlink(file), 0);
                free(file);
                policy_free(p);
        } else
                printf("  (not root: file ownership checked through the directory only)\n");

        /* A world-writable or group-writable directory: none of its files. */
        ASSERT_EQ(chmod(good, 0777), 0);
        p = load1(good);
        assert_problems(p, good, "%s: directory world-writable (mode 0777); refusing all its files", NULL);
        ASSERT_EQ(policy_n_rules(p), 0);
        policy_free(p);
        ASSERT_EQ(chmod(good, 0775), 0);
        p = load1(good);
        assert_problems(p, good, "%s: directory group-writable (mode 0775); refusing all its files", NULL);
        policy_free(p);
        ASSERT_EQ(chmod(good, 0755), 0);
        p = load1(good);
        assert_no_problems(p);
        ASSERT_EQ(policy_n_rules(p), 1);
        policy_free(p);

        /* Too large. */
        {
                size_t n = POLICY_FILE_SIZE_MAX + 2;
                char *big = malloc(n);

                ASSERT_NOT_NULL(big);
                memset(big, ' ', n);
                big[0] = '{';
                big[n - 1] = '}';
                write_file_len(good, "20-big.json", big, n, 0644);
                free(big);
                p = load1(good);
                assert_problems(p, good, "%s/20-big.json: larger than 1048576 bytes; refusing", NULL);
                policy_free(p);
        }

        remove_dir(good);
}

int main(void) {
        TEST_RUN(test_scope_names);
        TEST_RUN(test_load_base);
        TEST_RUN(test_load_every_key);
        TEST_RUN(test_load_empty_and_missing);
        TEST_RUN(test_syntax_errors);
        TEST_RUN(test_semantic_errors);
        TEST_RUN(test_escaped_keys);
        TEST_RUN(test_unknown_subjects_warn);
        TEST_RUN(test_bad_file_skipped);
        TEST_RUN(test_override_by_name);
        TEST_RUN(test_lexical_order);
        TEST_RUN(test_refused_override_withdraws);
        TEST_RUN(test_permissions);
        return 0;
}
