#!/bin/bash
# The seed's scenario: -ENOMEM on open_ctree makes mounting a fresh btrfs
# image fail; after disarm, and separately after the deadline passes with no
# user-space action at all, the same mount succeeds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

img=/tmp/btrfs.img
mnt=/tmp/mnt
make_btrfs_image "$img"
mkdir -p "$mnt"
at_exit umount_if_mounted "$mnt"
umount_if_mounted() { ! mountpoint -q "$1" || umount "$1"; }

# Disarm, on the kprobe backend (bpf_override_return) that auto picks for
# a listed function.
id=$(engine_arm open_ctree --error ENOMEM --pid $$ --for 5min)
assert_eq kprobe "$(engine_field "$id" backend)" "backend auto picks"
assert_fails_with "Cannot allocate memory" mount -o loop "$img" "$mnt"
expect_counters "$id" 1 1 1
"$ENGINE" disarm "$id" >/dev/null
assert_succeeds mount -o loop "$img" "$mnt"
umount "$mnt"

# Deadline, on the fmod_ret backend: the BPF program checks
# the deadline itself, so nothing in user space runs between the two mounts.
# 30 s: under TCG on a loaded machine, arming and the first mount alone
# have taken more than 4 s; the first mount must come before the deadline.
id=$(engine_arm open_ctree --error ENOMEM --backend fmod_ret --pid $$ --for 30s)
assert_eq fmod_ret "$(engine_field "$id" backend)" "backend"
assert_fails_with "Cannot allocate memory" mount -o loop "$img" "$mnt"
left=$(engine_field "$id" remaining_ms)
sleep $(((left + 999) / 1000)).2
assert_succeeds mount -o loop "$img" "$mnt"
umount "$mnt"
expect_counters "$id" 1 1 1    # the late mount was not even counted
assert_eq expired "$(engine_field "$id" state)" "state after the deadline"

# adopt is what removes an expired injection's pins.
out=$("$ENGINE" adopt)
assert_contains "$out" "expired   $id" "adopt's report"

finish
