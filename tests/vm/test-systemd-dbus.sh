#!/bin/bash
# Under systemd, installed: the first injectctl --bus call starts injectd by D-Bus
# activation (--bus: injectctl's default tries the Varlink socket first) (dbus-daemon asks systemd for injectd.service). Root makes
# open_ctree fail with ENOMEM for one mount of a btrfs image; the same mount
# then succeeds without injectctl. alice (group injectd), logged in with a
# session of her own, makes openat fail with EACCES for her cat, while
# bob's cats, at the same time, succeed; polkitd, activated by D-Bus too,
# says yes to her through the installed rule.
# Run with: tests/vm/run --systemd -- bash tests/vm/test-systemd-dbus.sh
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/lib-systemd.sh
. "$(dirname "$0")/lib-systemd.sh"

at_exit stop_injectd
systemd_users

assert_eq inactive "$(unit_state injectd.service)" "injectd.service before any client"
assert_eq active "$(unit_state injectd.socket)" "injectd.socket (enabled by the install)"
[[ -S $SOCKET ]] || fail "expected injectd.socket to listen on '$SOCKET'"
journal_mark boot
# PID 1 logs at debug level which socket saw traffic: if anything but
# D-Bus starts injectd, the failure says what.
systemd-analyze log-level debug
at_exit systemd-analyze log-level info

# ---------------------------------------------------------------- root: mount

img=/tmp/btrfs.img
mnt=/tmp/mnt
make_btrfs_image "$img"
mkdir -p "$mnt"
umount_if_mounted() { ! mountpoint -q "$1" || umount "$1"; }
at_exit umount_if_mounted "$mnt"

log "root: injectctl run --fail open_ctree:ENOMEM -- mount (injectd not running yet)"
rc=0
"$INJECTCTL" --bus run --fail open_ctree:ENOMEM -- mount -o loop "$img" "$mnt" \
    >/tmp/mount.out 2>/tmp/mount.err || rc=$?
((rc != 0)) || fail "the mount succeeded under open_ctree:ENOMEM ($(cat /tmp/mount.err))"
assert_contains "$(cat /tmp/mount.err)" "Cannot allocate memory" "the mount's error"
assert_eq 1 "$(run_summary_injected open_ctree /tmp/mount.err)" "faults injected, in run's summary"
mountpoint -q "$mnt" && fail "'$mnt' is mounted after the failed mount"

systemd-analyze log-level info
assert_eq active "$(unit_state injectd.service)" "injectd.service after the first injectctl call"
# dbus-daemon says "Activating systemd to hand-off" instead of "Activating
# via systemd" when it must first activate systemd's own bus name (when
# injectd is the first service activated since boot).
if ! activation=$(journal_since boot -u dbus.service |
    grep -E "Activating (via systemd|systemd to hand-off): service name='org.injectd.Injector1'"); then
    journal_since boot -u injectd.socket | grep "Incoming traffic" >/dev/null &&
        fail "injectd.service was started by its Varlink socket (injectd.socket saw incoming traffic), not by D-Bus activation"
    fail "dbus-daemon did not log activating org.injectd.Injector1 through systemd"
fi
assert_contains "$activation" "unit='injectd.service'" "the D-Bus activation"
assert_contains "$activation" "uid=0" "the D-Bus activation's requester"
log "started by D-Bus: ${activation:0:200}"

assert_succeeds mount -o loop "$img" "$mnt"
umount "$mnt"

# ---------------------------------------------------------------- alice and bob

open_session alice
log "alice's session: $SESSION_SCOPE"
as alice id -nG | grep -qw injectd || fail "alice is not in group injectd in her session"
alice_uid=$(id -u alice)
journal_mark before_alice

log "alice: injectctl run --fail __x64_sys_openat:EACCES -- cat /etc/hostname, bob's cats meanwhile"
bob_cats_start
rc=0
as alice "$INJECTCTL" --bus run --fail __x64_sys_openat:EACCES -- cat /etc/hostname \
    >/tmp/alice.out 2>/tmp/alice.err || rc=$?
bob_cats_stop
((rc != 0)) || fail "alice's cat succeeded under __x64_sys_openat:EACCES: $(cat /tmp/alice.out)"
assert_contains "$(cat /tmp/alice.err)" "Permission denied" "alice's cat"
injected=$(run_summary_injected __x64_sys_openat /tmp/alice.err)
((injected >= 1)) || fail "run's summary shows no fault injected: $(cat /tmp/alice.err)"
# Which of bob's cats ran while it was armed, by the daemon's audit records.
armed=$(journal_event before_alice INJECTD_EVENT=armed INJECTD_UID="$alice_uid" INJECTD_FUNCTION=__x64_sys_openat)
id=$(jq -r .INJECTD_ID <<<"$armed")
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "no 'armed' audit record for alice's injection: '$armed'"
ended=$(journal_event before_alice INJECTD_EVENT=removed INJECTD_ID="$id")
[[ -n $ended ]] || fail "no 'removed' audit record for alice's injection $id"
during=$(bob_cats_between "$(jq -r .__REALTIME_TIMESTAMP <<<"$armed")" "$(jq -r .__REALTIME_TIMESTAMP <<<"$ended")")
log "alice's cat failed (status $rc, $injected fault(s)); bob's $BOB_CATS cats all succeeded, $during of them while it was armed"
assert_eq active "$(unit_state polkit.service)" "polkit.service, activated for alice's request"

# The same held as long as it takes: the default scope is alice's own
# cgroup, her session; bob's and root's cats succeed meanwhile.
log "alice: inject --comm cat --detach, into her session's cgroup"
inj=$(as alice "$INJECTCTL" --bus inject __x64_sys_openat --error EACCES --comm cat --for 2min --detach --json)
id=$(jq -r .id <<<"$inj")
at_exit "$INJECTCTL" --bus cancel --all
assert_eq "cgroup:$SESSION_SCOPE" "$(jq -r .injection.scope <<<"$inj")" "the injection's scope"
assert_fails_with "Permission denied" as alice cat /etc/hostname
assert_succeeds systemd-run --quiet --scope --uid=bob -- sh -c "cat /etc/hostname >/dev/null"
assert_succeeds sh -c "cat /etc/hostname >/dev/null"
as alice "$INJECTCTL" --bus cancel "$id"
assert_succeeds as alice sh -c "cat /etc/hostname >/dev/null"
assert_eq 0 "$("$INJECTCTL" --bus list --all --json | jq length)" "injections left"

finish
