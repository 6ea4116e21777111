#!/bin/bash
# after / every / times / probability, with exact counts for the
# deterministic ones, also when threads race for the same trigger.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

# run_with EXPECTED N ARM-OPTIONS...: 10 (or N) openat calls in a fixture
# scoped by pid; EXPECTED is the per-call results line.
run_with() {
    local expected=$1 n=$2 id results
    shift 2
    start_fixture openat "$n" /etc/hostname
    id=$(engine_arm __x64_sys_openat --error ENOENT --pid "$FIXTURE_PID" --for 5min "$@")
    release_fixture
    results=$FIXTURE_RESULTS
    assert_eq "$expected" "$results" "results with $*"
    expect_counters "$id" "$n" "$n" "$(grep -o ENOENT <<<"$results" | wc -l)"
    "$ENGINE" disarm "$id" >/dev/null
}

run_with "0 0 ENOENT 0 0 0 0 0 0 0" 10 --after 2 --times 1
run_with "0 0 ENOENT 0 0 ENOENT 0 0 ENOENT 0" 10 --every 3
run_with "ENOENT ENOENT 0 0 0 0 0 0 0 0" 10 --times 2
run_with "0 0 0 0 ENOENT 0 0 0 ENOENT 0" 10 --after 1 --every 4
run_with "0 0 0 0 ENOENT 0 ENOENT 0 0 0" 10 --after 3 --every 2 --times 2

# Racing threads: 4 threads, 400 calls, the 201st matching call fails and
# no other, whichever thread makes it.
start_fixture --threads 4 openat 400 /etc/hostname
id=$(engine_arm __x64_sys_openat --error ENOENT --pid "$FIXTURE_PID" --after 200 --times 1 --for 5min)
release_fixture
results=$FIXTURE_RESULTS
assert_eq 1 "$(grep -o ENOENT <<<"$results" | wc -l)" "failures among 400 racing calls"
expect_counters "$id" 400 400 1
"$ENGINE" disarm "$id" >/dev/null

# Racing threads with every: exactly 400/8 = 50 failures.
start_fixture --threads 4 openat 400 /etc/hostname
id=$(engine_arm __x64_sys_openat --error ENOENT --pid "$FIXTURE_PID" --every 8 --for 5min)
release_fixture
results=$FIXTURE_RESULTS
assert_eq 50 "$(grep -o ENOENT <<<"$results" | wc -l)" "failures among 400 racing calls, every 8"
expect_counters "$id" 400 400 50
"$ENGINE" disarm "$id" >/dev/null

# Probability: random, but the counter equals what the process saw, and 25%
# of 400 calls lands well inside [40, 160] (p < 1e-12 to fall outside).
start_fixture openat 400 /etc/hostname
id=$(engine_arm __x64_sys_openat --error ENOENT --pid "$FIXTURE_PID" --probability 25% --for 5min)
release_fixture
results=$FIXTURE_RESULTS
failed=$(grep -o ENOENT <<<"$results" | wc -l)
((failed >= 40 && failed <= 160)) || fail "failures at 25%: expected 40..160 of 400, saw $failed"
expect_counters "$id" 400 400 "$failed"
"$ENGINE" disarm "$id" >/dev/null

# Probability with times: never more than times.
start_fixture openat 200 /etc/hostname
id=$(engine_arm __x64_sys_openat --error ENOENT --pid "$FIXTURE_PID" --probability 50% --times 3 --for 5min)
release_fixture
results=$FIXTURE_RESULTS
assert_eq 3 "$(grep -o ENOENT <<<"$results" | wc -l)" "failures at 50% capped by times=3"
expect_counters "$id" 200 200 3
assert_eq exhausted "$(engine_field "$id" state)" "state once times is reached"
"$ENGINE" disarm "$id" >/dev/null

finish
