/* SPDX-License-Identifier: MIT */
#pragma once

/* injectctl inject. */
int cmd_inject(int argc, char **argv);
