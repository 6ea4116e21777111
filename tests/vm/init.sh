#!/bin/bash
# tests/vm/init.sh - PID 1 of the injectd test VM started by tests/vm/run.
#
# The kernel mounts the host's root read-only over 9p and runs this script.
# It builds a writable root (overlay: 9p below, tmpfs above), mounts the
# kernel file systems the tests need, switches to the new root, runs the
# job that tests/vm/run left on the control share (tag injectd.ctl), writes
# the job's exit status back there and powers off.
#
# PID 1 must never exit (the kernel would panic, and with panic=-1 reboot,
# which -no-reboot turns into a QEMU exit with no status): there is no
# `set -e` here, every failure goes through die(), and both die() and the
# normal path end in poweroff(), which never returns.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

# Staging area, a tmpfs on the 9p root's /run; the pivot hides it.
stage=/run
root=$stage/root
ctl=$stage/ctl

# Power off through fd 8, opened on /proc/sysrq-trigger at the start: a
# scenario may leave open(2) failing for every process (a global
# injection), and the VM must still stop. Nothing needs a sync: the root's
# upper layer is a tmpfs and 9p writes are synchronous.
# If even that fails, PID 1 exits as a last resort: the kernel panics,
# panic=-1 asks for a reboot, and -no-reboot turns it into QEMU's exit.
poweroff() {
    echo o >&8 || exit 1
    while :; do sleep 1 || :; done
}

# Before the pivot the control share is at $ctl; after it, only fd 9 (opened
# on $ctl before the pivot) still reaches the detached mount.
ctl_path=$ctl
die() {
    echo "injectd-vm: $*" >/dev/console
    echo "$*" >"$ctl_path/error" 2>/dev/null
    poweroff
}

mnt() { mount "$@" || die "mount $* failed"; }

echo "injectd-vm: init started" >/dev/console

# Under TCG every exec costs tens of milliseconds (mostly the dynamic
# loader), so the mounts are batched: one `mount -a` over a generated fstab
# does the bulk of them.

# /proc first: sysrq (poweroff) and /proc/self/fd need it.
mount -t proc proc /proc 2>/dev/null
exec 8>/proc/sysrq-trigger
mnt -t tmpfs -o mode=0755 injectd-stage "$stage"
mnt -t 9p -o trans=virtio,version=9p2000.L,msize=262144,X-mount.mkdir injectd.ctl "$ctl"
[[ -r $ctl/job ]] || die "no job file on the control share"
# shellcheck source=/dev/null
. "$ctl/job" || die "cannot read the job file"

# fstab fields are separated by blanks; octal escapes protect odd paths.
esc() {
    local s=${1//\\/\\134}
    s=${s// /\\040}
    s=${s//$'\t'/\\011}
    printf '%s' "${s//$'\n'/\\012}"
}
p9=trans=virtio,version=9p2000.L,msize=262144
dirs=("$stage/upper" "$stage/work")
{
    # Writable root: the host root below, a tmpfs above.
    echo "overlay $root overlay lowerdir=/,upperdir=$stage/upper,workdir=$stage/work,X-mount.mkdir"
    echo "proc $root/proc proc defaults"
    echo "sysfs $root/sys sysfs defaults"
    echo "devtmpfs $root/dev devtmpfs defaults"
    echo "devpts $root/dev/pts devpts gid=5,mode=0620,ptmxmode=0666,X-mount.mkdir"
    echo "tmpfs $root/dev/shm tmpfs mode=1777,nosuid,nodev,X-mount.mkdir"
    echo "tmpfs $root/tmp tmpfs mode=1777,nosuid,nodev"
    echo "tmpfs $root/run tmpfs mode=0755,nosuid,nodev"
    echo "cgroup2 $root/sys/fs/cgroup cgroup2 nsdelegate"
    echo "bpf $root/sys/fs/bpf bpf mode=0700"
    echo "tracefs $root/sys/kernel/tracing tracefs defaults"
    echo "debugfs $root/sys/kernel/debug debugfs defaults"
    # Host directories shared by tests/vm/run, parents first. "ro" ones get
    # their own tmpfs-backed overlay, like the root; "rw" ones write through.
    n=0
    for share in "${JOB_SHARES[@]}"; do
        read -r mode tag path <<<"$share"
        target=$(esc "$root$path")
        if [[ $mode == rw ]]; then
            echo "$tag $target 9p $p9,X-mount.mkdir"
        else
            s=$stage/share$n
            dirs+=("$s/upper" "$s/work")
            echo "$tag $s/lower 9p $p9,cache=loose,ro,X-mount.mkdir"
            echo "overlay $target overlay lowerdir=$s/lower,upperdir=$s/upper,workdir=$s/work,X-mount.mkdir"
        fi
        n=$((n + 1))
    done
    # --systemd: systemd closes our fds, so the control share must stay
    # reachable by path in the new root (init-systemd.sh).
    if [[ ${JOB_SYSTEMD:-0} == 1 ]]; then
        echo "$(esc "$ctl") $root/run/injectd-vm none bind,X-mount.mkdir"
    fi
} >"$stage/fstab"
mkdir -p "${dirs[@]}" || die "cannot create the staging directories"
mount -a -T "$stage/fstab" || die "mounting the file systems failed (mount -a: $?)"

# devtmpfs has no /dev/fd & co (udev makes them); bash's <(...) and tools
# writing to /dev/stderr need them. tests/vm/run left them on the share.
cp -R "$ctl/devlinks/." "$root/dev/" || die "cannot create /dev/fd and /dev/std*"

# Switch roots with pivot_root rather than chroot: a chrooted process may
# not create user namespaces, and tests should see an ordinary system.
# `pivot_root . .` stacks the old root on top of the new one; the lazy
# unmount then drops it, leaving no trace of the staging area.
exec 9<"$ctl"
ctl_path=/proc/self/fd/9
cd "$root" || die "cannot enter the new root"
pivot_root . . || die "pivot_root failed"
umount -l . || die "cannot detach the old root"
cd / || die "cannot enter /"

echo injectd-vm >/proc/sys/kernel/hostname
ip link set lo up 2>/dev/null

# The kernel's symbols, for tests/vm/run to name the addresses it reads
# from a VM that times out (stuck-cpus.py), read now while the guest
# answers: where the kernel's text starts in this boot (KASLR moves it),
# and, when run has no copy of this kernel's symbols yet (JOB_KALLSYMS=
# full), all of them (4 MB over 9p: a second or more, so only once per
# kernel). In the background, at low priority: the job does not wait.
(
    grep -m1 ' _text$' /proc/kallsyms >"$ctl_path/kallsyms-text"
    if [[ ${JOB_KALLSYMS:-} == full ]]; then
        nice -n 19 cp /proc/kallsyms "$ctl_path/kallsyms.part" &&
            mv "$ctl_path/kallsyms.part" "$ctl_path/kallsyms"
    fi
) 2>/dev/null &

# The job's output ports: virtio-serial ports named by tests/vm/run.
# shellcheck source=tests/vm/virtio-port.sh
. "${BASH_SOURCE[0]%/*}/virtio-port.sh"
out=$(find_port injectd.stdout) || die "virtio port injectd.stdout not found"
err=$(find_port injectd.stderr) || die "virtio port injectd.stderr not found"

[[ -d $JOB_CWD ]] || die "working directory '$JOB_CWD' is not visible in the VM"

# --systemd: init-systemd.sh installs the project, then execs systemd as
# PID 1; the job runs as a unit. (execfail: a failed exec must not end PID 1.)
if [[ ${JOB_SYSTEMD:-0} == 1 ]]; then
    shopt -s execfail
    # shellcheck disable=SC2093 # execfail: a failed exec returns
    exec /bin/bash "${BASH_SOURCE[0]%/*}/init-systemd.sh" boot "$out" "$err"
    die "cannot run ${BASH_SOURCE[0]%/*}/init-systemd.sh"
fi

# The status file is opened (empty: "no status" to the host) before the
# job runs, for the same reason as fd 8.
exec 7>"$ctl_path/status" || die "cannot create the status file"

# Run the job: a clean environment, stdin from /dev/null, its output on the
# ports, and our fds 7-9 closed so it cannot touch them.
cd "$JOB_CWD" || die "cannot enter '$JOB_CWD'"
env -i "${JOB_ENV[@]}" "${JOB_CMD[@]}" </dev/null >"$out" 2>"$err" 7>&- 8>&- 9<&-
status=$?

# One write(2) on 9p, synchronous: on the host before QEMU exits.
echo "$status" >&7
poweroff
