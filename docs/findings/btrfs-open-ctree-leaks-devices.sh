#!/bin/bash
# Reproducer of docs/findings/btrfs-open-ctree-leaks-devices.md, run in the
# test VM (root, bzImage):
#   cd build && ../tests/vm/run --timeout 600 -- \
#       bash ../docs/findings/btrfs-open-ctree-leaks-devices.sh
# It prints what it sees and fails nothing: the finding is its output.
. "$(dirname "$0")/../../tests/vm/lib.sh"
. "$(dirname "$0")/../../tests/vm/lib-daemon.sh"
INJECTCTL=$BUILD_DIR/src/client/injectctl

# O_EXCL on a block device fails with EBUSY while some holder has claimed it
# exclusively (blkdev_get_by_dev(..., FMODE_EXCL, holder)): btrfs opens its
# devices that way, holder = the btrfs file_system_type.
excl() {
    python3 -c 'import os,sys
try:
    os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)); print("O_EXCL open: ok (not held)")
except OSError as e:
    print("O_EXCL open:", e)' "$1"
}
show() {
    local a line="#"
    for a; do
        if [[ $a =~ ^[-A-Za-z0-9_./:=,]+$ ]]; then line+=" $a"; else line+=" ${a@Q}"; fi
    done
    echo "$line"
    "$@" 2>&1
    echo "(exit $?)"
}

daemon_setup
start_injectd
# From here on, failures are what is observed, not the script's.
trap - ERR
set +e

echo "== kernel: $(uname -r), $(date -u '+%F %T UTC')"
img=/tmp/btrfs.img mnt=/tmp/mnt
mkdir -p $mnt
truncate -s 128M $img
mkfs.btrfs -q $img >/dev/null 2>&1
dev=$(losetup --find --show $img)
echo "== $dev on $img (fresh btrfs)"

echo "== control: a plain mount and umount leave the device free"
show mount -t btrfs $dev $mnt
show umount $mnt
excl $dev

echo "== the failed mount"
show "$INJECTCTL" run --fail open_ctree:ENOMEM,after=0,times=1 -- mount -t btrfs $dev $mnt
show grep -c " $mnt " /proc/mounts
show sh -c 'dmesg | grep -E "BTRFS|open_ctree" | tail -3'

echo "== after it"
excl $dev
show wipefs -a $dev
show losetup -d $dev
show losetup -a
echo "autoclear: $(cat /sys/block/${dev#/dev/}/loop/autoclear), backing: $(cat /sys/block/${dev#/dev/}/loop/backing_file)"
excl $dev

echo "== a later mount of the same device takes the leaked open over, its umount leaves it open"
# btrfs_open_devices only counts up (fs_devices->opened) when already open.
show mount -t btrfs $dev $mnt
show umount $mnt
excl $dev
show losetup -a

echo "== the same leak with no function failed at its entry: the first slab allocation"
echo "== under bdi_alloc (its kzalloc_node of the bdi) fails, so super_setup_bdi fails"
img2=/tmp/btrfs2.img
truncate -s 128M $img2
mkfs.btrfs -q $img2 >/dev/null 2>&1
dev2=$(losetup --find --show $img2)
echo "== $dev2 on $img2 (fresh btrfs)"
excl $dev2
# btrfs_fill_super is inlined into its caller, whose name differs between
# versions; the fault is scoped to the mount's process anyway, and in it only
# super_setup_bdi_name allocates a bdi.
show "$INJECTCTL" run --fail should_failslab:ENOMEM,caller=bdi_alloc,caller=super_setup_bdi_name,times=1 -- mount -t btrfs $dev2 $mnt
show grep -c " $mnt " /proc/mounts
show sh -c 'dmesg | grep -E "BTRFS|super_setup_bdi" | tail -2'
excl $dev2
show losetup -d $dev2
show losetup -a

_finished=1   # lib.sh: the daemon is stopped at exit
exit 0
