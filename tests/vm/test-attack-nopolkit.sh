#!/bin/bash
# Attack: no polkit does not mean "yes" to everything (docs/security.md).
#
# polkitd is stopped and its D-Bus activation file removed, as on servers
# and CI images without polkit; injectd runs with --polkit=auto. alice (group
# injectd, the default policy) tries pid 1, the root cgroup, bob's process
# and global scope: each needs a real yes from polkit or a policy rule that
# names it, and the default policy names none, so all are refused and
# nothing is armed. Her own process still works. A rule naming
# "foreign-process" then grants bob's process, and only that.
# Before the fix, alice armed should_failslab on pid 1 and the root cgroup.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"

daemon_setup

# No polkit: stop polkitd and make its name unactivatable.
kill "$POLKITD_PID"
wait "$POLKITD_PID" 2>/dev/null || true
rm -f /usr/share/dbus-1/system-services/org.freedesktop.PolicyKit1.service
busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
wait_until 120 eval '! name_has_owner org.freedesktop.PolicyKit1'
out=$(busctl call org.freedesktop.PolicyKit1 /org/freedesktop/PolicyKit1/Authority \
    org.freedesktop.DBus.Peer Ping 2>&1) && fail "polkit still answers: $out"
log "polkit is gone: $out"

start_injectd --polkit=auto

start_as bob /dev/null /dev/null sleep 1000
bob_pid=$BG_PID
start_as alice /dev/null /dev/null sleep 1000
alice_pid=$BG_PID

# --comm: no thread has that name, so an injection wrongly armed fails
# nothing and the VM stays usable to report it.
spec=(inject __x64_sys_openat --error ENOENT --comm attack-test --for 1min --detach)

# refused WHAT ARG...: alice's inject with ARG... must be refused.
refused() {
    local what=$1 out rc=0
    shift
    out=$(as alice "$INJECTCTL" "${spec[@]}" "$@" 2>&1) || rc=$?
    ((rc != 0)) || fail "alice armed $what without polkit ($*): $out"
    log "alice on $what: refused ($out)"
    assert_eq 0 "$(injections_left)" "injections armed after alice's try on $what"
}

refused "pid 1" --pid 1
refused "the root cgroup" --cgroup /sys/fs/cgroup
refused "bob's process" --pid "$bob_pid"
refused "global scope" --global
refused "pid 1 over Varlink" --pid 1 --varlink

# Her own process still works, by the policy alone.
id=$(as alice "$INJECTCTL" "${spec[@]}" --pid "$alice_pid") || fail "alice could not arm her own process"
doc=$(as alice "$INJECTCTL" show "$id" --json)
assert_eq injectd-default-syscalls "$(jq -r .rule <<<"$doc")" "the rule that granted alice's own process"
as alice "$INJECTCTL" cancel "$id" >/dev/null

# A rule that names foreign processes grants them without polkit.
cat >/etc/injectd/policy.d/50-foreign.json <<'EOF'
{
  "rules": [
    {
      "name": "test-foreign-process",
      "users": ["alice"],
      "functions": ["__x64_sys_openat"],
      "errors": ["ENOENT"],
      "scopes": ["foreign-process"],
      "max-duration": "2min",
      "max-active": 1
    }
  ]
}
EOF
chmod 0644 /etc/injectd/policy.d/50-foreign.json
"$INJECTCTL" reload-policy >/dev/null
id=$(as alice "$INJECTCTL" "${spec[@]}" --pid "$bob_pid") ||
    fail "alice could not arm bob's process with a rule naming foreign-process"
doc=$(as alice "$INJECTCTL" show "$id" --json)
assert_eq test-foreign-process "$(jq -r .rule <<<"$doc")" "the rule that granted bob's process"
as alice "$INJECTCTL" cancel "$id" >/dev/null
refused "the root cgroup, with only foreign-process named" --cgroup /sys/fs/cgroup
rm -f /etc/injectd/policy.d/50-foreign.json
"$INJECTCTL" reload-policy >/dev/null

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
