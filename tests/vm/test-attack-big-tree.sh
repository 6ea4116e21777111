#!/bin/bash
# Attack: one user's arm on a big process tree holds the daemon for
# everyone (issue 29, item 4; docs/security.md, "No request holds the
# loop"). alice asks for a process scope on the root of her tree of
# $TREE processes; tagging them is a walk of the tree, which the daemon
# used to make in one go inside its event loop, so that bob's requests
# waited for all of it. Now the walk goes a bounded number of processes
# per turn of the loop (MANAGER_ARM_STEP_PROCESSES), at idle priority.
#
#   1. bob's ListInjections, then his GetCapabilities, asked every 50 ms
#      on a connection he holds (answer-probe.py), are answered while
#      alice's arm walks within bounds derived from their idle times
#      (probe_arm, below). The walk is measured too (the engine's
#      tag_usec), so the log says what bob waited before.
#   2. The arm covers the tree: the engine visited every process of it.
#   3. alice leaves while she arms (her injectctl killed, no --detach):
#      nothing stays armed and no root stays in the kernel's roots map.
#      Under TCG the kill may land after the arm; the log says which.
#
# Seen failing on the code before the stepped walk (b20c657's src/): bob
# waited 414 ms for ListInjections, over the bound of 200 ms.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
TREE_FIXTURE=$BUILD_DIR/tests/vm/proc-tree
[[ -x $INJECTCTL && -x $TREE_FIXTURE ]] || fail "injectctl or proc-tree is not built"
TREE=5000
W=$(mktemp -d)
chmod 0755 "$W"

daemon_setup
# polkit off: the default JSON policy lets alice (group injectd) fail
# system calls in her own processes; polkit's latency is not what this
# measures.
start_injectd --polkit=off --log-level=debug

PROBE=$SRC_DIR/tests/vm/answer-probe.py
now_ms() { date +%s%3N; }

# alice's tree, in a cgroup of its own inside her session, so that it is
# killed whole at the end.
cg=$(make_cgroup session-alice/tree)
chown alice "$cg/cgroup.procs"
(
    echo "$BASHPID" >"$cg/cgroup.procs"
    exec setpriv --reuid=alice --regid=alice --init-groups --inh-caps=-all -- "$TREE_FIXTURE" "$TREE"
) >"$W/tree.out" 2>"$W/tree.err" &
wait_until 600 grep -q '^ready' "$W/tree.out"
ROOT=$(awk '/^ready/ { print $2 }' "$W/tree.out")
n=$(wc -l <"$cg/cgroup.procs")
((n >= TREE)) || fail "alice's tree has $n processes, not $TREE: $(cat "$W/tree.err")"
log "alice's tree: $n processes under $ROOT"

# idle FILE: bob's idle answer time, the median of his answers 3 to 12
# (the first two warm the daemon up), with nothing else to do.
idle() {
    sed -n 3,12p "$1" | sort -n -k2 | awk '{ v[NR] = $2 } END { print v[int((NR + 1) / 2)] + 0 }'
}

# during FILE: how many of bob's requests ran while alice's arm did (sent
# before it was answered, answered after it began), and the slowest.
during() {
    awk -v a="$t0" -v b="$t1" '$1 + $2 >= a && $1 <= b { n++; if ($2 > m) m = $2 } END { print n + 0, m + 0 }' "$1"
}

# probe_arm METHOD FACTOR: bob calls METHOD every 50 ms on a connection
# he holds (answer-probe.py: the daemon's time, not a new client's start
# under TCG); once his idle time is known, alice arms on her whole tree
# (detached, so it stays: ID). Every answer bob waited for while her arm
# ran must come within FACTOR times his idle time, and at least 200 ms:
# one step of the walk, 32 processes, took about 3 ms of the 263 to
# 1003 ms that 5,000 took on a 2-CPU TCG guest at host load 8 to 10, but
# the arm does more than its walk (its scope resolved, its record saved)
# and the guest's scheduling is noisy: the slowest answers seen with the
# fix were 11 to 97 ms (idle medians 4 to 26 ms). Before the fix he
# waited for the whole walk: 414 ms for ListInjections, seen failing. Sets ID, T_ARM (ms), TAG_USEC, TAG_TASKS.
probe_arm() {
    local method=$1 factor=$2 out=$W/${1##*.}.out idle_ms bound n worst rc=0 probe
    start_as bob "$out" "$W/probe.err" python3 "$PROBE" "$SOCKET" "$method" 50
    probe=$BG_PID
    wait_until 300 bash -c "(( \$(wc -l <'$out') >= 12 ))"
    idle_ms=$(idle "$out")
    bound=$((idle_ms * factor > 200 ? idle_ms * factor : 200))
    t0=$(now_ms)
    ID=$(as alice "$INJECTCTL" --varlink inject __x64_sys_getpgid --error EPERM --pid "$ROOT" --for 10min \
        --detach 2>"$W/alice.err") || rc=$?
    t1=$(now_ms)
    assert_eq 0 "$rc" "alice's inject exit status ($(cat "$W/alice.err"))"
    [[ $ID =~ ^[0-9a-f]{16}$ ]] || fail "alice's inject printed '$ID', not an id"
    # Every request bob made during her arm has its answer once he has
    # three more.
    n=$(wc -l <"$out")
    wait_until 300 bash -c "(( \$(wc -l <'$out') >= $n + 3 ))"
    kill "$probe"
    T_ARM=$((t1 - t0))
    st=$(engine_stats)
    TAG_USEC=$(jq .last_arm.tag_usec <<<"$st")
    TAG_TASKS=$(jq .last_arm.tag_tasks <<<"$st")
    read -r n worst < <(during "$out")
    log "$method: idle ${idle_ms} ms (median), bound ${bound} ms; alice's arm answered in ${T_ARM} ms," \
        "tagging $((TAG_USEC / 1000)) ms over $TAG_TASKS task(s); $n of bob's calls meanwhile, slowest ${worst} ms"
    ((n >= 1)) || fail "bob made no $method call while alice's arm ran (${T_ARM} ms)"
    # A walk in one go makes bob wait for all of it (worst about the
    # walk's time); a stepped one, for a step. The guest's scheduling on a
    # loaded host adds stalls of its own (414 ms seen once in a merged
    # run, with a walk of 1105 ms and 17 other answers meanwhile): a wait
    # over the bound still passes when it is under half the walk, which
    # a walk in one go never gives.
    ((worst <= bound || worst * 2 < TAG_USEC / 1000)) ||
        fail "bob waited ${worst} ms for $method while alice armed on her tree of $TREE processes," \
            "over the bound of ${bound} ms ($factor times his idle ${idle_ms} ms) and over half the walk" \
            "($((TAG_USEC / 1000)) ms): the walk held the daemon"
}

# cancel_wait ID: alice cancels; nothing stays armed.
cancel_wait() {
    vl alice org.injectd.Injector.Cancel "{\"id\":\"$1\"}" >/dev/null || fail "alice's Cancel failed"
    wait_until 60 bash -c "! '$VARLINK_CALL' '$SOCKET' org.injectd.Injector.ListInjections '{\"all\":true}' | grep -q $1"
}

# Warm: the site of __x64_sys_getpgid and the tagging programs set up
# by an arm on one process of alice's, kept armed meanwhile, so that the
# arms measured below do their walk and their map writes, not the site's
# attach (115 ms, measured), which is not what this is about.
start_as alice /dev/null /dev/null sleep 3600
SMALL=$BG_PID
warm=$(as alice "$INJECTCTL" --varlink inject __x64_sys_getpgid --error EPERM --pid "$SMALL" --for 10min --detach) ||
    fail "alice's arm on one process was refused: $warm"

# 1. ListInjections (bob's own: none), the daemon's cheapest answer, which
# shows a held loop most sharply: within ten times its idle time. Then
# GetCapabilities, which costs the daemon a good part of what the walk
# does (hundreds of ms under TCG): within three times its idle time. Each
# during an arm of its own (the first cancelled, its root dropped, so the
# second walks the tree again).
probe_arm org.injectd.Injector.ListInjections 10
cancel_wait "$ID"
probe_arm org.injectd.Injector.GetCapabilities 3
t_first=$T_ARM tag_usec=$TAG_USEC tag_tasks=$TAG_TASKS
id=$ID

# 2. Every process of the tree was visited, the walk not cut short.
((tag_tasks >= TREE)) || fail "the arm visited $tag_tasks task(s), fewer than the tree's $TREE"
assert_contains "$(cat "$DAEMON_LOG")" "tagging the tree of process $ROOT" "the daemon's log of the stepped walk"
cancel_wait "$id"
cancel_wait "$warm"

# 3. alice leaves while she arms: her arm is dropped, nothing left
# behind. She is killed as soon as the daemon logs the walk's start, with
# bob's GetCapabilities going on, which spreads the walk over more time.
# Under TCG the log is polled slowly enough that the kill may still come
# after the arm (then it is removed as its owner's): either way nothing
# stays armed and no root stays in the kernel; which one is logged. That
# a departure mid-walk takes the arm back is test-manager's
# test_arm_steps_requester_gone.
start_as bob "$W/probe3.out" "$W/probe3.err" python3 "$PROBE" "$SOCKET" org.injectd.Injector.GetCapabilities 50
PROBE3=$BG_PID
start_as alice "$W/alice2.out" "$W/alice2.err" \
    "$INJECTCTL" --varlink inject __x64_sys_getpgid --error EPERM --pid "$ROOT" --for 10min
ALICE=$BG_PID
wait_until 120 bash -c "(( \$(grep -c 'tagging the tree of process $ROOT' '$DAEMON_LOG') >= 3 ))"
kill -KILL "$ALICE"
gone_mid="Refused injection for uid $(id -u alice): The requester disconnected before the answer"
wait_until 120 bash -c "grep -q '$gone_mid' '$DAEMON_LOG' || grep -q 'removed (owner-gone)' '$DAEMON_LOG'"
if grep -q "$gone_mid" "$DAEMON_LOG"; then
    log "alice left mid-walk: her arm was refused and taken back"
else
    log "alice's kill came after her arm: it was removed as hers (owner-gone)"
fi
wait_until 120 bash -c "[[ \$('$VARLINK_CALL' '$SOCKET' org.injectd.Injector.ListInjections '{\"all\":true}' | jq '.parameters.injections | length') == 0 ]]"
if [[ -e /sys/fs/bpf/injectd/tags/roots ]]; then
    roots=$(bpftool map dump pinned /sys/fs/bpf/injectd/tags/roots --json | jq length)
    assert_eq 0 "$roots" "roots left in the kernel's roots map after alice left mid-walk"
fi
kill "$PROBE3"
log "after alice left: nothing armed, no root left in the kernel"

finish
