/* SPDX-License-Identifier: MIT */
#pragma once

/* injectd runs as root (it owns /sys/fs/bpf/injectd and /run/injectd) but
 * keeps only the capabilities BPF and cgroup work need; docs/security.md
 * says why each one is kept. */

int privileges_drop(void);
const char *privileges_kept(void);      /* "cap_bpf,cap_perfmon,...", for logs and docs */
