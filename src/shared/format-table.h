/* SPDX-License-Identifier: MIT */
#pragma once

/* A small aligned-table printer for human output ("injectctl list"):
 *
 *         _cleanup_(table_freep) Table *t = NULL;
 *         r = table_new(&t, "ID", "FUNCTION", "LEFT", NULL);
 *         table_set_align(t, 2, TABLE_ALIGN_RIGHT);
 *         table_add_cell(t, TABLE_COLOR_NONE, "1");  ... row by row ...
 *         r = table_print(t, stdout, color ? TABLE_PRINT_COLOR : 0);
 *
 * Cells are filled in row-major order. Control characters and invalid
 * UTF-8 in cell text (a process's comm is chosen by that process) are
 * printed as \xNN, so a cell can never move the cursor or recolor the
 * terminal. Widths count code points, which is exact for the ASCII this
 * project prints and an approximation for double-width characters. */

#include <stdio.h>

#include "cleanup.h"

typedef struct Table Table;

typedef enum TableAlign {
        TABLE_ALIGN_LEFT,
        TABLE_ALIGN_RIGHT,
} TableAlign;

/* Applied only when table_print() gets TABLE_PRINT_COLOR. */
typedef enum TableColor {
        TABLE_COLOR_NONE,
        TABLE_COLOR_RED,
        TABLE_COLOR_GREEN,
        TABLE_COLOR_YELLOW,
        TABLE_COLOR_GREY,
        TABLE_COLOR_BOLD,
        _TABLE_COLOR_MAX,
} TableColor;

typedef enum TablePrintFlags {
        TABLE_PRINT_COLOR     = 1 << 0, /* emit ANSI colors; headers in bold */
        TABLE_PRINT_NO_HEADER = 1 << 1, /* for output meant for scripts */
} TablePrintFlags;

/* Takes the column headers, terminated by NULL; at least one.
 * Returns 0, -EINVAL, -ENOMEM. */
int table_new(Table **ret, const char *first_header, ...) __attribute__((sentinel));

Table *table_free(Table *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Table *, table_free)

/* Columns are left-aligned unless set otherwise; numbers read better
 * right-aligned. Returns 0, -EINVAL for a column that does not exist. */
int table_set_align(Table *t, size_t column, TableAlign align);

/* Appends a cell; NULL text is an empty cell. Returns 0, -EINVAL, -ENOMEM. */
int table_add_cell(Table *t, TableColor color, const char *text);
int table_add_cellf(Table *t, TableColor color, const char *format, ...) _printf_(3, 4);

/* Rows added so far, headers not counted; a partial row counts. */
size_t table_get_rows(const Table *t);

/* Prints the table and flushes f. The last column is not padded, so lines
 * carry no trailing blanks. Returns 0; -EINVAL if the last row is
 * incomplete (a caller bug, better caught than printed misaligned);
 * a negative errno from writing. */
int table_print(const Table *t, FILE *f, TablePrintFlags flags);
