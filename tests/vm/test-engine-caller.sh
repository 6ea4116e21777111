#!/bin/bash
# should_failslab with a caller filter: only allocations made under the
# chosen kernel function fail, and they are counted exactly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

# The fixture opens a file (which allocates a struct file: should_failslab
# runs, but not under eventfd), then makes 3 eventfd calls.
caller=__x64_sys_eventfd2

# Control: without the caller filter, the open's allocation fails first.
start_fixture open-eventfd 3
id=$(engine_arm should_failslab --error ENOMEM --pid "$FIXTURE_PID" --times 1 --for 5min)
release_fixture
assert_contains "$(cat "$FIXTURE_OUT")" "open: ENOMEM" "the open without a caller filter"
"$ENGINE" disarm "$id" >/dev/null

# Counting only (a trigger that never fires): with the filter, the open's
# allocations are not matched, and every eventfd makes the same number of
# allocations under the caller.
start_fixture open-eventfd 4
id=$(engine_arm should_failslab --error ENOMEM --pid "$FIXTURE_PID" --caller "$caller" --after 1000000 --for 5min)
jq -e --arg c "$caller" '.callers == [$c]' <<<"$("$ENGINE" show "$id" --json)" >/dev/null ||
    fail "callers: expected [$caller], saw $("$ENGINE" show "$id" --json | jq -c .callers)"
release_fixture
assert_eq "0 0 0 0" "$FIXTURE_RESULTS" "eventfd results while only counting"
matched=$(engine_field "$id" matched)
seen=$(engine_field "$id" seen)
((matched >= 4 && matched % 4 == 0)) || fail "matched: expected a multiple of 4 (4 eventfd calls), saw $matched"
((seen > matched)) || fail "seen: expected more than matched ($matched): the open allocates too, saw $seen"
expect_counters "$id" - - 0
per_call=$((matched / 4))
"$ENGINE" disarm "$id" >/dev/null

# The first matching allocation fails: the open succeeds, the first eventfd
# fails, once.
start_fixture open-eventfd 3
id=$(engine_arm should_failslab --error ENOMEM --pid "$FIXTURE_PID" --caller "$caller" --times 1 --for 5min)
release_fixture
assert_contains "$(cat "$FIXTURE_OUT")" "open: 0" "the open under another call path"
assert_eq "ENOMEM 0 0" "$FIXTURE_RESULTS" "eventfd results"
expect_counters "$id" - $((1 + 2 * per_call)) 1
"$ENGINE" disarm "$id" >/dev/null

# Skipping exactly one eventfd's worth of matching allocations fails the
# second eventfd, and only it.
start_fixture eventfd 4
id=$(engine_arm should_failslab --error ENOMEM --pid "$FIXTURE_PID" --caller "$caller" --after "$per_call" --times 1 --for 5min)
release_fixture
assert_eq "0 ENOMEM 0 0" "$FIXTURE_RESULTS" "eventfd results with after=$per_call"
expect_counters "$id" - $((1 + 3 * per_call)) 1
"$ENGINE" disarm "$id" >/dev/null

# A caller that is not a kernel function is refused before anything loads.
assert_fails_with "is not a kernel function" \
    "$ENGINE" arm should_failslab --error ENOMEM --pid $$ --caller no_such_function_xyz
finish
