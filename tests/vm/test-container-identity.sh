#!/bin/bash
# Identity that survives namespaces (issue 14, docs/containers.md): alice,
# inside a user and pid namespace of her own (unshare --user
# --map-root-user --pid --fork --mount-proc, where she is root and
# injectctl is PID 1), asks the host's daemon over both transports.
#
#   - run fails exactly the second getpgid() of its command, while a
#     process of hers on the host and one in a second namespace of hers,
#     calling at that moment, are untouched, and only the command's three
#     calls are counted;
#   - a process outside her namespace, hers on the host or root's, named
#     by pidfd (handed in from outside) or by a pid number, is refused
#     with a reason, and nothing is armed; an fd that is not a pidfd too;
#   - sweep works from inside;
#   - with a cgroup namespace and cgroup2 mounted inside it, a cgroup path
#     means her cgroup below the namespace's root, by fd (injectctl) and
#     as a bare path (translated by the daemon), never the host's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
G=$BUILD_DIR/tests/vm/getpgid-report
PIDFD_CALL=$SRC_DIR/tests/vm/pidfd-call.py
BUS_INJECT_FD=$BUILD_DIR/tests/vm/bus-inject-fd
[[ -x $INJECTCTL && -x $G && -x $BUS_INJECT_FD ]] || fail "injectctl, getpgid-report or bus-inject-fd is not built"
[[ -x /usr/bin/python3 ]] || fail "expected python3 at /usr/bin/python3"

NS=(unshare --user --map-root-user --pid --fork --mount-proc)
SPEC='__x64_sys_getpgid:EACCES,after=1,times=1'

daemon_setup
start_injectd

armed_is() { [[ $(injections_left) == "$1" ]]; }

work=$(mktemp -d /tmp/identity.XXXXXX)
chmod 0755 "$work"

# ---- run, with bystanders calling while the injection is armed
for api in varlink bus; do
    log "---- run inside the namespace, over $api"
    gate=$work/$api-bystanders gate_job=$work/$api-job
    rm -f "$gate" "$gate_job"
    start_as alice "$work/$api-host.out" "$work/$api-host.err" "$G" 3 "$gate"
    host_pid=$BG_PID
    start_as alice "$work/$api-ns2.out" "$work/$api-ns2.err" "${NS[@]}" "$G" 3 "$gate"
    ns2_pid=$BG_PID
    start_as alice "$work/$api-run.out" "$work/$api-run.err" \
        "${NS[@]}" "$INJECTCTL" "--$api" run --fail "$SPEC" -- "$G" 3 "$gate_job"
    run_pid=$BG_PID
    # Armed (the command waits for its gate): the bystanders call now,
    # then the command does.
    # 120 s: arming under TCG on a loaded machine takes seconds, not more.
    wait_until 120 armed_is 1
    touch "$gate"
    wait "$host_pid" || fail "alice's process on the host failed: $(cat "$work/$api-host.err")"
    wait "$ns2_pid" || fail "alice's process in a second namespace failed: $(cat "$work/$api-ns2.err")"
    assert_eq 1 "$(injections_left)" "the injection is still armed after the bystanders ($api)"
    touch "$gate_job"
    rc=0
    wait "$run_pid" || rc=$?
    assert_eq 0 "$rc" "run's exit status ($api; stderr: $(cat "$work/$api-run.err"))"
    assert_eq "ok EACCES ok" "$(cat "$work/$api-run.out")" "the command's calls inside the namespace ($api)"
    assert_eq "ok ok ok" "$(cat "$work/$api-host.out")" "alice's process on the host, at the same time ($api)"
    assert_eq "ok ok ok" "$(cat "$work/$api-ns2.out")" "alice's process in a second namespace ($api)"
    summary=$(grep __x64_sys_getpgid "$work/$api-run.err")
    read -r _ matched injected _ <<<"$summary"
    # The command's second call is failed (times=1) and the daemon then
    # removes the spent injection as soon as it reads that fault's event,
    # which may be before or after the third call: that one is counted or
    # not, by timing. A bystander's call would make it 4 or more (and its
    # output not "ok ok ok", checked above).
    [[ $matched == 2 || $matched == 3 ]] ||
        fail "calls matched: expected the command's 2 or 3 (the third is counted only if it beat the spent injection's removal), no bystander's; saw '$matched' ($api)"
    assert_eq 1 "$injected" "faults injected ($api)"
    assert_eq 0 "$(injections_left)" "injections left after run ($api)"
done

# A command run wrongly says so (it used to exit 2 in silence, which looked
# like a run in which nothing was failed).
rc=0
out=$(as alice "${NS[@]}" "$INJECTCTL" --varlink run --fail "$SPEC" -- "$G" 2>&1) || rc=$?
assert_eq 2 "$rc" "run's exit status when its command is misused"
assert_contains "$out" "usage: getpgid-report N" "the command's complaint"

# ---- targets outside the namespace
start_as alice /dev/null /dev/null sleep 1000
hers=$BG_PID
sleep 1000 &
roots=$!
at_exit kill "$roots"
inject_params='{"function":"__x64_sys_getpgid","error":"EACCES","scope":"process","pidfd":0,"duration_usec":60000000,"detach":true}'

# refused WHAT REASON CMD...: alice's CMD gets an error containing REASON,
# and nothing is armed.
refused() {
    local what=$1 reason=$2 out rc=0
    shift 2
    out=$(as alice "$@" 2>&1) || rc=$?
    [[ $out == *'"error"'* ]] || ((rc != 0)) || fail "alice armed $what: $out"
    assert_contains "$out" "$reason" "the refusal of $what"
    log "$what: refused ($out)"
    assert_eq 0 "$(injections_left)" "injections armed after alice's try on $what"
}

refused "her host process by pidfd, from inside" "outside your pid namespace" \
    "$PIDFD_CALL" hold "$hers" -- "${NS[@]}" "$PIDFD_CALL" inject "$SOCKET" "$inject_params" 3
refused "root's process by pidfd, from inside" "runs as uid 0" \
    "$PIDFD_CALL" hold "$roots" -- "${NS[@]}" "$PIDFD_CALL" inject "$SOCKET" "$inject_params" 3
refused "an fd that is not a pidfd" "is not a pidfd" \
    "$PIDFD_CALL" hold --not-pidfd -- "${NS[@]}" "$PIDFD_CALL" inject "$SOCKET" "$inject_params" 3
refused "a pidfd index the call did not bring" "but the call brought 0" \
    "${NS[@]}" "$PIDFD_CALL" inject "$SOCKET" "$inject_params"
# By number: a host pid means nothing, or something else, in her namespace.
refused "her host process by pid, with injectctl" "No process with pid $hers" \
    "${NS[@]}" "$INJECTCTL" --varlink inject __x64_sys_getpgid --error EACCES --pid "$hers" --for 1min --detach
refused "her host process by a bare pid number" "No process with pid $hers in your pid namespace" \
    "${NS[@]}" "$PIDFD_CALL" inject "$SOCKET" \
    "{\"function\":\"__x64_sys_getpgid\",\"error\":\"EACCES\",\"scope\":\"process\",\"pid\":$hers,\"detach\":true}"
# Over D-Bus, the pidfd is an 'h' (busctl cannot send one: bus-inject-fd),
# from inside the namespace.
refused "root's process by pidfd over D-Bus" "runs as uid 0" \
    "$PIDFD_CALL" hold "$roots" -- "${NS[@]}" "$BUS_INJECT_FD" --pidfd 3 __x64_sys_getpgid EACCES nothing
refused "her host process by pidfd over D-Bus" "outside your pid namespace" \
    "$PIDFD_CALL" hold "$hers" -- "${NS[@]}" "$BUS_INJECT_FD" --pidfd 3 __x64_sys_getpgid EACCES nothing
refused "an fd that is not a pidfd over D-Bus" "is not a pidfd" \
    "$PIDFD_CALL" hold --not-pidfd -- "${NS[@]}" "$BUS_INJECT_FD" --pidfd 3 __x64_sys_getpgid EACCES nothing
refused "a pidfd as a number over D-Bus" "'pidfd' must be a file descriptor" \
    busctl --json=short call org.injectd.Injector1 \
    /org/injectd/Injector1 org.injectd.Injector1.Manager Inject 'a{sv}' 4 \
    function s __x64_sys_getpgid error s EACCES scope s process pidfd u 0
# Her own process, by pidfd, from the host: armed.
out=$(as alice "$PIDFD_CALL" hold "$hers" -- "$PIDFD_CALL" inject "$SOCKET" "$inject_params" 3)
id=$(jq -r .parameters.id <<<"$out")
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "alice could not arm her own process by pidfd: $out"
assert_eq "process:$hers" "$(jq -r .parameters.injection.scope <<<"$out")" "the scope of her pidfd"
as alice "$INJECTCTL" --varlink cancel "$id" >/dev/null

# ---- sweep from inside
log "---- sweep inside the namespace"
rc=0
out=$(as alice "${NS[@]}" "$INJECTCTL" --varlink sweep --fail __x64_sys_getpgid:EACCES -- "$G" 3 2>&1) || rc=$?
assert_eq 0 "$rc" "sweep's exit status inside the namespace ($out)"
assert_contains "$out" "sweep: 4 runs, the fault fired in 3" "sweep's summary inside the namespace"
assert_eq 0 "$(injections_left)" "injections left after sweep"

# ---- a cgroup path inside a cgroup namespace
log "---- cgroup paths inside a cgroup namespace"
job=$(make_cgroup session-alice/job)
chown alice "$job"
# Her namespace's root is her session cgroup; cgroup2 mounted there shows
# it as the root, and "job" below it. The host has no /sys/fs/cgroup/job.
[[ ! -e /sys/fs/cgroup/job ]] || fail "/sys/fs/cgroup/job exists on the host"
CGNS=(unshare --user --map-root-user --cgroup --mount --pid --fork --mount-proc)
mnt='mount -t tmpfs none /mnt && mkdir /mnt/cg && mount -t cgroup2 none /mnt/cg'
for how in injectctl bare; do
    if [[ $how == injectctl ]]; then
        cmd="$INJECTCTL --varlink inject __x64_sys_getpgid --error EACCES --comm nothing --cgroup /mnt/cg/job --for 1min --detach --json"
    else
        cmd="$PIDFD_CALL inject $SOCKET '{\"function\":\"__x64_sys_getpgid\",\"error\":\"EACCES\",\"comm\":\"nothing\",\"scope\":\"cgroup\",\"cgroup\":\"/mnt/cg/job\",\"duration_usec\":60000000,\"detach\":true}'"
    fi
    out=$(as alice "${CGNS[@]}" sh -c "$mnt && $cmd" 2>&1) || fail "alice's cgroup path by $how: $out"
    scope=$(jq -r '(.parameters // .).injection.scope' <<<"$out")
    assert_eq "cgroup:/session-alice/job" "$scope" "the cgroup '/mnt/cg/job' names inside her namespace ($how)"
    id=$(jq -r '(.parameters // .).id' <<<"$out")
    "$INJECTCTL" --varlink cancel "$id" >/dev/null
done
refused "a cgroup path that climbs out" "must be absolute, without '.', '..'" \
    "${CGNS[@]}" sh -c "$mnt && $PIDFD_CALL inject $SOCKET '{\"function\":\"__x64_sys_getpgid\",\"error\":\"EACCES\",\"scope\":\"cgroup\",\"cgroup\":\"/mnt/cg/../cg/job\",\"detach\":true}'"

stop_injectd
finish
