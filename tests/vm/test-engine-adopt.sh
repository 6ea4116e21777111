#!/bin/bash
# SIGKILL the process that armed injections, then adopt: live ones are
# re-adopted and keep working, expired and orphaned ones are removed, a
# site of an older layout is adopted or removed as it can be read, and
# nothing is left in bpffs after the last disarm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

# A live target, blocked until we let it open files after adoption, and one
# that will be gone by adoption time.
start_fixture openat 3 /etc/hostname
live=$FIXTURE_PID
sleep 600 &
doomed=$!

hold_out=$(mktemp)
"$ENGINE" arm __x64_sys_openat --error ENOENT --pid "$live" --for 10min --hold >"$hold_out" &
holder=$!
wait_until 120 grep -q '^armed ' "$hold_out"
live_id=$(awk '/^armed/ {print $2}' "$hold_out")
short_id=$(engine_arm open_ctree --error ENOMEM --global --for 2s)
orphan_id=$(engine_arm security_file_open --error EACCES --pid "$doomed" --for 10min)

kill -9 "$holder"
wait "$holder" || true
kill "$doomed"
wait "$doomed" || true
sleep 2.5   # the short one's deadline passes

# The killed holder never disarmed: its injection is still pinned and live.
assert_eq 3 "$("$ENGINE" list --json | jq length)" "injections pinned after SIGKILL"
out=$("$ENGINE" adopt --json)
assert_eq adopted "$(jq -r --arg id "$live_id" '.[] | select(.id == $id) | .action' <<<"$out")" "the live injection"
assert_eq expired "$(jq -r --arg id "$short_id" '.[] | select(.id == $id) | .action' <<<"$out")" "the expired injection"
assert_eq orphaned "$(jq -r --arg id "$orphan_id" '.[] | select(.id == $id) | .action' <<<"$out")" "the orphaned injection"
assert_eq "[\"$live_id\"]" "$("$ENGINE" list --json | jq -c '[.[].id]')" "injections after adopt"
! compgen -G "/sys/fs/bpf/injectd/sites/*-open_ctree" >/dev/null || fail "the expired injection's site is still pinned"

# Adopting twice changes nothing.
assert_eq adopted "$("$ENGINE" adopt --json | jq -r '.[0].action')" "a second adopt"

# A site pinned by another version of injectd (an info map of another
# size, as before the shared kprobe program) is removed at adoption, not
# read as ours: its index would have been taken for 0, which the live site
# may hold. Its maps are made with bpftool; any object does for the link.
live_slots=$(compgen -G "/sys/fs/bpf/injectd/sites/*-__x64_sys_openat" | head -1)/slots
slot_size=$(bpftool -j map show pinned "$live_slots" | jq .bytes_value)
old_site=/sys/fs/bpf/injectd/sites/kprobe-__x64_sys_getpid
mkdir "$old_site"
bpftool map create "$old_site/scopes" type hash key 16 value 8 entries 4 name scopes
bpftool map create "$old_site/slots" type array key 4 value "$slot_size" entries 4 name slots
bpftool map create "$old_site/site" type array key 4 value 64 entries 1 name site
bpftool map create "$old_site/link" type array key 4 value 4 entries 1 name link
err=$("$ENGINE" adopt --json 2>&1 >/dev/null)
[[ ! -e $old_site ]] || fail "the site of another version is still pinned: $(ls "$old_site")"
assert_contains "$err" "left by another version of injectd" "the engine's word on the removed site"
assert_eq "[\"$live_id\"]" "$("$ENGINE" list --json | jq -c '[.[].id]')" "injections after adopting beside the old site"

# A site pinned before the device-scope fields (the layout since the shared
# kprobe program, 8 bytes shorter: device_arg and n_device came last) is
# ours still: adopted, listed, and cancelled, its missing fields read as 0.
# Its maps are made with bpftool as above: one global injection on
# __x64_sys_getppid in slot 0, at the last index of the outer maps.
le() { local i; for ((i = 0; i < $1; i++)); do printf '%02x ' $((($2 >> (8 * i)) & 0xff)); done; }
str() { local i; for ((i = 0; i < $1; i++)); do printf '%02x ' "'${2:i:1}"; done; }
pre_device_site=/sys/fs/bpf/injectd/sites/kprobe-__x64_sys_getppid
pre_device_id=1234abcd5678ef01
mkdir "$pre_device_site"
bpftool map create "$pre_device_site/scopes" type hash key 16 value 24 entries 4 name scopes
bpftool map create "$pre_device_site/slots" type array key 4 value "$slot_size" entries 4 name slots
bpftool map create "$pre_device_site/site" type array key 4 value 104 entries 1 name site
bpftool map create "$pre_device_site/link" type array key 4 value 4 entries 1 name link
# id, created, deadline (far off), retval -EPERM, scope kind global (3);
# the rest (filters, counters) 0.
# shellcheck disable=SC2046 # the bytes are words
bpftool map update pinned "$pre_device_site/slots" key hex $(le 4 0) value hex \
    $(le 8 $((0x$pre_device_id))) $(le 8 0) $(le 8 $((1 << 62))) $(le 8 -1) $(le 4 3) \
    $(str $((slot_size - 36)) "")
# shellcheck disable=SC2046
bpftool map update pinned "$pre_device_site/scopes" key hex $(le 4 3) $(le 4 0) $(le 8 0) value hex \
    $(le 4 0) $(le 4 0) $(le 8 $((0x$pre_device_id))) $(le 8 0)
# cgroup_levels, n_process, n_global 1, n_live 1, n_callers, backend kprobe
# (1), function, index 4095, guard, guard_bootstrap_cache.
# shellcheck disable=SC2046
bpftool map update pinned "$pre_device_site/site" key hex $(le 4 0) value hex \
    $(le 4 0) $(le 4 0) $(le 4 1) $(le 4 1) $(le 4 0) $(le 4 1) $(str 64 __x64_sys_getppid) \
    $(le 4 4095) $(le 4 0) $(le 8 0)
out=$("$ENGINE" adopt --json)
assert_eq adopted "$(jq -r --arg id "$pre_device_id" '.[] | select(.id == $id) | .action' <<<"$out")" \
    "the injection of the site pinned before device scopes"
assert_eq "__x64_sys_getppid kprobe" \
    "$("$ENGINE" show "$pre_device_id" --json | jq -r '"\(.function) \(.backend)"')" \
    "the adopted injection of the site pinned before device scopes"
"$ENGINE" disarm "$pre_device_id" >/dev/null || fail "cannot disarm the injection of the site pinned before device scopes"
[[ ! -e $pre_device_site ]] || fail "the site pinned before device scopes is still pinned after its last disarm"
assert_eq "[\"$live_id\"]" "$("$ENGINE" list --json | jq -c '[.[].id]')" "injections after disarming the older site's"

# Still working after adoption: the target's opens fail.
release_fixture
assert_eq "ENOENT ENOENT ENOENT" "$FIXTURE_RESULTS" "the live target's opens after adoption"
expect_counters "$live_id" 3 3 3

"$ENGINE" disarm "$live_id" >/dev/null
[[ ! -e /sys/fs/bpf/injectd ]] || fail "expected nothing in bpffs after the last disarm, saw: $(ls -R /sys/fs/bpf/injectd)"
finish
