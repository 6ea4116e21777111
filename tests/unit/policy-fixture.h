/* SPDX-License-Identifier: MIT */
#pragma once

/* The policy tests' fixture (policy-fixture.c). */

#include <stddef.h>
#include <sys/types.h>

#include "policy.h"

char *make_dir(void);
void remove_dir(char *d);
char *path_join(const char *dir, const char *name);
void write_file_len(const char *dir, const char *name, const char *text, size_t len, mode_t mode);
void write_file(const char *dir, const char *name, const char *text);
Policy *load_dirs(const char *const *dirs, uid_t owner);
Policy *load1(const char *dir);
void dump_problems(const Policy *p);
void assert_problems(const Policy *p, const char *dir, ...);
void assert_no_problems(const Policy *p);
