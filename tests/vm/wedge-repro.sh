#!/bin/bash
# tests/vm/wedge-repro.sh MODE BACKEND [CYCLES] - the reproducer of issue 19
# (the guest wedged while injectd attached and detached sites), in the VM:
#
#   tests/vm/run --timeout 1200 -- bash tests/vm/wedge-repro.sh plain fmod_ret 5000
#
# Attaches and detaches on __x64_sys_openat while a busy caller opens a
# file every 0.5 ms (first-fault, never in scope), CYCLES times (default
# 2000), and prints "cycles N" as it goes, so a wedge shows as output that
# stops (and tests/vm/run's timeout then records where the CPUs are).
#
# MODE:
#   plain   bench/attach-loop: an empty program attached and detached with
#           plain libbpf; reloaded (a fresh program) every 10th cycle
#   engine  injectd-engine arm --pid HOLDER, then disarm: every cycle a new
#           process loads a fresh program (slow: a second or more a cycle)
#   daemon  injectd with a resident Varlink client, as bench/run does:
#           Inject (scope: a process, so the task-tags programs load too) and
#           Cancel; the site is re-attached from the daemon's cache, and every
#           10th cycle the cache is flushed (reload-policy), so it is loaded
#           afresh
# BACKEND: kprobe or fmod_ret (both: alternate, daemon and engine only).
# WEDGE_NO_BUSY=1 leaves the busy caller out.
set -euo pipefail

[[ ${INJECTD_IN_VM:-0} == 1 ]] || { echo "wedge-repro.sh runs inside the test VM (tests/vm/run)" >&2; exit 2; }
mode=${1:?mode: plain, engine or daemon} backend=${2:?backend: kprobe, fmod_ret or both} cycles=${3:-2000}
SRC_DIR=${SRC_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$PWD}
FN=__x64_sys_openat
ENGINE=$BUILD_DIR/src/engine/injectd-engine
work=$(mktemp -d /tmp/wedge.XXXXXX)
pids=()
cleanup() {
    set +e
    ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null
    "$ENGINE" disarm --all >/dev/null 2>&1
    wait 2>/dev/null
}
trap cleanup EXIT

log() { printf 'wedge: [%5ds] %s\n' "$SECONDS" "$*"; }

echo probe >"$work/file"
if [[ ${WEDGE_NO_BUSY:-0} != 1 ]]; then
    "$BUILD_DIR/bench/first-fault" --comm busycaller --timeout 100000 "$work/file" >"$work/busy.out" 2>&1 &
    pids+=($!)
fi
# The scope of the injections: a process that never opens anything.
sleep 100000 &
holder=$!
pids+=("$holder")
log "mode $mode, backend $backend, $cycles cycles, busy caller: $([[ ${WEDGE_NO_BUSY:-0} == 1 ]] && echo no || echo yes), $(nproc) vCPUs"

backend_of() { # CYCLE
    case $backend in
        both) (($1 % 2)) && echo kprobe || echo fmod_ret ;;
        *) echo "$backend" ;;
    esac
}

case $mode in
    plain)
        [[ $backend != both ]] || { echo "plain takes one backend" >&2; exit 2; }
        "$BUILD_DIR/bench/attach-loop" "$backend" "$FN" --cycles "$cycles" --reload-every 10 |
            while read -r _ n ms; do log "cycles $n (${ms} ms)"; done
        ;;
    engine)
        for ((i = 1; i <= cycles; i++)); do
            id=$("$ENGINE" arm "$FN" --error ENOENT --pid "$holder" --for 10min --backend "$(backend_of "$i")" --json | jq -r .id)
            "$ENGINE" disarm "$id" >/dev/null
            ((i % 10)) || log "cycles $i"
        done
        ;;
    daemon)
        install -m 0644 "$SRC_DIR/policy/org.injectd.Injector1.conf" /usr/share/dbus-1/system.d/
        mkdir -p /run/dbus
        dbus-daemon --system --fork
        "$BUILD_DIR/src/daemon/injectd" --log-target=stderr --polkit=off --rate=0 >"$work/injectd.log" 2>&1 &
        pids+=($!)
        for ((i = 0; i < 600; i++)); do
            [[ -S /run/injectd/org.injectd.Injector ]] && break
            sleep 0.1
        done
        coproc VB { exec python3 "$SRC_DIR/bench/varlink-batch.py" /run/injectd/org.injectd.Injector 2>"$work/vb.err"; }
        pids+=("$VB_PID")
        call() { # METHOD PARAMS: one call on the resident connection; prints the reply
            local line
            printf '{"method":"org.injectd.Injector.%s","parameters":%s}\n' "$1" "$2" >&"${VB[1]}"
            IFS= read -r line <&"${VB[0]}" || { log "the Varlink client is gone: $(cat "$work/vb.err")"; exit 1; }
            printf '%s\n' "$line"
        }
        for ((i = 1; i <= cycles; i++)); do
            b=$(backend_of "$i")
            out=$(call Inject "{\"function\":\"$FN\",\"error\":\"ENOENT\",\"scope\":\"process\",\"pid\":$holder,\"duration_usec\":600000000,\"detach\":true,\"backend\":\"$b\"}")
            [[ $out =~ \"id\":\ *\"([0-9a-f]+)\" ]] || { log "Inject failed: $out"; exit 1; }
            call Cancel "{\"id\":\"${BASH_REMATCH[1]}\"}" >/dev/null
            # The site goes once its last injection does; wait for that, as
            # the benchmark does, so the next Inject attaches again.
            for ((j = 0; j < 600; j++)); do
                compgen -G "/sys/fs/bpf/injectd/sites/*-$FN" >/dev/null || break
                sleep 0.05
            done
            ((i % 10)) || { call ReloadPolicy '{}' >/dev/null; log "cycles $i"; }
        done
        ;;
    *) echo "unknown mode '$mode'" >&2; exit 2 ;;
esac
log "done: $cycles cycles, the guest still answers"
