#!/bin/bash
# Scenario "smoke": the VM gives the scenarios what they rely on. Runs on
# both kernels: on the stock one, error_injection/ must be absent instead.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

# The kernel file systems, each of the right type.
for m in /proc:proc /sys:sysfs /dev:devtmpfs /dev/pts:devpts /tmp:tmpfs \
    /run:tmpfs /sys/fs/cgroup:cgroup2 /sys/fs/bpf:bpf \
    /sys/kernel/tracing:tracefs /sys/kernel/debug:debugfs; do
    assert_eq "${m#*:}" "$(findmnt -n -o FSTYPE --mountpoint "${m%%:*}")" "file system on ${m%%:*}"
done
assert_eq overlay "$(findmnt -n -o FSTYPE --mountpoint /)" "file system on /"

# The error-injection list, on the kernel that has it.
if zgrep -qx CONFIG_FUNCTION_ERROR_INJECTION=y /proc/config.gz; then
    list=/sys/kernel/debug/error_injection/list
    # debugfs files claim size 0: read them rather than test -s.
    [[ -r $list ]] || fail "expected $list, saw none"
    functions=$(cat "$list")
    assert_contains "$functions" "open_ctree" "error-injection list"
    log "$(wc -l <<<"$functions") functions on the error-injection list"
else
    [[ ! -e /sys/kernel/debug/error_injection ]] ||
        fail "expected no error_injection/ without CONFIG_FUNCTION_ERROR_INJECTION, saw one"
    log "stock kernel: no error-injection list, as expected"
fi
assert_succeeds bpftool prog show >/dev/null

# A writable root that does not write through to the host (tests/vm/run
# shares / read-only, so a write here can only land in the overlay).
echo "smoke $$" >/etc/injectd-smoke
assert_eq "smoke $$" "$(cat /etc/injectd-smoke)" "/etc/injectd-smoke read back"

# The trees at their host paths, and the harness's little comforts.
[[ -f $SRC_DIR/meson.build ]] || fail "expected the source tree at '$SRC_DIR', saw no meson.build"
[[ -d $BUILD_DIR ]] || log "no build directory at '$BUILD_DIR' (not run by meson?)"
assert_eq "$(cat <(echo via-dev-fd))" via-dev-fd "process substitution"
assert_contains "$(ip -o link show lo)" "UP" "loopback"
assert_contains "$(dmesg)" "Linux version" "kernel log"

# Users, and a process running as one.
add_user injectd-smoke
uid=$(id -u injectd-smoke)
assert_eq "$uid" "$(run_as injectd-smoke id -u)" "uid under run_as"
# shellcheck disable=SC2016 # expanded by the inner shell
assert_eq /home/injectd-smoke "$(run_as injectd-smoke sh -c 'echo $HOME')" "HOME under run_as"
assert_fails_with "Permission denied" run_as injectd-smoke touch /etc/injectd-smoke-user

# A process in a cgroup of our own.
cg=$(make_cgroup injectd-smoke)
assert_eq "0::/injectd-smoke" "$(run_in_cgroup "$cg" cat /proc/self/cgroup)" "cgroup of the child"
assert_eq "" "$(cat "$cg/cgroup.procs")" "processes left in the cgroup"

# A btrfs image through a loop device.
make_btrfs_image /tmp/smoke.img
mkdir -p /tmp/smoke.mnt
mount -o loop /tmp/smoke.img /tmp/smoke.mnt
at_exit umount /tmp/smoke.mnt
assert_eq btrfs "$(findmnt -n -o FSTYPE --mountpoint /tmp/smoke.mnt)" "file system of the image"
echo data >/tmp/smoke.mnt/file
assert_eq data "$(cat /tmp/smoke.mnt/file)" "file on btrfs"

finish
