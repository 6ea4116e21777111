#!/bin/bash
# injectctl failcmd (issue 17, acceptance 3): the options of the kernel's
# tools/testing/fault-injection/failcmd.sh reproduce its behaviour on the
# same workload. Root runs the workload under the kernel's own script
# (failslab's debugfs attributes and make-it-fail); alice, unprivileged,
# runs it under injectctl failcmd with the same options; the workload's
# report (which of its calls failed, with which error) must be the same,
# and injectd's fault count must be the failures alloc-report saw.
#
# The workload is fixtures/alloc-report.c: N sigqueue calls (one GFP_ATOMIC
# allocation each), N mkdir on a tmpfs (a new dentry each, GFP_KERNEL;
# ENOMEM when it fails) and N opens. The dentry cache is marked for
# failslab's cache-filter (slub_debug=A,dentry at boot: Linux 6.1 has
# no other way), which
# injectctl failcmd reads into its cache filter; with probability 100,
# which mkdir calls fail is then decided by --interval and --times alone,
# deterministic on both sides: the command's start (bash, exec) allocates
# no dentry. (Its atomic allocations are not: exec makes some, a
# different number from bash's make-it-fail than from injectctl's held
# child, so failslab's default ignore-gfp-wait=Y alone is not compared.)
#
# Then what injectd cannot express is refused by name, as alice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"
. "$(dirname "$0")/lib-alloc.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
FAILCMD_SH=$BUILD_DIR/tests/vm/failcmd.sh
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
if [[ ! -s $FAILCMD_SH ]]; then
    echo "SKIP $TEST_NAME: no failcmd.sh (linux-source-6.1 is not installed)"
    exit 77
fi
FAULTATTR=/sys/kernel/debug/failslab
[[ -d $FAULTATTR ]] || fail "the test kernel has no failslab debugfs attributes (CONFIG_FAILSLAB, FAULT_INJECTION_DEBUG_FS)"
[[ $(cat "$FAULTATTR/ignore-gfp-wait") == Y ]] || fail "failslab's ignore-gfp-wait is not the kernel's default Y"
N=20

daemon_setup
start_injectd
alloc_tmpfs failcmd-tmp
tmp=$ALLOC_TMP
touch "$tmp/file"
# failcmd.sh leaves probability 0 and times 1 behind it (its
# fault_attr_default), interval and verbose as it set them: put back
# what the kernel had.
interval_before=$(cat "$FAULTATTR/interval")
at_exit eval "echo 0 > $FAULTATTR/probability; echo $interval_before > $FAULTATTR/interval; echo N > $FAULTATTR/cache-filter"
[[ $(cat /sys/kernel/slab/dentry/failslab) == 1 ]] ||
    fail "the dentry cache is not marked for failslab's cache-filter: boot with slub_debug=A,dentry (tests/vm/meson.build)"

# workload WHO NAME CMD...: alloc-report under CMD as WHO; sets REPORT
# (its lines) and STDERR (CMD's).
workload() {
    local who=$1 name=$2
    shift 2
    install -d -o "$who" "$tmp/$who-$name"
    alloc_start "$who" "$name" "$@" -- sigqueue "$N" "mkdir:$tmp/$who-$name" "$N" "open:$tmp/file" "$N"
    alloc_run
    alloc_end
    REPORT=$ALLOC_REPORT_LINES
    STDERR=$ALLOC_STDERR
}

# compare NAME OPTION...: the same failcmd options, the kernel's and
# injectd's. Linux 6.1's failcmd.sh writes --cache-filter to
# failslab/cache_filter, which does not exist (the attribute is
# cache-filter): the kernel's side gets it written here instead.
compare() {
    local name=$1 kernel injected total opt kopts=() iopts=()
    shift
    # The cache's mark is root's to read (0400): alice names the cache.
    for opt in "$@"; do
        if [[ $opt == --cache-filter=Y ]]; then
            echo Y >"$FAULTATTR/cache-filter"
            iopts+=(--cache dentry)
        else
            kopts+=("$opt")
            iopts+=("$opt")
        fi
    done
    workload root "$name" bash "$FAILCMD_SH" "${kopts[@]}"
    echo N >"$FAULTATTR/cache-filter"
    kernel=$REPORT
    workload alice "$name" "$INJECTCTL" --json failcmd "${iopts[@]}"
    log "$name ($*): kernel: $(tr '\n' ';' <<<"$kernel") injectd: $(tr '\n' ';' <<<"$REPORT")"
    assert_eq "$kernel" "$REPORT" "alloc-report's failures under injectctl failcmd $*, against failcmd.sh's"
    total=$(alloc_total_failed)
    # Nothing to fail (probability or times 0): the command runs bare.
    if ! grep -q '^{' <<<"$STDERR"; then
        assert_eq 0 "$total" "failures under failcmd $* without an injection ($STDERR)"
        return
    fi
    # The command's start (exec, the fifos) makes a dentry allocation
    # or so before alloc-report's word, in the kernel's scope as in
    # injectd's (the reports agree): faults there are counted, not seen.
    injected=$(grep '^{' <<<"$STDERR" | jq -r '.injections[0].faults_injected')
    ((injected >= total && injected <= total + 2)) ||
        fail "faults injectd injected under failcmd $*: $injected, against the $total alloc-report saw"
}

dentries=(--cache-filter=Y --ignore-gfp-wait=N)
compare first-five "${dentries[@]}" -p 100 -t 5
compare every-fourth "${dentries[@]}" --probability=100 --interval=4 --times=3
compare every-third-unlimited "${dentries[@]}" -p 100 -i 3 -t -1
# Nothing fails with probability 0, in the kernel as here.
compare never "${dentries[@]}" -p 0 -t 5

# What injectd cannot express: refused, by name, before anything runs.
refused() {
    local want=$1 out
    shift
    if out=$(as alice "$INJECTCTL" failcmd "$@" -- true 2>&1); then
        fail "alice's failcmd $* was accepted: $out"
    fi
    assert_contains "$out" "$want" "alice's failcmd $*"
}
refused "--space=4096: injectd has no space budget" --space=4096
refused "--task-filter=N: injectd fails only the command's own processes" --task-filter=N
refused "--require-start: injectd cannot express it" --require-start=0xffffffff81000000
refused "--oom-kill-allocating-task: injectd cannot express it" --oom-kill-allocating-task=1
# --verbose is kernel-log, which the default policy does not grant.
refused KernelLogNotAllowed --verbose=2 -p 100
refused "--min-order is fail_page_alloc's" --min-order=2
out=$(FAILCMD_TYPE=bogus as alice "$INJECTCTL" failcmd -- true 2>&1) && fail "FAILCMD_TYPE=bogus was accepted"
assert_contains "$out" "FAILCMD_TYPE='bogus'" "failcmd with FAILCMD_TYPE=bogus"

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
