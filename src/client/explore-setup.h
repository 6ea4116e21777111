/* SPDX-License-Identifier: MIT */
#pragma once

/* explore's --setup and --cleanup (docs/explore.md): shell commands run
 * once, with nothing armed for them (every injection of explore is
 * scoped to a run's process tree, and these are no run's), for the work
 * every run shares: make a file system image once, each run copies it. */

/* Runs "sh -c cmd" with its output on our standard error (standard output
 * is explore's findings), and waits for it. what names it in messages
 * ("--setup"). Returns its exit code (128+N for signal N), or a negative
 * errno when it could not run. */
int explore_shell(const char *what, const char *cmd);

/* For _cleanup_: runs *cmd (--cleanup), if set, once. */
void explore_cleanup_run(const char **cmd);
