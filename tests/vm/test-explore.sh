#!/bin/bash
# injectctl explore on the debug kernel (bzImage-debug, booted with
# kasan_multi_shot: tests/vm/meson.build's vm_debug_scenarios). Each of
# /dev/injectd_test's scenarios 1 to 3 has a bug planted in an error path
# (../shared/vmtest/README.md): explore must find it with the kernel's
# detector that reports it (kmemleak, KASAN, WARN) and the step function
# whose failure reaches it, and its reproducer alone must show the same
# report; scenario 4's error path is correct: no finding. Discovery over
# every injectable function attaches to hundreds at once. Alice explores
# her own command within a policy rule, and is told what the kernel log
# withholds from her; the HTML report is one file that refers to nothing
# outside it; Observe refuses another user's process and
# functions the policy does not grant.
# Every explore here but the last runs --jobs 1: these check one run at a
# time (their order, each run's own time, --setup's files in the shared
# /tmp). The last, --jobs 2, finds two planted bugs in two runs side by
# side, each tied to its own run (test-explore-jobs.sh checks the rest of
# --jobs on the normal kernel).
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

# Scenarios 1 to 3 in one explore (one discovery, three runs, one
# kmemleak collection at the end: issue 28's time budget), each run failing
# one scenario's step. check_scenario N DETECTOR FUNCTION TITLE: explore
# found TITLE's report by DETECTOR after failing FUNCTION, in its own run;
# then its reproducer, alone, shows it.
# shellcheck disable=SC2016 # $n is the inner shell's
scen_cmd='for n in 1 2 3; do echo $n > /dev/injectd_test || true; done'
report=/tmp/explore-123.json
log "explore scenarios 1 to 3: kmemleak, KASAN and WARN each after failing its step"
rc=0
start=$(date +%s)
"$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_*' --report "$report" --html /tmp/explore-123.html \
    -- sh -c "$scen_cmd" >/tmp/explore-123.out 2>/tmp/explore-123.err || rc=$?
log "explore of scenarios 1 to 3: $(($(date +%s) - start)) s"
cat /tmp/explore-123.err /tmp/explore-123.out >&2
assert_eq 1 "$rc" "explore's exit status with findings"
jq -e . "$report" >/dev/null || fail "the report is not JSON: $(head -c 300 "$report")"
assert_eq 0 "$(injections_left)" "injections left after explore"
check_scenario() {
    local n=$1 detector=$2 function=$3 title=$4 f repro run
    log "scenario $n: $detector after failing $function"
    [[ $(jq --arg f "$function" '[.reached[] | select(.function == $f)] | length' "$report") == 1 ]] ||
        fail "discovery did not see $function: $(jq -c .reached "$report")"
    f=$(jq -c --arg d "$detector" --arg f "$function" \
        '[.findings[] | select(.detector == $d and .function == $f)] | first' "$report")
    [[ $f != null ]] || fail "no $detector finding for $function: $(jq -c '[.findings[] | {detector, function, title}]' "$report")"
    assert_contains "$(jq -r .title <<<"$f")" "$title" "the finding's title"
    assert_eq 0 "$(jq .call <<<"$f")" "the failed call's number"
    # Its own run: the one that failed its function, tied by the pid it names.
    run=$(jq --arg f "$function" '[.runs[] | select(.function == $f)][0].run' "$report")
    assert_eq "$run" "$(jq .first_run <<<"$f")" "the run that found it"
    assert_eq pid "$(jq -r .attributed <<<"$f")" "how the $detector report was tied to its run"
    repro=$(jq -r .reproducer <<<"$f")
    assert_contains "$repro" "injectctl run --fail $function:ENOMEM,after=0,times=1 -- sh -c '$scen_cmd'" \
        "the reproducer"
    assert_contains "$(cat /tmp/explore-123.out)" "reproduce: $repro" "the reproducer printed"
    assert_contains "$(cat /tmp/explore-123.html)" "$title" "the HTML report"

    # The reproducer, alone, as printed (injectctl from PATH).
    log "scenario $n: the reproducer alone"
    echo clear >/sys/kernel/debug/kmemleak
    dmesg -C
    PATH=$(dirname "$INJECTCTL"):$PATH bash -c "$repro" >/dev/null 2>&1 || true
    if [[ $detector == kmemleak ]]; then
        # kmemleak reports an object 5 s old, unchanged between two scans,
        # and none a stale pointer still refers to (a freed task's kernel
        # stack kept for reuse, say): its documented false negatives. A
        # reproducer whose leak it misses is run again, at most twice more.
        local try leaks=
        for try in 1 2 3; do
            sleep 6
            echo scan >/sys/kernel/debug/kmemleak
            echo scan >/sys/kernel/debug/kmemleak
            leaks=$(cat /sys/kernel/debug/kmemleak)
            [[ $leaks == *"$title"* ]] && break
            log "kmemleak did not report the reproducer's leak (try $try)"
            PATH=$(dirname "$INJECTCTL"):$PATH bash -c "$repro" >/dev/null 2>&1 || true
        done
        assert_contains "$leaks" "$title" "kmemleak after the reproducer"
        echo clear >/sys/kernel/debug/kmemleak
    else
        assert_contains "$(dmesg)" "$title" "the kernel log after the reproducer"
    fi
}

check_scenario 1 kmemleak injectd_test_alloc_step "(size 64)"
check_scenario 2 kasan injectd_test_register_step "BUG: KASAN: use-after-free in tm_write"
check_scenario 3 warning injectd_test_commit_step "drivers/misc/injectd_test.c"
# The HTML report: one file that refers to nothing outside it.
if grep -Eio '(src|href|action)=|https?:|@import|url\(' /tmp/explore-123.html; then
    fail "the HTML report refers to something outside it"
fi

log "explore scenario 4: a correct error path, no finding"
rc=0
"$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_*' --report /tmp/explore-4.json \
    -- sh -c 'echo 4 > /dev/injectd_test' >/tmp/explore-4.out 2>/tmp/explore-4.err || rc=$?
cat /tmp/explore-4.err /tmp/explore-4.out >&2
assert_eq 0 "$rc" "explore's exit status without a finding"
assert_eq 0 "$(jq '.findings | length' /tmp/explore-4.json)" "findings of scenario 4"
assert_contains "$(jq -c '[.runs[] | select(.function == "injectd_test_check_step")]' /tmp/explore-4.json)" \
    '"fired":true' "the run that failed injectd_test_check_step"
assert_contains "$(cat /tmp/explore-4.out)" "No findings." "the text output"

# Item 1 of issue 28: no run waits for kmemleak, its reports are tied to
# their runs by the pid they name. Three runs each fail one call of
# alloc_step (--per call) and each leaks; then a KASAN report in a run of
# its own: every report is its own run's, by pid, and the run's time is
# the command's own (within 1 s: no 5 s minimum age, no scans, in it).
# The command reads its own clock with the shell's builtin read of
# /proc/uptime, first and last (no fork of date(1), whose exec alone took
# up to 0.5 s here under load): CLOCK_BOOTTIME, which in the VM (never
# suspended) is the CLOCK_MONOTONIC of the report's start_usec and
# end_usec, in hundredths of a second.
log "kmemleak and KASAN reports tied to their runs by pid, no wait per run"
# shellcheck disable=SC2016 # the inner shell's
attr_cmd=(sh -c 'read s x </proc/uptime; for i in 1 2 3; do echo 1 > /dev/injectd_test || true; done
    echo 2 > /dev/injectd_test || true; read e x </proc/uptime; echo "own-uptime $s $e"')
rc=0
start=$(date +%s)
"$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_alloc_step' --functions 'injectd_test_register_step' \
    --per call --report /tmp/explore-attr.json -- "${attr_cmd[@]}" >/tmp/explore-attr.out 2>/tmp/explore-attr.err || rc=$?
log "explore with 4 runs and its one kmemleak collection: $(($(date +%s) - start)) s"
cat /tmp/explore-attr.err /tmp/explore-attr.out >&2
assert_eq 1 "$rc" "explore's exit status with findings"
r=/tmp/explore-attr.json
assert_eq 4 "$(jq '.runs | length' $r)" "runs: 3 calls of alloc_step, 1 of register_step"
# Every leak reported is tied to its own run by its own pid. kmemleak
# misses a leak a stale pointer still refers to (its documented false
# negatives: one of the three, now and then), so two of the three runs
# must have theirs: leaks of different runs, read in one collection.
log "runs and their reports: $(jq -c '[.runs[] | {run, function, call, pid, last_pid, reports}]' $r)"
assert_eq 4 "$(jq '[.runs[] | select(.last_pid >= .pid)] | length' $r)" "runs with their range of pids"
assert_eq '[]' "$(jq -c '[.runs[] | . as $run | .reports[] | select(.detector == "kmemleak")
    | select(.attributed != "pid" or .pid != $run.pid)]' $r)" "leaks not tied to their run by its pid"
n=$(jq '[.runs[] | select(.function == "injectd_test_alloc_step") as $run
    | select([$run.reports[] | select(.detector == "kmemleak" and .attributed == "pid" and .pid == $run.pid)]
    | length >= 1)] | length' $r)
((n >= 2)) || fail "alloc_step's runs with their own leak by pid: $n of 3"
assert_eq '[]' "$(jq -c '[.runs[] | select(.function == "injectd_test_register_step") | .reports[]
    | select(.detector == "kmemleak")]' $r)" "leaks tied to the register_step run"
f=$(jq -c '[.findings[] | select(.detector == "kasan")] | first' $r)
assert_eq injectd_test_register_step "$(jq -r .function <<<"$f")" "the KASAN finding's function"
assert_eq pid "$(jq -r .attributed <<<"$f")" "how the KASAN finding was tied to its run"
assert_eq "$(jq '.runs[] | select(.function == "injectd_test_register_step") | .pid' $r)" "$(jq .pid <<<"$f")" \
    "the KASAN report's pid is its run's"
f=$(jq -c '[.findings[] | select(.detector == "kmemleak")] | first' $r)
assert_eq injectd_test_alloc_step "$(jq -r .function <<<"$f")" "the kmemleak finding's function"
assert_eq pid "$(jq -r .attributed <<<"$f")" "how the kmemleak finding was tied to its run"
assert_eq "$n" "$(jq .runs <<<"$f")" "runs that found the leak"
assert_contains "$(cat /tmp/explore-attr.out)" "by the run's own task: sh, pid" "the finding says how it was tied"
# Nothing waits in or between the runs: each run's time in the report is
# the command's own, from its exec to its last act, and less than 1 s
# more; from one run's end to the next one's start there is only arming
# the next injection, not kmemleak's 5 s and two scans (6 s and more
# before issue 28). The run starts at the command's release, just before
# its exec: what explore could add comes after the command's last act
# (where the detectors' wait was), and that is what is bounded by 1 s.
# The exec itself (sh's, before its first read of the clock) is the
# command's, but no clock of its own can see it; it is logged: 0.47 and
# 0.97 s at host load 12.6, so the run's whole time against the time the
# command sees (0.01 and 0.09 s) would be over 1 s apart without any
# wait (seen: run 2, 1.10 s against 0.09 s).
uptime_usec() { echo $((10#${1%.*} * 1000000 + 10#${1#*.} * 10000)); }
for i in 0 1 2 3; do
    read -r own_s own_e < <(jq -r ".runs[$i].output" $r | sed -n 's/.*own-uptime \([0-9.]*\) \([0-9.]*\).*/\1 \2/p')
    [[ -n $own_e ]] || fail "run $((i + 1)) printed no own time: $(jq -c ".runs[$i]" $r)"
    own_s=$(uptime_usec "$own_s") own_e=$(uptime_usec "$own_e")
    run_s=$(jq ".runs[$i].start_usec" $r) run_e=$(jq ".runs[$i].end_usec" $r)
    dur=$(jq ".runs[$i].duration_usec" $r)
    log "run $((i + 1)): $dur us in the report, $((own_e - own_s)) us by the command's own clock;" \
        "its exec $((own_s - run_s)) us, from its last act to the run's end $((run_e - own_e)) us"
    # The same clock (to its hundredth of a second): the command's own
    # time lies within the run's.
    ((own_s >= run_s - 10000 && own_e <= run_e + 10000)) ||
        fail "run $((i + 1)): the command's own time [$own_s, $own_e] is not within the run's [$run_s, $run_e]"
    ((dur - (own_e - run_s) < 1000000)) ||
        fail "run $((i + 1)): $dur us in the report, $((own_e - run_s)) us from the command's exec to its last" \
            "act: over 1 s apart (a wait for the detectors?)"
done
for i in 1 2 3; do
    gap=$(jq ".runs[$i].start_usec - .runs[$((i - 1))].end_usec" $r)
    log "from run $i's end to run $((i + 1))'s start: $gap us"
    ((gap < 6000000)) || fail "run $((i + 1)) started $gap us after run $i ended: a wait for the detectors?"
done

# Item 4: --setup runs once, before the discovery, never failed (its own
# call of check_step is not counted nor failed: the plan has only CMD's
# one), and every run sees what it made; --cleanup runs once at the end.
log "--setup and --cleanup: once each, never failed"
rm -f /tmp/setup-made /tmp/setup-count /tmp/cleanup-count
rc=0
"$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_*' --report /tmp/explore-setup.json \
    --setup 'echo 4 > /dev/injectd_test && echo made > /tmp/setup-made && echo x >> /tmp/setup-count' \
    --cleanup 'echo x >> /tmp/cleanup-count' \
    -- sh -c 'cat /tmp/setup-made; echo 4 > /dev/injectd_test' >/tmp/explore-setup.out 2>/tmp/explore-setup.err || rc=$?
cat /tmp/explore-setup.err >&2
assert_eq 0 "$rc" "explore --setup's exit status"
assert_eq 1 "$(wc -l </tmp/setup-count)" "times --setup ran"
assert_eq 1 "$(wc -l </tmp/cleanup-count)" "times --cleanup ran"
assert_eq 1 "$(jq '[.reached[] | select(.function == "injectd_test_check_step")][0].calls' /tmp/explore-setup.json)" \
    "check_step's calls counted: CMD's only, not --setup's"
runs=$(jq '.runs | length' /tmp/explore-setup.json)
((runs >= 1)) || fail "no run made"
assert_eq "$runs" "$(jq '[.runs[] | select(.output | contains("made"))] | length' /tmp/explore-setup.json)" \
    "runs that saw what --setup made"
rc=0
err=$("$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_*' --setup 'exit 3' --cleanup 'echo x >> /tmp/cleanup-count' \
    -- true 2>&1) || rc=$?
assert_eq 1 "$rc" "explore with a --setup that fails"
assert_contains "$err" "--setup failed (exit status 3): nothing explored" "the refusal"
assert_not_contains "$err" "discovery: running" "a discovery after a failed --setup"
assert_eq 2 "$(wc -l </tmp/cleanup-count)" "--cleanup after a failed --setup"

# A system call has three names at one address (__x64_sys_getegid,
# __ia32_sys_getegid, __do_sys_getegid) and the error-injection list knows
# it by one: discovery must report it by that name, the one Inject takes.
log "discovery names an aliased function as the error-injection list does"
rc=0
"$INJECTCTL" --varlink explore --jobs 1 --functions '__do_sys_getegid' --max-runs 1 --report /tmp/explore-alias.json \
    -- id >/dev/null 2>/tmp/explore-alias.err || rc=$?
cat /tmp/explore-alias.err >&2
assert_eq 0 "$rc" "explore's exit status (failing getegid)"
assert_eq '["__do_sys_getegid"]' "$(jq -c '[.reached[].function]' /tmp/explore-alias.json)" "the function reached"
assert_eq '[]' "$(jq -c .refused /tmp/explore-alias.json)" "functions injectd refused"
assert_eq '[true]' "$(jq -c '[.runs[].fired]' /tmp/explore-alias.json)" "the run failed getegid"

# LSM hooks only when asked (--lsm): observed like the list's functions,
# failed with EACCES through fmod_ret.
log "--lsm: an LSM hook observed and failed"
rc=0
"$INJECTCTL" --varlink explore --jobs 1 --lsm --functions 'security_file_open' --max-runs 1 --report /tmp/explore-lsm.json \
    -- cat /etc/hostname >/dev/null 2>/tmp/explore-lsm.err || rc=$?
cat /tmp/explore-lsm.err >&2
assert_eq 0 "$rc" "explore --lsm's exit status"
assert_eq '["security_file_open"]' "$(jq -c '[.reached[].function]' /tmp/explore-lsm.json)" "the hook reached"
assert_eq '[true]' "$(jq -c '[.runs[].fired]' /tmp/explore-lsm.json)" "the run failed security_file_open"
assert_fails_with "the LSM hooks are observed only with --lsm" \
    "$INJECTCTL" --varlink explore --jobs 1 --functions 'security_file_open' -- true

# Killed outright mid-plan, then resumed: the report is saved after each
# run, the runs made are not made again, and the kill leaves nothing
# armed (the injection ends with injectctl's connection) and the run's
# root process dies with injectctl. Three calls of check_step, one run
# each (--per call); each run is long enough (the sleep, kmemleak's scans)
# to be killed in the middle of.
# shellcheck disable=SC2016 # $0 is the inner shell's
kill_cmd=(sh -c 'for i in 1 2 3; do echo 4 > /dev/injectd_test || true; done; sleep 2.9; echo "$0"' explore-killed)
runs_saved() { [[ -s $1 ]] && (($(jq '.runs | length' "$1") >= 1)); }
no_injections() { [[ $(injections_left) == 0 ]]; }
gone() { ! pgrep -f -- "$1" >/dev/null; }
log "explore killed (SIGKILL) after its first run, then --resume"
rm -f /tmp/explore-kill.json
"$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_check_step' --per call --report /tmp/explore-kill.json \
    -- "${kill_cmd[@]}" >/dev/null 2>/tmp/explore-kill.err &
pid=$!
wait_until 300 runs_saved /tmp/explore-kill.json
kill -KILL "$pid"
wait "$pid" || true
cat /tmp/explore-kill.err >&2
assert_eq running "$(jq -r .stopped /tmp/explore-kill.json)" "the saved report's state"
wait_until 120 no_injections
# The root (explore-killed) dies with injectctl; what it started (the
# sleep) runs to its end: 2.9 s.
wait_until 60 gone explore-killed
wait_until 120 gone 'sleep 2.9'
cp /tmp/explore-kill.json /tmp/explore-kill-before.json
n_before=$(jq '.runs | length' /tmp/explore-kill-before.json)
rc=0
"$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_check_step' --per call --resume /tmp/explore-kill.json \
    -- "${kill_cmd[@]}" >/dev/null 2>/tmp/explore-kill2.err || rc=$?
cat /tmp/explore-kill2.err >&2
assert_eq 0 "$rc" "exit status of the resumed explore"
assert_contains "$(cat /tmp/explore-kill2.err)" "$n_before of the plan's runs were done before" "what resuming skipped"
assert_not_contains "$(cat /tmp/explore-kill2.err)" "discovery: running" "a discovery when resuming"
# --resume without --report goes on saving in the file resumed.
assert_eq done "$(jq -r .stopped /tmp/explore-kill.json)" "the resumed report's state"
assert_eq "$(jq '[.reached[].calls] | add' /tmp/explore-kill.json)" "$(jq '.runs | length' /tmp/explore-kill.json)" \
    "runs: one per call, all made"
assert_eq true "$(jq '[.runs[] | "\(.function):\(.call)"] | length == (unique | length)' /tmp/explore-kill.json)" \
    "no run made twice"
assert_eq "$(jq -c '.runs[:'"$n_before"']' /tmp/explore-kill-before.json)" \
    "$(jq -c '.runs[:'"$n_before"']' /tmp/explore-kill.json)" "the runs carried over"
assert_eq 0 "$(injections_left)" "injections left after the resumed explore"

# Ctrl-C (SIGINT) during the runs: explore stops after cleaning up, so
# nothing is armed and no process of CMD's is left when it exits.
log "explore interrupted (SIGINT) during its runs"
rm -f /tmp/explore-int.json
# shellcheck disable=SC2016
"$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_check_step' --per call --report /tmp/explore-int.json \
    -- sh -c 'for i in 1 2 3; do echo 4 > /dev/injectd_test || true; done; sleep 2.8; echo "$0"' explore-int \
    >/dev/null 2>/tmp/explore-int.err &
pid=$!
wait_until 300 runs_saved /tmp/explore-int.json
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
cat /tmp/explore-int.err >&2
assert_eq 130 "$rc" "explore's exit status after SIGINT"
assert_eq interrupted "$(jq -r .stopped /tmp/explore-int.json)" "the report's state"
assert_eq 0 "$(injections_left)" "injections left after SIGINT"
gone explore-int || fail "CMD's processes left after SIGINT: $(pgrep -af explore-int)"
gone 'sleep 2.8' || fail "CMD's processes left after SIGINT: $(pgrep -af 'sleep 2.8')"
rc=0
err=$("$INJECTCTL" --varlink explore --jobs 1 --resume /tmp/explore-4.json -- sh -c 'echo 3 > /dev/injectd_test' 2>&1) || rc=$?
assert_eq 1 "$rc" "--resume with another command"
assert_contains "$err" "is not the report of an explore of this command" "the refusal"

# Discovery over every injectable function: one kprobe.multi link for
# hundreds; what ftrace cannot trace is skipped with its reason.
log "discovery over every injectable function (--max-runs 0)"
rc=0
"$INJECTCTL" --varlink explore --jobs 1 --max-runs 0 --report /tmp/explore-all.json \
    -- sh -c 'echo 4 > /dev/injectd_test' >/dev/null 2>/tmp/explore-all.err || rc=$?
cat /tmp/explore-all.err >&2
assert_eq 0 "$rc" "exit status of a discovery alone"
attached=$(jq .observing.attached /tmp/explore-all.json)
((attached > 500)) || fail "functions attached at once: expected hundreds, saw $attached"
assert_eq 1 "$(jq '[.reached[] | select(.function == "injectd_test_check_step")] | length' /tmp/explore-all.json)" \
    "injectd_test_check_step among the functions reached"
((attached > 0 && $(jq '.reached | length' /tmp/explore-all.json) > 3)) ||
    fail "functions reached by sh: $(jq -c '[.reached[].function]' /tmp/explore-all.json)"
assert_eq 0 "$(jq .plan_runs /tmp/explore-all.json)" "runs with --max-runs 0"
assert_eq 0 "$(injections_left)" "injections left after discovery"

# Alice, within a policy rule that grants her the test device's steps.
log "alice explores her own command within policy"
cat >/etc/injectd/policy.d/50-explore.json <<'JSON'
{
  "rules": [
    {
      "name": "test-explore-steps",
      "users": ["alice"],
      "functions": ["injectd_test_*"],
      "errors": ["ENOMEM"],
      "scopes": ["process"],
      "max-duration": "10min",
      "max-active": 4
    }
  ]
}
JSON
chmod 0644 /etc/injectd/policy.d/50-explore.json
"$INJECTCTL" reload-policy >/dev/null
rc=0
as alice "$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_*' --report /tmp/explore-alice.json \
    -- sh -c 'echo 3 > /dev/injectd_test' >/tmp/explore-alice.out 2>/tmp/explore-alice.err || rc=$?
cat /tmp/explore-alice.err >&2
assert_eq 1 "$rc" "alice's explore, with a finding"
assert_eq true "$(jq '(.functions_asked | length) >= 4 and all(.functions_asked[]; startswith("injectd_test_"))' \
    /tmp/explore-alice.json)" "what alice may observe: the rule's functions only, $(jq -c .functions_asked /tmp/explore-alice.json)"
assert_eq warning "$(jq -r '[.findings[] | select(.function == "injectd_test_commit_step")][0].detector' /tmp/explore-alice.json)" \
    "alice's finding"
assert_contains "$(cat /tmp/explore-alice.err)" "kmemleak is not available" "what alice is told about kmemleak"

log "alice with kernel.dmesg_restrict=1: the kernel log is withheld, and she is told"
sysctl -q kernel.dmesg_restrict=1
rc=0
as alice "$INJECTCTL" --varlink explore --jobs 1 --functions 'injectd_test_*' --report /tmp/explore-alice2.json \
    -- sh -c 'echo 3 > /dev/injectd_test' >/dev/null 2>/tmp/explore-alice2.err || rc=$?
sysctl -q kernel.dmesg_restrict=0
assert_eq 0 "$rc" "alice's explore without the kernel log: nothing she can see"
assert_contains "$(cat /tmp/explore-alice2.err)" "The kernel log is withheld from you" "what alice is told"
assert_eq false "$(jq .kernel_log_checked /tmp/explore-alice2.json)" "kernel_log_checked"

log "Observe refuses another user's process and functions outside the policy"
rc=0
out=$(as alice "$VARLINK_CALL" --more "$SOCKET" org.injectd.Injector.Observe \
    '{"functions":["injectd_test_check_step"],"pid":1}') || rc=$?
assert_eq 1 "$rc" "Observe of pid 1 by alice"
assert_contains "$out" ScopeNotOwned "the error"
rc=0
out=$(as alice "$VARLINK_CALL" --more "$SOCKET" org.injectd.Injector.Observe \
    '{"functions":["open_ctree"]}') || rc=$?
assert_eq 1 "$rc" "Observe of a function the policy does not grant alice"
assert_contains "$out" FunctionNotAllowed "the error"
# Her own process (the caller, by default), on a function granted to her:
# the first reply says what is observed.
out=$(as alice "$VARLINK_CALL" --more --count 1 "$SOCKET" org.injectd.Injector.Observe \
    '{"functions":["injectd_test_check_step","injectd_test_nonexistent_step"]}')
assert_eq 1 "$(jq '.parameters.observing.attached' <<<"$out")" "functions attached for alice"
assert_contains "$(jq -c '.parameters.observing.skipped' <<<"$out")" "not on the kernel's error-injection list" \
    "the function skipped, and why"
rc=0
out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Observe '{"functions":["injectd_test_check_step"]}') || rc=$?
assert_contains "$out" ExpectedMore "Observe without more"
assert_eq 0 "$(injections_left)" "injections left at the end"


# explore --jobs 2 (issue 28, item 2): two of the planted bugs, scenario
# 1's leak (kmemleak) and scenario 2's use-after-free (KASAN), found by two
# runs side by side: each finding names its own run, by the pid it names.
# The KASAN run (its write fails: it sleeps 12 s) ends last, the leak's
# run (4 s) first, so that the KASAN report is read while its run is under
# way: the old attribution, by the pid ranges of the runs ended, tied it
# to the other run (by time window when the KASAN run started first, by
# the other's pid range when it started second). In this boot rather than
# a boot of its own: the debug kernel's boot is over two minutes under TCG.
# shellcheck disable=SC2016 # the inner shell's
jobs_cmd='echo 1 > /dev/injectd_test || sleep 4; echo 2 > /dev/injectd_test || sleep 12'
log "explore --jobs 2: scenarios 1 (kmemleak) and 2 (KASAN) side by side"
rc=0
start=$(date +%s)
"$INJECTCTL" --varlink explore --jobs 2 --functions 'injectd_test_alloc_step' \
    --functions 'injectd_test_register_step' --report /tmp/jobs-bugs.json \
    -- sh -c "$jobs_cmd" >/tmp/jobs-bugs.out 2>/tmp/jobs-bugs.err || rc=$?
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
check_jobs_finding() {
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
check_jobs_finding kmemleak injectd_test_alloc_step "(size 64)"
check_jobs_finding kasan injectd_test_register_step "BUG: KASAN: use-after-free in tm_write"
assert_eq 0 "$(injections_left)" "injections left"
if compgen -G '/sys/fs/cgroup/injectd-explore-*' >/dev/null; then
    fail "cgroups left: $(ls -d /sys/fs/cgroup/injectd-explore-*)"
fi

stop_injectd
finish
