/* SPDX-License-Identifier: MIT */
#pragma once

/* injectctl run: a command run with faults armed on it alone. */
int cmd_run(int argc, char **argv);
