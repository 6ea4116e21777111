#!/bin/bash
# tools/demo.sh - the seed's scenario, end to end, in the test VM:
# make open_ctree fail with ENOMEM so mounting a fresh btrfs image fails,
# then disarm and watch the same mount succeed.
#
#   tools/demo.sh            (from the source tree, after tools/setup.sh)
#
# It boots the test kernel with tests/vm/run and drives the engine with
# injectd-engine inside it (the daemon and injectctl come later).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$src/build}

if [[ ${INJECTD_IN_VM:-0} != 1 ]]; then
    [[ -x $build/src/daemon/injectd-engine ]] || {
        echo "demo: build first: tools/setup.sh" >&2
        exit 1
    }
    exec env BUILD_DIR="$build" "$src/tests/vm/run" -- "$src/tools/demo.sh"
fi

engine=$build/src/daemon/injectd-engine
# Bold only on a terminal.
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold= plain=; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
img=/tmp/demo-btrfs.img
mnt=/tmp/demo-mnt

step "A fresh 128 MiB btrfs image"
truncate -s 128M "$img"
mkfs.btrfs -q "$img"
mkdir -p "$mnt"

step "Arm: open_ctree fails with ENOMEM, for this shell's process tree, for 1 minute"
id=$("$engine" arm open_ctree --error ENOMEM --pid $$ --for 1min)
"$engine" show "$id"

step "mount -o loop $img $mnt   (expected to fail)"
if mount -o loop "$img" "$mnt"; then
    echo "demo: the mount succeeded: the injection did not fire" >&2
    exit 1
fi

step "The injection's counters: one call seen, matched and failed"
"$engine" show "$id" --json

step "Disarm, then the same mount"
"$engine" disarm "$id" >/dev/null
mount -o loop "$img" "$mnt"
echo "mounted: $(findmnt -n -o SOURCE,FSTYPE "$mnt")"
umount "$mnt"

step "Nothing left behind"
ls /sys/fs/bpf/injectd 2>/dev/null || echo "/sys/fs/bpf/injectd: gone"
