#!/bin/bash
# Attack: a target must really be the caller's (docs/security.md).
#
# Same uid is not enough. alice (group injectd: polkit grants her
# org.injectd.inject, not inject-global) names processes and cgroups that
# run as her but are not hers to fail: her own process made non-dumpable
# (prctl PR_SET_DUMPABLE 0, as a setuid program is), a process of hers in
# another pid namespace, seen from a pid namespace of hers that does not
# contain it, and a cgroup she owns that also holds one of bob's
# processes. Each is foreign, polkit does not grant inject-global, so each
# is refused and nothing is armed. Her dumpable process, a process in her
# own pid namespace (named by its pid there) and a cgroup holding only her
# processes still work.
# Before the fix, the first three were armed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"

PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || fail "expected python3 at '$PYTHON'"

daemon_setup
start_injectd

# --comm: no thread has that name, so an injection wrongly armed fails
# nothing and the VM stays usable to report it.
spec=(inject __x64_sys_openat --error ENOENT --comm attack-test --for 1min --detach)

# refused WHAT CMD...: alice's CMD must fail and leave nothing armed.
refused() {
    local what=$1 out rc=0
    shift
    out=$(as alice "$@" 2>&1) || rc=$?
    ((rc != 0)) || fail "alice armed $what: $out"
    log "alice on $what: refused ($out)"
    assert_eq 0 "$(injections_left)" "injections armed after alice's try on $what"
}

# armed WHAT CMD...: alice's CMD must arm an injection; it is cancelled.
armed() {
    local what=$1 id
    shift
    id=$(as alice "$@" | head -n1) || true
    [[ $id =~ ^[0-9a-f]{16}$ ]] || fail "alice could not arm $what (saw '$id')"
    log "alice on $what: armed $id"
    as alice "$INJECTCTL" cancel "$id" >/dev/null
}

# ---- a process of hers that is not dumpable (prctl PR_SET_DUMPABLE 0,
# as a setuid program is): the kernel gives its /proc files to root.
start_as alice /dev/null /dev/null "$PYTHON" -c \
    'import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(1000)'
nodump=$BG_PID
wait_until 300 bash -c "[[ \$(readlink /proc/$nodump/exe 2>/dev/null; stat -c %u /proc/$nodump/stat) == *python*0 ]]"
log "pid $nodump runs as $(awk '/^Uid/ { print $2 }' "/proc/$nodump/status"), /proc/$nodump/stat is owned by uid 0"
refused "her non-dumpable process" "$INJECTCTL" "${spec[@]}" --pid "$nodump"
refused "her non-dumpable process over Varlink" "$INJECTCTL" --varlink "${spec[@]}" --pid "$nodump"

start_as alice /dev/null /dev/null sleep 1000
mine=$BG_PID
armed "her own process" "$INJECTCTL" "${spec[@]}" --pid "$mine"

# ---- a process of hers in another pid namespace
start_as alice /dev/null /dev/null unshare --user --pid --fork sleep 1000
wait_until 120 pgrep -P "$BG_PID" sleep
other_ns=$(pgrep -P "$BG_PID" sleep)
log "pid $other_ns (pid $(awk '/^NSpid/ { print $3 }' "/proc/$other_ns/status") in its namespace) runs in another pid namespace"
refused "her process in another pid namespace" \
    unshare --user --pid --fork "$INJECTCTL" --varlink "${spec[@]}" --pid "$other_ns"
# Named by its pid in her own namespace, a process there is hers.
out=$(as alice unshare --user --pid --fork bash -c \
    "sleep 1000 & pid=\$!; $INJECTCTL --varlink ${spec[*]} --pid \$pid; kill \$pid") ||
    fail "alice could not arm a process in her own pid namespace: $out"
id=$(head -n1 <<<"$out")
log "alice in her own pid namespace: armed $id for $("$INJECTCTL" show "$id" --json | jq -r .scope)"
as alice "$INJECTCTL" cancel "$id" >/dev/null

# ---- a cgroup of hers that holds one of bob's processes

# is_bobs PID: wait until start_as has put PID in bob's session cgroup and
# exec'd it as bob, so that moving it elsewhere is not undone.
is_bobs() {
    wait_until 120 bash -c "[[ \$(stat -c %u /proc/$1/stat) == $(id -u bob) ]]"
}
shared=$(make_cgroup alice-shared)
chown alice: "$shared" "$shared/cgroup.procs"
start_as bob /dev/null /dev/null sleep 1000
is_bobs "$BG_PID"
echo "$BG_PID" >"$shared/cgroup.procs"
refused "her cgroup holding bob's process" "$INJECTCTL" "${spec[@]}" --cgroup "$shared"
refused "her cgroup holding bob's process, over Varlink" "$INJECTCTL" --varlink "${spec[@]}" --cgroup "$shared"
kill "$BG_PID"

# A sub-cgroup that holds bob's process counts as well.
sub=$(make_cgroup alice-shared/sub)
start_as bob /dev/null /dev/null sleep 1000
is_bobs "$BG_PID"
echo "$BG_PID" >"$sub/cgroup.procs"
refused "her cgroup with bob's process below it" "$INJECTCTL" "${spec[@]}" --cgroup "$shared"
kill "$BG_PID"

own=$(make_cgroup alice-own)
chown alice: "$own" "$own/cgroup.procs"
echo "$mine" >"$own/cgroup.procs"
armed "her cgroup holding only her process" "$INJECTCTL" "${spec[@]}" --cgroup "$own"

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
