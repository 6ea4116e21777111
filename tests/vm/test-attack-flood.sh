#!/bin/bash
# Attack: one user floods the daemon (docs/security.md, "One user cannot
# starve the daemon or the others").
#
# alice, all at once:
#   - opens Varlink connections until refused, and again each time the idle
#     timeout closes them;
#   - subscribes to D-Bus signals from as many bus connections as she can;
#   - fails eventfd() on every call of a loop running on every CPU, with a
#     Varlink Watch streaming the events.
# Meanwhile bob's `injectctl inject ... --detach` and `cancel` must be
# answered, over D-Bus and over Varlink, and root must still get a
# Varlink connection when users hold all theirs. Afterwards the faults are
# counted exactly, and the events beyond the rate limit are counted as
# suppressed.
#
# The caps are set small on the command line, so the flood is quick:
#   14 Varlink connections, 6 per user, 4 kept for privileged callers:
#   users together get 10; 4 subscriptions per user; 50 events per second
#   per injection; idle connections closed after 60 s.
# INJECTD_FLOOD_NO_DEFENSES=1 runs the same with the per-user caps and reserves
# turned off (as big as the total) and no event rate limit, to show that
# the test catches their absence.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
FLOOD=$BUILD_DIR/tests/vm/flood-client
LOOP=$BUILD_DIR/tests/vm/syscall-loop
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
[[ -x $FLOOD ]] || fail "flood-client is not built at '$FLOOD'"
[[ -x $LOOP ]] || fail "syscall-loop is not built at '$LOOP'"

# Every answer bob waits for: "answered at all", not "answered fast". The
# machine is a loaded 2-CPU TCG guest whose CPUs alice keeps busy on
# purpose; a starved daemon never answers, a slow one does.
ANSWER_BOUND=120
# Calls per run of the hot loop, over all its threads.
LOOP_CALLS=100000

daemon_setup

# The default policy, and a rule that lets bob (not in group injectd) fail
# system calls in his own processes. polkit is off (the JSON policy alone
# decides): its sample rule grants group injectd only, and who may inject
# is not what this scenario is about.
POLICY=$DAEMON_WORK/policy
mkdir -p "$POLICY"
cp "$SRC_DIR/policy/10-injectd-default.json" "$POLICY/"
cat >"$POLICY/20-bob.json" <<'EOF'
{ "rules": [ { "name": "flood-test-bob", "users": ["bob"], "functions": ["__x64_sys_*"],
               "errors": ["ENOENT"], "scopes": ["cgroup", "process"], "max-duration": "10min",
               "max-active": 4 } ] }
EOF

if [[ ${INJECTD_FLOOD_NO_DEFENSES:-0} == 1 ]]; then
    log "INJECTD_FLOOD_NO_DEFENSES=1: per-user caps and reserves off, no event rate limit"
    start_injectd --policy-dir="$POLICY" --polkit=off --max-connections=14 --max-connections-per-user=14 \
        --reserved-connections=0 --max-subscriptions-per-user=256 --event-rate=0 --idle-timeout=60s
else
    start_injectd --policy-dir="$POLICY" --polkit=off --max-connections=14 --max-connections-per-user=6 \
        --reserved-connections=4 --max-subscriptions-per-user=4 --event-rate=50 --idle-timeout=60s
fi

W=$DAEMON_WORK/flood
mkdir -p "$W"
chown alice "$W"

# timed LABEL USER CMD...: run CMD as USER (root: as it is), fail if it is
# not answered within ANSWER_BOUND seconds, log how long it took; prints
# CMD's output.
timed() {
    local label=$1 user=$2 start out rc=0
    shift 2
    start=$(date +%s%N)
    if [[ $user == root ]]; then
        out=$(timeout "$ANSWER_BOUND" "$@" 2>"$W/timed.err") || rc=$?
    else
        out=$(as "$user" timeout "$ANSWER_BOUND" "$@" 2>"$W/timed.err") || rc=$?
    fi
    ((rc != 124)) || fail "$label: no answer within ${ANSWER_BOUND}s while alice floods"
    ((rc == 0)) || fail "$label: failed with status $rc: $(cat "$W/timed.err")"
    log "$label: answered in $((($(date +%s%N) - start) / 1000000)) ms"
    printf '%s' "$out"
}

# ---- alice's hot loop: eventfd() on every CPU, failed on every call.
ncpu=$(nproc)
start_as alice "$W/hot.out" "$W/hot.err" bash -c '
    while [ ! -e "$1/go" ]; do sleep 0.1; done
    i=0
    while [ ! -e "$1/stop" ]; do
        "$2" --threads "$3" eventfd "$4" >"$1/run.out"
        sed -n "s/^failed: /$i /p" "$1/run.out" >>"$1/counts"
        i=$((i + 1))
    done
    echo done >"$1/done"' _ "$W" "$LOOP" "$ncpu" "$LOOP_CALLS"
hot=$BG_PID
hot_id=$(as alice "$INJECTCTL" inject __x64_sys_eventfd2 --error EPERM --pid "$hot" --for 10min --detach)
[[ -n $hot_id ]] || fail "alice could not arm eventfd2 on her loop"
start_as alice "$W/watch.json" "$W/watch.err" "$INJECTCTL" --varlink watch --json "$hot_id"
wait_until 120 grep -q '"watching"' "$W/watch.json"
touch "$W/go"
wait_until 120 test -s "$W/counts"
log "alice's loop runs on $ncpu CPUs ($ncpu threads), injection $hot_id"

# ---- alice's subscriptions, up to her cap.
start_as alice "$W/subs.out" "$W/subs.err" "$FLOOD" subscribe 64
wait_until "$ANSWER_BOUND" grep -q '^refused' "$W/subs.out"
log "alice's subscriptions: $(tr '\n' ' ' <"$W/subs.out")"

# ---- alice's Varlink connections, until refused.
start_as alice "$W/conns.out" "$W/conns.err" "$FLOOD" varlink "$SOCKET" 64
wait_until "$ANSWER_BOUND" grep -q '^round 1 refused' "$W/conns.out"
log "alice's connections: $(tr '\n' ' ' <"$W/conns.out")"

# bob opens Varlink connections too, until refused: with alice's, users
# then hold all they may.
start_as bob "$W/bob-conns.out" "$W/bob-conns.err" "$FLOOD" varlink "$SOCKET" 64
wait_until "$ANSWER_BOUND" grep -q '^round 1 refused' "$W/bob-conns.out"
bob_flood=$BG_PID
log "bob's connections: $(tr '\n' ' ' <"$W/bob-conns.out")"

# root still gets in: the reserve.
timed "root's GetInfo with users at their share" root "$VARLINK_CALL" "$SOCKET" org.varlink.service.GetInfo >/dev/null
kill "$bob_flood"
wait "$bob_flood" 2>/dev/null || true

# ---- bob, while alice floods: inject --detach and cancel, both APIs.
for api in dbus varlink; do
    T=(--bus)
    [[ $api == varlink ]] && T=(--varlink)
    id=$(timed "bob's inject --detach ($api)" bob "$INJECTCTL" "${T[@]}" inject __x64_sys_openat \
        --error ENOENT --comm flood-nomatch --for 5min --detach)
    [[ $id =~ ^[0-9a-f]{16}$ ]] || fail "bob's inject ($api) printed '$id', not an id"
    timed "bob's cancel ($api)" bob "$INJECTCTL" "${T[@]}" cancel "$id" >/dev/null
done
# bob may subscribe as well: alice's subscriptions are hers alone.
start_as bob "$W/bob-subs.out" "$W/bob-subs.err" "$FLOOD" subscribe 1
wait_until "$ANSWER_BOUND" grep -q '^refused' "$W/bob-subs.out"
assert_eq "subscribed 1 refused none" "$(tr '\n' ' ' <"$W/bob-subs.out" | sed 's/ $//')" "bob's one subscription"

# ---- the limits alice ran into said so.
refusal=$(grep '^round 1 refused' "$W/conns.out")
assert_contains "$refusal" "org.injectd.Injector.LimitExceeded" "alice's refused connection"
assert_contains "$refusal" "at most 6 per user" "alice's refused connection"
refusal=$(grep '^round 1 refused' "$W/bob-conns.out")
assert_contains "$refusal" "kept for privileged callers" "bob's refused connection, with users at their share"
assert_contains "$(cat "$W/subs.out")" "subscribed 4" "alice's subscriptions"
assert_contains "$(grep '^refused' "$W/subs.out")" "org.injectd.Injector1.Error.LimitExceeded" \
    "alice's refused subscription"

# ---- the idle timeout closes alice's connections; she reconnects, and is
# refused again at her cap (60 s of idleness, checked every 30 s).
wait_until 300 grep -q '^round 2 refused' "$W/conns.out"
assert_contains "$(grep '^round 2 refused' "$W/conns.out")" "at most 6 per user" "alice's second round"
log "alice's connections after the idle timeout: $(tr '\n' ' ' <"$W/conns.out")"

# ---- stop the loop after its current run; the counters must be exact.
touch "$W/stop"
wait_until 300 test -e "$W/done"
# --bus: alice's Varlink connections are still at her cap, where
# injectctl's default (Varlink first) is refused with LimitExceeded.
doc=$(timed "alice's show" alice "$INJECTCTL" --bus show "$hot_id" --json)
injected=$(jq -r .faults_injected <<<"$doc")
matched=$(jq -r .calls_matched <<<"$doc")
suppressed=$(jq -r .events_suppressed <<<"$doc")
runs=0 failed=0
while read -r run n; do
    assert_eq "$runs" "$run" "the loop's runs, in order"
    runs=$((runs + 1))
    failed=$((failed + n))
done <"$W/counts"
streamed=$(jq -c 'select(.type == "fault")' "$W/watch.json" | wc -l)
log "$runs runs of $LOOP_CALLS eventfd calls: $failed failed; injection: matched $matched," \
    "injected $injected, events streamed $streamed, suppressed $suppressed"
assert_eq $((runs * LOOP_CALLS)) "$failed" "eventfd calls failed (every call is in scope)"
assert_eq "$failed" "$injected" "faults_injected against the loop's own count"
assert_eq "$injected" "$matched" "calls_matched against faults_injected"
((streamed > 0)) || fail "no fault event reached alice's watch"
((suppressed > 0)) || fail "no event was suppressed: the loop made $failed faults at no rate limit"
((streamed + suppressed <= injected)) || fail "more events ($streamed + $suppressed) than faults ($injected)"
# The object path: ids start with a digit, so the element gets a "_".
bus_suppressed=$(as alice busctl --json=short get-property org.injectd.Injector1 \
    "/org/injectd/Injector1/injection/_$hot_id" org.injectd.Injector1.Injection EventsSuppressed | jq .data)
((bus_suppressed >= suppressed)) || fail "EventsSuppressed on the bus is $bus_suppressed, below $suppressed"

as alice "$INJECTCTL" --bus cancel "$hot_id" >/dev/null   # --bus: as for show
assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
