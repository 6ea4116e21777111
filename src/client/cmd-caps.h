/* SPDX-License-Identifier: MIT */
#pragma once

/* injectctl caps, functions and reload-policy: what this kernel and injectd offer. */
int cmd_caps(int argc, char **argv);
int cmd_functions(int argc, char **argv);
int cmd_reload_policy(int argc, char **argv);
