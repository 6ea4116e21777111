#!/bin/bash
# Under systemd, installed: `systemctl start injectd` works; once stopped,
# the first Varlink connection starts it again through injectd.socket. The
# client is container-style: a transient service that sees none of /run
# but the Varlink socket, so no system bus. From there root makes
# open_ctree fail with ENOMEM for one mount of a btrfs image (the same mount
# then succeeds), and alice makes openat fail with EACCES for her cat while
# bob's cats succeed: the same results as over D-Bus.
# Run with: tests/vm/run --systemd -- bash tests/vm/test-systemd-varlink.sh
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/lib-systemd.sh
. "$(dirname "$0")/lib-systemd.sh"

at_exit stop_injectd
systemd_users

# ---------------------------------------------------------------- systemctl start, stop

assert_eq inactive "$(unit_state injectd.service)" "injectd.service at boot"
log "systemctl start injectd"
assert_succeeds systemctl start injectd.service
assert_eq active "$(unit_state injectd.service)" "injectd.service after systemctl start"
assert_eq running "$(systemctl show -P SubState injectd.service)" "injectd.service's state"
stop_injectd
assert_eq inactive "$(unit_state injectd.service)" "injectd.service after systemctl stop"
assert_eq active "$(unit_state injectd.socket)" "injectd.socket after the service stopped"
[[ -S $SOCKET ]] || fail "expected '$SOCKET' to stay after the service stopped"

# ---------------------------------------------------------------- the container

log "the container sees the Varlink socket and no system bus"
assert_succeeds in_container alice sh -c "test -S '$SOCKET' && test ! -e /run/dbus/system_bus_socket"
rc=0
err=$(in_container alice "$INJECTCTL" --bus caps 2>&1) || rc=$?
assert_eq 3 "$rc" "injectctl over D-Bus in the container: exit status (cannot reach injectd)"
assert_eq inactive "$(unit_state injectd.service)" "injectd.service after a failed D-Bus attempt"

# ---------------------------------------------------------------- root: mount

img=/tmp/btrfs.img
mnt=/tmp/mnt
make_btrfs_image "$img"
mkdir -p "$mnt"

journal_mark stopped
# PID 1 says, at debug level, which socket saw the traffic that started it.
systemd-analyze log-level debug
at_exit systemd-analyze log-level info
log "container, root: injectctl --varlink run --fail open_ctree:ENOMEM -- mount"
rc=0
in_container root "$INJECTCTL" --varlink run --fail open_ctree:ENOMEM -- mount -o loop "$img" "$mnt" \
    >/tmp/mount.out 2>/tmp/mount.err || rc=$?
systemd-analyze log-level info
((rc != 0)) || fail "the mount succeeded under open_ctree:ENOMEM ($(cat /tmp/mount.err))"
assert_contains "$(cat /tmp/mount.err)" "Cannot allocate memory" "the mount's error"
assert_eq 1 "$(run_summary_injected open_ctree /tmp/mount.err)" "faults injected, in run's summary"

assert_eq active "$(unit_state injectd.service)" "injectd.service after the Varlink call"
journal_since stopped -u injectd.socket | grep "Incoming traffic" >/dev/null ||
    fail "injectd.socket logged no incoming traffic: it did not start injectd.service"
if journal_since stopped -u dbus.service | grep "service name='org.injectd.Injector1'"; then
    fail "dbus-daemon activated org.injectd.Injector1: injectd was not started by its socket alone"
fi
armed=$(journal_event stopped INJECTD_EVENT=armed INJECTD_FUNCTION=open_ctree)
assert_eq varlink "$(jq -r .INJECTD_TRANSPORT <<<"$armed")" "the transport in the audit record"

# Mounted inside the container's own mount namespace, which goes with it.
assert_succeeds in_container root mount -o loop "$img" "$mnt"

# ---------------------------------------------------------------- alice and bob

log "container, alice: injectctl --varlink run --fail __x64_sys_openat:EACCES -- cat /etc/hostname, bob's cats meanwhile"
alice_uid=$(id -u alice)
journal_mark before_alice
bob_cats_start
rc=0
in_container alice "$INJECTCTL" --varlink run --fail __x64_sys_openat:EACCES -- cat /etc/hostname \
    >/tmp/alice.out 2>/tmp/alice.err || rc=$?
bob_cats_stop
((rc != 0)) || fail "alice's cat succeeded under __x64_sys_openat:EACCES: $(cat /tmp/alice.out)"
assert_contains "$(cat /tmp/alice.err)" "Permission denied" "alice's cat"
injected=$(run_summary_injected __x64_sys_openat /tmp/alice.err)
((injected >= 1)) || fail "run's summary shows no fault injected: $(cat /tmp/alice.err)"
armed=$(journal_event before_alice INJECTD_EVENT=armed INJECTD_UID="$alice_uid" INJECTD_FUNCTION=__x64_sys_openat)
id=$(jq -r .INJECTD_ID <<<"$armed")
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "no 'armed' audit record for alice's injection: '$armed'"
assert_eq varlink "$(jq -r .INJECTD_TRANSPORT <<<"$armed")" "the transport of alice's injection"
# The hardened unit reads the caller's cgroup, the host's path, for rules
# by cgroup; the decision records it.
decision=$(journal_event before_alice INJECTD_EVENT=decision INJECTD_UID="$alice_uid" INJECTD_RESULT=policy-allowed)
caller_cg=$(jq -r '.INJECTD_CALLER_CGROUP // empty' <<<"$decision")
[[ $caller_cg == /?* ]] || fail "no caller's cgroup in the decision record of alice's request: '$decision'"
log "alice's cgroup, as the daemon saw it: $caller_cg"
ended=$(journal_event before_alice INJECTD_EVENT=removed INJECTD_ID="$id")
[[ -n $ended ]] || fail "no 'removed' audit record for alice's injection $id"
during=$(bob_cats_between "$(jq -r .__REALTIME_TIMESTAMP <<<"$armed")" "$(jq -r .__REALTIME_TIMESTAMP <<<"$ended")")
log "alice's cat failed (status $rc, $injected fault(s)); bob's $BOB_CATS cats all succeeded, $during of them while it was armed"
assert_succeeds in_container bob sh -c "cat /etc/hostname >/dev/null"
assert_eq 0 "$("$INJECTCTL" --varlink list --all --json | jq length)" "injections left"

finish
