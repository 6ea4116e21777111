#!/bin/bash
# Every refusal has its own error name and a message that says what refused,
# and leaves nothing armed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

daemon_setup
# A tighter limit than the default policy's, to reach it quickly.
cat >/etc/injectd/policy.d/20-test-limit.json <<'JSON'
{ "rules": [ {
    "name": "injectd-default-syscalls",
    "groups": ["injectd"],
    "functions": ["__x64_sys_*"],
    "errors": ["ENOENT", "EIO"],
    "scopes": ["cgroup", "process", "global"],
    "max-duration": "10min",
    "max-active": 2
} ] }
JSON
start_injectd

# denied USER ERROR-NAME MESSAGE-PART JSON: an Inject over Varlink refused
# with org.injectd.Injector.ERROR-NAME, and still nothing armed.
denied() {
    local user=$1 name=$2 text=$3 params=$4 out
    out=$(vl "$user" org.injectd.Injector.Inject "$params" || true)
    assert_eq "org.injectd.Injector.$name" "$(jq -r .error <<<"$out")" "error for $user: $params"
    assert_contains "$(jq -r .parameters.message <<<"$out")" "$text" "message for $user: $params"
    log "refused as expected: $(jq -r .parameters.message <<<"$out")"
}

base='"function":"__x64_sys_openat","error":"ENOENT","comm":"cat","detach":true'
denied bob UserNotInPolicy "bob" "{$base}"
denied alice FunctionNotAllowed "open_ctree" '{"function":"open_ctree","error":"ENOMEM"}'
denied alice ErrorNotAllowed "EXDEV" '{"function":"__x64_sys_openat","error":"EXDEV"}'
denied alice DurationTooLong "10min" "{$base,\"duration_usec\":660000000}"

# Other users' processes and cgroups, and global, need inject-global.
setpriv --reuid=bob --regid=bob --init-groups sleep 600 &
bob_pid=$!
at_exit kill "$bob_pid"
denied alice NotAuthorized "org.injectd.inject-global" "{$base,\"scope\":\"process\",\"pid\":$bob_pid}"
denied alice NotAuthorized "org.injectd.inject-global" "{$base,\"cgroup\":\"/sys/fs/cgroup/session-bob\"}"
# ... also a cgroup passed as an fd over D-Bus.
BUS_INJECT_FD=$BUILD_DIR/tests/vm/bus-inject-fd
out=$(as alice "$BUS_INJECT_FD" /sys/fs/cgroup/session-bob __x64_sys_openat ENOENT cat || true)
assert_contains "$out" "org.injectd.Injector1.Error.NotAuthorized" "a foreign cgroup fd over D-Bus"
assert_contains "$out" "polkit did not authorize org.injectd.inject-global" "a foreign cgroup fd over D-Bus"
# A cgroup delegated to alice (owned by her) is hers to scope to.
mkdir /sys/fs/cgroup/session-alice/delegated
chown alice /sys/fs/cgroup/session-alice/delegated
at_exit rmdir /sys/fs/cgroup/session-alice/delegated
id=$(as alice "$BUS_INJECT_FD" /sys/fs/cgroup/session-alice/delegated __x64_sys_openat ENOENT cat)
assert_eq "cgroup:/session-alice/delegated" "$(vl alice org.injectd.Injector.ListInjections | jq -r .parameters.injections[0].scope)" \
    "the delegated cgroup's scope"
vl alice org.injectd.Injector.Cancel "{\"id\":\"$id\"}" >/dev/null
denied alice NotAuthorized "org.injectd.inject-global" "{$base,\"scope\":\"global\"}"
# A root cgroup holds everyone's processes.
denied alice NotAuthorized "org.injectd.inject-global" "{$base,\"cgroup\":\"/sys/fs/cgroup\"}"
assert_eq 0 "$(injections_left)" "injections after the scope refusals"

# The active limit (2 under the test rule).
vl alice org.injectd.Injector.Inject "{$base}" >/dev/null
vl alice org.injectd.Injector.Inject '{"function":"__x64_sys_read","error":"EIO","comm":"cat","detach":true}' >/dev/null
denied alice LimitExceeded "allows at most 2" '{"function":"__x64_sys_close","error":"EIO","comm":"cat","detach":true}'
# The same function and scope twice is its own error.
"$ENGINE" disarm --all >/dev/null
stop_injectd
start_injectd
vl alice org.injectd.Injector.Inject "{$base}" >/dev/null
denied alice ScopeTaken "already has an injection with this scope" "{$base}"
vl alice org.injectd.Injector.Cancel "{\"id\":\"$(vl alice org.injectd.Injector.ListInjections | jq -r '.parameters.injections[0].id')\"}" >/dev/null
assert_eq 0 "$(injections_left)" "injections after cancelling"

# polkit says no: a rules.d file that denies alice.
cat >/etc/polkit-1/rules.d/40-deny-alice.rules <<'JS'
polkit.addRule(function(action, subject) {
        if (action.id.indexOf("org.injectd.") == 0 && subject.user == "alice")
                return polkit.Result.NO;
});
JS
at_exit rm -f /etc/polkit-1/rules.d/40-deny-alice.rules
# polkitd reloads its rules when the directory changes, at its own pace on
# a loaded machine: wait until it denies a process of alice's.
setpriv --reuid=alice --regid=alice --init-groups sleep 600 &
alice_pid=$!
at_exit kill "$alice_pid"
alice_denied() { ! pkcheck --action-id org.injectd.inject --process "$alice_pid" >/dev/null 2>&1; }
wait_until 120 alice_denied
denied alice NotAuthorized "polkit did not authorize org.injectd.inject" "{$base}"
assert_eq 0 "$(injections_left)" "injections after polkit said no"

# Each refusal is in the audit trail with the reason.
for reason in UserNotInPolicy FunctionNotAllowed ErrorNotAllowed DurationTooLong NotAuthorized LimitExceeded ScopeTaken; do
    grep -q "event=decision .*result=denied .*reason=$reason" "$DAEMON_LOG" ||
        fail "no audit line for the $reason refusal"
done
stop_injectd
finish
