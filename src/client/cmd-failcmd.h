/* SPDX-License-Identifier: MIT */
#pragma once

/* injectctl failcmd: the kernel's failslab and fail_page_alloc knobs, the failcmd.sh way. */
int cmd_failcmd(int argc, char **argv);
