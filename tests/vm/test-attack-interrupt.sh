#!/bin/bash
# Attack: interrupt context is nobody's scope (docs/security.md).
#
# alice keeps CPU 1 busy with a loop in her own process scope and arms
# should_failslab ENOMEM for that process only. Loopback receive work is
# steered to CPU 1 (rps_cpus), so the softirqs that answer root's pings run
# there, with alice's loop as `current`. Those allocations are root's, not
# alice's: ping must lose nothing, the injection counts them as seen but
# never matches them, and the loop's own allocations still fail.
# Before the in_task check in bpf/inject.bpf.c, root lost every packet.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
command -v ping >/dev/null || fail "ping is missing (iputils-ping, tools/setup.sh)"
(($(nproc) >= 2)) || fail "needs 2 CPUs, has $(nproc)"

daemon_setup
start_injectd

ip link set lo up
rps=/sys/class/net/lo/queues/rx-0/rps_cpus
[[ -w $rps ]] || fail "no RPS on lo ($rps): the kernel lacks CONFIG_RPS"
echo 2 >"$rps"     # CPU 1
at_exit eval "echo 0 >$rps"

for backend in fmod_ret kprobe; do
    log "---- $backend"
    err=$DAEMON_WORK/loop-$backend.err
    # A pure CPU loop on CPU 1 (no system calls); on SIGUSR1 it writes a
    # file, which allocates in its own context.
    start_as alice /dev/null "$err" taskset -c 1 bash -c \
        'trap "echo own >/tmp/ic-own-$$" USR1; echo ready >&2; while :; do :; done'
    loop=$BG_PID
    wait_until 120 grep -q '^ready' "$err"

    id=$(as alice "$INJECTCTL" inject should_failslab --error ENOMEM --pid "$loop" --backend "$backend" \
        --for 10min --detach)
    [[ -n $id ]] || fail "alice could not arm should_failslab on her loop"

    # root's pings, from CPU 0; their receive side runs on CPU 1.
    out=$(taskset -c 0 ping -q -c 100 -i 0.02 -W 5 127.0.0.1 2>&1) || true
    loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' <<<"$out")
    log "root's ping with alice's injection armed: ${loss:-?}% loss"
    assert_eq 0 "$loss" "root's packet loss while alice's loop is current on the receiving CPU ($out)"

    # The softirq calls were seen (alice's loop was current) and skipped.
    doc=$(as alice "$INJECTCTL" show "$id" --json)
    seen=$(jq -r .calls_seen <<<"$doc")
    matched=$(jq -r .calls_matched <<<"$doc")
    log "counters: seen $seen, matched $matched, injected $(jq -r .faults_injected <<<"$doc")"
    ((seen > 0)) || fail "no call seen in interrupt context while the loop ran: the test reached nothing ($doc)"
    assert_eq 0 "$matched" "calls matched in interrupt context"

    # The loop's own allocation still fails: the scope works.
    kill -USR1 "$loop"
    wait_until 120 grep -q "Cannot allocate memory" "$err"
    doc=$(as alice "$INJECTCTL" show "$id" --json)
    (($(jq -r .faults_injected <<<"$doc") > 0)) || fail "the loop's own allocation was not failed: $doc"

    as alice "$INJECTCTL" cancel "$id" >/dev/null
    kill "$loop"
    wait "$loop" 2>/dev/null || true
done

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
