#!/bin/bash
# A job that entered a container from outside (docker exec, podman exec,
# kubectl exec, a GitHub Actions step in a job container), built without a
# runtime: alice's "container" is a user and pid namespace of hers
# (unshare --user --map-root-user --pid --fork --mount-proc), whose first
# process sits alone in a cgroup of hers; her job joins it with nsenter
# (user, pid and mount namespaces), so its parent, nsenter, stays outside
# the namespace and the cgroup. The daemon reads which pid namespace each
# process is in with a BPF task iterator (bpf/task-ns.bpf.c); telling
# namespaces apart by the parent chain instead found the job outside its
# own container (docs/containers.md).
#
#   - the job's default scope, its container's cgroup, is granted, over
#     Varlink and D-Bus, while the cgroup holds only the namespace's
#     processes;
#   - `run`, and `inject --pid 1` (the container's first process), work;
#   - a process of hers outside the namespace, or in another namespace of
#     hers, in the same cgroup makes the cgroup scope refused, naming it;
#     another namespace's process named by pidfd is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
G=$BUILD_DIR/tests/vm/getpgid-report
PIDFD_CALL=$SRC_DIR/tests/vm/pidfd-call.py
[[ -x $INJECTCTL && -x $G ]] || fail "injectctl or getpgid-report is not built"
[[ -x /usr/bin/python3 ]] || fail "expected python3 at /usr/bin/python3"
command -v nsenter >/dev/null || fail "expected nsenter (util-linux)"

NS=(unshare --user --map-root-user --pid --fork --mount-proc)

daemon_setup
start_injectd

work=$(mktemp -d /tmp/exec.XXXXXX)
chmod 0755 "$work"

# child_of PID: the pid of PID's child (one is expected), or fail.
child_of() {
    local c
    c=$(awk -v p="$1" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null)
    [[ -n $c ]] || return 1
    echo "$c"
}

# The container: its first process alone in cgroup ctr-alice (hers, as a
# delegated one), its parent, the "runtime", outside it.
cg=$(make_cgroup ctr-alice)
chown alice "$cg" "$cg/cgroup.procs"
start_as alice /dev/null "$work/ctr.err" "${NS[@]}" sleep infinity
runtime=$BG_PID
wait_until 120 child_of "$runtime"
ctr=$(child_of "$runtime")
echo "$ctr" >"$cg/cgroup.procs"
assert_eq "1" "$(awk '/^NSpid/ { print $3 }' "/proc/$ctr/status")" "the container's first process, as its namespace numbers it"

# exec_job OUT ERR CMD [ARG...]: alice enters the container, as docker exec
# does: nsenter (in her session cgroup, outside the namespace) forks the
# job into her namespaces; the job is moved into the container's cgroup
# before it runs CMD. Returns CMD's status. JOB_PREFIX (words) runs first,
# outside, and execs nsenter: pidfd-call.py hands in a pidfd, say.
JOB_PREFIX=()
exec_job() {
    local out=$1 err=$2 gate enter job rc=0
    shift 2
    gate=$(mktemp -u "$work/gate.XXXXXX")
    start_as alice "$out" "$err" "${JOB_PREFIX[@]}" \
        nsenter --target "$ctr" --user --pid --mount --preserve-credentials -- \
        sh -c 'while [ ! -e "$0" ]; do sleep 0.1; done; exec "$@"' "$gate" "$@"
    enter=$BG_PID
    wait_until 120 child_of "$enter"
    job=$(child_of "$enter")
    [[ $(awk '/^NSpid/ { print NF }' "/proc/$job/status") == 3 ]] ||
        fail "the job $job is not in the container's pid namespace: $(grep NSpid "/proc/$job/status")"
    echo "$job" >"$cg/cgroup.procs"
    touch "$gate"
    wait "$enter" || rc=$?
    return $rc
}

# ---- the default scope: the container's cgroup
for api in varlink bus; do
    log "---- the default scope of a job entered with nsenter, over $api"
    rc=0
    exec_job "$work/own-$api.out" "$work/own-$api.err" \
        "$INJECTCTL" "--$api" inject __x64_sys_getpgid --error EACCES --comm nothing --for 1min --detach --json || rc=$?
    assert_eq 0 "$rc" "the job's inject in its container's cgroup ($api; stderr: $(cat "$work/own-$api.err"))"
    out=$(cat "$work/own-$api.out")
    assert_eq "cgroup:/ctr-alice" "$(jq -r '(.parameters // .).injection.scope' <<<"$out")" \
        "the scope of the job's default inject ($api)"
    "$INJECTCTL" --varlink cancel "$(jq -r '(.parameters // .).id' <<<"$out")" >/dev/null
    assert_eq 0 "$(injections_left)" "injections left after cancel ($api)"
done

# ---- run, and --pid of the container's first process
log "---- run from the entered job"
rc=0
exec_job "$work/run.out" "$work/run.err" \
    "$INJECTCTL" --varlink run --fail '__x64_sys_getpgid:EACCES,after=1,times=1' -- "$G" 3 || rc=$?
assert_eq 0 "$rc" "run's exit status in the entered job (stderr: $(cat "$work/run.err"))"
assert_eq "ok EACCES ok" "$(cat "$work/run.out")" "the command's calls"
assert_eq 0 "$(injections_left)" "injections left after run"

log "---- --pid 1 from the entered job"
rc=0
exec_job "$work/pid1.out" "$work/pid1.err" \
    "$INJECTCTL" --varlink inject __x64_sys_getpgid --error EACCES --comm nothing --pid 1 --for 1min --detach --json ||
    rc=$?
assert_eq 0 "$rc" "the job's inject on its container's first process (stderr: $(cat "$work/pid1.err"))"
out=$(cat "$work/pid1.out")
assert_eq "process:$ctr" "$(jq -r '(.parameters // .).injection.scope' <<<"$out")" "the scope of --pid 1"
"$INJECTCTL" --varlink cancel "$(jq -r '(.parameters // .).id' <<<"$out")" >/dev/null

# ---- what still makes the cgroup not the job's own
# refused_in_cgroup WHAT PID: with PID in the container's cgroup, the job's
# default scope is refused, naming PID; nothing is armed.
refused_in_cgroup() {
    local what=$1 pid=$2 rc=0 out
    echo "$pid" >"$cg/cgroup.procs"
    exec_job "$work/refused.out" "$work/refused.err" \
        "$INJECTCTL" --varlink inject __x64_sys_getpgid --error EACCES --comm nothing --for 1min --detach || rc=$?
    echo "$pid" >/sys/fs/cgroup/session-alice/cgroup.procs
    out="$(cat "$work/refused.out" "$work/refused.err")"
    ((rc != 0)) || fail "the job armed its cgroup holding $what: $out"
    assert_contains "$out" "ScopeNotOwned" "the refusal of the cgroup holding $what"
    assert_contains "$out" "process $pid, which is not yours" "the refusal of the cgroup holding $what"
    assert_eq 0 "$(injections_left)" "injections armed with $what in the cgroup"
    log "cgroup holding $what: refused ($out)"
}

# Once it runs sleep, start_as's subshell has put itself in her session
# cgroup: moved before, it would go back there.
runs_sleep() { [[ $(cat "/proc/$1/comm" 2>/dev/null) == sleep ]]; }
start_as alice /dev/null /dev/null sleep 1000
wait_until 120 runs_sleep "$BG_PID"
refused_in_cgroup "her process outside the namespace" "$BG_PID"
start_as alice /dev/null /dev/null "${NS[@]}" sleep 1000
wait_until 120 child_of "$BG_PID"
other=$(child_of "$BG_PID")
refused_in_cgroup "her process in another namespace" "$other"

log "---- another namespace's process, by pidfd, from the entered job"
rc=0
JOB_PREFIX=("$PIDFD_CALL" hold "$other" --)
exec_job "$work/other.out" "$work/other.err" "$PIDFD_CALL" inject "$SOCKET" \
    '{"function":"__x64_sys_getpgid","error":"EACCES","comm":"nothing","scope":"process","pidfd":0,"duration_usec":60000000,"detach":true}' 3 ||
    rc=$?
JOB_PREFIX=()
out="$(cat "$work/other.out" "$work/other.err")"
[[ $out == *'"error"'* ]] || ((rc != 0)) || fail "the job armed another namespace's process: $out"
assert_contains "$out" "outside your pid namespace" "the refusal of another namespace's process"
assert_eq 0 "$(injections_left)" "injections armed on another namespace's process"

# The daemon read the namespaces with BPF, not by ancestry.
if grep -q "Cannot read pid namespaces with BPF" "$DAEMON_LOG"; then
    fail "the daemon fell back to ancestry: $(grep "Cannot read pid namespaces" "$DAEMON_LOG")"
fi

stop_injectd
finish
