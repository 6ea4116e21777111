#!/bin/bash
# D-Bus callers that give up while their Inject call waits its turn for
# polkit are dropped at once: their CheckAuthorization is never sent, and
# the callers queued behind them are served.
#
# The daemon sends at most POLKIT_IN_FLIGHT_INTERACTIVE_MAX (4) interactive
# checks at once and queues the rest (src/daemon/polkit.h); busctl asks
# for interactive authorization. With polkitd stopped (SIGSTOP), KEEPERS
# calls of alice take those places and wait (an interactive check may wait
# 5 minutes: no timeout frees a place meanwhile), DOOMED more are queued
# and then killed, and LATE more is queued behind them. Then polkitd runs
# again. Each check polkitd answers lets the oldest queued one go: without
# the requester record of src/daemon/api/bus-requester.c, the dead callers'
# checks went to polkitd before LATE's, and they were refused only after
# polkitd's answer.
#
# Two of the doomed callers make a Cancel (of root's injection, which alice
# may end only with org.injectd.manage) and a ReloadPolicy instead: those
# wait for polkit the same way and must be dropped the same way
# (src/daemon/manage.c); before, their checks still went to polkitd.
#
# What the daemon sent is counted twice: on the bus (dbus-monitor, every
# CheckAuthorization polkitd is sent) and in its debug log ("Sent N queued
# polkit check(s)", which counts only queued ones).
#
# Last, a daemon stopped while a call waits for polkit answers it ("injectd
# is stopping") before it goes, and leaks nothing of it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

KEEPERS=4
DOOMED=6
LATE=1
FUNCTION=__x64_sys_getpriority
daemon_setup

policy_dir=$DAEMON_WORK/policy.d
mkdir -p "$policy_dir"
cat >"$policy_dir/10-bus-gone.json" <<EOF
{
  "rules": [
    {
      "name": "bus-gone",
      "groups": ["injectd"],
      "functions": ["$FUNCTION"],
      "errors": ["EPERM"],
      "scopes": ["process"],
      "max-duration": "10min",
      "max-active": 100
    }
  ]
}
EOF
start_injectd --polkit=required --log-level=debug --policy-dir="$policy_dir" --rate=0

monitor=$DAEMON_WORK/monitor.log
stdbuf -oL dbus-monitor --system "type='method_call',interface='org.freedesktop.PolicyKit1.Authority',member='CheckAuthorization'" \
    >"$monitor" 2>&1 &
monitor_pid=$!
at_exit kill "$monitor_pid"
# The monitor is attached once it shows a check: root's own, with pkcheck,
# until one shows (polkitd still runs; root has no rule: refused).
monitor_sees_checks() {
    pkcheck --action-id org.injectd.inject --process $$ >/dev/null 2>&1 || true
    grep -q "member=CheckAuthorization" "$monitor"
}
wait_until 120 monitor_sees_checks
# The daemon's checks are those it sends, from its unique name.
daemon_name=$(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetNameOwner s \
    org.injectd.Injector1 | awk '{ print $2 }' | tr -d '"')
[[ $daemon_name == :* ]] || fail "cannot tell injectd's unique name: '$daemon_name'"
daemon_checks() { grep -c "sender=$daemon_name .*member=CheckAuthorization" "$monitor" || true; }

# Root's injection, which doomed0's Cancel names: detached, of a comm no
# task has, so it fails nothing.
sleep 600 &
root_target=$!
at_exit kill "$root_target"
root_id=$(root_inject "$FUNCTION" EPERM kprobe "$root_target" ',"comm":"bg-nomatch-x"')
# Root's Inject asked polkit too: what follows counts from here.
checks_before=$(daemon_checks)

kill -STOP "$POLKITD_PID"
at_exit kill -CONT "$POLKITD_PID"

# count PATTERN: lines of the daemon's log that match.
count() { grep -c -- "$1" "$DAEMON_LOG" || true; }
asked_before=$(count 'asking polkit for')
asked() { (($(count 'asking polkit for') >= asked_before + $1)); }
queued() { (($(count 'polkit check queued') >= $1)); }

# call NAME [METHOD [ARGS...]]: one call of alice's in the background,
# Inject for busctl's own process unless METHOD says otherwise; its pid
# goes to PIDS[NAME].
declare -A PIDS
call() {
    local name=$1 method=${2:-Inject}
    local -a args=("${@:3}")
    [[ $method == Inject ]] &&
        args=('a{sv}' 4 function s "$FUNCTION" error s EPERM scope s process duration_usec t 60000000)
    start_as alice "$DAEMON_WORK/$name.out" "$DAEMON_WORK/$name.err" \
        busctl --allow-interactive-authorization=yes --timeout=600 call org.injectd.Injector1 \
        /org/injectd/Injector1 org.injectd.Injector1.Manager "$method" "${args[@]}"
    PIDS[$name]=$BG_PID
}

# One after the other, each once the daemon has it where it should be:
# the keepers in flight, the others queued in their order.
for ((i = 0; i < KEEPERS; i++)); do
    call "keeper$i"
    wait_until 120 asked $((i + 1))
done
(($(count 'polkit check queued') == 0)) || fail "the keepers' checks were queued: $(grep 'polkit check queued' "$DAEMON_LOG")"
for ((i = 0; i < DOOMED; i++)); do
    case $i in
        0) call "doomed$i" Cancel s "$root_id" ;;
        1) call "doomed$i" ReloadPolicy ;;
        *) call "doomed$i" ;;
    esac
    wait_until 120 queued $((i + 1))
done
for ((i = 0; i < LATE; i++)); do
    call "late$i"
    wait_until 120 queued $((DOOMED + i + 1))
done

# The doomed callers' unique names, for their checks on the bus.
names=()
for ((i = 0; i < DOOMED; i++)); do
    name=$(busctl list --unique --no-legend --no-pager | awk -v pid="${PIDS[doomed$i]}" '$2 == pid { print $1 }')
    [[ $name == :* ]] || fail "no bus name for doomed$i (pid ${PIDS[doomed$i]})"
    names+=("$name")
done
for ((i = 0; i < DOOMED; i++)); do
    kill -KILL "${PIDS[doomed$i]}"
done
name_gone() { ! name_has_owner "$1"; }
# The bus has seen them go, and so has the daemon, which hears of it (the
# NameOwnerChanged) before it answers a call made afterwards.
for name in "${names[@]}"; do
    wait_until 120 name_gone "$name"
done
busctl call org.injectd.Injector1 /org/injectd/Injector1 org.injectd.Injector1.Manager GetCapabilities >/dev/null ||
    fail "injectd does not answer"

kill -CONT "$POLKITD_PID"
# Every request ends: armed (the keepers and the late), refused (a dead
# caller's, after polkit, as the daemon did before it followed D-Bus
# callers while queued), or dropped when its name went (logged once per
# name, and each doomed caller made one request). One grep a poll: under
# TCG each process the poll starts costs. Root's injection was armed before.
armed() { echo $(($(count 'Armed [0-9a-f]\{16\}: ') - 1)); }
ended() {
    (($(grep -c -E "Armed [0-9a-f]{16}: |Refused injection for uid|D-Bus requester '.*' left" "$DAEMON_LOG") >=
      1 + KEEPERS + DOOMED + LATE))
}
wait_until 300 ended
for ((i = 0; i < LATE; i++)); do
    wait_until 120 grep -q '^sot ' "$DAEMON_WORK/late$i.out"
done
log "armed $(armed); the log says: $(grep -E 'Sent [0-9]+ queued|requester .* left|Refused injection' "$DAEMON_LOG" | tr '\n' ';')"

# The doomed callers' checks never went to polkitd; the late one's did.
for name in "${names[@]}"; do
    if grep -q "\"$name\"" "$monitor"; then
        fail "a check for $name, which had left, was sent to polkitd: $(grep -B3 -A12 "\"$name\"" "$monitor")"
    fi
done
sent=$(($(daemon_checks) - checks_before))
[[ $sent == $((KEEPERS + LATE)) ]] ||
    fail "expected $((KEEPERS + LATE)) checks sent to polkitd (the keepers' and the late caller's), seen $sent"
sent_queued=$(grep -o 'Sent [0-9]* queued' "$DAEMON_LOG" | awk '{ n += $2 } END { print n + 0 }')
[[ $sent_queued == "$LATE" ]] ||
    fail "expected the daemon to send $LATE queued check(s) (the late caller's), seen $sent_queued"
left=$(count "D-Bus requester '.*' left")
[[ $left == "$DOOMED" ]] || fail "expected the daemon to drop the $DOOMED callers that left, seen $left"
# Nothing armed for them: only the keepers and the late caller were.
[[ $(armed) == $((KEEPERS + LATE)) ]] || fail "expected $((KEEPERS + LATE)) injections armed, seen $(armed)"
# The dropped Cancel and ReloadPolicy were dropped, not done: root's
# injection stands and the policy was not reloaded.
assert_contains "$(grep 'Dropping the' "$DAEMON_LOG" | tr '\n' ';')" "Dropping the Cancel of uid" "the Cancel dropped"
assert_contains "$(grep 'Dropping the' "$DAEMON_LOG" | tr '\n' ';')" "Dropping the ReloadPolicy of uid" \
    "the ReloadPolicy dropped"
(($(count 'Policy loaded') == 0)) || fail "the policy was reloaded"
"$VARLINK_CALL" "$SOCKET" org.injectd.Injector.ListInjections '{"all":true}' | jq -e --arg id "$root_id" \
    '[.parameters.injections[] | select(.id == $id)] | length == 1' >/dev/null ||
    fail "root's injection $root_id is gone"
root_cancel "$root_id"

# The keepers and the late caller hung up after their answer: their
# injections end with them.
none_left() { [[ $(injections_left) == 0 ]]; }
wait_until 120 none_left
kill -0 "$INJECTD_PID" 2>/dev/null || fail "injectd is gone"

# A daemon stopped while a call waits for polkit answers it before it goes
# (manager_requests_abort()), so the caller hears why and nothing of the
# request is left to leak (LeakSanitizer checks the daemon's exit).
log "stopped while a call waits for polkit"
kill -STOP "$POLKITD_PID"
before=$(($(count 'asking polkit for') - asked_before))
call waiting
wait_until 120 asked $((before + 1))
stop_injectd
kill -CONT "$POLKITD_PID"
stopping() { grep -q 'injectd is stopping' "$DAEMON_WORK/waiting.err"; }
wait_until 120 stopping
log "the waiting caller heard: $(cat "$DAEMON_WORK/waiting.err")"
finish
