#!/bin/bash
# Attack: one user's Observe sessions take the daemon's memory (issue 29).
# Each session loads a program with preallocated maps, charged to
# injectd.service's memory cgroup; nothing bounded how many one user held,
# and alice's 32 took the cgroup to 176 MiB of its MemoryHigh=192M.
#
# Under systemd, with the installed unit's MemoryHigh/MemoryMax: alice
# asks for ATTEMPTS sessions over Varlink, one after the other, each held
# open. Her first MAX_PER_USER (--max-observe-per-user's default) are
# granted and the rest refused with LimitExceeded saying which limit, and
# the refusal is journaled. bob's Inject is answered (armed) and his own
# Observe granted meanwhile: the share is alice's, not everyone's. The
# cgroup's memory.events shows no high and no oom_kill, and the cost of a
# session (memory.current before and after alice's, divided) is logged
# for docs/security.md. Before the shares (authorize_observe()), every
# one of alice's sessions was granted.
# Run with: tests/vm/run --systemd -- bash tests/vm/test-attack-observe-flood.sh
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/lib-systemd.sh
. "$(dirname "$0")/lib-systemd.sh"

VARLINK_CALL=$BUILD_DIR/tests/vm/varlink-call
[[ -x $VARLINK_CALL ]] || fail "varlink-call is not built at '$VARLINK_CALL'"
MAX_PER_USER=4          # MANAGER_MAX_OBSERVE_PER_USER_DEFAULT
ATTEMPTS=6
CG=/sys/fs/cgroup/system.slice/injectd.service
FUNCS='["__x64_sys_getpgid", "__x64_sys_openat", "__x64_sys_close", "__x64_sys_read"]'

at_exit stop_injectd
systemd_users
usermod -a -G injectd bob
work=$(mktemp -d /tmp/observe-flood.XXXXXX)
chmod 0777 "$work"

assert_succeeds systemctl start injectd.service
[[ -d $CG ]] || fail "no memory cgroup '$CG' for the running daemon"
# event COUNTER: memory.events' COUNTER of the daemon's cgroup.
event() { awk -v k="$1" '$1 == k { print $2 }' "$CG/memory.events"; }
high0=$(event high)
oom0=$(event oom_kill)
log "daemon's cgroup: MemoryHigh $(<"$CG/memory.high"), MemoryMax $(<"$CG/memory.max"), high $high0, oom_kill $oom0"

# The trees observed: a sleep of each user's (as forks twice: its pid is
# not $!).
as alice sleep 600 &
as bob sleep 600 &
wait_until 60 pgrep -u alice -x sleep
wait_until 60 pgrep -u bob -x sleep
alice_sleep=$(pgrep -u alice -x sleep)
bob_sleep=$(pgrep -u bob -x sleep)
at_exit kill "$alice_sleep" "$bob_sleep"

# observe USER PID N: an Observe of USER's PID held open in the background
# (its connection is the session; no client timeout, which would end it
# after 30 s); waits for its first reply, which is either "observing" or
# an error.
observe() {
    local user=$1 pid=$2 n=$3
    as "$user" "$VARLINK_CALL" --more --no-timeout "$SOCKET" org.injectd.Injector.Observe \
        "{\"functions\": $FUNCS, \"pid\": $pid}" >"$work/$user-$n.out" 2>"$work/$user-$n.err" &
    wait_until 120 test -s "$work/$user-$n.out"
}

# Settle the daemon's first-request costs (policy, kallsyms, the shared
# programs) before the baseline, with one Observe of root's that ends.
"$VARLINK_CALL" --more --count 1 "$SOCKET" org.injectd.Injector.Observe \
    "{\"functions\": $FUNCS, \"pid\": $alice_sleep}" >/dev/null
sleep 2
base=$(<"$CG/memory.current")
log "memory.current before alice's sessions: $base"

journal_mark mark
granted=0
for ((i = 1; i <= ATTEMPTS; i++)); do
    observe alice "$alice_sleep" "$i"
    reply=$(head -n 1 "$work/alice-$i.out")
    if [[ $(jq -r '.parameters.observing.attached // 0' <<<"$reply") -gt 0 ]]; then
        granted=$((granted + 1))
        log "alice's session $i: granted"
    else
        log "alice's session $i: $reply"
        assert_eq org.injectd.Injector.LimitExceeded "$(jq -r .error <<<"$reply")" "the error of alice's session $i"
        assert_contains "$(jq -r .parameters.message <<<"$reply")" "at most $MAX_PER_USER per user" \
            "what alice's session $i was told"
        assert_contains "$(jq -r .parameters.message <<<"$reply")" "--max-observe-per-user" \
            "the limit alice's session $i was told of"
    fi
done
assert_eq "$MAX_PER_USER" "$granted" "alice's sessions granted of $ATTEMPTS"
after=$(<"$CG/memory.current")
log "memory.current with alice's $granted sessions: $after; per session $(((after - base) / granted / 1024)) KiB"
refusals=$(journal_since mark -u injectd.service INJECTD_EVENT=observe INJECTD_RESULT=refused | wc -l)
assert_eq $((ATTEMPTS - MAX_PER_USER)) "$refusals" "refusals of alice's sessions in the journal"

log "bob, meanwhile: his Inject is answered and his own Observe granted"
id=$(as bob "$INJECTCTL" --varlink inject __x64_sys_getpgid --error EPERM --pid "$bob_sleep" --for 1min --detach)
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "bob's Inject while alice is at her limit: '$id'"
as bob "$INJECTCTL" --varlink cancel "$id" >/dev/null
observe bob "$bob_sleep" 1
[[ $(head -n 1 "$work/bob-1.out" | jq -r '.parameters.observing.attached // 0') -gt 0 ]] ||
    fail "bob's Observe while alice is at her limit: $(head -n 1 "$work/bob-1.out")"

assert_eq "$high0" "$(event high)" "memory.events high of the daemon's cgroup"
assert_eq "$oom0" "$(event oom_kill)" "memory.events oom_kill of the daemon's cgroup"
assert_eq active "$(unit_state injectd.service)" "injectd.service at the end"
finish
