#!/bin/bash
# Every refusal is specific, and leaves no BPF object behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

# refused STATUS TEXT ARM-ARGS...: arm exits with STATUS, says TEXT, and
# nothing was loaded or pinned.
refused() {
    local status=$1 text=$2 err rc=0
    shift 2
    err=$("$ENGINE" arm "$@" 2>&1 >/dev/null) || rc=$?
    assert_eq "$status" "$rc" "exit status of 'arm $*'"
    assert_contains "$err" "$text" "message of 'arm $*'"
    check_clean
    [[ ! -e /sys/fs/bpf/injectd ]] || fail "expected no /sys/fs/bpf/injectd after a refusal, saw: $(ls -R /sys/fs/bpf/injectd)"
    log "refused as expected: $err"
}

refused 1 "'vfs_read' cannot be made to fail: it is not on this kernel's error-injection list" \
    vfs_read --error EIO --pid $$
refused 1 "'open_ctree' is of type ERRNO: the injected value must be -errno in [-4095, -1], not 5" \
    open_ctree --retval 5 --pid $$
refused 1 "not -5000" open_ctree --retval -5000 --pid $$
refused 2 "Unknown errno 'EFOO'" open_ctree --error EFOO --pid $$
refused 1 "The kprobe backend cannot serve 'security_file_open'" \
    security_file_open --error EACCES --backend kprobe --pid $$
refused 1 "'should_fail_alloc_page' is of type TRUE: the injected value must be 1 (true), not 0" \
    should_fail_alloc_page --retval 0 --pid $$
# A listed function that BTF does not describe is out of fmod_ret's reach.
kprobe_only=$("$ENGINE" functions --json | jq -r '[.[] | select(.backends == ["kprobe"]) | .name][0] // empty')
if [[ -n $kprobe_only ]]; then
    refused 1 "The fmod_ret backend cannot serve '$kprobe_only': it is not in vmlinux BTF" \
        "$kprobe_only" --error ENOMEM --backend fmod_ret --pid $$
else
    log "every listed function is in BTF on this kernel: no kprobe-only function to refuse"
fi
refused 1 "No process with pid" open_ctree --error ENOMEM --pid 999999
refused 2 "needs exactly one of --cgroup, --pid, --global" open_ctree --error ENOMEM
refused 1 "not a cgroup2 directory" open_ctree --error ENOMEM --cgroup /tmp
refused 2 "Invalid duration" open_ctree --error ENOMEM --pid $$ --for forever
refused 1 "comm 'a-name-far-too-long' is longer" open_ctree --error ENOMEM --pid $$ --comm a-name-far-too-long

# A refusal while another injection is armed leaves that one alone.
id=$(engine_arm open_ctree --error ENOMEM --pid $$ --for 5min)
err=$("$ENGINE" arm open_ctree --error ENOMEM --pid $$ 2>&1) && fail "a second injection with the same scope was accepted"
assert_contains "$err" "already has an injection with this scope" "duplicate scope"
assert_eq 1 "$("$ENGINE" list --json | jq length)" "injections after the duplicate was refused"
"$ENGINE" disarm "$id" >/dev/null
assert_fails_with "No injection with id" "$ENGINE" disarm "$id"

finish
