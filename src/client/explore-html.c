/* SPDX-License-Identifier: MIT */
/* explore's HTML report (explore-html.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "explore-html.h"
#include "io-util.h"
#include "json-util.h"

static void esc(FILE *f, const char *s) {
        for (; s && *s; s++)
                switch (*s) {
                case '<': fputs("&lt;", f); break;
                case '>': fputs("&gt;", f); break;
                case '&': fputs("&amp;", f); break;
                case '"': fputs("&quot;", f); break;
                case '\'': fputs("&#39;", f); break;
                default: fputc(*s, f);
                }
}

static const char *str(json_object *o, const char *key) {
        const char *s = NULL;

        (void) json_get_string(o, key, &s);
        return s ?: "";
}

static unsigned long long num(json_object *o, const char *key) {
        uint64_t u = 0;

        (void) json_get_u64(o, key, 0, UINT64_MAX, &u);
        return (unsigned long long) u;
}

static void strings(FILE *f, json_object *a) {
        for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                esc(f, json_object_get_string(json_object_array_get_idx(a, i)));
                fputc('\n', f);
        }
}

static void findings(FILE *f, json_object *a) {
        size_t n = a ? json_object_array_length(a) : 0;

        fprintf(f, "<h2>Findings (%zu)</h2>\n", n);
        if (n == 0)
                fputs("<p>No findings.</p>\n", f);
        for (size_t i = 0; i < n; i++) {
                json_object *x = json_object_array_get_idx(a, i), *stack = NULL;

                (void) json_get_array(x, "stack", &stack);
                fprintf(f, "<div class=\"finding\"><h3>%zu. <span class=\"det\">", i + 1);
                esc(f, str(x, "detector"));
                fputs("</span> ", f);
                esc(f, str(x, "title"));
                fputs("</h3>\n<p>Failed: <code>", f);
                esc(f, str(x, "function"));
                fprintf(f, "</code>, call %llu (first in run %llu; found in %llu run%s)</p>\n", num(x, "call"),
                        num(x, "first_run"), num(x, "runs"), num(x, "runs") == 1 ? "" : "s");
                fputs("<p>Reproduce:</p><pre class=\"repro\">", f);
                esc(f, str(x, "reproducer"));
                fputs("</pre>\n<details open><summary>Report</summary><pre>", f);
                esc(f, str(x, "report"));
                fputs("</pre></details>\n<details><summary>The failed call's stack</summary><pre>", f);
                strings(f, stack);
                fputs("</pre></details>\n<p class=\"sig\">Signature: ", f);
                esc(f, str(x, "signature"));
                fputs("</p></div>\n", f);
        }
}

static void runs(FILE *f, json_object *a) {
        size_t n = a ? json_object_array_length(a) : 0;

        fprintf(f, "<h2>Runs (%zu)</h2>\n<table>\n<tr><th>Run</th><th>Function</th><th>Call</th><th>Failed</th>"
                "<th>Result</th><th>Kernel reports</th><th>Output</th></tr>\n", n);
        for (size_t i = 0; i < n; i++) {
                json_object *r = json_object_array_get_idx(a, i), *reports = NULL, *v;
                bool fired = false, hung = false;

                (void) json_get_bool(r, "fired", &fired);
                (void) json_get_bool(r, "hung", &hung);
                (void) json_get_array(r, "reports", &reports);
                fprintf(f, "<tr><td>%llu</td><td><code>", num(r, "run"));
                esc(f, str(r, "function"));
                fprintf(f, "</code></td><td>%llu</td><td>%s</td><td>", num(r, "call"), fired ? "yes" : "not reached");
                if (hung)
                        fputs("hung", f);
                else if (*str(r, "signal"))
                        esc(f, str(r, "signal"));
                else if (json_object_object_get_ex(r, "exit_status", &v) && v)
                        fprintf(f, "exit %d", json_object_get_int(v));
                fputs("</td><td>", f);
                for (size_t k = 0; reports && k < json_object_array_length(reports); k++) {
                        json_object *x = json_object_array_get_idx(reports, k);

                        fputs(k ? "<br>" : "", f);
                        fputs("<span class=\"det\">", f);
                        esc(f, str(x, "detector"));
                        fputs("</span> ", f);
                        esc(f, str(x, "title"));
                }
                fputs("</td><td><details><summary>output</summary><pre>", f);
                esc(f, str(r, "output"));
                fputs("</pre></details></td></tr>\n", f);
        }
        fputs("</table>\n", f);
}

static int fill_html(FILE *f, void *userdata) {
        json_object *report = userdata, *a = NULL, *cmd = NULL, *notes = NULL;

        fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>injectctl explore: ", f);
        (void) json_get_array(report, "command", &cmd);
        for (size_t i = 0; cmd && i < json_object_array_length(cmd); i++) {
                esc(f, json_object_get_string(json_object_array_get_idx(cmd, i)));
                fputc(' ', f);
        }
        fputs("</title>\n<style>\n"
              "body{font-family:sans-serif;margin:2em;max-width:80em}\n"
              "pre{background:#f4f4f4;padding:.5em;overflow-x:auto;white-space:pre-wrap}\n"
              ".finding{border-left:4px solid #c33;padding-left:1em;margin-bottom:2em}\n"
              ".det{font-weight:bold;color:#a00}.sig{color:#666;font-size:90%}\n"
              "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em;vertical-align:top}\n"
              "</style></head><body>\n<h1>injectctl explore</h1>\n<p>Command: <code>", f);
        for (size_t i = 0; cmd && i < json_object_array_length(cmd); i++) {
                esc(f, json_object_get_string(json_object_array_get_idx(cmd, i)));
                fputc(' ', f);
        }
        fputs("</code></p>\n", f);
        (void) json_get_array(report, "reached", &a);
        fprintf(f, "<p>Functions reached: %zu; runs planned: %llu (%llu left out by --max-runs); stopped: ",
                a ? json_object_array_length(a) : 0, num(report, "plan_runs"), num(report, "plan_left_out"));
        esc(f, str(report, "stopped"));
        fputs(".</p>\n", f);
        (void) json_get_array(report, "notes", &notes);
        if (notes && json_object_array_length(notes) > 0) {
                fputs("<p>Not checked:</p><pre>", f);
                strings(f, notes);
                fputs("</pre>\n", f);
        }
        a = NULL;
        (void) json_get_array(report, "refused", &a);
        if (a && json_object_array_length(a) > 0) {
                fputs("<p>Functions injectd refused to fail (their runs skipped):</p><pre>", f);
                for (size_t i = 0; i < json_object_array_length(a); i++) {
                        json_object *x = json_object_array_get_idx(a, i);

                        esc(f, str(x, "function"));
                        fputs(": ", f);
                        esc(f, str(x, "error"));
                        fputs(": ", f);
                        esc(f, str(x, "message"));
                        fputc('\n', f);
                }
                fputs("</pre>\n", f);
        }
        a = NULL;
        (void) json_get_array(report, "findings", &a);
        findings(f, a);
        a = NULL;
        (void) json_get_array(report, "runs", &a);
        runs(f, a);
        fputs("</body></html>\n", f);
        return 0;
}

int explore_write_html(const char *path, json_object *report) {
        /* Written as the JSON report is: a new file renamed over the old,
         * never a symlink followed. */
        return file_replace(path, fill_html, report);
}
