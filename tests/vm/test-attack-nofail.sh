#!/bin/bash
# Attack: never fail what the kernel never fails (docs/security.md).
#
# alice arms should_failslab ENOMEM for her own `touch`, only under
# jbd2_journal_add_journal_head, on an ext4 file system she shares with
# bob. jbd2 allocates a journal head with GFP_NOFS and, when that fails,
# again with __GFP_NOFAIL, which it was promised never fails: it retries
# until it gets one. The first allocation must fail (the fault reaches its
# target), the __GFP_NOFAIL one must not (the guard lets it through and
# counts it): alice's touch finishes long before her injection would
# expire, and bob's touch and sync on the same file system work.
# Before the guards (src/engine/guards.c), the __GFP_NOFAIL allocation
# failed every time: jbd2 retried it millions of times, alice's touch spun
# in the kernel until the injection expired, and bob's sync waited on her
# transaction.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
command -v mkfs.ext4 >/dev/null || fail "mkfs.ext4 is missing (e2fsprogs, tools/setup.sh)"
grep -qw ext4 /proc/filesystems || fail "the test kernel has no ext4"

# Long next to a touch, even under TCG on a loaded machine: a touch that
# ends after the injection did (its state is no longer active) has spun on
# the __GFP_NOFAIL allocation.
FOR_SECS=180

daemon_setup
start_injectd

img=$DAEMON_WORK/ext4.img
mnt=/mnt/e
truncate -s 64M "$img"
out=$(mkfs.ext4 -q -F "$img" 2>&1) || fail "mkfs.ext4 '$img' failed: $out"
mkdir -p "$mnt"
mount -o loop "$img" "$mnt"
at_exit eval "umount '$mnt' 2>/dev/null || umount -l '$mnt'"
install -d -o alice -g alice "$mnt/alice"
install -d -o bob -g bob "$mnt/bob"

# The kernel log's count of lines matching a pattern.
klog_count() { dmesg | grep -cE "$1" || true; }
bad='BUG:|Oops|WARNING:|general protection|soft lockup|hung_task'
bad_before=$(klog_count "$bad")

for backend in fmod_ret kprobe; do
    log "---- $backend"
    # Mounted afresh, no buffer of the file system has a journal head yet:
    # alice's touch makes jbd2 allocate some.
    umount "$mnt"
    mount -o loop "$img" "$mnt"

    # alice's process waits for the fault to be armed on it, then touches.
    go=$DAEMON_WORK/go-$backend
    err=$DAEMON_WORK/touch-$backend.err
    start_as alice /dev/null "$err" bash -c \
        'echo ready >&2; while [[ ! -e $1 ]]; do sleep 0.1; done; touch "$2"; echo "touched $?" >&2' \
        _ "$go" "$mnt/alice/f-$backend"
    pid=$BG_PID
    wait_until 60 grep -q '^ready' "$err"

    id=$(as alice "$INJECTCTL" inject should_failslab --error ENOMEM --caller jbd2_journal_add_journal_head \
        --pid "$pid" --backend "$backend" --for "${FOR_SECS}s" --detach)
    [[ -n $id ]] || fail "alice could not arm should_failslab on her process"
    start=$SECONDS
    touch "$go"
    wait_until $((FOR_SECS + 60)) grep -q '^touched' "$err"
    took=$((SECONDS - start))
    wait "$pid" 2>/dev/null || true

    doc=$(as alice "$INJECTCTL" show "$id" --json) ||
        fail "alice's injection is gone after her touch (${took}s): it expired while the touch spun"
    injected=$(jq -r .faults_injected <<<"$doc")
    guarded=$(jq -r .calls_guarded <<<"$doc")
    log "alice's touch: $(grep '^touched' "$err") after ${took}s; matched $(jq -r .calls_matched <<<"$doc"), injected $injected, guarded $guarded, state $(jq -r .state <<<"$doc")"

    ((injected > 0)) || fail "no journal-head allocation was failed: the test reached nothing ($doc)"
    ((guarded > 0)) || fail "no __GFP_NOFAIL allocation was guarded ($doc)"
    # Each failed GFP_NOFS allocation is followed by one __GFP_NOFAIL retry,
    # which must get through: more faults than guarded calls means a
    # __GFP_NOFAIL allocation was failed and retried.
    ((injected <= guarded)) || fail "more faults ($injected) than guarded retries ($guarded): __GFP_NOFAIL allocations failed ($doc)"
    assert_eq active "$(jq -r .state <<<"$doc")" "the injection's state when alice's touch ended (it took ${took}s)"
    assert_eq "touched 0" "$(grep '^touched' "$err")" "alice's touch's status"
    [[ -e $mnt/alice/f-$backend ]] || fail "alice's touch created no file"
    as alice "$INJECTCTL" cancel "$id" >/dev/null

    # The file system is everyone's: bob's touch and sync work.
    as bob touch "$mnt/bob/f-$backend"
    as bob sync -f "$mnt/bob/f-$backend"
    [[ -e $mnt/bob/f-$backend ]] || fail "bob's touch created no file"
done

assert_eq "$bad_before" "$(klog_count "$bad")" \
    "kernel warnings, oopses or lockups (dmesg: $(dmesg | grep -E "$bad" | tail -n 5 || true))"
assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
