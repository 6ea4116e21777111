#!/bin/bash
# Many arm and disarm cycles on one busy function, on both backends, and a
# guest that still answers at the end (issue 19: the guest used to wedge
# in about one run of bench/run in four, in the middle of such a cycle).
# Each cycle injects on __x64_sys_openat through the daemon (scope: a
# process, so the task-tags programs are loaded too), cancels, and waits
# for the site to go; the backend alternates, and every 5th cycle the
# daemon's cache of detached programs is flushed, so the next attach is a
# fresh program's. No linger (--site-linger=0): each cancel detaches the
# site. Two busy callers open a file every 0.5 ms throughout.
# INJECTD_STRESS_CYCLES sets the number of cycles (default 40, about two
# minutes under TCG; by hand, 2000 or more).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/lib-daemon.sh
. "$(dirname "$0")/lib-daemon.sh"

CYCLES=${INJECTD_STRESS_CYCLES:-40}
FN=__x64_sys_openat
SITES=/sys/fs/bpf/injectd/sites
FIRST_FAULT=$BUILD_DIR/bench/first-fault
[[ -x $FIRST_FAULT ]] || fail "first-fault is not built at '$FIRST_FAULT'"

daemon_setup
start_injectd --polkit=off --rate=0 --site-cache=10min --site-linger=0

# The busy callers: never in an injection's scope, so they never fail and
# run until the end; their opens go through every program attached.
echo probe >"$DAEMON_WORK/file"
busy=()
for i in 1 2; do
    "$FIRST_FAULT" --comm "busy$i" --timeout 100000 "$DAEMON_WORK/file" >"$DAEMON_WORK/busy$i.out" 2>&1 &
    busy+=($!)
    at_exit kill "$!"
done
# The scope: a process that opens nothing.
sleep 100000 &
holder=$!
at_exit kill "$holder"

call() { # METHOD PARAMS: prints the reply's parameters
    "$VARLINK_CALL" "$SOCKET" "org.injectd.Injector.$1" "$2"
}
site_gone() { ! compgen -G "$SITES/*-$FN" >/dev/null; }

start=$SECONDS
for ((i = 1; i <= CYCLES; i++)); do
    backend=fmod_ret
    ((i % 2)) && backend=kprobe
    out=$(call Inject "{\"function\":\"$FN\",\"error\":\"ENOENT\",\"backend\":\"$backend\",\"scope\":\"process\",\"pid\":$holder,\"detach\":true,\"duration_usec\":600000000}") ||
        fail "cycle $i: Inject ($backend) was refused: $out"
    id=$(jq -er .parameters.id <<<"$out") || fail "cycle $i: Inject printed no id: $out"
    call Cancel "{\"id\":\"$id\"}" >/dev/null || fail "cycle $i: Cancel $id failed"
    wait_until 120 site_gone
    if ((i % 5 == 0)); then
        call ReloadPolicy '{}' >/dev/null || fail "cycle $i: ReloadPolicy failed"
    fi
    ((i % 20)) || log "$i cycles in $((SECONDS - start)) s"
done
log "$CYCLES cycles in $((SECONDS - start)) s"

# Still answering: the daemon, a new process, and both busy callers, which
# must go on opening (each open is followed by a sleep: a context switch).
out=$(call ListInjections '{"all":true}') || fail "ListInjections failed after the cycles: $out"
assert_eq 0 "$(jq -r '.parameters.injections | length' <<<"$out")" "injections left after the cycles"
assert_succeeds true
switches() { sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$1/status"; }
for pid in "${busy[@]}"; do
    kill -0 "$pid" 2>/dev/null || fail "busy caller $pid is gone: $(cat "$DAEMON_WORK"/busy*.out)"
    n=$(switches "$pid")
    wait_until 120 test "$(switches "$pid")" -gt "$n"
done

finish
