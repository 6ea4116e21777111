/* SPDX-License-Identifier: MIT */
#pragma once

/* injectctl sweep: fail each call of a function in turn. */
int cmd_sweep(int argc, char **argv);
