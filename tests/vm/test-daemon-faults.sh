#!/bin/bash
# The daemon's world breaking under it: bpffs unmounted, the policy
# directory unreadable, polkitd stopped mid-run (--polkit=required, then
# auto). Each gives a clear error or the documented fallback, and the
# daemon stays up and answers. (kill -9 and the clock jumping are
# test-daemon-crash.sh's; polkit's own answers
# per mode, through the daemon's client, are test-polkit.sh's.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

daemon_setup

vl_root() { "$VARLINK_CALL" "$SOCKET" "$@"; }
alive() {
    kill -0 "$INJECTD_PID" || fail "injectd died ($1)"
    vl_root org.injectd.Injector.GetCapabilities >/dev/null || fail "GetCapabilities failed ($1)"
}
# An injection alice may arm (policy: __x64_sys_*, EPERM, her process);
# a comm no thread has, so nothing fails.
ALICE_REQ='{"function":"__x64_sys_getpriority","error":"EPERM","scope":"process","comm":"ld-nomatch-x","detach":true,"duration_usec":60000000}'
# expect_error OUT NAME TEXT: a Varlink error reply NAME whose message says TEXT.
expect_error() {
    assert_eq "org.injectd.Injector.$2" "$(jq -r .error <<<"$1")" "error name (reply $1)"
    assert_contains "$(jq -r .parameters.message <<<"$1")" "$3" "error message"
}
cancel() { vl_root org.injectd.Injector.Cancel "{\"id\":\"$1\"}" >/dev/null; }

# ---------------------------------------------------------------- bpffs

start_injectd --polkit=required
log "bpffs unmounted (at ${SECONDS} s)"
# Nothing is armed, so nothing of ours is pinned (docs/engine.md).
[[ ! -e /sys/fs/bpf/injectd ]] || fail "pins with nothing armed: $(find /sys/fs/bpf/injectd)"
umount /sys/fs/bpf
remount_bpffs() { mountpoint -q /sys/fs/bpf || mount -t bpf -o mode=0700 bpf /sys/fs/bpf; }
at_exit remount_bpffs
out=$(vl alice org.injectd.Injector.Inject "$ALICE_REQ" || true)
expect_error "$out" InjectionUnavailable "No bpffs is mounted above"
log "  Inject: $(jq -r .parameters.message <<<"$out")"
alive "bpffs unmounted"
remount_bpffs
id=$(vl alice org.injectd.Injector.Inject "$ALICE_REQ" | jq -r .parameters.id)
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "no injection once bpffs is back"
cancel "$id"
# A "full" bpffs does not exist: it has no size or inode limit (no
# blocks, no statfs counts; pins are kernel objects charged to memlock
# and memory cgroups, where running out is a failed bpf() call, not a
# full file system). That sub-case is skipped.

# ---------------------------------------------------------------- policy directory

log "policy directory unreadable (at ${SECONDS} s)"
# chmod 000 does not make it unreadable to the daemon, which keeps
# CAP_DAC_READ_SEARCH (docs/security.md): the rules stay.
chmod 000 /etc/injectd/policy.d
vl_root org.injectd.Injector.ReloadPolicy >/dev/null
id=$(vl alice org.injectd.Injector.Inject "$ALICE_REQ" | jq -r .parameters.id)
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "alice refused with policy.d mode 000 (the daemon reads it anyway)"
cancel "$id"
chmod 755 /etc/injectd/policy.d
# Unreadable for anyone: a symbolic link loop (ELOOP).
mv /etc/injectd/policy.d /etc/injectd/policy.d.saved
restore_policy() {
    if [[ -d /etc/injectd/policy.d.saved ]]; then
        rm -f /etc/injectd/policy.d
        mv /etc/injectd/policy.d.saved /etc/injectd/policy.d
    fi
}
at_exit restore_policy
ln -s policy.d /etc/injectd/policy.d
log_from=$(($(wc -c <"$DAEMON_LOG") + 1))
vl_root org.injectd.Injector.ReloadPolicy >/dev/null
grep_log() { tail -c +"$log_from" "$DAEMON_LOG" | grep -- "$1" >/dev/null; }
wait_until 120 grep_log "/etc/injectd/policy.d.*cannot open directory: Too many levels of symbolic links"
out=$(vl alice org.injectd.Injector.Inject "$ALICE_REQ" || true)
expect_error "$out" UserNotInPolicy ""
log "  ReloadPolicy logged: $(tail -c +"$log_from" "$DAEMON_LOG" | grep -m1 'policy.d')"
log "  alice's Inject: $(jq -r .parameters.message <<<"$out")"
alive "policy directory unreadable"
# A restart with it unreadable: the daemon starts, says why, serves root.
stop_injectd
log_from=$(($(wc -c <"$DAEMON_LOG") + 1))
start_injectd --polkit=required
grep_log "/etc/injectd/policy.d.*cannot open directory" || fail "no error about policy.d at start"
alive "started with the policy directory unreadable"
restore_policy
vl_root org.injectd.Injector.ReloadPolicy >/dev/null
id=$(vl alice org.injectd.Injector.Inject "$ALICE_REQ" | jq -r .parameters.id)
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "alice refused once policy.d is back"
cancel "$id"

# ---------------------------------------------------------------- polkitd stopped

log "polkitd stopped mid-run, --polkit=required (at ${SECONDS} s)"
# Not activatable either, else the bus would start it again.
mv /usr/share/dbus-1/system-services/org.freedesktop.PolicyKit1.service "$DAEMON_WORK/"
restore_polkit_activation() {
    if [[ -e $DAEMON_WORK/org.freedesktop.PolicyKit1.service ]]; then
        mv "$DAEMON_WORK/org.freedesktop.PolicyKit1.service" /usr/share/dbus-1/system-services/
    fi
}
at_exit restore_polkit_activation
busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
kill "$POLKITD_PID"
polkit_gone() { ! name_has_owner org.freedesktop.PolicyKit1; }
wait_until 120 polkit_gone
out=$(vl alice org.injectd.Injector.Inject "$ALICE_REQ" || true)
expect_error "$out" AuthorizationUnavailable "polkit is required (--polkit=required) but not available"
log "  alice's Inject: $(jq -r .parameters.message <<<"$out")"
out=$(as alice busctl call org.injectd.Injector1 /org/injectd/Injector1 org.injectd.Injector1.Manager Inject 'a{sv}' 5 \
    function s __x64_sys_getpriority error s EPERM scope s process comm s ld-nomatch-x detach b true 2>&1 || true)
assert_contains "$out" "polkit is required (--polkit=required) but not available" "alice's Inject over D-Bus"
alive "polkitd gone, required"
assert_eq 0 "$(injections_left)" "injections armed without polkit"

log "polkitd gone, --polkit=auto: the JSON policy alone decides (at ${SECONDS} s)"
stop_injectd
start_injectd --polkit=auto
out=$(vl alice org.injectd.Injector.Inject "$ALICE_REQ")
id=$(jq -r .parameters.id <<<"$out")
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "alice refused with --polkit=auto and no polkitd: $out"
# Who decided is in the audit record (the injection document has no such field).
grep -q "event=armed id=$id .*polkit=polkit-unavailable-auto" "$DAEMON_LOG" ||
    fail "alice's injection is not recorded as decided by polkit-unavailable-auto"
cancel "$id"
out=$(vl bob org.injectd.Injector.Inject "$ALICE_REQ" || true)
expect_error "$out" UserNotInPolicy ""
grep -q "polkit is not available" "$DAEMON_LOG" || fail "the fallback is not logged"
alive "polkitd gone, auto"

stop_injectd
finish
