/* SPDX-License-Identifier: MIT */
#pragma once

/* injectctl list, show, cancel and watch. */
int cmd_list(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_watch(int argc, char **argv);
