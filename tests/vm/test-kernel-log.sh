#!/bin/bash
# Kernel log records of injected faults (issue 17, acceptance 4): they
# appear only when an injection asks (kernel_log) and a policy rule allows
# it ("kernel-log": true), one per fault, and match the format of the
# kernel's own fault injection (lib/fault-inject.c, fail_dump() and
# dump_stack()), which the test makes the kernel write for comparison.
#
# alice's workload (fixtures/alloc-report.c) makes N mkdir calls on a
# tmpfs, each a new dentry; her injection on should_failslab, with
# --cache dentry, fails each. All of one user's injections share one
# budget of records (the kernel's fail_dump() rate), not one each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"
. "$(dirname "$0")/lib-alloc.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
FAULTATTR=/sys/kernel/debug/failslab
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
[[ -d $FAULTATTR ]] || fail "the test kernel has no failslab debugfs attributes"
N=3

daemon_setup
start_injectd
alloc_tmpfs kernel-log-tmp
tmp=$ALLOC_TMP

records() { dmesg | grep -c 'FAULT_INJECTION: forcing a failure' || true; }

# round NAME OPTION...: alice's workload under her injection with OPTIONs;
# sets RESULT (its report) and INJECTED.
round() {
    local name=$1 id
    shift
    as alice mkdir "$tmp/alice/$name"
    alloc_start alice "$name" -- "mkdir:$tmp/alice/$name" "$N"
    id=$(as alice "$INJECTCTL" inject should_failslab --error ENOMEM --pid "$ALLOC_PID" --cache dentry \
        --for 5min --detach "$@") || fail "alice could not arm should_failslab $*"
    alloc_run
    RESULT=${ALLOC_REPORT_LINES%$'\n'}
    INJECTED=$(as alice "$INJECTCTL" show "$id" --json | jq -r .faults_injected)
    as alice "$INJECTCTL" cancel "$id" >/dev/null
    alloc_end
    log "$name ($*): $RESULT; injected $INJECTED"
}

# Not asked: no record.
before=$(records)
round quiet
assert_eq "mkdir ok 0 failed $N ENOMEM" "$RESULT" "alice's mkdir calls"
assert_eq "$before" "$(records)" "kernel log records of faults that did not ask for them"

# Asked, but no rule allows it: refused, by the policy.
out=$(as alice "$INJECTCTL" inject should_failslab --error ENOMEM --kernel-log 1 --for 1min --detach 2>&1) &&
    fail "alice's --kernel-log was accepted without a policy rule: $out"
assert_contains "$out" KernelLogNotAllowed "alice's --kernel-log without a rule"

# A rule that allows it.
cat >/etc/injectd/policy.d/20-kernel-log.json <<'EOF'
{
  "rules": [
    {
      "name": "test-kernel-log",
      "groups": ["injectd"],
      "functions": ["should_failslab"],
      "errors": ["ENOMEM"],
      "scopes": ["process"],
      "max-duration": "10min",
      "max-active": 4,
      "kernel-log": true
    }
  ]
}
EOF
at_exit rm -f /etc/injectd/policy.d/20-kernel-log.json
"$INJECTCTL" reload-policy >/dev/null

before=$(records)
round recorded --kernel-log 2
assert_eq "mkdir ok 0 failed $N ENOMEM" "$RESULT" "alice's mkdir calls with --kernel-log 2"
wait_until 60 test "$(records)" -ge $((before + N))
assert_eq $((before + N)) "$(records)" "kernel log records of alice's $N faults"
ours=$(dmesg | awk '/FAULT_INJECTION: forcing a failure/ { rec = "" } { rec = rec $0 "\n" } END { printf "%s", rec }')

# The rate is alice's, not each injection's (fault-kmsg.c): two of her
# workloads, each under an injection of hers, fail SHARED_N mkdir calls
# each, run together within one window, and get KMSG_BURST records between
# them, not one burst each. A fresh window first: the rate counts
# KMSG_WINDOW seconds from the first record, and the round above wrote some.
KMSG_BURST=10           # fault-kmsg.c: KMSG_RATELIMIT_BURST per KMSG_RATELIMIT_INTERVAL_USEC
KMSG_WINDOW=5
SHARED_N=6
shared=$DAEMON_WORK/shared
mkdir -p "$shared"
chown alice "$shared"
ids=()
infd=()
outfd=()
for w in 1 2; do
    as alice mkdir "$tmp/alice/shared$w"
    mkfifo "$shared/in$w" "$shared/out$w"
    chown alice "$shared/in$w" "$shared/out$w"
    start_as alice /dev/null "$shared/err$w" "$ALLOC_REPORT" "$shared/in$w" "$shared/out$w" \
        "mkdir:$tmp/alice/shared$w" "$SHARED_N"
    pid=$BG_PID
    # Read-write, kept open: alloc-report's opens do not wait for us, and
    # a fifo's writer does not lose its reader.
    exec {fd}<>"$shared/in$w"
    infd[w]=$fd
    exec {fd}<>"$shared/out$w"
    outfd[w]=$fd
    read -r -t 120 line <&"$fd" || fail "alloc-report $w did not start ($(cat "$shared/err$w"))"
    assert_eq ready "$line" "alloc-report $w's first line"
    id=$(as alice "$INJECTCTL" inject should_failslab --error ENOMEM --pid "$pid" --cache dentry \
        --for 5min --detach --kernel-log 1) || fail "alice could not arm on her workload $w"
    ids+=("$id")
done
sleep "$KMSG_WINDOW"
before=$(records)
echo go >&"${infd[1]}"
echo go >&"${infd[2]}"
for w in 1 2; do
    report=
    while read -r -t 120 line <&"${outfd[w]}" && [[ $line != end ]]; do
        report+=$line
    done
    log "workload $w: $report"
    assert_contains "$report" "mkdir ok 0 failed $SHARED_N ENOMEM" "alice's workload $w"
    echo exit >&"${infd[w]}"
    exec {infd[w]}>&- {outfd[w]}<&-
done
wait_until 60 test "$(records)" -ge $((before + KMSG_BURST))
# Records past the budget (the failure this checks for) come from the same
# few batches of events as the others: a moment more shows them.
sleep 2
assert_eq $((before + KMSG_BURST)) "$(records)" \
    "kernel log records of alice's $((2 * SHARED_N)) faults under two injections (one budget of $KMSG_BURST)"
for id in "${ids[@]}"; do
    as alice "$INJECTCTL" cancel "$id" >/dev/null
done

# The kernel's own record, for comparison: its failslab, on root's
# process (make-it-fail), fails atomic allocations. Those of bash and exec
# come first, and print nothing when they have __GFP_NOWARN (fail_dump()
# is skipped then: FAULT_NOWARN); alloc-report's sigqueue allocations do
# not, so enough faults are allowed to reach them.
saved=$(for a in probability times interval verbose task-filter ignore-gfp-wait; do
    printf '%s=%s ' "$a" "$(cat "$FAULTATTR/$a")"; done)
at_exit eval "echo 0 > $FAULTATTR/probability"
echo Y >"$FAULTATTR/task-filter"
echo 2 >"$FAULTATTR/verbose"
echo 50 >"$FAULTATTR/times"
echo 1 >"$FAULTATTR/interval"
echo 100 >"$FAULTATTR/probability"
before=$(records)
alloc_start root kernel-made bash -c 'echo 1 > /proc/self/make-it-fail && exec "$@"' _ -- sigqueue "$N"
alloc_run
alloc_end
echo 0 >"$FAULTATTR/probability"
wait_until 60 test "$(records)" -gt "$before"
log "failslab was: $saved"
theirs=$(dmesg | awk '/FAULT_INJECTION: forcing a failure/ { rec = "" } { rec = rec $0 "\n" } END { printf "%s", rec }')
log "the kernel's record: $(head -n 12 <<<"$theirs")"
log "injectd's record: $(head -n 12 <<<"$ours")"

# Line by line, the kernel's format: the same fixed text, the same
# fields, the same hardware; the stack's frames as the kernel names them.
# dmesg prefixes a record's first line with its time and indents the
# others of the same record as far (injectd's is one record).
strip() { sed -E 's/^(\[ *[0-9.]+\]| {14}) //'; }
line() { strip <<<"$1" | sed -n "${2}p"; }
assert_eq "FAULT_INJECTION: forcing a failure." "$(line "$ours" 1)" "injectd's first line"
[[ $(line "$ours" 2) =~ ^name\ failslab,\ interval\ 1,\ probability\ 100,\ space\ 0,\ times\ -1$ ]] ||
    fail "injectd's second line: '$(line "$ours" 2)'"
[[ $(line "$theirs" 2) =~ ^name\ failslab,\ interval\ [0-9]+,\ probability\ [0-9]+,\ space\ -?[0-9]+,\ times\ -?[0-9]+$ ]] ||
    fail "the kernel's second line is not the format this test knows: '$(line "$theirs" 2)'"
re='^CPU: [0-9]+ PID: [0-9]+ Comm: [^ ]+ (Not tainted|Tainted: [A-Z ]+) '
[[ $(line "$ours" 3) =~ $re ]] || fail "injectd's third line: '$(line "$ours" 3)'"
[[ $(line "$theirs" 3) =~ $re ]] || fail "the kernel's third line is not the format this test knows: '$(line "$theirs" 3)'"
assert_eq "$(line "$theirs" 4)" "$(line "$ours" 4)" "the Hardware name line, injectd's against the kernel's"
assert_eq "Call Trace:" "$(line "$ours" 5)" "injectd's fifth line"
assert_eq " <TASK>" "$(line "$ours" 6)" "injectd's sixth line"
assert_contains "$(strip <<<"$ours")" $' should_failslab+0x' "injectd's stack"
assert_contains "$(strip <<<"$theirs")" $' should_failslab+0x' "the kernel's stack"
assert_contains "$(strip <<<"$ours")" $' </TASK>' "injectd's stack's end"

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
