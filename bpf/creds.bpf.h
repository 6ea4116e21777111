/* SPDX-License-Identifier: GPL-2.0 */
/* creds_match(uid): whether the current task runs with nothing but uid's
 * own credentials. Shared by inject.bpf.c and observe.bpf.c: an
 * observation must count exactly the calls an injection of the same user
 * would match, no more. Counting the calls of a setuid program the user
 * started would tell her about state only root may read (how many files
 * a root-only directory holds, say), and those are calls she could never
 * fail anyway.
 *
 * Needs vmlinux-min.h and bpf_core_read.h included before. */
#ifndef INJECTD_CREDS_BPF_H
#define INJECTD_CREDS_BPF_H

/* A user's injection fails only tasks that run with nothing but the user's
 * own credentials. Failing a call (a setuid() that "fails", say) inside a
 * program that holds more is a classic privilege escalation, so these are
 * spared: a setuid or setgid program (a uid or gid that is not the user's),
 * one that dropped its effective id but kept a saved or filesystem one to
 * take back, and one that holds any capability (file capabilities: ping,
 * newuidmap, mtr-packet). Capabilities are checked in the permitted set,
 * which bounds the effective set and holds the ambient one, and which a
 * task can raise to effective at will; effective is read as well, so a
 * kernel bug that broke that rule would still not let a fault through.
 * The inheritable set grants nothing by itself. Capabilities count only in
 * the initial user namespace: a task's capabilities hold in its own user
 * namespace and below, and one the user made (unshare -r, rootless podman,
 * whose root is the user) holds nothing of anyone else's, so a container's
 * root is failed like the user's other processes. A failed read spares the
 * task (level reads 0). */
static __always_inline int creds_match(__u32 uid)
{
        struct task_struct *t = (void *) bpf_get_current_task();
        const struct cred *c = BPF_CORE_READ(t, cred);
        kernel_cap_t perm, eff;
        __u32 gid;

        if (BPF_CORE_READ(c, uid.val) != uid || BPF_CORE_READ(c, euid.val) != uid ||
            BPF_CORE_READ(c, suid.val) != uid || BPF_CORE_READ(c, fsuid.val) != uid)
                return 0;
        gid = BPF_CORE_READ(c, gid.val);
        if (BPF_CORE_READ(c, egid.val) != gid || BPF_CORE_READ(c, sgid.val) != gid ||
            BPF_CORE_READ(c, fsgid.val) != gid)
                return 0;
        if (BPF_CORE_READ(c, user_ns, level) > 0)
                return 1;
        if (BPF_CORE_READ_INTO(&perm, c, cap_permitted) < 0 || BPF_CORE_READ_INTO(&eff, c, cap_effective) < 0)
                return 0;
        return !(perm.cap[0] | perm.cap[1] | eff.cap[0] | eff.cap[1]);
}

#endif
