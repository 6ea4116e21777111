#!/bin/bash
# Scenario "lsm-fallback": what a kernel without the error-injection list
# still serves, through injectctl, on both test kernels (issue 7,
# acceptance 2, 3 and 5). security_file_open fails through fmod_ret for
# the command `injectctl run` starts, and only for it: a process of the
# same user in the same cgroup, running while the injection is armed, is
# untouched. On the stock kernel __x64_sys_openat and open_ctree are
# refused, naming the missing options and the LSM hook that covers the
# same operation, with nothing armed; on the full kernel they are served.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
OPEN_REPORT=$BUILD_DIR/tests/vm/open-report
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
[[ -x $OPEN_REPORT ]] || fail "open-report is not built at '$OPEN_REPORT'"

if zgrep -qx CONFIG_BPF_KPROBE_OVERRIDE=y /proc/config.gz; then seen=full; else seen=stock; fi
kernel=${INJECTD_VM_KERNEL:-$seen}
assert_eq "$kernel" "$seen" "the kernel flavour (CONFIG_BPF_KPROBE_OVERRIDE in /proc/config.gz)"

daemon_setup
# The default policy grants syscalls and allocations; this one grants
# group injectd the LSM hook that stands in for openat(2).
cat >/etc/injectd/policy.d/20-lsm-fallback.json <<'EOF'
{"rules": [{"name": "test-lsm-file-open", "groups": ["injectd"], "functions": ["security_file_open"],
            "errors": ["EACCES", "EPERM"], "scopes": ["cgroup", "process"], "max-duration": "5min",
            "max-active": 4}]}
EOF
chmod 0644 /etc/injectd/policy.d/20-lsm-fallback.json
start_injectd

ictl() { as alice "$INJECTCTL" "$@"; }

# ---- Acceptance 2: the issue's own command. Every open of the command
# fails, its exec included, so it cannot even start.
rc=0
err=$(ictl run --fail security_file_open:EACCES -- cat /etc/hostname 2>&1) || rc=$?
log "run --fail security_file_open:EACCES -- cat /etc/hostname: status $rc: $err"
((rc != 0)) || fail "run --fail security_file_open:EACCES -- cat: expected a failure, saw success: $err"
assert_contains "$err" "Permission denied" "run --fail security_file_open:EACCES -- cat"
assert_eq 0 "$(injections_left)" "injections after run"

# Exactly which opens fail, with a parallel process checked while the
# fault is armed: open-report is static, so its exec is the first
# security_file_open call and /tmp/fifo the second; opening a FIFO blocks
# until a writer comes, which holds the run (and its injection) open.
mkfifo -m 0666 /tmp/fifo
# Its non-zero status is expected: no ERR trap in the background job.
(
    trap - ERR
    rc=0
    ictl run --fail security_file_open:EACCES,after=2 -- \
        "$OPEN_REPORT" 5 /tmp/fifo /etc/hostname /etc/passwd >"$DAEMON_WORK/run.out" 2>"$DAEMON_WORK/run.err" || rc=$?
    echo "$rc" >"$DAEMON_WORK/run.rc"
) &
run_pid=$!
armed() { [[ $(injections_left) == 1 ]]; }
wait_until 120 armed
inj=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.ListInjections '{"all":true}' | jq -c '.parameters.injections[0]')
assert_eq security_file_open "$(jq -r .function <<<"$inj")" "the armed injection's function"
assert_eq fmod_ret "$(jq -r .backend <<<"$inj")" "the armed injection's backend"
assert_eq EACCES "$(jq -r .error <<<"$inj")" "the armed injection's error"
# alice, in the same cgroup, and bob: untouched while it is armed.
assert_succeeds as alice cat /etc/hostname
assert_succeeds as alice "$OPEN_REPORT" 0 /etc/hostname /etc/passwd
assert_succeeds as bob cat /etc/hostname
assert_eq 1 "$(injections_left)" "injections while the run waits"
# Opening it for writing releases the reader; writing could meet a reader
# already gone (SIGPIPE).
: >/tmp/fifo
wait "$run_pid"
assert_eq 5 "$(cat "$DAEMON_WORK/run.rc")" "run: the command's exit status"
assert_eq "ok EACCES EACCES" "$(sed 's/.*: //' "$DAEMON_WORK/run.out" | paste -sd' ')" "run: which opens failed"
summary=$(grep security_file_open "$DAEMON_WORK/run.err") || fail "run: no summary in '$(cat "$DAEMON_WORK/run.err")'"
assert_eq 2 "$(awk '{print $3}' <<<"$summary")" "run: injected, in the summary"
assert_eq 0 "$(injections_left)" "injections after run"
assert_succeeds as alice cat /etc/hostname

# ---- Acceptance 3: a function outside the LSM hooks.
refused() {     # refused WHAT EXIT-STATUS CMD...
    local what=$1 want=$2 rc=0 err
    shift 2
    err=$("$@" 2>&1) || rc=$?
    assert_eq "$want" "$rc" "exit status of $what"
    printf '%s\n' "$err"
}
if [[ $kernel == stock ]]; then
    for api in dbus varlink; do
        if [[ $api == varlink ]]; then T=(--varlink); else T=(--bus); fi
        err=$(refused "inject __x64_sys_openat ($api)" 1 ictl "${T[@]}" inject __x64_sys_openat --error ENOENT)
        assert_contains "$err" "injectctl: NotInjectable: '__x64_sys_openat' cannot be made to fail on this kernel" \
            "inject __x64_sys_openat ($api)"
        assert_contains "$err" "CONFIG_FUNCTION_ERROR_INJECTION" "inject __x64_sys_openat ($api)"
        assert_contains "$err" "CONFIG_BPF_KPROBE_OVERRIDE" "inject __x64_sys_openat ($api)"
        assert_contains "$err" "The LSM hook security_file_open covers the same operation" "inject __x64_sys_openat ($api)"
    done
    err=$(refused "inject open_ctree" 1 "$INJECTCTL" inject open_ctree --error ENOMEM --detach)
    assert_contains "$err" "NotInjectable: 'open_ctree' cannot be made to fail on this kernel" "inject open_ctree"
    assert_contains "$err" "CONFIG_FUNCTION_ERROR_INJECTION" "inject open_ctree"
    assert_contains "$err" "security_sb_mount" "inject open_ctree"
    # No hook for the slab allocator: the options, and no suggestion.
    err=$(refused "inject should_failslab" 1 ictl inject should_failslab --error ENOMEM --detach)
    assert_contains "$err" "CONFIG_FUNCTION_ERROR_INJECTION" "inject should_failslab"
    assert_not_contains "$err" "LSM hook security_" "inject should_failslab"
    # The same refusal in busctl's words, from a client we did not write.
    err=$(refused "busctl Inject __x64_sys_openat" 1 bus_inject alice function s __x64_sys_openat error s ENOENT \
        detach b true)
    assert_contains "$err" "CONFIG_BPF_KPROBE_OVERRIDE" "busctl Inject __x64_sys_openat"
    err=$(refused "inject --backend kprobe" 1 "$INJECTCTL" inject security_file_open --error EACCES --backend kprobe --detach)
    assert_contains "$err" "BackendUnavailable" "inject security_file_open --backend kprobe"
    assert_contains "$err" "use the fmod_ret backend" "inject security_file_open --backend kprobe"
else
    # The full kernel serves the syscall itself, with either backend.
    for b in kprobe fmod_ret; do
        out=$(ictl inject __x64_sys_openat --error ENOENT --comm nothing-matches --backend "$b" --for 30s --detach --json)
        assert_eq "$b" "$(jq -r .injection.backend <<<"$out")" "inject __x64_sys_openat --backend $b"
        ictl cancel "$(jq -r .id <<<"$out")"
    done
    err=$(refused "inject vfs_read" 1 ictl inject vfs_read --error EIO --detach)
    assert_contains "$err" "it is not on this kernel's error-injection list" "inject vfs_read"
    assert_contains "$err" "The LSM hook security_file_permission covers the same operation" "inject vfs_read"
fi
assert_eq 0 "$(injections_left)" "injections after the refusals"
grep -q "result=denied reason=NotInjectable" "$DAEMON_LOG" || [[ $kernel == full ]] ||
    fail "no audit line for the refusals"

stop_injectd
finish
