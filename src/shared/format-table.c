/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format-table.h"
#include "utf8.h"

#define ANSI_RESET "\033[0m"

/* Between columns. */
#define TABLE_SEPARATOR "  "

typedef struct TableCell {
        char *text;   /* escaped, safe to print */
        size_t width; /* in code points */
        TableColor color;
} TableCell;

struct Table {
        size_t n_columns;
        TableAlign *align;

        /* Headers first, then rows, all row-major. */
        TableCell *cells;
        size_t n_cells, n_allocated;
};

static const char *const table_color_ansi[_TABLE_COLOR_MAX] = {
        [TABLE_COLOR_NONE]   = NULL,
        [TABLE_COLOR_RED]    = "\033[31m",
        [TABLE_COLOR_GREEN]  = "\033[32m",
        [TABLE_COLOR_YELLOW] = "\033[33m",
        [TABLE_COLOR_GREY]   = "\033[90m",
        [TABLE_COLOR_BOLD]   = "\033[1m",
};

static int cell_escape(const char *s, TableCell *ret) {
        size_t len = strlen(s), width = 0, k = 0, i = 0;
        char *e;

        /* Every byte grows to at most 4 ("\xNN"). */
        if (len > (SIZE_MAX - 1) / 4)
                return -ENOMEM;
        e = malloc(len * 4 + 1);
        if (!e)
                return -ENOMEM;

        while (i < len) {
                unsigned char c = (unsigned char) s[i];
                size_t n = 0;

                if (c >= 0x20 && c < 0x7f)
                        n = 1;
                else if (c >= 0x80) {
                        n = utf8_char_len(s + i, len - i);
                        /* C1 controls (U+0080..U+009F) are escape sequences
                         * to some terminals. */
                        if (n == 2 && c == 0xc2 && (unsigned char) s[i + 1] < 0xa0)
                                n = 0;
                }

                if (n > 0) {
                        memcpy(e + k, s + i, n);
                        k += n;
                        i += n;
                        width++;
                } else {
                        k += (size_t) sprintf(e + k, "\\x%02x", c);
                        i++;
                        width += 4;
                }
        }
        e[k] = '\0';

        *ret = (TableCell) {
                .text = e,
                .width = width,
        };
        return 0;
}

static int table_append(Table *t, TableColor color, const char *text) {
        TableCell c;
        int r;

        if ((unsigned) color >= _TABLE_COLOR_MAX)
                return -EINVAL;

        if (t->n_cells >= t->n_allocated) {
                size_t n = t->n_allocated > 0 ? t->n_allocated * 2 : 16;
                TableCell *a;

                if (n > SIZE_MAX / sizeof(TableCell))
                        return -ENOMEM;
                a = realloc(t->cells, n * sizeof(TableCell));
                if (!a)
                        return -ENOMEM;
                t->cells = a;
                t->n_allocated = n;
        }

        r = cell_escape(text ? text : "", &c);
        if (r < 0)
                return r;
        c.color = color;

        t->cells[t->n_cells++] = c;
        return 0;
}

int table_new(Table **ret, const char *first_header, ...) {
        _cleanup_(table_freep) Table *t = NULL;
        va_list ap;
        size_t n = 0;
        int r = 0;

        if (!ret || !first_header)
                return -EINVAL;

        va_start(ap, first_header);
        for (const char *h = first_header; h; h = va_arg(ap, const char *))
                n++;
        va_end(ap);

        t = calloc(1, sizeof(Table));
        if (!t)
                return -ENOMEM;
        t->n_columns = n;
        t->align = calloc(n, sizeof(TableAlign));
        if (!t->align)
                return -ENOMEM;

        va_start(ap, first_header);
        for (const char *h = first_header; h && r >= 0; h = va_arg(ap, const char *))
                r = table_append(t, TABLE_COLOR_NONE, h);
        va_end(ap);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(t);
        return 0;
}

Table *table_free(Table *t) {
        if (!t)
                return NULL;

        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i].text);
        free(t->cells);
        free(t->align);
        free(t);
        return NULL;
}

int table_set_align(Table *t, size_t column, TableAlign align) {
        if (!t || column >= t->n_columns)
                return -EINVAL;
        if (align != TABLE_ALIGN_LEFT && align != TABLE_ALIGN_RIGHT)
                return -EINVAL;

        t->align[column] = align;
        return 0;
}

int table_add_cell(Table *t, TableColor color, const char *text) {
        if (!t)
                return -EINVAL;

        return table_append(t, color, text);
}

int table_add_cellf(Table *t, TableColor color, const char *format, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int r;

        if (!t || !format)
                return -EINVAL;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        return table_append(t, color, s);
}

size_t table_get_rows(const Table *t) {
        size_t body;

        if (!t)
                return 0;

        body = t->n_cells - t->n_columns;

        /* Rounded up, so a row being filled counts. */
        return (body + t->n_columns - 1) / t->n_columns;
}

static void print_padding(FILE *f, size_t n) {
        while (n-- > 0)
                fputc(' ', f);
}

int table_print(const Table *t, FILE *f, TablePrintFlags flags) {
        _cleanup_free_ size_t *widths = NULL;
        bool color = flags & TABLE_PRINT_COLOR;
        size_t first;

        if (!t || !f)
                return -EINVAL;
        if (t->n_cells % t->n_columns != 0)
                return -EINVAL;

        first = (flags & TABLE_PRINT_NO_HEADER) ? t->n_columns : 0;

        widths = calloc(t->n_columns, sizeof(size_t));
        if (!widths)
                return -ENOMEM;
        for (size_t i = first; i < t->n_cells; i++) {
                size_t c = i % t->n_columns;

                if (t->cells[i].width > widths[c])
                        widths[c] = t->cells[i].width;
        }

        for (size_t i = first; i < t->n_cells; i++) {
                const TableCell *cell = t->cells + i;
                size_t c = i % t->n_columns, pad = widths[c] - cell->width;
                bool last = c == t->n_columns - 1;
                /* Headers are bold; otherwise the cell's own color. */
                const char *ansi = !color ? NULL :
                                   i < t->n_columns ? table_color_ansi[TABLE_COLOR_BOLD] :
                                   table_color_ansi[cell->color];

                if (c > 0)
                        fputs(TABLE_SEPARATOR, f);
                if (t->align[c] == TABLE_ALIGN_RIGHT)
                        print_padding(f, pad);

                if (ansi)
                        fputs(ansi, f);
                fputs(cell->text, f);
                if (ansi)
                        fputs(ANSI_RESET, f);

                if (t->align[c] == TABLE_ALIGN_LEFT && !last)
                        print_padding(f, pad);
                if (last)
                        fputc('\n', f);
        }

        if (fflush(f) != 0)
                return negative_errno();
        if (ferror(f))
                return -EIO;

        return 0;
}
