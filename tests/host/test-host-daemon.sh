#!/bin/bash
# The real injectd on THIS kernel, outside any VM (issue 7, acceptance 4):
# on a private dbus-daemon, in a private mount namespace (its own /run and
# bpffs), with the JSON policy from a temporary directory. Our development
# and CI machines refuse tracing BPF programs (EPERM); there the daemon
# must start, explain in GetCapabilities and `injectctl caps` that
# injection is unavailable and why, answer ListFunctions, refuse every
# Inject with InjectionUnavailable and that reason (over D-Bus with
# injectctl and busctl, over Varlink, as root and as an unprivileged
# user), load nothing, stay idle, and stop cleanly on SIGTERM.
#
# What the kernel allows is decided here by tests/host/tracing-probe, an
# oracle independent of the daemon's own probe: on a kernel that does
# allow tracing BPF the daemon must say that instead (and nothing is
# injected into the host).
#
# Exit 0: pass; 1: fail; 77: cannot run here (not root, or no mount
# namespaces), with the reason.
set -euo pipefail

SRC_DIR=${SRC_DIR:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SRC_DIR/build}
INJECTD=$BUILD_DIR/src/daemon/injectd
INJECTCTL=$BUILD_DIR/src/client/injectctl
PROBE=$BUILD_DIR/tests/host/tracing-probe
NAME=org.injectd.Injector1
OBJ=/org/injectd/Injector1
IFACE=org.injectd.Injector1.Manager

log() { printf 'host-daemon: %s\n' "$*" >&2; }
skip() { printf 'SKIP host-daemon: %s\n' "$*"; exit 77; }

# ---- Outside the namespace: can this run at all? Then run in one.
if [[ ${INJECTD_HOST_NS:-0} != 1 ]]; then
    ((EUID == 0)) || skip "injectd runs as root, and this is uid $EUID"
    unshare -m --propagation private true 2>/dev/null || skip "cannot make a mount namespace (unshare -m)"
    for tool in dbus-daemon busctl jq setpriv; do
        command -v "$tool" >/dev/null || { echo "FAIL host-daemon: '$tool' is missing (run tools/setup.sh)" >&2; exit 1; }
    done
    for f in "$INJECTD" "$INJECTCTL" "$PROBE"; do
        [[ -x $f ]] || { echo "FAIL host-daemon: '$f' is not built" >&2; exit 1; }
    done
    export INJECTD_HOST_NS=1 SRC_DIR BUILD_DIR
    exec unshare -m --propagation private -- "$BASH" "$(readlink -f "$0")" "$@"
fi

# ---- Inside: a private /run (the Varlink socket, the state directory),
# a private bpffs (nothing pinned can leak), a private bus.
tmp=$(mktemp -d /tmp/injectd-host.XXXXXX)
chmod 0755 "$tmp"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

failed=0
fail() {
    printf 'FAIL host-daemon: %s\n' "$*" >&2
    if [[ -s $tmp/injectd.log ]]; then
        echo "--- injectd's log:" >&2
        sed 's/^/  | /' "$tmp/injectd.log" >&2
    fi
    exit 1
}
assert_eq() { [[ $1 == "$2" ]] || fail "$3: expected '$1', saw '$2'"; }
assert_contains() { [[ $1 == *"$2"* ]] || fail "$3: expected to contain '$2', saw '$1'"; }
trap 'fail "command failed with status $? at line $LINENO: $BASH_COMMAND"' ERR

mount -t tmpfs -o mode=0755 injectd-host-run /run
mount -t bpf bpf /sys/fs/bpf 2>/dev/null || mount -t tmpfs -o mode=0700 injectd-host-bpf /sys/fs/bpf

cat >"$tmp/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=$tmp/bus</listen>
  <auth>EXTERNAL</auth>
  <!-- The defaults of Debian's system.conf, in short. -->
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <!-- And injectd's own bus policy, as installed. -->
  <include>$SRC_DIR/policy/org.injectd.Injector1.conf</include>
</busconfig>
EOF
dbus-daemon --config-file="$tmp/bus.conf" --nofork --nopidfile >"$tmp/dbus.log" 2>&1 &
pids+=($!)
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/bus
for ((i = 0; i < 100; i++)); do [[ -S $tmp/bus ]] && break; sleep 0.05; done
[[ -S $tmp/bus ]] || fail "the private dbus-daemon did not start: $(cat "$tmp/dbus.log")"

# A policy that would let nobody fail the file-open hook and openat, so
# that what refuses it is the kernel, not the policy.
mkdir -m 0755 "$tmp/policy"
cat >"$tmp/policy/10-host.json" <<'EOF'
{"rules": [{"name": "host-test", "users": ["nobody"], "functions": ["security_file_open", "__x64_sys_openat"],
            "errors": ["EACCES", "ENOENT"], "scopes": ["cgroup", "process"], "max-duration": "1min",
            "max-active": 2}]}
EOF
chmod 0644 "$tmp/policy/10-host.json"

"$INJECTD" --log-target=stderr --policy-dir="$tmp/policy" >"$tmp/injectd.log" 2>&1 &
injectd_pid=$!
pids+=("$injectd_pid")
has_name() { [[ $(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s "$NAME" 2>/dev/null) == "b true" ]]; }
for ((i = 0; i < 200; i++)); do
    has_name && [[ -S /run/injectd/org.injectd.Injector ]] && break
    kill -0 "$injectd_pid" 2>/dev/null || fail "injectd exited while starting"
    sleep 0.05
done
has_name || fail "injectd did not take $NAME within 10 s"

tracing=$("$PROBE") || fail "tracing-probe could not try: status $?"
log "kernel $(uname -r): loading an fmod_ret program as root says: $tracing"

ictl() { "$INJECTCTL" "$@"; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- "$@"; }

# ---- GetCapabilities: the same document from every client.
caps=$(ictl caps --json)
q() { jq -r "$1" <<<"$caps"; }
bus_caps=$(busctl --json=short call "$NAME" "$OBJ" "$IFACE" GetCapabilities | jq -r '.data[0]')
assert_eq "$(jq -S . <<<"$caps")" "$(jq -S . <<<"$bus_caps")" "GetCapabilities: injectctl and busctl"
vl_caps=$(ictl --varlink caps --json)
assert_eq "$(jq -S . <<<"$caps")" "$(jq -S . <<<"$vl_caps")" "GetCapabilities: D-Bus and Varlink"
assert_eq "$(uname -r)" "$(q .kernel)" "caps: kernel"
assert_eq true "$(q .bpf.available)" "caps: bpf.available (a socket filter loads here)"
nobody_caps=$(as_nobody "$INJECTCTL" caps --json)
assert_eq host-test "$(jq -r '.policy.rules[0].name' <<<"$nobody_caps")" "caps as nobody: policy.rules"
assert_eq false "$(jq -r .policy.root <<<"$nobody_caps")" "caps as nobody: policy.root"

text=$(ictl caps)
printf '%s\n' "$text" | sed 's/^/  | /' >&2

# ---- ListFunctions answers, with the LSM hooks from BTF.
fns=$(ictl functions 'security_*' --json)
(($(jq length <<<"$fns") > 100)) || fail "ListFunctions 'security_*': expected over 100 hooks, saw $(jq length <<<"$fns")"
assert_eq LSM "$(jq -r '.[] | select(.name == "security_file_open") | .type' <<<"$fns")" "ListFunctions: security_file_open"

if [[ $tracing == EPERM ]]; then
    log "the kernel refuses tracing BPF: checking that injectd says so and refuses"
    assert_eq false "$(q .injection.available)" "caps: injection.available"
    assert_eq EPERM "$(q .injection.errno)" "caps: injection.errno"
    assert_contains "$(q .injection.reason)" "EPERM" "caps: injection.reason"
    assert_eq false "$(q .features.tracing.available)" "caps: features.tracing.available"
    assert_eq EPERM "$(q .features.tracing.errno)" "caps: features.tracing.errno"
    assert_contains "$(q .features.tracing.reason)" "refuses BPF trampoline" "caps: features.tracing.reason"
    assert_eq "$(q .features.tracing)" "$(q .tracing)" "caps: .tracing is .features.tracing"
    assert_eq false "$(q .backends.fmod_ret.available)" "caps: backends.fmod_ret.available"
    assert_eq false "$(q .backends.kprobe.available)" "caps: backends.kprobe.available"
    assert_eq 0 "$(q .functions.injectable)" "caps: functions.injectable"
    assert_eq '[]' "$(jq -c '.[] | select(.name == "security_file_open") | .backends' <<<"$fns")" \
        "ListFunctions: backends of security_file_open"
    assert_contains "$text" "Injection:        UNAVAILABLE: the kernel refuses" "caps"
    assert_contains "$(grep -E '^tracing programs ' <<<"$text")" "EPERM" "caps: the tracing row"

    # Inject: refused, with that reason, whoever asks and however.
    refused() {     # refused WHAT CMD...: exit 1, InjectionUnavailable, EPERM
        local what=$1 rc=0 err
        shift
        err=$("$@" 2>&1) || rc=$?
        assert_eq 1 "$rc" "$what: exit status"
        assert_contains "$err" "InjectionUnavailable: Injection is unavailable on this kernel: " "$what"
        assert_contains "$err" "EPERM" "$what"
    }
    refused "inject security_file_open (root, D-Bus)" ictl inject security_file_open --error EACCES --detach
    refused "inject __x64_sys_openat (root, Varlink)" ictl --varlink inject __x64_sys_openat --error ENOENT --detach
    refused "inject security_file_open (nobody, D-Bus)" as_nobody "$INJECTCTL" inject security_file_open --error EACCES --detach
    refused "inject security_file_open (nobody, Varlink)" as_nobody "$INJECTCTL" --varlink inject security_file_open --error EACCES
    refused "run (nobody)" as_nobody "$INJECTCTL" run --fail security_file_open:EACCES -- true
    rc=0
    err=$(busctl call "$NAME" "$OBJ" "$IFACE" Inject 'a{sv}' 3 function s security_file_open error s EACCES \
        detach b true 2>&1) || rc=$?
    assert_eq 1 "$rc" "busctl Inject: exit status"
    assert_contains "$err" "Injection is unavailable on this kernel" "busctl Inject"
    grep -q "reason=InjectionUnavailable" "$tmp/injectd.log" || fail "no audit line for the refusals"
    grep -q "Injection is unavailable on this kernel: .*EPERM.* every Inject is refused" "$tmp/injectd.log" ||
        fail "the daemon did not log at start that injection is unavailable"
else
    log "the kernel allows tracing BPF ($tracing): checking that injectd does not claim otherwise"
    if [[ $tracing == ok ]]; then
        assert_eq true "$(q .features.fmod_ret_lsm.available)" "caps: features.fmod_ret_lsm.available"
        assert_eq true "$(q .injection.available)" "caps: injection.available"
    else
        assert_eq false "$(q .features.fmod_ret_lsm.available)" "caps: features.fmod_ret_lsm.available"
        assert_eq "$tracing" "$(q .features.fmod_ret_lsm.errno)" "caps: features.fmod_ret_lsm.errno"
    fi
fi

# ---- Nothing armed, nothing loaded, nothing pinned.
assert_eq 0 "$(ictl list --all --json | jq length)" "injections"
if command -v bpftool >/dev/null; then
    left=$(bpftool prog show 2>/dev/null | grep -c " name inject" || true)
    assert_eq 0 "$left" "injectd programs loaded"
fi
assert_eq "" "$(find /sys/fs/bpf/injectd/sites -mindepth 1 2>/dev/null)" "injectd's pins in the private bpffs"

# ---- Healthy: answers after a burst, then uses no CPU while idle.
for ((i = 0; i < 40; i++)); do
    busctl call "$NAME" "$OBJ" "$IFACE" GetCapabilities >/dev/null
    busctl call "$NAME" "$OBJ" "$IFACE" Inject 'a{sv}' 2 function s security_file_open error s EACCES \
        >/dev/null 2>&1 || true
done
kill -0 "$injectd_pid" 2>/dev/null || fail "injectd died during the burst"
assert_eq "$(q .kernel)" "$(ictl caps --json | jq -r .kernel)" "caps after the burst"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$injectd_pid/stat"; }
sleep 1
before=$(cpu_ticks)
sleep 3
after=$(cpu_ticks)
log "injectd used $((after - before)) clock ticks in 3 s of idling ($(getconf CLK_TCK)/s)"
((after - before <= 2)) || fail "injectd is not idle: $((after - before)) ticks of CPU in 3 s with nothing to do"
state=$(awk '{print $3}' "/proc/$injectd_pid/stat")
[[ $state == S ]] || fail "injectd's state while idle: expected S (sleeping), saw $state"

# ---- SIGTERM: a clean exit.
kill -TERM "$injectd_pid"
rc=0
for ((i = 0; i < 100; i++)); do kill -0 "$injectd_pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$injectd_pid" 2>/dev/null && fail "injectd did not exit within 5 s of SIGTERM"
wait "$injectd_pid" || rc=$?
assert_eq 0 "$rc" "injectd's exit status after SIGTERM"
grep -qiE "assert|segfault|sanitizer|Failed to" "$tmp/injectd.log" && fail "trouble in injectd's log"

echo "PASS host-daemon"
