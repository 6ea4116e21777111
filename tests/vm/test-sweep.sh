#!/bin/bash
# injectctl sweep against the real daemon: every N from 0 until a run no
# longer reaches call N+1, each fault exactly once with its kernel stack;
# an error path that crashes or hangs is reported with its N and makes the
# sweep exit 1; bad command lines exit 2 with nothing armed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
TARGET=$BUILD_DIR/tests/vm/sweep-target
[[ -x $INJECTCTL && -x $TARGET ]] || fail "injectctl or sweep-target is not built"

daemon_setup
start_injectd

report=/tmp/sweep-report.json

# 1. A careful program: should_failslab under eventfd2, every allocation
# in turn. Root, over D-Bus, text output plus --report.
log "sweep should_failslab,caller=__x64_sys_eventfd2 over sweep-target 3"
rc=0
out=$("$INJECTCTL" sweep --fail should_failslab,caller=__x64_sys_eventfd2 --report "$report" \
    -- "$TARGET" 3 2>/tmp/sweep.err) || rc=$?
cat /tmp/sweep.err >&2
assert_eq 0 "$rc" "sweep's exit status over a careful program"
jq -e . "$report" >/dev/null || fail "the report is not JSON: $(head -c 300 "$report")"
runs=$(jq '.runs | length' "$report")
last=$(jq '.runs[-1]' "$report")
# The last run is the first that no longer reached its call; it saw every
# matching call there is: 3 eventfds' worth.
assert_eq "not-reached" "$(jq -r .stopped "$report")" "why the sweep stopped"
assert_eq false "$(jq .fired <<<"$last")" "the last run's fault"
total=$(jq .calls_matched <<<"$last")
((total >= 3 && total % 3 == 0)) || fail "matching calls in the last run: expected a multiple of 3, saw $total"
assert_eq $((total + 1)) "$runs" "runs: N = 0..$total"
assert_eq "$(seq 0 "$total" | jq -s -c .)" "$(jq -c '[.runs[].n]' "$report")" "every N, in order"
# Every other run: fired exactly once (times=1), handled by the program.
assert_eq "$total" "$(jq '[.runs[:-1][] | select(.fired and .faults_injected == 1)] | length' "$report")" \
    "runs whose fault fired exactly once"
assert_eq "$total" "$(jq '[.runs[:-1][] | select(.exit_status == 1 and .signal == null and (.hung | not))] | length' "$report")" \
    "runs that exited 1 (the program's own error handling)"
assert_eq 0 "$(jq '.runs[-1].exit_status' "$report")" "the last run, with nothing failed"
assert_contains "$(jq -r '.runs[0].output' "$report")" "eventfd 1:" "the first run's output"
# Each stack starts at the failed function and has the caller in it.
assert_eq "$total" "$(jq '[.runs[:-1][] | select((.stack[0] | startswith("should_failslab+")) and any(.stack[]; startswith("__x64_sys_eventfd2+")))] | length' "$report")" \
    "runs whose stack is should_failslab called under __x64_sys_eventfd2"
assert_eq true "$(jq .kernel_log_checked "$report")" "the kernel log was read (root)"
assert_eq 0 "$(jq '[.runs[].kernel_log[]] | length' "$report")" "kernel trouble"
assert_eq "[]" "$(jq -c .problems "$report")" "problems"
# The table: a header and one row per run, N in the first column.
assert_eq "$runs" "$(tail -n +2 <<<"$out" | awk '$1 ~ /^[0-9]+$/' | wc -l)" "table rows"
assert_contains "$(sed -n 2p <<<"$out")" "yes" "the first row's FIRED"
assert_contains "$(sed -n 2p <<<"$out")" "do_eventfd" "the first row's INJECTED FROM"
assert_contains "$(cat /tmp/sweep.err)" "sweep: $runs runs, the fault fired in $total" "the summary"
assert_eq 0 "$(injections_left)" "injections left after the sweep"

# 2. A program with two broken error paths: call 2 failing crashes it,
# call 3 failing hangs it. Alice, over Varlink, --json.
log "sweep __x64_sys_eventfd2:ENOMEM as alice over --varlink: a crash and a hang"
# --timeout: the hung run costs all of it, and every other run (a tiny
# sanitized program, under TCG, on a machine that may be loaded) must end
# well within it; seconds idle, so 45 s leaves a wide margin.
rc=0
doc=$(as alice "$INJECTCTL" --varlink sweep --json --timeout 45s --fail __x64_sys_eventfd2:ENOMEM \
    -- "$TARGET" --crash-at 2 --hang-at 3 4) || rc=$?
assert_eq 1 "$rc" "sweep's exit status when a run crashed or hung"
jq -e . <<<"$doc" >/dev/null || fail "sweep --json: not JSON: ${doc:0:300}"
assert_eq "[1,2]" "$(jq -c .problems <<<"$doc")" "the runs with problems"
assert_eq SIGSEGV "$(jq -r '.runs[1].signal' <<<"$doc")" "run 1's signal"
assert_eq null "$(jq '.runs[1].exit_status' <<<"$doc")" "run 1's exit status"
assert_eq true "$(jq '.runs[2].hung' <<<"$doc")" "run 2 hung"
assert_eq 1 "$(jq '.runs[0].exit_status' <<<"$doc")" "run 0, handled"
assert_eq 1 "$(jq '.runs[3].exit_status' <<<"$doc")" "run 3, handled"
assert_eq 5 "$(jq '.runs | length' <<<"$doc")" "runs: 4 calls, then one that is not reached"
assert_eq "__x64_sys_eventfd2+" "$(jq -r '.runs[0].stack[0] | sub("0x.*"; "")' <<<"$doc")" \
    "the failed function on top of the stack"
# The hung run left nothing behind.
pgrep -f sweep-target >/dev/null && fail "a sweep-target is still running: $(pgrep -af sweep-target)"
assert_eq 0 "$(injections_left)" "injections left after the second sweep"

# 3. Bad command lines: exit 2, one line and a hint, nothing armed.
for bad in "sweep --fail should_failslab,after=2 -- true" \
           "sweep --fail should_failslab,times=1 -- true" \
           "sweep --fail should_failslab true" \
           "sweep -- true" \
           "sweep --fail should_failslab --max 0 -- true" \
           "sweep --fail should_failslab --timeout soon -- true" \
           "sweep --fail should_failslab --fail __x64_sys_openat -- true"; do
    rc=0
    err=$("$INJECTCTL" $bad 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "exit status of 'injectctl $bad'"
    assert_contains "$err" "Try 'injectctl --help'." "the hint for 'injectctl $bad'"
done
assert_eq 0 "$(injections_left)" "injections left after bad command lines"

stop_injectd
finish
