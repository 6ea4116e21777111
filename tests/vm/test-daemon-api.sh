#!/bin/bash
# An unprivileged user in group injectd fails a syscall of their own cgroup
# over D-Bus (busctl) and over Varlink (raw NUL-framed JSON through socat,
# and our client module); another user's process is untouched; injections
# end with their requester unless detached; every decision is audited.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

daemon_setup
start_injectd

# ---- D-Bus, with busctl
# comm=cat: the user's other tools (busctl, the shell) keep working.
out=$(bus_inject alice function s __x64_sys_openat error s ENOENT duration_usec t 60000000 detach b true comm s cat)
id=$(jq -r '.data[0]' <<<"$out")
path=$(jq -r '.data[1]' <<<"$out")
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "Inject over D-Bus: expected an id, saw '$out'"
assert_fails_with "No such file or directory" as alice cat /etc/hostname
assert_succeeds as bob cat /etc/hostname
assert_succeeds cat /etc/hostname
injected=$(as alice busctl --json=short get-property org.injectd.Injector1 "$path" \
    org.injectd.Injector1.Injection FaultsInjected | jq .data)
((injected >= 1)) || fail "FaultsInjected: expected at least 1, saw '$injected'"
guarded=$(as alice busctl --json=short get-property org.injectd.Injector1 "$path" \
    org.injectd.Injector1.Injection CallsGuarded | jq .data)
assert_eq 0 "$guarded" "CallsGuarded of a function without guards"
scope=$(as alice busctl --json=short get-property org.injectd.Injector1 "$path" \
    org.injectd.Injector1.Injection Scope | jq -r .data)
assert_eq "cgroup:/session-alice" "$scope" "the default scope"
# bob cannot see alice's injection object.
assert_fails_with "Unknown object" as bob busctl get-property org.injectd.Injector1 "$path" \
    org.injectd.Injector1.Injection Scope
as alice busctl call org.injectd.Injector1 "$path" org.injectd.Injector1.Injection Cancel
assert_succeeds as alice cat /etc/hostname
assert_eq 0 "$(injections_left)" "injections after Cancel"

# ---- Varlink, raw: NUL-framed JSON through socat
# socat shuts its sending side down after the request and then waits -t
# seconds for the reply; the daemon closes the half-closed connection once
# its answer is out, so socat ends with the reply. 600 s is only a bound for
# a daemon that never answers: an arm (polkit, a program loaded again since
# the cancel above) took more than 10 s once on a loaded CI machine.
req='{"method":"org.injectd.Injector.Inject","parameters":{"function":"__x64_sys_openat","error":"ENOENT","duration_usec":60000000,"detach":true,"comm":"cat"}}'
out=$(printf '%s\0' "$req" | as alice socat -t 600 - "UNIX-CONNECT:$SOCKET" | tr -d '\0')
id=$(jq -r '.parameters.id' <<<"$out")
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "Inject over raw Varlink: expected an id, saw '$out'"
assert_eq "cgroup:/session-alice" "$(jq -r .parameters.injection.scope <<<"$out")" "the Varlink injection's scope"
assert_fails_with "No such file or directory" as alice cat /etc/hostname
assert_succeeds as bob cat /etc/hostname
# ... and our client module: the same list, then Cancel.
list=$(vl alice org.injectd.Injector.ListInjections)
assert_eq "$id" "$(jq -r '.parameters.injections[0].id' <<<"$list")" "ListInjections over Varlink"
vl alice org.injectd.Injector.Cancel "{\"id\":\"$id\"}" >/dev/null
assert_succeeds as alice cat /etc/hostname

# The same refusal, word for word, on both APIs (gdbus shows error names).
bus_err=$(as alice gdbus call --system --dest org.injectd.Injector1 --object-path /org/injectd/Injector1 \
    --method org.injectd.Injector1.Manager.Inject "{'function': <'vfs_read'>, 'error': <'EIO'>}" 2>&1 || true)
vl_err=$(vl alice org.injectd.Injector.Inject '{"function":"vfs_read","error":"EIO"}' || true)
assert_contains "$bus_err" "org.injectd.Injector1.Error.NotInjectable" "the D-Bus error name"
assert_eq "org.injectd.Injector.NotInjectable" "$(jq -r .error <<<"$vl_err")" "the Varlink error name"
assert_contains "$bus_err" "$(jq -r .parameters.message <<<"$vl_err")" "the same message on both"

# GetInterfaceDescription returns our definition.
desc=$(vl alice org.varlink.service.GetInterfaceDescription '{"interface":"org.injectd.Injector"}' |
    jq -r .parameters.description)
assert_contains "$desc" "interface org.injectd.Injector" "the interface description"
assert_contains "$desc" "method Inject(" "the interface description"

# ---- Watch: a Varlink stream of the caller's events.
watch_out=$DAEMON_WORK/watch.out
(
    echo "$BASHPID" >/sys/fs/cgroup/session-alice/cgroup.procs
    exec setpriv --reuid=alice --regid=alice --init-groups -- "$VARLINK_CALL" --more --count 4 "$SOCKET" \
        org.injectd.Injector.Watch
) >"$watch_out" 2>&1 &
watcher=$!
wait_until 120 grep -q watching "$watch_out"
id=$(vl alice org.injectd.Injector.Inject '{"function":"__x64_sys_openat","error":"ENOENT","comm":"cat","detach":true,"times":1}' |
    jq -r .parameters.id)
# One fault (times=1): ld.so's first open fails, and cat may still run.
as alice cat /etc/hostname >/dev/null 2>&1 || true
wait "$watcher" || fail "Watch ended with an error: $(cat "$watch_out")"
assert_eq "watching added fault removed" "$(jq -r .parameters.event.type "$watch_out" | paste -sd' ')" "the watched events"
assert_eq "cat" "$(jq -r 'select(.parameters.event.type == "fault") | .parameters.event.comm' "$watch_out")" "the fault's comm"
assert_eq "exhausted" "$(jq -r 'select(.parameters.event.type == "removed") | .parameters.event.reason' "$watch_out")" \
    "why it was removed (times=1)"

# ---- Disconnect: without detach, the injection ends with its requester.
vl alice org.injectd.Injector.Inject '{"function":"__x64_sys_openat","error":"ENOENT","duration_usec":60000000,"comm":"cat"}' >/dev/null
wait_until 120 test "$(injections_left)" = 0
bus_inject alice function s __x64_sys_openat error s ENOENT comm s cat >/dev/null
wait_until 120 test "$(injections_left)" = 0
assert_succeeds as alice cat /etc/hostname

# ---- Audit: each decision names who, what, which scope and the result.
grep -q "event=decision uid=$(id -u alice) .*function=vfs_read .*result=denied" "$DAEMON_LOG" ||
    fail "no audit line for the refused vfs_read request in: $(grep event= "$DAEMON_LOG")"
grep -q "event=armed .*uid=$(id -u alice) .*function=__x64_sys_openat value=-2 scope=cgroup:/session-alice result=allowed rule=injectd-default-syscalls" "$DAEMON_LOG" ||
    fail "no audit line for the armed injection in: $(grep event= "$DAEMON_LOG")"
grep -q "event=removed .*reason=owner-gone" "$DAEMON_LOG" || fail "no audit line for the owner-gone removal"

stop_injectd
finish
