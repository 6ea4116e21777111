/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "cleanup.h"
#include "log.h"
#include "privileges.h"

/* Keep in step with docs/security.md and units/injectd.service. */
static const cap_value_t kept[] = {
        CAP_BPF,                /* load programs, create maps, read BTF */
        CAP_PERFMON,            /* tracing programs: kprobe links, trampolines, bpf_get_stack */
        CAP_SYS_RESOURCE,       /* libbpf raises RLIMIT_MEMLOCK on kernels without memcg accounting */
        CAP_DAC_READ_SEARCH,    /* open_by_handle_at(): is a cgroup id still alive */
        CAP_SYSLOG,             /* real addresses in /proc/kallsyms, for caller filters */
};

const char *privileges_kept(void) {
        return "cap_bpf,cap_perfmon,cap_sys_resource,cap_dac_read_search,cap_syslog";
}

int privileges_drop(void) {
        cap_value_t have[ELEMENTSOF(kept)];
        size_t n_have = 0;
        cap_t caps;
        int r = 0;

        /* A kept capability we were started without (a container's or a
         * unit's bounding set) cannot be kept: asking for it would fail
         * the whole drop. Run with the rest; the kernel probe reports what
         * that costs. */
        caps = cap_get_proc();
        if (!caps)
                return log_error_errno(negative_errno(), "Failed to read our capabilities: %m");
        for (size_t i = 0; i < ELEMENTSOF(kept); i++) {
                cap_flag_value_t v = CAP_CLEAR;

                if (cap_get_flag(caps, kept[i], CAP_PERMITTED, &v) >= 0 && v == CAP_SET)
                        have[n_have++] = kept[i];
                else {
                        char *name = cap_to_name(kept[i]);

                        log_notice("Started without %s, which injectd would keep, ignoring.", name ?: "?");
                        cap_free(name);
                }
        }
        cap_free(caps);

        /* The bounding set first, while CAP_SETPCAP is still ours. */
        for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
                bool keep = false;

                for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                        keep = keep || kept[i] == c;
                if (!keep && prctl(PR_CAPBSET_READ, c) > 0 && prctl(PR_CAPBSET_DROP, c) < 0)
                        return log_error_errno(negative_errno(), "Failed to drop capability %d from the bounding set: %m",
                                               (int) c);
        }

        caps = cap_init();
        if (!caps)
                return log_oom();
        if ((n_have > 0 && (cap_set_flag(caps, CAP_EFFECTIVE, n_have, have, CAP_SET) < 0 ||
                            cap_set_flag(caps, CAP_PERMITTED, n_have, have, CAP_SET) < 0)) ||
            cap_set_proc(caps) < 0)
                r = log_error_errno(negative_errno(), "Failed to reduce capabilities: %m");
        cap_free(caps);
        if (r < 0)
                return r;
        /* Nothing we exec (we exec nothing) may regain what we dropped. */
        (void) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        log_debug("Capabilities reduced to %s.", privileges_kept());
        return 0;
}
