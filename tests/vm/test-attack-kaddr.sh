#!/bin/bash
# Attack: reading kernel addresses out of fault stacks, which undoes KASLR
# (docs/security.md, "No kernel addresses").
#
# alice's faults are streamed with their kernel stacks (Varlink watch), and
# she reads her injections every way she can (D-Bus watch, show, list, run
# --json). Nowhere may a kernel address appear:
# - a frame loaded after the daemon read /proc/kallsyms (here the BPF
#   trampoline of an fmod_ret injection on __x64_sys_eventfd2, below the
#   failed should_failslab: the test kernel has no modules to load) is
#   named once the daemon reads the symbols again, and "?" before that;
# - with the addresses hidden (kernel.kptr_restrict=2 once the injection is
#   armed: the program's own kernel symbols must be read at load), the
#   fault comes with no stack at all.
# Before, the first showed as 0xffffffffa0..., the second as a stack of
# raw addresses.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
LOOP=$BUILD_DIR/tests/vm/syscall-loop
[[ -x $INJECTCTL && -x $LOOP ]] || fail "injectctl or syscall-loop is not built"

ictl() { as alice "$INJECTCTL" "$@"; }

# no_kaddr FILE WHAT: FILE has no kernel address: no 0x... of 8 digits or
# more that is not a +0x offset, no bare ffffffff..., no address in decimal.
no_kaddr() {
    local hit
    hit=$(grep -oE '(^|[^+])0x[0-9a-fA-F]{8,}|ffffffff[0-9a-fA-F]{8}|1844674[0-9]{13}' "$1" | head -3) || true
    [[ -z $hit ]] || fail "$2: a kernel address ($hit) in $(head -c 2000 "$1")"
}

# watch_start API FILE: alice's watch of all her injections, JSON lines.
watch_start() {
    local -a t=()
    [[ $1 == varlink ]] && t=(--varlink)
    start_as alice "$2" "$2.err" "$INJECTCTL" "${t[@]}" watch --json
    wait_until 120 grep -q '"watching"' "$2"
}

kptr=$(cat /proc/sys/kernel/kptr_restrict)
at_exit sysctl -q "kernel.kptr_restrict=$kptr"

daemon_setup

log "---- frames loaded after the symbols were read are named, never shown as addresses"
start_injectd
w=$DAEMON_WORK/watch
watch_start varlink "$w.varlink"
watch_start dbus "$w.dbus"

# faults FILE: the fault events in a watch's JSON lines.
faults() { jq -c 'select(.type == "fault")' "$1"; }
# more_faults N: the Varlink stream has more than N fault events.
more_faults() { (($(faults "$w.varlink" | wc -l) > $1)); }
# fault_once: one run of alice's that fails one allocation, and its event.
fault_once() {
    local n
    n=$(faults "$w.varlink" | wc -l)
    ictl --varlink run --json --fail should_failslab:ENOMEM,caller=__x64_sys_eventfd2,times=1 -- "$LOOP" eventfd 1 >>"$w.run" 2>&1 || true
    wait_until 120 more_faults "$n"
    no_kaddr "$w.varlink" "alice's Varlink stream"
}

# The first fault (its caller filter, in fact) makes the daemon read
# /proc/kallsyms.
fault_once
first=$(faults "$w.varlink" | head -1)
assert_eq should_failslab "$(jq -r '.stack[0] | sub("\\+0x.*"; "")' <<<"$first")" "the failed function on top of the stack"
jq -e '.stack | any(startswith("__x64_sys_eventfd2+"))' <<<"$first" >/dev/null ||
    fail "the stack does not reach the system call: $first"

# Then a BPF trampoline appears on __x64_sys_eventfd2, below should_failslab
# on the stack: an injection that never fires (its comm matches nothing).
# A second one, on __x64_sys_getpgid, puts a symbol after it, so that the
# first has a known end (/proc/kallsyms gives no sizes).
tramp=$(ictl inject __x64_sys_eventfd2 --error EINVAL --comm no-such-comm --backend fmod_ret --for 10min --detach)
[[ -n $tramp ]] || fail "alice could not arm __x64_sys_eventfd2"
after=$(ictl inject __x64_sys_getpgid --error EINVAL --comm no-such-comm --backend fmod_ret --for 10min --detach)
[[ -n $after ]] || fail "alice could not arm __x64_sys_getpgid"
# The daemon reads the symbols again at most every 10 s: fault until the
# trampoline is named. Every stack on the way is checked too.
named=
for ((i = 0; i < 60; i++)); do
    fault_once
    if faults "$w.varlink" | tail -1 | jq -e '.stack | any(test("^bpf_trampoline_[0-9]+\\+0x[0-9a-f]+ \\[bpf\\]$"))' >/dev/null; then
        named=$(faults "$w.varlink" | tail -1)
        break
    fi
    sleep 1
done
[[ -n $named ]] || fail "the trampoline below the failed call was never named: $(faults "$w.varlink" | tail -1)"
log "named after $((i + 1)) runs: $(jq -c .stack <<<"$named")"

ictl show "$tramp" --json >"$w.show"
ictl list --json >"$w.list"
ictl --varlink list --json >>"$w.list"
ictl cancel "$tramp" "$after" >/dev/null
for f in "$w.dbus" "$w.run" "$w.show" "$w.list"; do
    no_kaddr "$f" "alice's $(basename "$f")"
done
stop_injectd

log "---- with the addresses hidden, no stack"
start_injectd
watch_start varlink "$w.hidden"
mkfifo "$DAEMON_WORK/go"
chmod 0666 "$DAEMON_WORK/go"
start_as alice /dev/null "$w.holder" bash -c \
    'echo ready >&2; read -r _ <"$1"; exec "$2" eventfd 3' holder "$DAEMON_WORK/go" "$LOOP"
holder=$BG_PID
wait_until 120 grep -q '^ready' "$w.holder"
id=$(ictl inject should_failslab --error ENOMEM --pid "$holder" --times 1 --for 10min --detach)
[[ -n $id ]] || fail "alice could not arm should_failslab on her process"
sysctl -q kernel.kptr_restrict=2
echo go >"$DAEMON_WORK/go"
wait_until 120 grep -q '"fault"' "$w.hidden"
sysctl -q "kernel.kptr_restrict=$kptr"
fault=$(faults "$w.hidden" | head -1)
log "fault with kallsyms hidden: $fault"
assert_eq "[]" "$(jq -c .stack <<<"$fault")" "the stack of a fault while kallsyms hides the addresses"
no_kaddr "$w.hidden" "alice's Varlink stream with kallsyms hidden"
wait "$holder" 2>/dev/null || true

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
