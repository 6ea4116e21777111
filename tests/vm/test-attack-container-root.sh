#!/bin/bash
# Attack: root in a container is not host root (docs/security.md).
#
# A "container" as Docker makes one by default, without a user namespace:
# uid 0 in a pid namespace of its own, without CAP_SYS_ADMIN, CAP_BPF and
# CAP_PERFMON (unshare --pid --fork --mount-proc, capsh --drop). Privileged
# means able to do it oneself, so it is an ordinary caller that the policy
# decides about; here a rule lets root fail its own processes. It must not
# get global scope, a host process (by the host's pid), a cgroup of the
# host's, everyone's injections listed, or host root's injections seen or
# cancelled; its own process works, with the
# uid filter kept. polkitd runs, and says yes to any uid 0: that yes does
# not count for targets that are not its own.
# Before the fix, the global injection and the host pid were armed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
command -v capsh >/dev/null || fail "capsh is missing (libcap2-bin, tools/setup.sh)"

daemon_setup
cat >/etc/injectd/policy.d/50-root.json <<'EOF'
{
  "rules": [
    {
      "name": "test-root-own",
      "users": ["root"],
      "functions": ["__x64_sys_openat"],
      "errors": ["ENOENT"],
      "scopes": ["cgroup", "process"],
      "max-duration": "10min",
      "max-active": 4
    }
  ]
}
EOF
chmod 0644 /etc/injectd/policy.d/50-root.json
start_injectd

# A host process of root's, in a cgroup of the host's.
hostcg=$(make_cgroup host-service)
run_in_cgroup "$hostcg" sleep 1000 &
host_pid=$!
at_exit kill "$host_pid"

# in_container CMD: runs CMD (a shell command line) as root in a new pid
# namespace without the three capabilities; INJECTCTL is set there.
in_container() {
    unshare --pid --fork --mount-proc \
        capsh --drop=cap_sys_admin,cap_bpf,cap_perfmon -- -c "INJECTCTL=$INJECTCTL; $1"
}

caps=$(in_container 'grep ^CapEff /proc/self/status; readlink /proc/self/ns/pid')
log "inside: $caps"
in_container 'capsh --has-p=cap_sys_admin' 2>/dev/null && fail "the container still has CAP_SYS_ADMIN"

# --comm: no thread has that name, so an injection wrongly armed fails
# nothing and the VM stays usable to report it.
spec='inject __x64_sys_openat --error ENOENT --comm attack-test --for 1min --detach'

# refused WHAT CMDLINE: the container's CMDLINE must fail.
refused() {
    local what=$1 out rc=0
    out=$(in_container "$2" 2>&1) || rc=$?
    ((rc != 0)) || fail "container root got $what: $out"
    log "container root, $what: refused ($out)"
    assert_eq 0 "$(injections_left)" "injections armed after container root's try on $what"
}

for t in "--varlink" ""; do
    log "---- transport: ${t:-D-Bus}"
    refused "global scope" "\$INJECTCTL $t $spec --global"
    refused "host pid $host_pid" "\$INJECTCTL $t $spec --pid $host_pid"
    refused "the host's cgroup" "\$INJECTCTL $t $spec --cgroup $hostcg"
    refused "everyone's injections" "\$INJECTCTL $t list --all"

    # Its own process, per the policy: armed with the uid filter, and the
    # pid it names is its own namespace's.
    out=$(in_container "sleep 1000 & pid=\$!; \$INJECTCTL $t $spec --pid \$pid; echo pid=\$pid; kill \$pid") ||
        fail "container root could not arm its own process: $out"
    id=$(head -n1 <<<"$out")
    log "container root, own process ($(tail -n1 <<<"$out")): armed $id"
    doc=$("$INJECTCTL" show "$id" --json)
    assert_eq test-root-own "$(jq -r .rule <<<"$doc")" "the rule that granted container root's own process"
    "$INJECTCTL" cancel "$id" >/dev/null
done

# The host's root is still privileged: same command, no namespace.
id=$("$INJECTCTL" $spec --pid "$host_pid") || fail "host root could not arm its own process"
assert_eq root "$("$INJECTCTL" show "$id" --json | jq -r .rule)" "the host root's rule"
# Same uid, but not the same caller: container root neither sees host
# root's injection nor cancels it (it would count as its owner by uid).
for t in "--varlink" ""; do
    out=$(in_container "\$INJECTCTL $t list --json") || fail "container root's list failed: $out"
    ! grep -q "$id" <<<"$out" || fail "container root lists host root's injection $id: $out"
    for verb in show cancel; do
        rc=0
        out=$(in_container "\$INJECTCTL $t $verb $id" 2>&1) || rc=$?
        ((rc != 0)) || fail "container root could $verb host root's injection $id: $out"
        log "container root, $verb of host root's injection: refused ($out)"
    done
    assert_eq active "$("$INJECTCTL" show "$id" --json | jq -r .state)" "host root's injection after container root's tries"
done
"$INJECTCTL" cancel "$id" >/dev/null

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
