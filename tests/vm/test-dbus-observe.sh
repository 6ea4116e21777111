#!/bin/bash
# Observe over D-Bus (Manager.Observe, the session object's Ended and
# Stop): injectctl explore's discovery over the bus reaches the same
# functions with the same calls as over Varlink for the same workload; the
# session object is invisible to, and cannot be stopped by, another user;
# root's Stop ends it and Ended reaches the caller; the caller leaving the
# bus mid-session, its observed tree still running, releases the
# observation (its program and link are gone).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built"
OBSERVE_PREFIX=/org/injectd/Injector1/observe

daemon_setup
start_injectd

# The same fixed workload each time: sh, and cat twice on one file.
WORKLOAD=(sh -c 'cat /etc/passwd >/dev/null; cat /etc/passwd >/dev/null')
FUNCS=(--functions __x64_sys_openat --functions __x64_sys_close --functions __x64_sys_getppid)

# reached REPORT: each function reached, its calls and number of stacks.
reached() {
    jq -c '[.reached[] | {function, calls, stacks: (.stacks | length)}] | sort_by(.function)' "$1"
}

log "discovery over Varlink and over D-Bus, as alice: the same counts"
for t in varlink bus; do
    flag=(--bus)
    [[ $t == varlink ]] && flag=(--varlink)
    rc=0
    as alice "$INJECTCTL" "${flag[@]}" explore "${FUNCS[@]}" --max-runs 0 --report "/tmp/obs-$t.json" \
        -- "${WORKLOAD[@]}" >/dev/null 2>"/tmp/obs-$t.err" || rc=$?
    cat "/tmp/obs-$t.err" >&2
    assert_eq 0 "$rc" "explore --max-runs 0 over $t"
done
vl_reached=$(reached /tmp/obs-varlink.json)
bus_reached=$(reached /tmp/obs-bus.json)
log "over Varlink: $vl_reached"
[[ $(jq '[.[] | select(.function == "__x64_sys_openat" and .calls >= 2)] | length' <<<"$vl_reached") == 1 ]] ||
    fail "the workload's openat calls were not counted over Varlink: $vl_reached"
assert_eq "$vl_reached" "$bus_reached" "what the discovery reached over D-Bus against Varlink"
assert_eq "$(jq -c .observing /tmp/obs-varlink.json)" "$(jq -c .observing /tmp/obs-bus.json | jq -c ".pid = $(jq .observing.pid /tmp/obs-varlink.json)")" \
    "the observing document (pid aside)"
assert_eq 0 "$(prog_ids observe_call | wc -l)" "observe programs loaded after both discoveries"

# observe_path: the one session object root sees, or nothing.
observe_path() {
    busctl introspect --xml-interface org.injectd.Injector1 "$OBSERVE_PREFIX" 2>/dev/null |
        grep -o 'node name="_[0-9a-f]*"' | sed -e 's/^node name="//' -e 's/"$//' -e "s|^|$OBSERVE_PREFIX/|"
}
has_observe_path() { [[ -n $(observe_path) ]]; }
no_observe_prog() { [[ -z $(prog_ids observe_call) ]]; }

# A session that lasts: alice explores over D-Bus a command that sleeps.
start_session() {
    start_as alice "/tmp/obs-$1.out" "/tmp/obs-$1.err" \
        "$INJECTCTL" --bus explore "${FUNCS[@]}" --max-runs 0 --report "/tmp/obs-$1.json" -- sleep 300
    EXPLORE_PID=$BG_PID
    # TCG: starting injectctl and attaching the program takes seconds.
    wait_until 120 has_observe_path
    path=$(observe_path)
    [[ -n $(prog_ids observe_call) ]] || fail "no observe program loaded while a session is on"
}

log "another user cannot see or stop alice's session; root can stop it"
start_session stop
log "session object: $path"
rc=0
err=$(as bob busctl call org.injectd.Injector1 "$path" org.injectd.Injector1.Observe Stop 2>&1) || rc=$?
assert_eq 1 "$rc" "bob's Stop of alice's session (said: $err)"
assert_contains "$err" "Unknown object" "bob's Stop"
# Not even alice's own other connections: the session is its connection's.
rc=0
err=$(as alice busctl call org.injectd.Injector1 "$path" org.injectd.Injector1.Observe Stop 2>&1) || rc=$?
assert_eq 1 "$rc" "Stop from another of alice's connections (said: $err)"
assert_eq "$path" "$(observe_path)" "the session after the refused Stops"
kill -0 "$EXPLORE_PID" || fail "explore ended after the refused Stops: $(cat /tmp/obs-stop.err)"
# Root's Stop ends it, and Ended reaches explore, which then finishes
# (without it, explore would wait for the sleep's 300 s).
busctl call org.injectd.Injector1 "$path" org.injectd.Injector1.Observe Stop ||
    fail "root's Stop of alice's session failed"
wait_until 120 no_observe_prog
explore_gone() { ! kill -0 "$EXPLORE_PID" 2>/dev/null; }
wait_until 120 explore_gone
cat /tmp/obs-stop.err >&2
jq -e '.reached' /tmp/obs-stop.json >/dev/null || fail "no report after Stop: $(cat /tmp/obs-stop.err)"
has_observe_path && fail "the session object is still there after Stop: $(observe_path)"

log "the caller leaving the bus mid-session releases it"
# A tree that outlives the caller: alice's sleep, observed by pid from
# busctl, which leaves the bus right after the reply. Only the name's
# going ends the session (else: at the 10-minute default).
start_as alice /dev/null /dev/null sleep 300
sleeper=$BG_PID
out=$(as alice busctl --json=short call org.injectd.Injector1 /org/injectd/Injector1 \
    org.injectd.Injector1.Manager Observe 'a{sv}' 2 functions as 1 __x64_sys_openat pid u "$sleeper") ||
    fail "alice's Observe of her sleep over busctl: $out"
assert_eq "$sleeper" "$(jq -r '.data[0]' <<<"$out" | jq .pid)" "the pid observed"
[[ $(jq -r '.data[1]' <<<"$out") == "$OBSERVE_PREFIX"/_* ]] || fail "Observe returned no session object: $out"
assert_eq 1 "$(jq -r ".data[0]" <<<"$out" | jq .attached)" "functions attached"
# The daemon hears NameOwnerChanged and frees the session and its link.
wait_until 120 no_observe_prog
wait_until 120 eval '! has_observe_path'
kill -0 "$sleeper" || fail "the observed sleep is gone: the test shows nothing"
assert_eq 0 "$(bpftool link show --json | jq '[.[] | select(.type == "kprobe_multi")] | length')" \
    "kprobe.multi links left after the caller left"
kill "$sleeper"

stop_injectd
check_clean
finish
