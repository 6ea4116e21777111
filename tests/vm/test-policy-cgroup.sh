#!/bin/bash
# Policy by the caller's cgroup (docs/policy.md, "Rules by cgroup"), with
# real cgroups. A rule grants __x64_sys_getpgid to any user in
# /system.slice/docker-*.scope, and a deny rule refuses __x64_sys_openat
# there although another rule allows alice it anywhere. alice, placed by
# root in /system.slice/docker-test.scope as a container runtime would,
# arms it and her process there fails; alice in her session is refused, and
# so is alice in cgroups of her own delegated subtree that she named
# docker-x.scope and system.slice/docker-evil.scope: only a cgroup root put
# her in counts. Every decision line names the caller's cgroup. Root in a
# rootful container (uid 0, not privileged, in a scope root made) is
# granted its container's cgroup, and its tasks without capabilities fail.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || fail "expected python3 at '$PYTHON'"

daemon_setup
# Only these rules: the vendor's would let alice (group injectd) fail
# syscalls from anywhere.
cat >/etc/injectd/policy.d/50-cgroup.json <<'JSON'
{ "rules": [
  { "name": "injectd-default-syscalls", "enabled": false },
  { "name": "injectd-default-slab", "enabled": false },
  { "name": "injectd-default-page-alloc", "enabled": false },
  { "name": "test-docker", "users": ["*"],
    "cgroups": ["/system.slice/docker-*.scope"],
    "functions": ["__x64_sys_getpgid"], "errors": ["EACCES"],
    "scopes": ["cgroup"], "max-duration": "5min", "max-active": 2 },
  { "name": "test-alice-openat", "users": ["alice"],
    "functions": ["__x64_sys_openat"], "errors": ["ENOENT"],
    "scopes": ["cgroup", "process"], "max-duration": "5min", "max-active": 2 },
  { "name": "test-no-openat-in-docker", "deny": true, "users": ["*"],
    "cgroups": ["/system.slice/docker-*.scope"],
    "functions": ["__x64_sys_openat"] }
] }
JSON
chmod 0644 /etc/injectd/policy.d/50-cgroup.json
start_injectd
grep -q "Policy: 6 rule(s) loaded" "$DAEMON_LOG" || fail "the test policy did not load: $(grep Policy: "$DAEMON_LOG")"

# A container's scope, made by root as dockerd (systemd cgroup driver) does.
make_cgroup system.slice >/dev/null
docker=$(make_cgroup system.slice/docker-test.scope)
# alice's delegated subtree, as systemd gives user@UID.service.
make_cgroup user.slice >/dev/null
deleg=$(make_cgroup user.slice/user@alice.service)
chown alice "$deleg" "$deleg/cgroup.procs" "$deleg/cgroup.subtree_control" "$deleg/cgroup.threads"

# in_cgroup_as CG USER CMD [ARG...]: CMD as USER, put in CG by root.
in_cgroup_as() {
    local cg=$1 user=$2
    shift 2
    (
        echo "$BASHPID" >"$cg/cgroup.procs"
        exec setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all -- "$@"
    )
}

getpgid='
import os
try:
    os.getpgid(0)
    print("ok")
except OSError as e:
    print(os.strerror(e.errno))'
inject_getpgid='{"function":"__x64_sys_getpgid","error":"EACCES","detach":true,"duration_usec":120000000}'
inject_openat='{"function":"__x64_sys_openat","error":"ENOENT","comm":"no-such-comm","detach":true,"duration_usec":120000000}'

# denied OUT ERROR-NAME MESSAGE-PART WHAT: OUT is a refusal as named.
denied() {
    local out=$1 name=$2 text=$3 what=$4
    assert_eq "org.injectd.Injector.$name" "$(jq -r .error <<<"$out")" "error for $what"
    assert_contains "$(jq -r .parameters.message <<<"$out")" "$text" "message for $what"
    log "$what: refused as expected: $(jq -r .parameters.message <<<"$out")"
    assert_eq 0 "$(injections_left)" "injections after $what"
}

# 1. Granted in the container's scope; it fails there and only there.
out=$(in_cgroup_as "$docker" alice "$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Inject "$inject_getpgid") ||
    fail "alice in $docker was refused: $out"
id=$(jq -r .parameters.id <<<"$out")
log "alice in /system.slice/docker-test.scope: armed $id"
list=$(vl alice org.injectd.Injector.ListInjections)
assert_eq "cgroup:/system.slice/docker-test.scope" "$(jq -r .parameters.injections[0].scope <<<"$list")" \
    "the scope of alice's injection"
assert_eq test-docker "$(jq -r .parameters.injections[0].rule <<<"$list")" "the rule that granted it"
assert_eq "Permission denied" "$(in_cgroup_as "$docker" alice "$PYTHON" -c "$getpgid")" \
    "getpgid of alice's process in the container's scope"
assert_eq ok "$(as alice "$PYTHON" -c "$getpgid")" "getpgid of alice's process in her session"
grep -q "event=decision .*result=policy-allowed .*rule=test-docker .*caller_cgroup=/system.slice/docker-test.scope" \
    "$DAEMON_LOG" || fail "no audit line naming the caller's cgroup for the grant"
grep -q "Policy allows uid $(id -u alice) from cgroup '/system.slice/docker-test.scope'" "$DAEMON_LOG" ||
    fail "the grant's message does not say where the caller was"
vl alice org.injectd.Injector.Cancel "{\"id\":\"$id\"}" >/dev/null
assert_eq 0 "$(injections_left)" "injections after the cancel"

# 2. alice in her session: no rule for getpgid from there (her rule for
# openat names her, so the refusal is about the function, and says where).
out=$(vl alice org.injectd.Injector.Inject "$inject_getpgid" || true)
denied "$out" FunctionNotAllowed "make '__x64_sys_getpgid' fail from cgroup '/session-alice'" "alice in her session"
# bob, whom only the Docker rule names, the same.
out=$(vl bob org.injectd.Injector.Inject "$inject_getpgid" || true)
denied "$out" UserNotInPolicy "No policy rule lets user 'bob' inject faults from cgroup '/session-bob'" \
    "bob in his session"

# 3. Cgroups alice made herself in her delegated subtree, named like
# Docker's: she moves herself in, as she may there.
for name in docker-x.scope system.slice/docker-evil.scope; do
    out=$(in_cgroup_as "$deleg" alice bash -c '
        mkdir -p "$1/$2" && echo $$ >"$1/$2/cgroup.procs" &&
        exec "$3" "$4" org.injectd.Injector.Inject "$5"' _ "$deleg" "$name" "$VARLINK_CALL" "$SOCKET" \
        "$inject_getpgid" || true)
    denied "$out" FunctionNotAllowed "fail from cgroup '/user.slice/user@alice.service/$name'" \
        "alice in her own cgroup '$name'"
    assert_eq "$(stat -c %U "$deleg/$name")" alice "the owner of $deleg/$name"
done
rmdir "$deleg/system.slice/docker-evil.scope" "$deleg/system.slice" "$deleg/docker-x.scope"

# GetCapabilities says where the daemon sees the caller, and lists the
# rules that apply from there.
caps=$(in_cgroup_as "$docker" alice "$VARLINK_CALL" "$SOCKET" org.injectd.Injector.GetCapabilities)
assert_eq /system.slice/docker-test.scope "$(jq -r .parameters.capabilities.policy.cgroup <<<"$caps")" \
    "the caller's cgroup in GetCapabilities"
assert_eq "test-docker test-alice-openat" "$(jq -r '[.parameters.capabilities.policy.rules[].name] | join(" ")' <<<"$caps")" \
    "the rules GetCapabilities lists in the container's scope"
assert_eq '["/system.slice/docker-*.scope"]' "$(jq -c '.parameters.capabilities.policy.rules[0].cgroups' <<<"$caps")" \
    "the cgroups of the rule GetCapabilities lists"
caps=$(vl alice org.injectd.Injector.GetCapabilities)
assert_eq "test-alice-openat" "$(jq -r '[.parameters.capabilities.policy.rules[].name] | join(" ")' <<<"$caps")" \
    "the rules GetCapabilities lists in alice's session"

# 4. Deny beats allow: openat, allowed to alice anywhere, is refused in the
# container's scope by the deny rule; in her session it is armed.
out=$(in_cgroup_as "$docker" alice "$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Inject "$inject_openat" || true)
denied "$out" FunctionNotAllowed \
    "Policy rule 'test-no-openat-in-docker' denies user 'alice' making '__x64_sys_openat' fail from cgroup '/system.slice/docker-test.scope'" \
    "openat from the container's scope"
out=$(vl alice org.injectd.Injector.Inject "$inject_openat") || fail "alice's openat from her session was refused: $out"
vl alice org.injectd.Injector.Cancel "{\"id\":\"$(jq -r .parameters.id <<<"$out")\"}" >/dev/null

# 5. Root in a rootful container, as Docker makes one: uid 0 in a pid
# namespace of its own, without CAP_SYS_ADMIN, CAP_BPF and CAP_PERFMON, in
# a scope root made that holds the container's processes only (the
# runtime's own stay outside). It is no privileged caller: the cgroup rule
# grants it, and the default scope, its container's cgroup, is its own.
# The BPF program spares tasks that hold any capability in the initial user
# namespace, as Docker's root does by default: only the container's tasks
# without capabilities (docker run --cap-drop=ALL, as this one) fail.
command -v capsh >/dev/null || fail "capsh is missing (libcap2-bin, tools/setup.sh)"
croot=$(make_cgroup system.slice/docker-root.scope)
cout=$DAEMON_WORK/container
mkdir "$cout"
# The container's init: moves itself into the scope, drops every
# capability, asks, checks getpgid, then stays.
ASAN_OPTIONS=detect_leaks=0 unshare --pid --fork --mount-proc sh -c '
    echo 0 >"$1/cgroup.procs"
    exec setpriv --bounding-set=-all --inh-caps=-all -- sh -c "
        \"\$0\" \"\$1\" org.injectd.Injector.Inject \"\$2\" >\"\$3/inject\" 2>\"\$3/inject.err\"
        \"\$4\" -c \"\$5\" >\"\$3/getpgid\"
        grep ^CapEff /proc/self/status >\"\$3/caps\"
        echo done >\"\$3/done\"
        exec sleep 1000" "$2" "$3" "$4" "$5" "$6" "$7"' \
    _ "$croot" "$VARLINK_CALL" "$SOCKET" "$inject_getpgid" "$cout" "$PYTHON" "$getpgid" &
container=$!
at_exit kill "$container"
wait_until 120 test -s "$cout/done"
out=$(cat "$cout/inject")
id=$(jq -r .parameters.id <<<"$out")
[[ -n $id && $id != null ]] || fail "the container's root was refused: $out $(cat "$cout/inject.err")"
doc=$(jq -c .parameters.injection <<<"$out")
log "the container's root ($(cat "$cout/caps")): armed $id for $(jq -r .scope <<<"$doc") by rule $(jq -r .rule <<<"$doc")"
assert_eq "cgroup:/system.slice/docker-root.scope" "$(jq -r .scope <<<"$doc")" "the container root's scope"
assert_eq test-docker "$(jq -r .rule <<<"$doc")" "the rule that granted the container's root"
assert_eq 0 "$(jq -r .owner_uid <<<"$doc")" "the owner of the container root's injection"
assert_eq "Permission denied" "$(cat "$cout/getpgid")" "getpgid of the container's root without capabilities"
# A root task in that scope with Docker's default capabilities is spared,
# and so is one outside it.
docker_caps=(capsh --drop=cap_sys_admin,cap_bpf,cap_perfmon --)
assert_eq ok "$(echo "$BASHPID" >"$croot/cgroup.procs"; "${docker_caps[@]}" -c '"$0" -c "$1"' "$PYTHON" "$getpgid")" \
    "getpgid of a root task with capabilities in the container's scope"
assert_eq ok "$(setpriv --bounding-set=-all --inh-caps=-all -- "$PYTHON" -c "$getpgid")" \
    "getpgid of a root task without capabilities outside the container's scope"
grep -q "event=decision .*uid=0 .*result=policy-allowed .*rule=test-docker .*caller_cgroup=/system.slice/docker-root.scope" \
    "$DAEMON_LOG" || fail "no audit line naming the container root's cgroup"
"$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Cancel "{\"id\":\"$id\"}" >/dev/null
assert_eq 0 "$(injections_left)" "injections after the container root's cancel"

# A process entered into the container from outside, as `docker exec`
# does, has its parent outside the pid namespace. What the daemon makes
# of its default scope is logged, not checked: docs/containers.md says.
cinit=$(pgrep -P "$container" | head -n1)
out=$(nsenter --target "$cinit" --pid -- sh -c '
    echo 0 >"$1/cgroup.procs"
    ASAN_OPTIONS=detect_leaks=0 exec setpriv --bounding-set=-all --inh-caps=-all -- "$2" "$3" \
        org.injectd.Injector.Inject "$4"' \
    _ "$croot" "$VARLINK_CALL" "$SOCKET" "$inject_getpgid" 2>&1 || true)
log "a root process exec'd into the container, default scope: $(jq -c '.error // .parameters.injection.scope' <<<"$out" 2>/dev/null || echo "$out")"
"$VARLINK_CALL" "$SOCKET" org.injectd.Injector.ListInjections '{"all":true}' |
    jq -r '.parameters.injections[].id' | while read -r i; do
        "$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Cancel "{\"id\":\"$i\"}" >/dev/null
    done

# Each refusal by cgroup is in the audit trail with the caller's cgroup.
for cg in /session-alice /user.slice/user@alice.service/docker-x.scope /system.slice/docker-test.scope; do
    grep -q "event=decision .*result=denied .*caller_cgroup=$cg\$" "$DAEMON_LOG" ||
        fail "no audit line of a refusal naming the caller's cgroup '$cg'"
done

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
