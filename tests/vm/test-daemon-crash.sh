#!/bin/bash
# kill -9 of the daemon under load (tests/vm/load-client.c), then a
# restart: every injection that survives is adopted exactly once, the one
# whose deadline passed meanwhile is removed as expired, and those whose
# requesters went away with the load are removed as owner-gone. What a
# quiet kill and restart do (counters, remaining time, an owner still
# alive, --keep-on-exit) is test-daemon-restart.sh's.
# Then the wall clock jumps an hour forward and back: an injection's
# remaining time and its end follow CLOCK_BOOTTIME, neither cut nor
# extended.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

LOAD=$BUILD_DIR/tests/vm/load-client
[[ -x $LOAD ]] || fail "load-client is not built at '$LOAD'"

daemon_setup
start_injectd --rate=0

vl_root() { "$VARLINK_CALL" "$SOCKET" "$@"; }
list_ids() { vl_root org.injectd.Injector.ListInjections '{"all":true}' | jq -r '.parameters.injections[].id' | sort; }
# Root, global scope, a comm no thread has: armed, harmless, detached.
inject_global() {
    vl_root org.injectd.Injector.Inject "{\"function\":\"$1\",\"error\":\"EPERM\",\"scope\":\"global\",\"comm\":\"ld-nomatch-x\",\"detach\":true,\"duration_usec\":$2}" |
        jq -r .parameters.id
}

survivors=()
for f in __x64_sys_setpriority __x64_sys_sysinfo __x64_sys_newuname __x64_sys_times; do
    survivors+=("$(inject_global "$f" 300000000)")
done

# The load: 10 + 10 clients arming, listing, watching and cancelling
# (non-detached injections, in their own process scopes) for longer than
# this scenario waits.
"$LOAD" --dbus 10 --varlink 10 --iterations 1000 "$SOCKET" >"$DAEMON_WORK/load.out" 2>"$DAEMON_WORK/load.err" &
load_pid=$!
stop_load() { kill "$load_pid" 2>/dev/null || true; }
at_exit stop_load
busy() { (($(list_ids | wc -l) >= ${#survivors[@]} + 5)); }
wait_until 120 busy

before=$(list_ids)
log "$(wc -l <<<"$before") injections armed before the kill"
kill -0 "$load_pid" || fail "the load stopped before the kill: $(cat "$DAEMON_WORK/load.err")"
# Its deadline passes while no daemon runs. The daemon is stopped (SIGSTOP)
# as soon as it answers, so it cannot expire the injection itself however
# slow the machine is; 10 s leaves the answer and the stop that much room.
SHORT_S=10
short=$(inject_global __x64_sys_getrusage $((SHORT_S * 1000000)))
kill -STOP "$INJECTD_PID"
short_armed=$(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime)
kill -9 "$INJECTD_PID"
wait "$INJECTD_PID" || true
INJECTD_PID=
# What is pinned now, exactly (the load may have cancelled some since the
# listing, or armed others).
pinned=$("$ENGINE" list --json | jq -r '.[].id' | sort)
grep -qx "$short" <<<"$pinned" || fail "the short injection $short was gone before the kill"
log "$(wc -l <<<"$pinned") injections pinned at the kill"

# The load clients see the daemon gone and stop (their answers are not
# checked here: test-daemon-load.sh does that).
wait "$load_pid" || true
# Past the short one's deadline (by CLOCK_BOOTTIME, the daemon's clock),
# with no daemon.
past_short() { (($(awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime) > short_armed + SHORT_S * 1000 + 500)); }
wait_until $((SHORT_S + 60)) past_short

log_from=$(($(wc -c <"$DAEMON_LOG") + 1))
start_injectd --rate=0
new_log() { tail -c +"$log_from" "$DAEMON_LOG"; }
after=$(list_ids)

# Exactly the survivors are listed, each once.
assert_eq "$(printf '%s\n' "${survivors[@]}" | sort)" "$after" "injections after the restart"
for id in "${survivors[@]}"; do
    assert_eq 1 "$(new_log | grep -c "event=adopted id=$id ")" "adoption lines for $id"
done
# Nothing else is adopted, and nothing twice.
adopted=$(new_log | sed -n 's/.*event=adopted id=\([0-9a-f]*\) .*/\1/p' | sort)
assert_eq "$(printf '%s\n' "${survivors[@]}" | sort)" "$adopted" "injections adopted"
# The expired one was dropped at start, as expired.
new_log | grep "event=removed id=$short .*reason=expired" >/dev/null || fail "no 'expired' removal of $short: $(new_log)"
# The load's injections, whose requesters are gone, were removed too; each
# armed one once, with an audit line.
for id in $(comm -23 <(echo "$pinned") <(printf '%s\n' "${survivors[@]}" "$short" | sort)); do
    assert_eq 1 "$(new_log | grep -c "event=removed id=$id ")" "removals of the load's injection $id"
done
log "restart: ${#survivors[@]} adopted, $(($(wc -l <<<"$pinned") - ${#survivors[@]} - 1)) of the load's removed (requester gone), 1 expired"

# The daemon works as before: the load runs again, cleanly.
out=$("$LOAD" --dbus 2 --varlink 2 --iterations 1 "$SOCKET")
log "after the restart: ${out//$'\n'/; }"
for id in "${survivors[@]}"; do
    vl_root org.injectd.Injector.Cancel "{\"id\":\"$id\"}" >/dev/null
done
assert_eq 0 "$(injections_left)" "injections left"

# The wall clock jumps; the deadline, on CLOCK_BOOTTIME, does not move.

log "the wall clock jumps an hour forward, then back"
boottime_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
# Long enough for the calls below on a loaded host under TCG (and ASan);
# the scenario waits for it to end.
DURATION_S=20
# The daemon arms it some time between the call and the reply.
before_ms=$(boottime_ms)
out=$(vl_root org.injectd.Injector.Inject "{\"function\":\"__x64_sys_getrusage\",\"error\":\"EPERM\",\"scope\":\"global\",\"comm\":\"ld-nomatch-x\",\"detach\":true,\"duration_usec\":$((DURATION_S * 1000000))}")
after_ms=$(boottime_ms)
id=$(jq -r .parameters.id <<<"$out")
expires=$(jq -r .parameters.expires_usec <<<"$out")
restore_clock() { [[ -z ${clock_shifted:-} ]] || date -s '-1 hour' >/dev/null; }
at_exit restore_clock
date -s '+1 hour' >/dev/null
clock_shifted=1
doc() { vl_root org.injectd.Injector.ListInjections | jq -c --arg id "$id" '.parameters.injections[] | select(.id == $id)'; }
# check_remaining WHEN: the remaining time is what BOOTTIME says is left,
# within 1 s: neither cut to 0 nor extended by the hour. Leaves the
# injection's document in d.
check_remaining() {
    local t0 t1 remaining
    # The daemon reads its clock between t0 and t1 (slow calls under TCG).
    t0=$(boottime_ms)
    d=$(doc)
    t1=$(boottime_ms)
    [[ -n $d ]] || fail "injection $id is gone $1, before its deadline"
    remaining=$(jq -r .remaining_usec <<<"$d")
    local lo=$((before_ms + DURATION_S * 1000 - t1 - 1000)) hi=$((after_ms + DURATION_S * 1000 - t0 + 1000))
    log "  $1: remaining ${remaining} us, by BOOTTIME $((lo + 1000))..$((hi - 1000)) ms"
    ((remaining > 0 && remaining / 1000 >= lo && remaining / 1000 <= hi)) ||
        fail "remaining time $1: ${remaining} us, expected $((lo + 1000))..$((hi - 1000)) ms"
}
check_remaining "an hour ahead"
# expires_usec is the wall-clock deadline as of arming, for display (docs/dbus-api.md).
assert_eq "$expires" "$(jq -r .expires_usec <<<"$d")" "expires_usec after the jump"
date -s '-1 hour' >/dev/null
clock_shifted=
check_remaining "back"
# It ends on time by BOOTTIME: not before its deadline, and within 60 s
# after it. The slack is the polling below (each call can take seconds
# under TCG, ASan and a loaded host); a deadline moved by the jump would be
# off by an hour, so 60 s still tells the two apart.
none_left() { [[ $(injections_left) == 0 ]]; }
wait_until $((DURATION_S + 60)) none_left
now=$(boottime_ms)
log "  removed $((now - after_ms))..$((now - before_ms)) ms after arming (duration ${DURATION_S} s, by BOOTTIME)"
((now - before_ms >= DURATION_S * 1000 - 200 && now - after_ms <= DURATION_S * 1000 + 60000)) ||
    fail "removed $((now - after_ms))..$((now - before_ms)) ms after arming, expected ${DURATION_S} s"
grep -q "event=removed id=$id .*reason=expired" "$DAEMON_LOG" || fail "no 'expired' removal of $id"

stop_injectd
finish
