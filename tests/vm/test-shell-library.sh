#!/bin/bash
# Scenario "shell-library": shell/injectd.sh against the real daemon, as
# alice (group injectd, no privileges), under sh (dash): injectd_require
# lets an allowed function through, and skips a function the policy does
# not allow in each suite's convention, with the daemon's reason through
# the Python client, and with injectctl's answer without it; injectd_run
# fails the command's mkdir and nobody else's, and leaves nothing armed.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/lib-daemon.sh
. "$(dirname "$0")/lib-daemon.sh"

LIB=$SRC_DIR/shell/injectd.sh
INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"

daemon_setup
start_injectd

# sh_as_alice [VAR=VALUE...] SCRIPT: SCRIPT in sh, as alice, after sourcing
# the library; the client from the build tree, the Python client only if
# asked (PYTHONPATH=...).
sh_as_alice() {
    local script=${*: -1}
    as alice env HOME=/home/alice INJECTD_INJECTCTL="$INJECTCTL" PYTHONDONTWRITEBYTECODE=1 "${@:1:$#-1}" \
        sh -c ". '$LIB'; $script"
}

# ---------------------------------------------------------------- injectd_require
log "injectd_require: allowed"
for py in PYTHONPATH=$SRC_DIR/python PYTHONPATH=; do
    assert_eq ok "$(sh_as_alice "$py" 'injectd_require __x64_sys_mkdir EACCES && echo ok')" "injectd_require, allowed ($py)"
done

log "injectd_require: not allowed, with the Python client's reason"
rc=0
out=$(sh_as_alice PYTHONPATH="$SRC_DIR/python" 'ksft_skip=4; injectd_require should_fail_bio EIO; echo not reached') || rc=$?
assert_eq 4 "$rc" "kselftest's skip status"
assert_eq "SKIP: injectd: the policy does not let alice fail 'should_fail_bio' (injectctl caps lists the rules that apply; docs/policy.md)" "$out" "the skip line"
rc=0
out=$(sh_as_alice PYTHONPATH="$SRC_DIR/python" 'injectd_require __x64_sys_mkdir ENOTDIR; echo not reached') || rc=$?
assert_eq 77 "$rc" "automake's skip status"
assert_contains "$out" "SKIP: injectd: the policy lets alice fail '__x64_sys_mkdir', but not with error ENOTDIR" "the skip line"

log "injectd_require: not allowed, through injectctl alone (fstests' _notrun)"
rc=0
out=$(sh_as_alice PYTHONPATH= '_notrun() { echo "notrun: $*"; exit 3; }; injectd_require should_fail_bio; echo not reached') || rc=$?
assert_eq 3 "$rc" "_notrun's status"
assert_eq "notrun: injectd: 'should_fail_bio' cannot be made to fail here by alice: this kernel or the policy does not allow it (injectctl caps says why)" "$out" "_notrun's reason"

log "injectd_require: no daemon (socket moved away) is a skip too"
mv "$SOCKET" "$SOCKET.away"
rc=0
out=$(sh_as_alice PYTHONPATH="$SRC_DIR/python" 'injectd_require __x64_sys_mkdir; echo not reached') || rc=$?
mv "$SOCKET.away" "$SOCKET"
assert_eq 77 "$rc" "the skip status without a daemon"
assert_contains "$out" "SKIP: injectd: cannot connect to injectd at '$SOCKET'" "the skip line without a daemon"

# ---------------------------------------------------------------- injectd_run
log "injectd_run: alice's mkdir fails under it, and only there"
rc=0
sh_as_alice 'injectd_run __x64_sys_mkdir:EACCES -- sh -c "mkdir /tmp/alice-dir && echo made"' \
    >/tmp/run.out 2>/tmp/run.err || rc=$?
assert_eq 1 "$rc" "injectd_run's status (mkdir's, failed)"
assert_contains "$(cat /tmp/run.err)" "Permission denied" "mkdir's error"
[[ ! -e /tmp/alice-dir ]] || fail "expected no /tmp/alice-dir, saw one"
assert_eq "" "$(cat /tmp/run.out)" "the command's output"
# The same command outside injectd_run.
assert_eq made "$(sh_as_alice 'sh -c "mkdir /tmp/alice-dir && echo made"')" "mkdir without injectd_run"
assert_eq 0 "$(injections_left)" "injections at the end"

stop_injectd
finish
