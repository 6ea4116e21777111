#!/bin/bash
# Host-side test of tests/vm/run itself: exit statuses, streamed output,
# the environment and shares it passes, the timeout, the skip rule, a
# failing lib.sh scenario, the evidence a timed-out VM leaves, and the
# --systemd boot timeout, --exclusive and named kernels. Runs on the host
# (meson test vm-harness); it boots six VMs, about a minute under TCG (85 s
# with six helpers' VMs beside it; meson gives it 600).
set -euo pipefail

vm_dir=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
run=$vm_dir/run
tmp=$(mktemp -d "${TMPDIR:-/tmp}/injectd-harness.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# On failure, show what the last run printed: that usually says why.
fail() {
    printf 'FAIL harness: %s\n' "$*" >&2
    local f
    for f in "$tmp/out" "$tmp/err"; do
        [[ -s $f ]] && printf -- '--- %s:\n%s\n' "${f##*/}" "$(cat "$f")" >&2
    done
    exit 1
}
assert_eq() { [[ $1 == "$2" ]] || fail "$3: expected '$1', saw '$2'"; }
assert_contains() { [[ $1 == *"$2"* ]] || fail "$3: expected to contain '$2', saw '$1'"; }
log() { printf 'harness: %s\n' "$*"; }

# 1. CMD's status, its stdout and stderr kept apart and streamed as they
#    come, the environment passed through (and only that), a writable
#    --share, a working directory under /tmp (which the guest must share
#    specially, as its /tmp is a fresh tmpfs).
log "exit status, streaming, environment, shares"
mkdir "$tmp/cwd" "$tmp/results"
rc=0
(
    cd "$tmp/cwd"
    # shellcheck disable=SC2016 # expanded in the VM
    INJECTD_HARNESS_VALUE='two  words' HARNESS_OTHER=leak \
        exec "$run" --share "$tmp/results" -- sh -c '
            echo first
            echo to-stderr >&2
            sleep 4
            echo "env=$INJECTD_HARNESS_VALUE other=${HARNESS_OTHER-unset} pwd=$PWD"
            echo back >"$1/written"
            : >host-invisible
            exit 3' sh "$tmp/results"
) >"$tmp/out" 2>"$tmp/err" &
pid=$!
# "first" must reach us while CMD is still sleeping, i.e. before "env=".
for ((i = 0; i < 600; i++)); do
    grep -q first "$tmp/out" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
assert_eq first "$(cat "$tmp/out")" "stdout while CMD sleeps"
wait "$pid" || rc=$?
assert_eq 3 "$rc" "exit status of sh -c 'exit 3'"
assert_eq "first
env=two  words other=unset pwd=$tmp/cwd" "$(cat "$tmp/out")" "stdout"
assert_eq to-stderr "$(cat "$tmp/err")" "stderr"
assert_eq back "$(cat "$tmp/results/written" 2>/dev/null)" "file written to the --share"
[[ ! -e $tmp/cwd/host-invisible ]] || fail "a write outside the --share reached the host"

# 2. A plain success is 0, from a scenario that uses lib.sh.
cat >"$tmp/test-pass.sh" <<EOF
#!/bin/bash
. "$vm_dir/lib.sh"
assert_eq 1 1 "one"
finish
EOF
# 3. A failing lib.sh assertion fails the run and says what and where.
cat >"$tmp/test-fail.sh" <<EOF
#!/bin/bash
. "$vm_dir/lib.sh"
assert_eq 1 2 "numbers"
finish
EOF
log "lib.sh scenarios: one passing, one failing"
rc=0
# (From $tmp: the guest sees a host /tmp directory only when it is the
# working directory or shared.)
(cd "$tmp" && exec "$run" -- sh -c "bash test-pass.sh && bash test-fail.sh") >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 1 "$rc" "exit status of a failing scenario"
assert_eq "PASS pass" "$(cat "$tmp/out")" "stdout of the scenarios"
assert_contains "$(cat "$tmp/err")" "FAIL fail (test-fail.sh:3): numbers: expected '1', saw '2'" "stderr of the failing scenario"

# 4. The timeout kills the VM and says so with its own status, after
#    recording where the guest's CPUs were: registers from QEMU's monitor,
#    and the guest's own backtraces (SysRq), in the log.
log "timeout"
rc=0
start=$SECONDS
"$run" --timeout 20 -- sleep 100 >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 124 "$rc" "exit status on timeout"
assert_contains "$(cat "$tmp/err")" "timed out after 20s" "message on timeout"
assert_contains "$(cat "$tmp/err")" "the guest's CPUs when the time was up" "CPU report on timeout"
assert_contains "$(cat "$tmp/err")" "CPU 1: RIP " "CPU report on timeout"
assert_contains "$(cat "$tmp/err")" "RFL=" "registers on timeout"
# The idle guest answers SysRq (or, failing that, the NMI) with its stacks.
grep -Eq 'NMI backtrace for cpu|Kernel panic - not syncing: NMI' "$tmp/err" ||
    fail "timeout: expected the guest's backtraces in the log, saw: $(cat "$tmp/err")"
((SECONDS - start < 90)) || fail "timeout: expected the VM gone within 90s, took $((SECONDS - start))s"

# 5. A missing kernel: an error (125) unless skipping is allowed (77).
log "missing kernel"
rc=0
INJECTD_VM_ALLOW_SKIP=0 "$run" --kernel "$tmp/none" -- true >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 125 "$rc" "exit status without a kernel"
rc=0
INJECTD_VM_ALLOW_SKIP=1 "$run" --kernel "$tmp/none" -- true >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 77 "$rc" "exit status without a kernel when skipping is allowed"
# A named kernel flavour whose image is missing is the same harness error.
rc=0
INJECTD_VM_ALLOW_SKIP=0 INJECTD_TEST_KERNEL_DEBUG_612="$tmp/none" \
    "$run" --kernel debug-6.12 -- true >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 125 "$rc" "exit status of --kernel debug-6.12 without its image"
assert_contains "$(cat "$tmp/err")" "no test kernel at '$tmp/none'" "message of --kernel debug-6.12 without its image"
rc=0
"$run" --exclusive 'two words' -- true >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 125 "$rc" "exit status of --exclusive with a blank"
# --exclusive: a second VM of the same name waits for the first, and says so.
log "exclusive"
exec {held}>"${TMPDIR:-/tmp}/injectd-vm-harness-test.lock"
flock "$held"
rc=0
# (without our lock fd: flock's lock belongs to the open file, which the
# child would otherwise hold too)
"$run" --exclusive harness-test -- true >"$tmp/out" 2>"$tmp/err" {held}>&- &
waiter=$!
for ((i = 0; i < 600; i++)); do
    grep -q "waiting for the other 'harness-test' VM" "$tmp/err" && break
    sleep 0.1
done
assert_contains "$(cat "$tmp/err")" "waiting for the other 'harness-test' VM" "message of a second --exclusive VM"
exec {held}>&-
wait "$waiter" || rc=$?
assert_eq 0 "$rc" "exit status of the --exclusive VM once the lock was free"
# --append takes one kernel argument: blanks would split it on the kernel's
# command line, so it is refused before anything boots.
rc=0
"$run" --append 'kasan_multi_shot two' -- true >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 125 "$rc" "exit status of --append with a blank"
assert_contains "$(cat "$tmp/err")" "--append wants one kernel argument" "message of --append with a blank"

# 6. A kernel that does not boot is a harness error, not a test result.
log "unbootable kernel"
echo "not a kernel" >"$tmp/bad-kernel"
rc=0
"$run" --timeout 120 --kernel "$tmp/bad-kernel" -- true >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 125 "$rc" "exit status with a broken kernel"
assert_contains "$(cat "$tmp/err")" "failed to boot" "message with a broken kernel"

# 7. --systemd: a boot that does not reach the test unit in time is a
#    harness error that says so, long before --timeout.
log "systemd boot timeout"
rc=0
start=$SECONDS
"$run" --systemd --boot-timeout 3 -- true >"$tmp/out" 2>"$tmp/err" || rc=$?
assert_eq 125 "$rc" "exit status when systemd does not start the test unit in time"
assert_contains "$(cat "$tmp/err")" "systemd did not start the test unit within 3s" "message on a boot timeout"
((SECONDS - start < 60)) || fail "boot timeout: expected the VM gone within 60s, took $((SECONDS - start))s"

echo "PASS harness"
