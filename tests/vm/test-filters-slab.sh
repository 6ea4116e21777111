#!/bin/bash
# Argument filters on should_failslab (issue 17, acceptance 1): an
# injection that ignores sleeping allocations fails only the GFP_ATOMIC
# ones of a workload, and one with a cache filter only the named cache's,
# counted exactly: the faults injectd counts are the failures the workload
# saw, one for one.
#
# alice's workload (fixtures/alloc-report.c) waits on a fifo while her
# injection is armed on it, then makes N allocations of each kind, every
# one the first of its system call, so that a failed one fails the call
# with its own errno: sigqueue (the kernel's GFP_ATOMIC sigqueue entry;
# EAGAIN), mkdir on a tmpfs (a new dentry, GFP_KERNEL; ENOMEM) and open
# of an existing file (a struct file and the name, GFP_KERNEL; ENOMEM).
# Without a filter all three fail every time; the control round shows the
# workload is in reach, so that what the filters spare they spare.
#
# Then the refusals, as alice: a filter on a function it does not apply to
# (whose arguments the program would read as something they are not),
# one that does not apply to this function, a cache that does not exist,
# and a cache SLUB merged with others (its allocations carry another
# cache's name, so the filter would fail someone else's too).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"
. "$(dirname "$0")/lib-alloc.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
[[ -d /sys/kernel/slab/dentry && ! -L /sys/kernel/slab/dentry ]] ||
    fail "the test kernel has no unmerged 'dentry' slab cache (SLUB sysfs)"
N=20

daemon_setup
start_injectd
alloc_tmpfs filters-tmp
tmp=$ALLOC_TMP
as alice touch "$tmp/alice/file"

# round NAME BACKEND OPTION...: alice's workload, with her injection on
# should_failslab (ENOMEM) and OPTIONs armed on it once it waits; sets
# ALLOC_REPORT_LINES and INJECTED, MATCHED and SEEN from the injection's
# counters.
round() {
    local name=$1 backend=$2 id doc
    shift 2
    as alice mkdir "$tmp/alice/$name-$backend"
    alloc_start alice "$name-$backend" -- sigqueue "$N" "mkdir:$tmp/alice/$name-$backend" "$N" \
        "open:$tmp/alice/file" "$N"
    id=$(as alice "$INJECTCTL" inject should_failslab --error ENOMEM --pid "$ALLOC_PID" --backend "$backend" \
        --for 5min --detach "$@") || fail "alice could not arm should_failslab $* ($backend)"
    alloc_run
    doc=$(as alice "$INJECTCTL" show "$id" --json)
    INJECTED=$(jq -r .faults_injected <<<"$doc")
    MATCHED=$(jq -r .calls_matched <<<"$doc")
    SEEN=$(jq -r .calls_seen <<<"$doc")
    as alice "$INJECTCTL" cancel "$id" >/dev/null
    alloc_end
    log "$name ($backend, $*): seen $SEEN, matched $MATCHED, injected $INJECTED;" \
        "$(tr '\n' ';' <<<"$ALLOC_REPORT_LINES")"
}

failed() { alloc_failed "$1"; }
errno_of() { alloc_errno "$1"; }

for backend in kprobe fmod_ret; do
    log "---- $backend"
    # Control: every first allocation of every call fails.
    round control "$backend"
    assert_eq "$N $N $N" "$(failed sigqueue) $(failed mkdir) $(failed open)" \
        "failed sigqueue, mkdir and open calls without a filter"
    assert_eq "EAGAIN ENOMEM ENOMEM" "$(errno_of sigqueue) $(errno_of mkdir) $(errno_of open)" \
        "their errors"
    assert_eq "$(alloc_total_failed)" "$INJECTED" "faults injected, against the failures alloc-report saw"

    # Only the allocations that may not sleep: the sigqueue entries.
    round atomic "$backend" --ignore-gfp-wait
    assert_eq "$N 0 0" "$(failed sigqueue) $(failed mkdir) $(failed open)" \
        "failed sigqueue, mkdir and open calls with --ignore-gfp-wait"
    assert_eq EAGAIN "$(errno_of sigqueue)" "the failed sigqueue calls' error"
    assert_eq "$N" "$INJECTED" "faults injected with --ignore-gfp-wait (alloc-report saw $N)"
    assert_eq "$N" "$MATCHED" "calls matched with --ignore-gfp-wait: the atomic allocations"
    ((SEEN > MATCHED)) || fail "the sleeping allocations were not seen ($SEEN seen, $MATCHED matched)"

    # Only the dentry cache's: mkdir's new names.
    round dentry "$backend" --cache dentry
    assert_eq "0 $N 0" "$(failed sigqueue) $(failed mkdir) $(failed open)" \
        "failed sigqueue, mkdir and open calls with --cache dentry"
    assert_eq ENOMEM "$(errno_of mkdir)" "the failed mkdir calls' error"
    assert_eq "$N" "$INJECTED" "faults injected with --cache dentry (alloc-report saw $N)"
    assert_eq "$N" "$MATCHED" "calls matched with --cache dentry"
done

# The programs' verifier cost, for the record (docs/engine.md).
log "verified instructions: kprobe program $(engine_stats | jq .kprobe_program.verified_insns)," \
    "largest fmod_ret program $(engine_stats | jq .arm_total.verified_insns)"

# The SPEC keys of run are the same filters.
out=$(as alice "$INJECTCTL" run --fail should_failslab:ENOMEM,ignore-gfp-wait,cache=dentry -- \
    mkdir "$tmp/alice/run-spec" 2>&1) || fail "mkdir failed under ignore-gfp-wait: $out"
assert_contains "$out" "should_failslab" "run's summary"

# Refusals, before anything is armed, each naming what is wrong.
# refused WANT FUNCTION OPTION...: alice's inject is refused with BadFilter
# saying WANT.
refused() {
    local want=$1 function=$2 value=(--error ENOMEM) out
    shift 2
    [[ $function == should_fail_alloc_page ]] && value=(--retval 1)    # of type TRUE
    if out=$(as alice "$INJECTCTL" inject "$function" "${value[@]}" "$@" --for 1min --detach 2>&1); then
        [[ -z $out ]] || as alice "$INJECTCTL" cancel "$out" >/dev/null 2>&1 || true
        fail "alice's inject $function $* was accepted"
    fi
    assert_contains "$out" BadFilter "alice's inject $function $*"
    assert_contains "$out" "$want" "alice's inject $function $*"
}
refused "do not apply to '__x64_sys_openat'" __x64_sys_openat --cache dentry
refused "do not apply to '__x64_sys_openat'" __x64_sys_openat --ignore-gfp-wait
refused "ignore_gfp_highmem (it takes" should_failslab --ignore-gfp-highmem
refused "min_size (it takes" should_fail_alloc_page --min-size 64
refused "No slab cache 'no_such_cache'" should_failslab --cache no_such_cache
merged=$(find /sys/kernel/slab -maxdepth 1 -type l -printf '%f\n' | awk 'length($0) <= 30' | head -n 1)
if [[ -n $merged ]]; then
    refused "is merged with other caches" should_failslab --cache "$merged"
else
    log "no merged slab cache on this kernel: that refusal is not tried"
fi
out=$(as alice "$INJECTCTL" functions should_failslab)
assert_contains "$out" "--cache NAME" "functions should_failslab"

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
