#!/bin/bash
# tools/demo.sh - injectd's main job, end to end, in the test VM booted with
# systemd as PID 1 and the project installed as a package would install it
# (tests/vm/run --systemd). Nothing of injectd runs until the first
# injectctl call starts it by D-Bus activation.
#
#   1. Root makes open_ctree fail with ENOMEM for one mount of a fresh
#      btrfs image: `injectctl run --fail open_ctree:ENOMEM -- mount ...`.
#      The mount fails; the same mount without injectctl then succeeds.
#   2. alice (group injectd, unprivileged, in a session of her own) makes
#      mkdir fail with EACCES for her own command, while bob runs the
#      identical command at the same moment, untouched.
#   3. Nothing is left armed or pinned.
#
#   tools/demo.sh            (from the source tree, after tools/setup.sh)
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$src/build}

if [[ ${INJECTD_IN_VM:-0} != 1 ]]; then
    [[ -x $build/src/client/injectctl ]] || {
        echo "demo: build first: tools/setup.sh" >&2
        exit 1
    }
    exec env BUILD_DIR="$build" SRC_DIR="$src" "$src/tests/vm/run" --systemd -- bash "$src/tools/demo.sh"
fi

# In the VM: the scenario helpers give the users, their sessions and the
# cleanups (the demo leaves the VM as clean as a test must).
# shellcheck source=tests/vm/lib.sh
. "$SRC_DIR/tests/vm/lib.sh"
# shellcheck source=tests/vm/lib-systemd.sh
. "$SRC_DIR/tests/vm/lib-systemd.sh"

# Bold only on a terminal.
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold= plain=; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
show() { printf '$ %s\n' "$*"; }

systemd_users
img=/tmp/demo-btrfs.img
mnt=/tmp/demo-mnt
umount_if_mounted() { ! mountpoint -q "$1" || umount "$1"; }
at_exit umount_if_mounted "$mnt"
at_exit stop_injectd

step "injectd is installed but not running: the first call will start it"
echo "injectd.service: $(unit_state injectd.service); injectd.socket: $(unit_state injectd.socket)"

step "Root: a fresh btrfs image, and one mount of it with open_ctree failing"
make_btrfs_image "$img"
mkdir -p "$mnt"
show injectctl run --fail open_ctree:ENOMEM -- mount -o loop "$img" "$mnt"
rc=0
injectctl run --fail open_ctree:ENOMEM -- mount -o loop "$img" "$mnt" || rc=$?
((rc != 0)) || fail "the mount succeeded: the fault did not fire"
echo "(mount exited $rc: open_ctree returned -ENOMEM, once, for this mount only)"
echo "injectd.service: $(unit_state injectd.service), started by D-Bus activation"

step "The same mount without injectctl"
show mount -o loop "$img" "$mnt"
mount -o loop "$img" "$mnt"
echo "mounted: $(findmnt -n -o SOURCE,FSTYPE "$mnt")"
umount "$mnt"

step "alice (group injectd) fails mkdir for her own command; bob runs the same meanwhile"
open_session alice
echo "alice's session: $SESSION_SCOPE"
show "(alice) injectctl run --fail __x64_sys_mkdir:EACCES -- sh -c 'sleep 5; mkdir /tmp/alice-dir'"
(
    rc=0
    as alice injectctl run --fail __x64_sys_mkdir:EACCES -- sh -c 'sleep 5; mkdir /tmp/alice-dir' || rc=$?
    echo "$rc" >/tmp/demo-alice.rc
) &
alice_pid=$!
# Once hers is armed (her command then sleeps 5 s before its mkdir):
wait_until 60 sh -c "injectctl list --all --json | jq -e 'any(.[]; .function == \"__x64_sys_mkdir\")'"
show injectctl list --all
injectctl list --all
show "(bob, at the same time) mkdir /tmp/bob-dir"
systemd-run --quiet --wait --pipe --uid=bob -- mkdir /tmp/bob-dir
echo "bob's mkdir: $(stat -c '%U %n' /tmp/bob-dir)"
wait "$alice_pid"
rc=$(</tmp/demo-alice.rc)
((rc != 0)) || fail "alice's mkdir succeeded: the fault did not fire"
[[ ! -e /tmp/alice-dir ]] || fail "/tmp/alice-dir exists: the fault did not fire"
echo "(alice's mkdir exited $rc; bob's was untouched)"
rm -rf /tmp/bob-dir /tmp/demo-alice.rc

step "Nothing left behind"
injectctl list --all
ls /sys/fs/bpf/injectd 2>/dev/null || echo "/sys/fs/bpf/injectd: gone"
finish
