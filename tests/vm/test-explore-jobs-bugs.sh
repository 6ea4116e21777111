#!/bin/bash
# explore --jobs 2 on the debug kernel (bzImage-debug with
# kasan_multi_shot: tests/vm/meson.build's vm_debug_scenarios): two of
# /dev/injectd_test's planted bugs, scenario 1's leak (kmemleak) and
# scenario 2's use-after-free (KASAN), found by two runs side by side:
# each finding names its own run, by the pid it names (issue 28, item 2).
# The KASAN run (its write fails: it sleeps 12 s) ends last, the leak's
# run (4 s) first, so that the KASAN report is read while its run is under
# way: the old attribution, by the pid ranges of the runs ended, tied it
# to the other run (by time window when the KASAN run started first, by
# the other's pid range when it started second).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built"
[[ -c /dev/injectd_test ]] || fail "no /dev/injectd_test: not the debug kernel ($(uname -r))"
assert_contains "$(cat /proc/cmdline)" kasan_multi_shot "the kernel command line"

daemon_setup
start_injectd
mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
[[ -w /sys/kernel/debug/kmemleak ]] || fail "kmemleak is not there"

# shellcheck disable=SC2016 # the inner shell's
cmd='echo 1 > /dev/injectd_test || sleep 4; echo 2 > /dev/injectd_test || sleep 12'
log "explore --jobs 2: scenarios 1 (kmemleak) and 2 (KASAN) side by side"
rc=0
start=$(date +%s)
"$INJECTCTL" --varlink explore --jobs 2 --functions 'injectd_test_alloc_step' \
    --functions 'injectd_test_register_step' --report /tmp/jobs-bugs.json \
    -- sh -c "$cmd" >/tmp/jobs-bugs.out 2>/tmp/jobs-bugs.err || rc=$?
log "explore: $(($(date +%s) - start)) s"
cat /tmp/jobs-bugs.err /tmp/jobs-bugs.out >&2
report=/tmp/jobs-bugs.json
assert_eq 1 "$rc" "explore's exit status with findings"
jq -e . $report >/dev/null || fail "the report is not JSON"
assert_eq 2 "$(jq .jobs $report)" "the report's jobs"
log "runs: $(jq -c '[.runs[] | {run, function, pid, start_usec, end_usec, reports: [.reports[].detector]}]' $report)"
log "findings: $(jq -c '[.findings[] | {detector, function, first_run, attributed, pid, candidate_runs}]' $report)"
assert_eq 2 "$(jq '.runs | length' $report)" "runs"
# Side by side, the KASAN run (register_step's) ending last.
jq -e '.runs as $r | ($r | map(select(.function == "injectd_test_alloc_step"))[0]) as $a
    | ($r | map(select(.function == "injectd_test_register_step"))[0]) as $b
    | $a.start_usec < $b.end_usec and $b.start_usec < $a.end_usec and $a.end_usec < $b.end_usec' $report \
    >/dev/null || fail "the two runs did not overlap with register_step's ending last"
check() {
    local detector=$1 function=$2 title=$3 f run
    f=$(jq -c --arg d "$detector" '[.findings[] | select(.detector == $d)] | first' $report)
    [[ $f != null ]] || fail "no $detector finding"
    assert_contains "$(jq -r .title <<<"$f")" "$title" "the $detector finding's title"
    run=$(jq --arg f "$function" '[.runs[] | select(.function == $f)][0].run' $report)
    assert_eq "$run" "$(jq .first_run <<<"$f")" "the run of the $detector finding (the one that failed $function)"
    assert_eq "$function" "$(jq -r .function <<<"$f")" "the $detector finding's failed function"
    assert_eq pid "$(jq -r .attributed <<<"$f")" "how the $detector report was tied to its run"
    assert_eq "$(jq ".runs[] | select(.run == $run) | .pid" $report)" "$(jq .pid <<<"$f")" \
        "the $detector report's pid: its run's root"
    assert_eq null "$(jq .candidate_runs <<<"$f")" "the $detector finding's candidates"
}
check kmemleak injectd_test_alloc_step "(size 64)"
check kasan injectd_test_register_step "BUG: KASAN: use-after-free in tm_write"
assert_eq 0 "$(injections_left)" "injections left"
if compgen -G '/sys/fs/cgroup/injectd-explore-*' >/dev/null; then
    fail "cgroups left: $(ls -d /sys/fs/cgroup/injectd-explore-*)"
fi

stop_injectd
check_clean
finish
