/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <zlib.h>

#include "kconfig.h"

/* Long string options (CONFIG_CMDLINE, CONFIG_LSM) fit; longer lines are
 * read in pieces and only their first piece counts, which holds the name. */
#define KCONFIG_LINE_MAX 4096

KernelConfig *kconfig_free(KernelConfig *k) {
        if (!k)
                return NULL;
        for (size_t i = 0; i < k->n; i++) {
                free(k->entries[i].name);
                free(k->entries[i].value);
        }
        free(k->entries);
        free(k->source);
        free(k->tried);
        free(k);
        return NULL;
}

bool kconfig_readable(const KernelConfig *k) {
        return k && k->source;
}

static int cmp_entry(const void *a, const void *b) {
        const KconfigEntry *x = a, *y = b;
        return strcmp(x->name, y->name);
}

static int add_entry(KernelConfig *k, const char *name, size_t name_len, const char *value) {
        KconfigEntry *v;

        /* Capacity: 256, doubling whenever n reaches a power of two. */
        if (k->n == 0 || (k->n >= 256 && (k->n & (k->n - 1)) == 0)) {
                v = realloc(k->entries, (k->n ? k->n * 2 : 256) * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                k->entries = v;
        }
        v = &k->entries[k->n];
        v->name = strndup(name, name_len);
        v->value = strdup(value);
        if (!v->name || !v->value) {
                free(v->name);
                free(v->value);
                return -ENOMEM;
        }
        k->n++;
        return 0;
}

/* "CONFIG_X=value" is set; "# CONFIG_X is not set" is recorded by its
 * absence, which kconfig_get() reports the same way. */
static int parse_line(KernelConfig *k, char *line) {
        char *eq;

        line[strcspn(line, "\r\n")] = 0;
        if (strncmp(line, "CONFIG_", 7) != 0)
                return 0;
        eq = strchr(line, '=');
        if (!eq || eq == line + 7)
                return 0;
        return add_entry(k, line, eq - line, eq + 1);
}

static void sort_entries(KernelConfig *k) {
        if (k->n > 1)
                qsort(k->entries, k->n, sizeof(*k->entries), cmp_entry);
}

int kconfig_parse(KernelConfig *k, FILE *f) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        int r;

        while (getline(&line, &cap, f) > 0) {
                r = parse_line(k, line);
                if (r < 0)
                        return r;
        }
        sort_entries(k);
        return ferror(f) ? -EIO : 0;
}

static int read_gz(KernelConfig *k, const char *path) {
        _cleanup_free_ char *line = NULL;
        gzFile g;
        int r = 0, zerr;

        g = gzopen(path, "rbe");
        if (!g)
                return errno > 0 ? -errno : -ENOMEM;
        line = malloc(KCONFIG_LINE_MAX);
        if (!line) {
                gzclose(g);
                return -ENOMEM;
        }
        while (r >= 0 && gzgets(g, line, KCONFIG_LINE_MAX))
                r = parse_line(k, line);
        if (r >= 0) {
                (void) gzerror(g, &zerr);
                if (zerr != Z_OK && zerr != Z_STREAM_END)
                        r = zerr == Z_ERRNO && errno > 0 ? -errno : -EBADMSG;
        }
        gzclose(g);
        return r;
}

static int append_tried(KernelConfig *k, const char *path, int r) {
        char *s;

        if (asprintf(&s, "%s%s%s (%s)", k->tried ?: "", k->tried ? ", " : "", path, strerror(-r)) < 0)
                return -ENOMEM;
        free(k->tried);
        k->tried = s;
        return 0;
}

int kconfig_load(const char *const *paths, KernelConfig **ret) {
        _cleanup_(kconfig_freep) KernelConfig *k = NULL;
        char boot[320], modules[320];
        const char *defaults[4];
        struct utsname u;
        int r;

        if (!paths) {
                size_t n = 0;

                defaults[n++] = "/proc/config.gz";
                if (uname(&u) >= 0) {
                        snprintf(boot, sizeof(boot), "/boot/config-%s", u.release);
                        snprintf(modules, sizeof(modules), "/lib/modules/%s/config", u.release);
                        defaults[n++] = boot;
                        defaults[n++] = modules;
                }
                defaults[n] = NULL;
                paths = defaults;
        }

        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        for (size_t i = 0; paths[i]; i++) {
                r = read_gz(k, paths[i]);
                if (r >= 0 && k->n > 0) {
                        sort_entries(k);
                        k->source = strdup(paths[i]);
                        if (!k->source)
                                return -ENOMEM;
                        free(k->tried);
                        k->tried = NULL;
                        break;
                }
                if (r == -ENOMEM)
                        return r;
                /* A file without a single option is not a kernel config. */
                r = append_tried(k, paths[i], r < 0 ? r : -ENODATA);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < k->n; j++) {
                        free(k->entries[j].name);
                        free(k->entries[j].value);
                }
                k->n = 0;
        }
        *ret = TAKE_PTR(k);
        return 0;
}

KconfigState kconfig_get(const KernelConfig *k, const char *option, const char **ret_value) {
        KconfigEntry key = { .name = (char *) option }, *e;

        if (!kconfig_readable(k))
                return KCONFIG_UNKNOWN;
        e = k->n ? bsearch(&key, k->entries, k->n, sizeof(*e), cmp_entry) : NULL;
        if (!e)
                return KCONFIG_UNSET;
        if (ret_value)
                *ret_value = e->value;
        if (strcmp(e->value, "y") == 0)
                return KCONFIG_YES;
        if (strcmp(e->value, "m") == 0)
                return KCONFIG_MODULE;
        if (strcmp(e->value, "n") == 0)
                return KCONFIG_UNSET;
        return KCONFIG_VALUE;
}
