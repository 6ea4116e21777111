/* SPDX-License-Identifier: MIT */
#pragma once

/* Formatting into a new string, the way the rest of the code reports
 * failure: asprintf() returns -1 and leaves its pointer undefined, which
 * every caller had to remember to reset. */

#include <stdarg.h>

#include "cleanup.h"

/* *ret = a new string of fmt and its arguments. Returns 0, or -ENOMEM
 * with *ret untouched. */
int strprintf(char **ret, const char *fmt, ...) _printf_(2, 3);
int vstrprintf(char **ret, const char *fmt, va_list ap) _printf_(2, 0);
