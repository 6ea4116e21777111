/* SPDX-License-Identifier: MIT */
/* explore's findings (explore-findings.h). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore-findings.h"
#include "json-build.h"

void findings_done(Findings *f) {
        for (size_t i = 0; i < f->n; i++) {
                Finding *x = &f->v[i];

                free(x->signature);
                free(x->detector);
                free(x->title);
                free(x->report);
                free(x->function);
                free(x->reproducer);
                json_object_put(x->stack);
                free(x->attributed);
                free(x->comm);
                json_object_put(x->candidates);
        }
        free(f->v);
        *f = (Findings) {};
}

int findings_add(Findings *f, const char *signature, const char *detector, const char *title, const char *report,
                 const char *function, uint64_t call, const char *reproducer, json_object *stack, uint64_t run) {
        Finding *v, *x;

        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->v[i].signature, signature) == 0) {
                        f->v[i].n_runs++;
                        return 0;
                }
        v = realloc(f->v, (f->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        f->v = v;
        x = &v[f->n++];
        *x = (Finding) {
                .signature = strdup(signature),
                .detector = strdup(detector),
                .title = strdup(title),
                .report = strdup(report),
                .function = strdup(function),
                .call = call,
                .reproducer = strdup(reproducer),
                .stack = stack ? json_object_get(stack) : json_object_new_array(),
                .first_run = run,
                .n_runs = 1,
        };
        if (!x->signature || !x->detector || !x->title || !x->report || !x->function || !x->reproducer || !x->stack)
                return -ENOMEM;
        return 1;
}

int finding_set_attribution(Findings *f, size_t i, const char *how, int pid, const char *comm) {
        Finding *x = &f->v[i];

        free(x->attributed);
        free(x->comm);
        x->attributed = how ? strdup(how) : NULL;
        x->comm = comm ? strdup(comm) : NULL;
        x->pid = pid;
        return (how && !x->attributed) || (comm && !x->comm) ? -ENOMEM : 0;
}

int finding_set_candidates(Findings *f, size_t i, json_object *candidates) {
        json_object_put(f->v[i].candidates);
        f->v[i].candidates = json_object_get(candidates);
        return 0;
}

json_object *findings_json(const Findings *f) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < f->n; i++) {
                const Finding *x = &f->v[i];
                json_object *o = NULL;

                if (json_build_object(&o,
                                      JSON_PAIR_STRING("signature", x->signature),
                                      JSON_PAIR_STRING("detector", x->detector),
                                      JSON_PAIR_STRING("title", x->title),
                                      JSON_PAIR_STRING("function", x->function),
                                      JSON_PAIR_U64("call", x->call),
                                      JSON_PAIR_STRING("reproducer", x->reproducer),
                                      JSON_PAIR_REF("stack", x->stack),
                                      JSON_PAIR_U64("first_run", x->first_run),
                                      JSON_PAIR_U64("runs", x->n_runs),
                                      JSON_PAIR_IF(x->attributed, JSON_PAIR_STRING("attributed", x->attributed)),
                                      JSON_PAIR_IF(x->pid > 0, JSON_PAIR_I64("pid", x->pid)),
                                      JSON_PAIR_IF(x->comm, JSON_PAIR_STRING("comm", x->comm)),
                                      JSON_PAIR_IF(x->candidates, JSON_PAIR_REF("candidate_runs", x->candidates)),
                                      JSON_PAIR_STRING("report", x->report),
                                      JSON_BUILD_END) < 0 ||
                    json_append(a, o) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

/* Appends s to buf quoted for a POSIX shell: as is when it has only safe
 * characters, else in single quotes with each ' as '\''. */
static int append_quoted(char **buf, size_t *len, const char *s) {
        bool plain = *s != 0;
        size_t need = 3;
        char *b, *o;

        for (const char *p = s; *p; p++) {
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%", *p))
                        plain = false;
                need += *p == '\'' ? 4 : 1;
        }
        b = realloc(*buf, *len + need + 2);
        if (!b)
                return -ENOMEM;
        *buf = b;
        o = b + *len;
        *o++ = ' ';
        if (plain)
                o = stpcpy(o, s);
        else {
                *o++ = '\'';
                for (const char *p = s; *p; p++)
                        o = *p == '\'' ? stpcpy(o, "'\\''") : (*o = *p, o + 1);
                *o++ = '\'';
        }
        *o = 0;
        *len = (size_t) (o - b);
        return 0;
}

char *explore_reproducer(const char *function, const char *error, uint64_t call, char *const *cmd) {
        char *buf = NULL;
        size_t len;

        if (asprintf(&buf, "injectctl run --fail %s%s%s,after=%" PRIu64 ",times=1 --", function, error ? ":" : "",
                     error ?: "", call) < 0)
                return NULL;
        len = strlen(buf);
        for (size_t i = 0; cmd[i]; i++)
                if (append_quoted(&buf, &len, cmd[i]) < 0) {
                        free(buf);
                        return NULL;
                }
        return buf;
}
