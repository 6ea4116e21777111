#!/bin/bash
# Under systemd, installed: the hardened unit as systemd runs it.
#   - `systemd-analyze security injectd.service` rates it at most 4.0
#     ("OK"), and at what docs/security.md says;
#   - the running daemon's effective, permitted and bounding capability
#     sets (/proc/MAINPID/status) are exactly the capabilities that
#     docs/security.md lists in its table, and so is the unit's
#     CapabilityBoundingSet=; nothing inheritable or ambient; no_new_privs
#     and a seccomp filter;
#   - with only those, injection works: kprobe and fmod_ret backends, a
#     caller filter (which needs CAP_SYSLOG for /proc/kallsyms);
#   - the daemon has a mount namespace of its own, yet its bpffs pins are
#     the host's: visible from outside while an injection is armed, gone
#     once it is cancelled;
#   - the devices the unit lets it open (DeviceAllow=): alice's device
#     scope on a loop device of hers (the daemon asks the device for its
#     backing file, which her fd shows is hers: PrivateTmp= hides the
#     path from the daemon), and a kernel log record in /dev/kmsg.
# Run with: tests/vm/run --systemd -- bash tests/vm/test-systemd-hardening.sh
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/lib-systemd.sh
. "$(dirname "$0")/lib-systemd.sh"

DOC=$SRC_DIR/docs/security.md
FIXTURE=$BUILD_DIR/tests/vm/syscall-loop
[[ -r $DOC ]] || fail "no '$DOC'"
[[ -x $FIXTURE ]] || fail "the syscall-loop fixture is not built at '$FIXTURE'"
command -v capsh >/dev/null || fail "capsh (libcap2-bin) is needed to decode capability sets"

at_exit stop_injectd
at_exit "$INJECTCTL" cancel --all

log "systemctl start injectd"
assert_succeeds systemctl start injectd.service
assert_eq active "$(unit_state injectd.service)" "injectd.service after systemctl start"
pid=$(main_pid)
((pid > 0)) || fail "injectd.service has no main pid"

# ---------------------------------------------------------------- exposure

out=$(systemd-analyze security injectd.service --no-pager 2>&1) || fail "systemd-analyze security failed: $out"
level=$(sed -n 's/^→ Overall exposure level for injectd\.service: \([0-9.]*\) .*/\1/p' <<<"$out")
[[ $level =~ ^[0-9]+\.[0-9]$ ]] || fail "no overall exposure level in: $(tail -n 3 <<<"$out")"
awk -v l="$level" 'BEGIN { exit !(l <= 4.0) }' ||
    fail "systemd-analyze security rates injectd.service $level, above 4.0: $(grep '✗' <<<"$out")"
doc_level=$(sed -n 's/.*`systemd-analyze security injectd.service` rates the unit \([0-9.]*\).*/\1/p' "$DOC")
assert_eq "$doc_level" "$level" "the exposure level docs/security.md states"
log "systemd-analyze security: $(grep '^→' <<<"$out")"

# ---------------------------------------------------------------- capabilities

# The capabilities docs/security.md keeps: the first column of the table in
# its "## Capabilities" section, e.g. "| `CAP_BPF` | ... |".
doc_caps=$(sed -n '/^## Capabilities$/,/^## /p' "$DOC" | sed -n 's/^| `\(CAP_[A-Z_]*\)` |.*/\1/p' |
    tr '[:upper:]' '[:lower:]' | sort | paste -sd, -)
[[ -n $doc_caps ]] || fail "no capability table under '## Capabilities' in docs/security.md"
log "docs/security.md keeps: $doc_caps"

# cap_set FIELD: the set in FIELD of the daemon's /proc status, as sorted
# lower-case names joined by commas ("" when empty).
cap_set() {
    local hex
    hex=$(sed -n "s/^$1:[[:space:]]*//p" "/proc/$pid/status")
    [[ -n $hex ]] || fail "no $1 in /proc/$pid/status"
    capsh --decode="$hex" | sed 's/^0x[0-9a-f]*=//' | tr ',' '\n' | grep . | sort | paste -sd, - || true
}
for set in CapEff CapPrm CapBnd; do
    assert_eq "$doc_caps" "$(cap_set "$set")" "$set of the running injectd (pid $pid) against docs/security.md"
done
for set in CapInh CapAmb; do
    assert_eq "" "$(cap_set "$set")" "$set of the running injectd"
done
unit_caps=$(systemctl show -P CapabilityBoundingSet injectd.service | tr ' ' '\n' | sort | paste -sd, -)
assert_eq "$doc_caps" "$unit_caps" "the unit's CapabilityBoundingSet= against docs/security.md"
assert_eq "" "$(systemctl show -P AmbientCapabilities injectd.service)" "the unit's AmbientCapabilities="
assert_eq 1 "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' "/proc/$pid/status")" "NoNewPrivs of the running injectd"
assert_eq 2 "$(sed -n 's/^Seccomp:[[:space:]]*//p' "/proc/$pid/status")" "Seccomp mode of the running injectd (filter)"

# ---------------------------------------------------------------- injection works, pins are seen

[[ $(readlink "/proc/$pid/ns/mnt") != "$(readlink /proc/self/ns/mnt)" ]] ||
    fail "injectd runs in our mount namespace: expected one of its own (PrivateMounts=yes & co)"

# start_loop OP N [PATH]: syscall-loop, blocked before its first call until
# release_loop; sets LOOP_PID.
start_loop() {
    local fifo
    fifo=$(mktemp -u /tmp/loop-fifo.XXXXXX)
    mkfifo "$fifo"
    LOOP_OUT=$(mktemp /tmp/loop-out.XXXXXX)
    "$FIXTURE" --wait "$@" <"$fifo" >"$LOOP_OUT" 2>&1 &
    LOOP_PID=$!
    exec {LOOP_FD}>"$fifo"
    rm -f "$fifo"
    wait_until 120 grep -q '^0 ' "/proc/$LOOP_PID/syscall"
}
# release_loop: let it run; sets LOOP_RESULTS ("0" or an errno name per
# call). Not in $(...): a subshell cannot wait for our child.
release_loop() {
    printf x >&"$LOOP_FD"
    exec {LOOP_FD}>&-
    wait "$LOOP_PID" || fail "syscall-loop failed: $(cat "$LOOP_OUT")"
    LOOP_RESULTS=$(sed -n 's/^results: //p' "$LOOP_OUT")
}
# pins, pins_inside: what is pinned under /sys/fs/bpf/injectd, seen from
# here and from inside the service's mount namespace.
pins() { (cd /sys/fs/bpf/injectd 2>/dev/null && find . -mindepth 1 | sort) || true; }
pins_inside() { nsenter -t "$pid" -m sh -c 'cd /sys/fs/bpf/injectd 2>/dev/null && find . -mindepth 1 | sort' || true; }
no_site_pins() { ! pins | grep '^./sites/.' >/dev/null; }

for backend in kprobe fmod_ret; do
    log "a $backend injection from the hardened service; its pins from outside"
    start_loop openat 3 /etc/hostname
    inj=$("$INJECTCTL" inject __x64_sys_openat --error ENOENT --pid "$LOOP_PID" --backend "$backend" \
        --after 1 --times 1 --for 2min --detach --json)
    id=$(jq -r .id <<<"$inj")
    outside=$(pins)
    assert_contains "$outside" "./sites/$backend-__x64_sys_openat" "pins seen outside the service"
    assert_eq "$(pins_inside)" "$outside" "pins inside the service's mount namespace against outside"
    release_loop
    assert_eq "0 ENOENT 0" "$LOOP_RESULTS" "openat results under the $backend injection"
    "$INJECTCTL" cancel "$id" >/dev/null 2>&1 || true # done after one fault: it may be gone already
    wait_until 120 no_site_pins
done

log "a caller filter (addresses from /proc/kallsyms: CAP_SYSLOG)"
start_loop eventfd 2
"$INJECTCTL" inject should_failslab --error ENOMEM --pid "$LOOP_PID" --caller __x64_sys_eventfd2 \
    --for 2min --detach >/dev/null
release_loop
assert_eq "ENOMEM ENOMEM" "$LOOP_RESULTS" "eventfd results under should_failslab, caller __x64_sys_eventfd2"
"$INJECTCTL" cancel --all >/dev/null

log "devices: alice's loop device as a device scope, a kernel log record"
systemd_users
mkdir -p /etc/injectd/policy.d
cat >/etc/injectd/policy.d/20-hardening-devices.json <<'EOF'
{ "rules": [ { "name": "hardening-devices", "groups": ["injectd"],
               "functions": ["should_fail_bio"], "errors": ["EIO"], "scopes": ["device"],
               "max-duration": "10min", "max-active": 2, "kernel-log": true } ] }
EOF
at_exit rm -f /etc/injectd/policy.d/20-hardening-devices.json
"$INJECTCTL" reload-policy >/dev/null
img=$(mktemp /tmp/hardening-img.XXXXXX)
truncate -s 16M "$img"
chown alice "$img"
loopdev=$(losetup -f --show "$img") || fail "losetup of alice's image failed"
at_exit losetup -d "$loopdev"
records() { dmesg | grep -c 'FAULT_INJECTION: forcing a failure' || true; }
before=$(records)
inj=$(as alice "$INJECTCTL" inject should_fail_bio --error EIO --device "$loopdev" --kernel-log 1 \
    --for 2min --detach --json) || fail "alice's device scope on her own $loopdev was refused: $inj"
assert_eq "device:${loopdev#/dev/}" "$("$INJECTCTL" show "$(jq -r .id <<<"$inj")" --json | jq -r .scope)" \
    "the injection's scope"
dd if=/dev/zero of="$loopdev" bs=4k count=1 oflag=direct 2>/dev/null &&
    fail "a write to $loopdev did not fail under alice's device scope"
wait_until 120 test "$(records)" -gt "$before"
as alice "$INJECTCTL" cancel --all >/dev/null
assert_eq 0 "$("$INJECTCTL" list --all --json | jq length)" "injections left"

finish
