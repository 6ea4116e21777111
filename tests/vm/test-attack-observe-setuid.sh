#!/bin/bash
# Attack: Observe as a side channel on a setuid program (issue 29, "Observe
# watches setuid programs"). The observe program checked only the tree's
# tag, which survives execve of a setuid binary, so alice could count the
# calls a setuid-root program made on her behalf (how many files a 0700
# directory of root's holds, say): calls she could never fail.
#
# alice observes __x64_sys_getpgid on two runs of the cred-probe fixture,
# which makes exactly CALLS getpgid(0) calls: her own copy, whose calls are
# all counted, and a setuid-root copy, of which none is (after the exec it
# runs with euid 0, which her injection would spare too: creds.bpf.h).
# Before the credential check in bpf/observe.bpf.c, the setuid copy's calls
# were counted like hers (CALLS).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
PROBE=$BUILD_DIR/tests/vm/cred-probe
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
[[ -x $PROBE ]] || fail "cred-probe is not built at '$PROBE'"
CALLS=20

daemon_setup
start_injectd

# Not /tmp: it is mounted nosuid. The root overlay honours the setuid bit.
dir=$(mktemp -d /var/tmp/observe-setuid.XXXXXX)
chmod 0755 "$dir"
at_exit rm -rf "$dir"
install -m 0755 "$PROBE" "$dir/plain"
install -m 4755 -o root "$PROBE" "$dir/suid"
[[ -u $dir/suid ]] || fail "'$dir/suid' did not keep its setuid bit"
mkdir "$dir/out"
chown alice "$dir/out"

# observed NAME: alice's discovery of __x64_sys_getpgid over one run of
# $dir/NAME; prints the calls counted (0 when the function was not reached).
observed() {
    local name=$1 rc=0
    as alice "$INJECTCTL" explore --functions __x64_sys_getpgid --max-runs 0 \
        --report "$dir/out/$name.json" -- sh -c 'exec "$0" as-is "$1" >"$2"' "$dir/$name" "$CALLS" \
        "$dir/out/$name.out" >/dev/null 2>"$dir/out/$name.err" || rc=$?
    [[ $rc == 0 ]] || fail "alice's explore of '$name' failed ($rc): $(cat "$dir/out/$name.err")"
    grep -q '^creds: ' "$dir/out/$name.out" || fail "cred-probe '$name' did not run: $(cat "$dir/out/$name.out")"
    log "$name: $(sed -n 's/^creds: //p' "$dir/out/$name.out")"
    jq '[.reached[] | select(.function == "__x64_sys_getpgid") | .calls] | add // 0' "$dir/out/$name.json"
}

log "alice's own program: every call counted"
assert_eq "$CALLS" "$(observed plain)" "getpgid calls counted of alice's own cred-probe"

log "a setuid-root program alice runs: none of its calls counted"
assert_eq 0 "$(observed suid)" "getpgid calls counted of the setuid-root cred-probe (euid 0 after the exec)"

assert_eq 0 "$(prog_ids observe_call | wc -l)" "observe programs loaded after both discoveries"
stop_injectd
finish
