/* SPDX-License-Identifier: MIT */

/* Cgroup path patterns for policy rules: checking them when the policy is
 * loaded, and matching the caller's cgroup against them. Our own matcher,
 * not fnmatch(): it must treat '\' and '[' the same way whatever libc
 * does, and "**" is not fnmatch()'s. */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "policy-cgroup.h"

typedef struct Component {
        const char *s;
        size_t n;
} Component;

/* Splits an absolute path into its components ("/" has none). Returns
 * the count, or -1 if there are more than POLICY_CGROUP_DEPTH_MAX or one
 * is empty. */
static int split(const char *path, Component c[static POLICY_CGROUP_DEPTH_MAX]) {
        const char *p = path + 1;
        int n = 0;

        if (strcmp(path, "/") == 0)
                return 0;

        for (;;) {
                size_t l = strcspn(p, "/");

                if (l == 0 || n >= POLICY_CGROUP_DEPTH_MAX)
                        return -1;
                c[n++] = (Component) { p, l };
                if (p[l] == '\0')
                        return n;
                p += l + 1;
        }
}

static bool is(const Component *c, const char *s) {
        return c->n == strlen(s) && memcmp(c->s, s, c->n) == 0;
}

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

const char *policy_cgroup_pattern_invalid(const char *p) {
        Component c[POLICY_CGROUP_DEPTH_MAX];
        size_t l = strlen(p);
        int n;

        if (l == 0)
                return "empty";
        if (l > POLICY_CGROUP_PATTERN_MAX)
                return "too long";
        if (p[0] != '/')
                return "must be an absolute path, starting with '/'";
        if (has_control(p))
                return "control character";
        if (strpbrk(p, "[]"))
                return "[...] classes are not supported (only '*', '?' and \"**\")";

        n = split(p, c);
        if (n < 0)
                return l > 1 && p[l - 1] == '/' ? "trailing '/' (write \"/**\" for \"and below\")"
                                                : "empty component (\"//\") or too many components";
        for (int i = 0; i < n; i++) {
                if (is(&c[i], ".") || is(&c[i], ".."))
                        return "'.' and '..' components are not allowed";
                if (!is(&c[i], "**") && memmem(c[i].s, c[i].n, "**", 2))
                        return "\"**\" must be a whole component (\"/a/**\", \"/a/**/b\")";
        }
        return NULL;
}

bool policy_cgroup_path_is_canonical(const char *path) {
        Component c[POLICY_CGROUP_DEPTH_MAX];
        int n;

        if (!path || path[0] != '/' || has_control(path))
                return false;
        n = split(path, c);
        if (n < 0)
                return false;
        for (int i = 0; i < n; i++)
                if (is(&c[i], ".") || is(&c[i], ".."))
                        return false;
        return true;
}

/* One component against one pattern component of '*', '?' and plain
 * characters: greedy, going back only to the last '*', which is enough
 * as each other token matches exactly one character. */
static bool component_match(const Component *pat, const Component *s) {
        size_t pi = 0, si = 0, star = SIZE_MAX, mark = 0;

        while (si < s->n) {
                if (pi < pat->n && pat->s[pi] == '*') {
                        star = pi++;
                        mark = si;
                } else if (pi < pat->n && (pat->s[pi] == '?' || pat->s[pi] == s->s[si])) {
                        pi++;
                        si++;
                } else if (star != SIZE_MAX) {
                        pi = star + 1;
                        si = ++mark;
                } else
                        return false;
        }
        while (pi < pat->n && pat->s[pi] == '*')
                pi++;
        return pi == pat->n;
}

bool policy_cgroup_match(const char *pattern, const char *path) {
        Component pc[POLICY_CGROUP_DEPTH_MAX], sc[POLICY_CGROUP_DEPTH_MAX];
        size_t pi = 0, si = 0, star = SIZE_MAX, mark = 0;
        int np, ns;

        if (!pattern || !policy_cgroup_path_is_canonical(path) || policy_cgroup_pattern_invalid(pattern))
                return false;
        np = split(pattern, pc);
        ns = split(path, sc);
        if (np < 0 || ns < 0)
                return false;

        /* The same walk one level up: "**" is the star, a component the
         * character. */
        while (si < (size_t) ns) {
                if (pi < (size_t) np && is(&pc[pi], "**")) {
                        star = pi++;
                        mark = si;
                } else if (pi < (size_t) np && component_match(&pc[pi], &sc[si])) {
                        pi++;
                        si++;
                } else if (star != SIZE_MAX) {
                        pi = star + 1;
                        si = ++mark;
                } else
                        return false;
        }
        while (pi < (size_t) np && is(&pc[pi], "**"))
                pi++;
        return pi == (size_t) np;
}
