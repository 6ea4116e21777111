#!/bin/bash
# Policy by the caller's cgroup (docs/policy.md, "Rules by cgroup"), with
# real cgroups. A rule grants __x64_sys_getpgid to any user in
# /system.slice/docker-*.scope, and a deny rule refuses __x64_sys_openat
# there although another rule allows alice it anywhere. alice, placed by
# root in /system.slice/docker-test.scope as a container runtime would,
# arms it and her process there fails; alice in her session is refused, and
# so is alice in cgroups of her own delegated subtree that she named
# docker-x.scope and system.slice/docker-evil.scope: only a cgroup root put
# her in counts. Every decision line names the caller's cgroup.
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

# Each refusal by cgroup is in the audit trail with the caller's cgroup.
for cg in /session-alice /user.slice/user@alice.service/docker-x.scope /system.slice/docker-test.scope; do
    grep -q "event=decision .*result=denied .*caller_cgroup=$cg\$" "$DAEMON_LOG" ||
        fail "no audit line of a refusal naming the caller's cgroup '$cg'"
done

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
