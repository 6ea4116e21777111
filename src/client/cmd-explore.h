/* SPDX-License-Identifier: MIT */
#pragma once

/* injectctl explore (docs/explore.md). */
int cmd_explore(int argc, char **argv);
