#!/bin/bash
# Attack: never fail what the kernel never fails (docs/security.md).
#
# alice fails allocations for her own command on an ext4 file system she
# shares with bob, only under a kernel function that allocates with
# __GFP_NOFAIL, which its caller was promised never fails:
#
#  - should_failslab under jbd2_journal_add_journal_head, for a touch:
#    jbd2 allocates a journal head with GFP_NOFS and, when that fails,
#    again with __GFP_NOFAIL, and retries until it gets one. The first
#    allocation must fail (the fault reaches its target), the retry must
#    not: guarded > 0 and injected <= guarded.
#  - should_fail_alloc_page under __getblk_gfp, for an ls: the page of a
#    metadata block not yet cached is allocated with __GFP_NOFAIL
#    (grow_dev_page() in fs/buffer.c), which then takes the page for
#    granted (BUG_ON(!PageLocked(page))). It must be guarded.
#
# Either way alice's command ends while her injection is still armed, bob's
# touch and sync on the same file system work, and the kernel logs no
# warning, on both backends. Before the guards (src/engine/guards.c), the
# __GFP_NOFAIL allocation failed every time: jbd2 retried it millions of
# times, alice's command spun in the kernel until the injection expired,
# and bob's sync waited on her transaction.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
command -v mkfs.ext4 >/dev/null || fail "mkfs.ext4 is missing (e2fsprogs, tools/setup.sh)"
grep -qw ext4 /proc/filesystems || fail "the test kernel has no ext4"

# Long next to a touch, even under TCG on a loaded machine: a command that
# ends after the injection did (its state is no longer active) has spun on
# the __GFP_NOFAIL allocation.
FOR_SECS=180

daemon_setup
start_injectd

img=$DAEMON_WORK/ext4.img
mnt=/mnt/e
truncate -s 64M "$img"
# 4 KiB blocks: one block per page, so reading a block not yet cached
# allocates its page (grow_dev_page).
out=$(mkfs.ext4 -q -F -b 4096 "$img" 2>&1) || fail "mkfs.ext4 '$img' failed: $out"
mkdir -p "$mnt"
mount -o loop "$img" "$mnt"
at_exit eval "umount '$mnt' 2>/dev/null || umount -l '$mnt'"
install -d -o alice -g alice "$mnt/alice"
install -d -o bob -g bob "$mnt/bob"
as alice touch "$mnt/alice/old"

# The kernel log's count of lines matching a pattern.
klog_count() { dmesg | grep -cE "$1" || true; }
bad='BUG:|Oops|WARNING:|general protection|soft lockup|hung_task'
bad_before=$(klog_count "$bad")

# attack NAME BACKEND FUNCTION VALUE-OPTION CALLER CMD...: remounts the file
# system (no buffer cached, none with a journal head), arms FUNCTION under
# CALLER for alice's process, lets it run CMD, and sets INJECTED and
# GUARDED from the injection's counters once CMD has ended while the
# injection was still armed. Then bob's touch and sync must work.
attack() {
    local name=$1 backend=$2 function=$3 value=$4 caller=$5
    shift 5
    local go=$DAEMON_WORK/go-$name-$backend err=$DAEMON_WORK/$name-$backend.err pid id doc start took

    umount "$mnt"
    mount -o loop "$img" "$mnt"
    # alice's process waits for the fault to be armed on it, then runs CMD.
    start_as alice /dev/null "$err" bash -c \
        'echo ready >&2; while [[ ! -e $1 ]]; do sleep 0.1; done; shift; "$@" >/dev/null; echo "done $?" >&2' \
        _ "$go" "$@"
    pid=$BG_PID
    wait_until 120 grep -q '^ready' "$err"

    # shellcheck disable=SC2086 # value is an option and its argument
    id=$(as alice "$INJECTCTL" inject "$function" $value --caller "$caller" \
        --pid "$pid" --backend "$backend" --for "${FOR_SECS}s" --detach)
    [[ -n $id ]] || fail "alice could not arm $function on her process"
    start=$SECONDS
    touch "$go"
    wait_until $((FOR_SECS + 60)) grep -q '^done' "$err"
    took=$((SECONDS - start))
    wait "$pid" 2>/dev/null || true

    doc=$(as alice "$INJECTCTL" show "$id" --json) ||
        fail "alice's injection is gone after her $name (${took}s): it expired while the $name spun"
    INJECTED=$(jq -r .faults_injected <<<"$doc")
    GUARDED=$(jq -r .calls_guarded <<<"$doc")
    log "alice's $name ($function under $caller): $(grep '^done' "$err") after ${took}s;" \
        "matched $(jq -r .calls_matched <<<"$doc"), injected $INJECTED, guarded $GUARDED"
    assert_eq active "$(jq -r .state <<<"$doc")" "the injection's state when alice's $name ended (${took}s)"
    as alice "$INJECTCTL" cancel "$id" >/dev/null
    assert_eq "done 0" "$(grep '^done' "$err")" "alice's $name's status ($(cat "$err"))"

    # The file system is everyone's: bob's touch and sync work.
    as bob touch "$mnt/bob/f-$name-$backend"
    as bob sync -f "$mnt/bob/f-$name-$backend"
    [[ -e $mnt/bob/f-$name-$backend ]] || fail "bob's touch created no file"
}

for backend in fmod_ret kprobe; do
    log "---- $backend"
    attack touch "$backend" should_failslab "--error ENOMEM" jbd2_journal_add_journal_head \
        touch "$mnt/alice/f-$backend"
    ((INJECTED > 0)) || fail "no journal-head allocation was failed: the test reached nothing"
    ((GUARDED > 0)) || fail "no __GFP_NOFAIL journal-head allocation was guarded"
    # Each failed GFP_NOFS allocation is followed by one __GFP_NOFAIL retry,
    # which must get through: more faults than guarded calls means a
    # __GFP_NOFAIL allocation was failed and retried.
    ((INJECTED <= GUARDED)) ||
        fail "more faults ($INJECTED) than guarded retries ($GUARDED): __GFP_NOFAIL allocations failed"
    [[ -e $mnt/alice/f-$backend ]] || fail "alice's touch created no file"

    # Under __getblk_gfp, the only page allocated is grow_dev_page's, with
    # __GFP_NOFAIL: none may fail. (grow_dev_page is static, maybe inlined.)
    attack ls "$backend" should_fail_alloc_page "--retval 1" __getblk_gfp \
        ls -l "$mnt/alice"
    ((GUARDED > 0)) || fail "no __GFP_NOFAIL page allocation was guarded: the test reached nothing"
    assert_eq 0 "$INJECTED" "page allocations failed under __getblk_gfp"
done

assert_eq "$bad_before" "$(klog_count "$bad")" \
    "kernel warnings, oopses or lockups (dmesg: $(dmesg | grep -E "$bad" | tail -n 5 || true))"
assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
