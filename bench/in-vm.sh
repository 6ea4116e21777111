#!/bin/bash
# bench/in-vm.sh OUT_DIR [OPTIONS] - every benchmark, inside the test VM.
#
# bench/run boots the VM once and runs this as root; it appends one JSON
# object per measurement to OUT_DIR/raw.jsonl (a share that reaches the
# host), and bench/report.py turns those into the tables and
# bench/results.json. Nothing here judges a figure: this only measures.
#
# Options (bench/run passes them through):
#   --only LIST        comma-separated subset of arm,hot,sweep,footprint
#   --runs N           arm-latency samples per tool (default 5)
#   --bcc-runs N       BCC inject samples (default 1: each takes from half a
#                      minute to 5 minutes under TCG, compiling against the
#                      kernel headers)
#   --hot-passes N     passes over every hot-path configuration (default 3)
#   --mix-secs N       length of the client-mix window (default 30)
#
# What runs where: the daemon (dbus-daemon + injectd, polkit off, no rate
# limit, as root) is up for the whole run, because the injectd
# configurations of the hot path are armed through it too; the peers
# (bpftrace, BCC's inject, fail_function) and the empty programs run beside
# it. Each measurement cleans up after itself.
set -euo pipefail

[[ ${INJECTD_IN_VM:-0} == 1 ]] || { echo "bench/in-vm.sh runs inside the test VM: use bench/run" >&2; exit 2; }
(($# >= 1)) || { echo "usage: bench/in-vm.sh OUT_DIR [OPTIONS]" >&2; exit 2; }
OUT=$1
shift
ONLY=arm,hot,sweep,footprint RUNS=5 BCC_RUNS=1 HOT_PASSES=3 MIX_SECS=30
while (($#)); do
    case $1 in
        --only) ONLY=$2 ;;
        --runs) RUNS=$2 ;;
        --bcc-runs) BCC_RUNS=$2 ;;
        --hot-passes) HOT_PASSES=$2 ;;
        --mix-secs) MIX_SECS=$2 ;;
        *) echo "bench/in-vm.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift 2
done

SRC_DIR=${SRC_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SRC_DIR/build}
BENCH=$SRC_DIR/bench
ENGINE=$BUILD_DIR/src/engine/injectd-engine
INJECTD=$BUILD_DIR/src/daemon/injectd
INJECTCTL=$BUILD_DIR/src/client/injectctl
FIRST_FAULT=$BUILD_DIR/bench/first-fault
SYSCALL_RATE=$BUILD_DIR/bench/syscall-rate
FLOOR=$BUILD_DIR/bench/bench-floor
VBATCH=$BENCH/varlink-batch.py
SWEEP_TARGET=$BUILD_DIR/tests/vm/sweep-target
SOCKET=/run/injectd/org.injectd.Injector
FF=/sys/kernel/debug/fail_function
PINS=/sys/fs/bpf/injectd
# The cheap syscall of the hot path. __x64_sys_getppid is not on the 6.1
# kernel's error-injection list; __do_sys_getppid, the function it calls
# (the same address here), is, with type ERRNO.
HOT_FN=__do_sys_getppid
RAW=$OUT/raw.jsonl
WORK=$(mktemp -d /tmp/bench.XXXXXX)

log() { printf 'bench: [%4ds] %s\n' "$SECONDS" "$*" >&2; }
want() { [[ ,$ONLY, == *,$1,* ]]; }
emit() { printf '%s\n' "$1" >>"$RAW"; }
# A JSON string from text we produced (errno names, tool names, messages).
jstr() {
    local s=${1//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/ }
    printf '"%s"' "$s"
}
now_us() { echo "${EPOCHREALTIME/./}"; }

# ---------------------------------------------------------------- cleanup

BG_PIDS=()
cleanup() {
    set +e
    # What the daemon and the resident client said, for the curious.
    mkdir -p "$OUT/logs" && cp "$WORK"/*.log "$WORK"/*.err "$OUT/logs/" 2>/dev/null
    [[ -d $FF ]] && { echo 0 >"$FF/probability"; echo >"$FF/inject"; } 2>/dev/null
    ((${#BG_PIDS[@]})) && kill -KILL "${BG_PIDS[@]}" 2>/dev/null
    [[ -n ${INJECTD_PID:-} ]] && kill "$INJECTD_PID" 2>/dev/null && wait "$INJECTD_PID" 2>/dev/null
    "$ENGINE" disarm --all >/dev/null 2>&1
    [[ -n ${DBUS_PID:-} ]] && kill "$DBUS_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# wait_for SECS CMD...: poll CMD every 50 ms.
wait_for() {
    local secs=$1 i
    shift
    for ((i = 0; i < secs * 20; i++)); do
        "$@" && return 0
        sleep 0.05
    done
    log "waited ${secs}s for '$*' in vain"
    return 1
}
file_has() { [[ -s $1 && $(<"$1") == *"$2"* ]]; }
# stop_tool PID SIGNAL: send SIGNAL, give the tool 10 s to go, then SIGKILL
# (its programs and probes go with its file descriptors); sets STOP_KILLED
# to 1 when it had to. A tool that ignores a signal must not stall the
# run: an unbounded wait for bpftrace after its SIGINT once hung a whole
# run. Not in $(...): only this shell can reap the tool.
stop_tool() {
    local pid=$1 sig=$2 i st
    STOP_KILLED=0
    kill "-$sig" "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    for ((i = 0; i < 100; i++)); do
        { IFS= read -r st <"/proc/$pid/stat"; } 2>/dev/null || break
        st=${st##*) }
        [[ ${st:0:1} == Z ]] && break
        sleep 0.1
    done
    if ((i == 100)); then
        kill -KILL "$pid" 2>/dev/null || true
        STOP_KILLED=1
    fi
    wait "$pid" 2>/dev/null || true
}
# The daemon keeps a detached site's program for a grace period
# (--site-cache); a policy reload frees them all, so the next arm on any
# function is a cold one again.
flush_sites() {
    "$INJECTCTL" --varlink reload-policy >/dev/null 2>>"$WORK/client.log" || log "reload-policy failed"
}

# No site of any backend on FUNCTION, attached or cached: the next arm
# there loads (after flush_sites) or re-attaches.
site_gone() {
    local s
    for s in "$PINS"/sites/*-"$1"; do [[ -e $s ]] && return 1; done
    return 0
}

# ---------------------------------------------------------------- holders

# Processes that only exist to be an injection's scope: forked subshells
# blocked reading a FIFO (no exec, so a hundred of them start in a moment
# even under TCG). They never call the functions measured here.
mkfifo "$WORK/hold"
exec {HOLD_FD}<>"$WORK/hold"
HOLDERS=()
spawn_holders() {
    local i
    for ((i = 0; i < $1; i++)); do
        (read -r _ <&"$HOLD_FD") &
        HOLDERS+=($!)
        BG_PIDS+=($!)
    done
}

# A holder that, once released, runs `syscall-rate --check` as itself, in
# the scope it anchors: proof that an injection armed there is live.
# Sets CHECK_PID; release_check sets CHECK to what the call returned.
spawn_check() {
    rm -f "$WORK/check.fifo" "$WORK/check.out"
    mkfifo "$WORK/check.fifo"
    (read -r _ <"$WORK/check.fifo"; exec "$SYSCALL_RATE" --check >"$WORK/check.out") &
    CHECK_PID=$!
    BG_PIDS+=($!)
}
# Not in $(...): only this shell can wait for its child. Sets CHECK.
release_check() {
    echo go >"$WORK/check.fifo"
    wait "$CHECK_PID" || true
    CHECK=$(<"$WORK/check.out")
}

# ---------------------------------------------------------------- daemon

# The resident Varlink client (varlink-batch.py as a coprocess): vb METHOD
# PARAMS prints the reply line {"t0_ns", "t1_ns", "reply"}. A reply that
# does not come within VB_TIMEOUT seconds is a daemon stall: vb_stalled
# records what the daemon was doing and starts a new client, and the call
# fails.
VB_TIMEOUT=120
vb_read() { # sets VB_LINE to one reply line
    IFS= read -r -t "$VB_TIMEOUT" VB_LINE <&"$VB_OUT" && return 0
    vb_stalled
    return 1
}
vb() {
    printf '{"method":"org.injectd.Injector.%s","parameters":%s}\n' "$1" "$2" >&"$VB_IN"
    vb_read || return 1
    printf '%s\n' "$VB_LINE"
}
vb_id() { [[ $1 =~ \"id\":\ *\"([0-9a-f]+)\" ]] && echo "${BASH_REMATCH[1]}"; }
vb_inject() { # FUNCTION PID [EXTRA-JSON-MEMBERS]: inject, print the reply line
    vb Inject "{\"function\":\"$1\",\"error\":\"EPERM\",\"scope\":\"process\",\"pid\":$2,\"duration_usec\":1800000000,\"detach\":true${3:+,$3}}"
}
vb_cancel() { vb Cancel "{\"id\":\"$1\"}" >/dev/null || true; }
# vb_inject_many FUNCTION BACKEND PID...: one injection per PID, all
# requests written before the replies are read (no subshell per call);
# appends the new ids to IDS.
vb_inject_many() {
    local fn=$1 backend=$2 p line
    shift 2
    for p; do
        printf '{"method":"org.injectd.Injector.Inject","parameters":{"function":"%s","error":"EPERM","scope":"process","pid":%d,"duration_usec":1800000000,"detach":true,"backend":"%s"}}\n' \
            "$fn" "$p" "$backend" >&"$VB_IN"
    done
    for p; do
        vb_read || return 0
        line=$VB_LINE
        if [[ $line =~ \"id\":\ *\"([0-9a-f]+)\" ]]; then IDS+=("${BASH_REMATCH[1]}"); else log "Inject for pid $p: $line"; fi
    done
}
vb_cancel_many() { # ID...
    local id
    for id; do printf '{"method":"org.injectd.Injector.Cancel","parameters":{"id":"%s"}}\n' "$id" >&"$VB_IN"; done
    for id; do vb_read || return 0; done
}

start_daemon() {
    install -m 0644 "$SRC_DIR/policy/org.injectd.Injector1.conf" /usr/share/dbus-1/system.d/
    mkdir -p /run/dbus
    DBUS_PID=$(dbus-daemon --system --fork --print-pid)
    "$INJECTD" --log-target=stderr --polkit=off --rate=0 >>"$WORK/injectd.log" 2>&1 &
    INJECTD_PID=$!
    wait_for 60 test -S "$SOCKET"
    wait_for 60 busctl --system status org.injectd.Injector1 >/dev/null 2>&1 ||
        { log "injectd did not take its bus name"; return 1; }
    vb_start
}

vb_start() {
    coproc VB { exec python3 "$VBATCH" "$SOCKET" 2>>"$WORK/vb.err"; }
    BG_PIDS+=("$VB_PID")
    # Copies: bash does not pass a coprocess's own descriptors on to
    # nested subshells, and vb runs inside $(...).
    exec {VB_IN}>&"${VB[1]}" {VB_OUT}<&"${VB[0]}"
}

# What the daemon was doing when a reply did not come, and whether it
# still answers a new connection; into the raw data, then a new client.
# Runs in the subshell of a $(vb ...) too: the new client is started by
# the caller's next vb_restart_if_stalled.
vb_stalled() {
    local d=/proc/$INJECTD_PID fresh
    log "no reply from injectd within ${VB_TIMEOUT}s on the resident Varlink connection"
    fresh=$(echo '{"method":"org.injectd.Injector.ListInjections","parameters":{"all":true}}' |
        timeout 30 python3 "$VBATCH" "$SOCKET" 2>&1 | head -c 300) || true
    emit "{\"kind\":\"daemon-stall\",\"daemon_state\":$(jstr "$(cut -d' ' -f3 "$d/stat" 2>/dev/null)"),\"wchan\":$(jstr "$(cat "$d/wchan" 2>/dev/null)"),\"stack\":$(jstr "$(cat "$d/stack" 2>/dev/null)"),\"client_wchan\":$(jstr "$(cat "/proc/$VB_PID/wchan" 2>/dev/null)"),\"new_connection\":$(jstr "$fresh"),\"log_tail\":$(jstr "$(tail -20 "$WORK/injectd.log")")}"
    : >"$WORK/vb.stalled"
}
# After a stall, a new resident client, so the rest of the run goes on.
vb_restart_if_stalled() {
    [[ -e $WORK/vb.stalled ]] || return 0
    rm -f "$WORK/vb.stalled"
    kill -KILL "$VB_PID" 2>/dev/null || true
    wait "$VB_PID" 2>/dev/null || true
    exec {VB_IN}>&- {VB_OUT}<&-
    vb_start
    log "started a new resident Varlink client"
}

# ---------------------------------------------------------------- meta

meta() {
    local bt bcc
    bt=$(bpftrace --version 2>/dev/null | head -1) || bt=missing
    bcc=$(python3 -c 'import bcc; print(bcc.__version__)' 2>/dev/null) || bcc=missing
    emit "{\"kind\":\"meta\",\"kernel\":$(jstr "$(uname -r)"),\"vcpus\":$(nproc),\"bpftrace\":$(jstr "$bt"),\"bcc\":$(jstr "$bcc"),\"hot_function\":\"$HOT_FN\",\"runs\":$RUNS,\"bcc_runs\":$BCC_RUNS,\"hot_passes\":$HOT_PASSES}"
}

# ================================================================ arm latency
#
# For each tool: start the probe (first-fault), note the time, make the
# request, and take the probe's moment of first failure. The probe opens a
# file every 0.5 ms and is the only process any of these faults is scoped
# to (by pid, or by its comm for bpftrace).
#
# The file is on tmpfs, not on the 9p root: a should_failslab fault that
# lands in the 9p client in the middle of an open leaves the 6.1 guest's
# root failing every later open with EINVAL (a kernel error-path bug that
# this very benchmark ran into), and nothing after that can run.
PROBE_FILE=$WORK/probe-target
echo probe >"$PROBE_FILE"

start_probe() {
    vb_restart_if_stalled
    CLIENT_RC=''
    PROBE_OUT=$WORK/probe.out
    : >"$PROBE_OUT"
    "$FIRST_FAULT" --timeout 600 "$PROBE_FILE" >"$PROBE_OUT" 2>&1 &
    PROBE_PID=$!
    wait_for 30 file_has "$PROBE_OUT" ready
}

# ms with three decimals from a nanosecond difference.
ns_to_ms() { local d=$1; printf '%d.%03d' $((d / 1000000)) $(((d / 1000) % 1000)); }

# The client's exit status (CLIENT_RC, when the tool has a client that
# exits) is recorded with the sample: until 3a60256, injectctl over D-Bus
# reported an injection that fired and ended before its reply as an error.
sample_done() { # TOOL T0_NS [BACKEND]
    local tool=$1 t0=$2 backend=${3:-} rc=0 out
    wait "$PROBE_PID" || rc=$?
    out=$(<"$PROBE_OUT")
    if ((rc == 0)) && [[ $out =~ fault\ ([A-Z0-9?]+)\ ([0-9]+) ]] && ((BASH_REMATCH[2] < t0)); then
        emit "{\"kind\":\"arm\",\"tool\":\"$tool\",\"error\":$(jstr "the probe failed (${BASH_REMATCH[1]}) before the request was made")}"
        log "arm $tool: the probe failed (${BASH_REMATCH[1]}) before the request was made"
    elif ((rc == 0)) && [[ $out =~ fault\ ([A-Z0-9?]+)\ ([0-9]+) ]]; then
        emit "{\"kind\":\"arm\",\"tool\":\"$tool\",\"ms\":$(ns_to_ms $((BASH_REMATCH[2] - t0))),\"errno\":\"${BASH_REMATCH[1]}\",\"backend\":$(jstr "$backend"),\"client_status\":${CLIENT_RC:-null}}"
        log "arm $tool: $(ns_to_ms $((BASH_REMATCH[2] - t0))) ms (${BASH_REMATCH[1]})"
    else
        emit "{\"kind\":\"arm\",\"tool\":\"$tool\",\"error\":$(jstr "no fault (status $rc): $out")}"
        log "arm $tool: no fault (status $rc): $out"
    fi
}

json_backend() { [[ $1 =~ \"backend\":\ *\"([a-z_]+)\" ]] && echo "${BASH_REMATCH[1]}"; }

# injectd through the engine's own CLI: no daemon, no IPC, same engine.
arm_engine() {
    local t0 out id
    start_probe
    t0=$(now_us)000
    CLIENT_RC=0
    out=$("$ENGINE" arm __x64_sys_openat --error ENOENT --pid "$PROBE_PID" --times 1 --for 2min --json \
        2>>"$WORK/client.log") || CLIENT_RC=$?
    sample_done injectd-engine "$t0" "$(json_backend "$out")"
    if id=$(vb_id "$out"); then "$ENGINE" disarm "$id" >/dev/null 2>&1 || true; fi
    wait_for 30 site_gone __x64_sys_openat
}

# injectctl inject, end to end: client start-up, the call, the daemon's
# checks, the program load (cold) or a map write (warm), the first fault.
# arm_injectctl TOOL FUNCTION ERROR [INJECTCTL OPTION...] [-- INJECT OPTION...]
arm_injectctl() {
    local tool=$1 fn=$2 err=$3 t0 out id global=() extra=()
    shift 3
    while (($#)) && [[ $1 != -- ]]; do global+=("$1"); shift; done
    (($#)) && shift
    extra=("$@")
    start_probe
    t0=$(now_us)000
    CLIENT_RC=0
    out=$("$INJECTCTL" "${global[@]}" inject "$fn" --error "$err" --pid "$PROBE_PID" --times 1 --for 2min \
        --detach --json "${extra[@]}" 2>>"$WORK/client.log") || CLIENT_RC=$?
    sample_done "$tool" "$t0" "$(json_backend "$out")"
    if id=$(vb_id "$out"); then vb_cancel "$id"; fi
}

# The same request from a client already connected: the daemon's share.
arm_resident() {
    local tool=$1 fn=$2 err=$3 out t0 id
    start_probe
    out=$(vb Inject "{\"function\":\"$fn\",\"error\":\"$err\",\"scope\":\"process\",\"pid\":$PROBE_PID,\"times\":1,\"duration_usec\":120000000,\"detach\":true}") || true
    [[ $out =~ \"t0_ns\":\ *([0-9]+) ]] && t0=${BASH_REMATCH[1]} || t0=0
    sample_done "$tool" "$t0" "$(json_backend "$out")"
    if id=$(vb_id "$out"); then vb_cancel "$id"; fi
}

arm_bpftrace() {
    local t0 pid
    start_probe
    t0=$(now_us)000
    bpftrace --unsafe -e 'kprobe:__x64_sys_openat /comm == "benchprobe"/ { override(-2) }' >"$WORK/bpftrace.log" 2>&1 &
    pid=$!
    BG_PIDS+=("$pid")
    sample_done bpftrace "$t0" kprobe
    stop_tool "$pid" INT
    ((!STOP_KILLED)) || log "bpftrace did not stop on SIGINT; killed"
}

# BCC's inject cannot fail __x64_sys_openat: it only overrides
# should_failslab (kmalloc), should_fail_bio (bio) and
# should_fail_alloc_page (alloc_page). The nearest fault it can express is
# "kmalloc fails for this pid", which fails the probe's next openat with
# ENOMEM. A call chain ('__x64_sys_openat()') would narrow it further, but
# the program inject generates for a chain's return probe is rejected by
# the 6.1 verifier ("math between map_value pointer and register with
# unbounded min value"), so the predicate alone scopes it.
arm_bcc() {
    local t0 pid
    start_probe
    t0=$(now_us)000
    inject-bpfcc kmalloc -c 1 "(bpf_get_current_pid_tgid() >> 32 == $PROBE_PID)" >"$WORK/bcc.log" 2>&1 &
    pid=$!
    BG_PIDS+=("$pid")
    sample_done bcc-inject-kmalloc "$t0" kprobe
    # inject's main loop polls no buffer and spins, so it may not see a
    # SIGINT for a long while under TCG.
    stop_tool "$pid" KILL 2>/dev/null   # no "Killed" job notice
}

# fail_function: the request is the debugfs writes, in an order where
# nothing fires before the return value is set.
arm_fail_function() {
    local t0
    start_probe
    t0=$(now_us)000
    echo 1 >"/proc/$PROBE_PID/make-it-fail"
    echo Y >"$FF/task-filter"
    echo 0 >"$FF/verbose"
    echo 1 >"$FF/times"
    echo 0 >"$FF/probability"
    echo __x64_sys_openat >"$FF/inject"
    printf '%#x\n' -2 >"$FF/__x64_sys_openat/retval"   # read as unsigned hex
    echo 100 >"$FF/probability"
    sample_done fail_function "$t0" kprobe
    echo 0 >"$FF/probability"
    echo >"$FF/inject"
    echo N >"$FF/task-filter"
}

bench_arm() {
    local r holder hid out
    log "== arm latency: $RUNS runs per tool, interleaved; BCC $BCC_RUNS"
    # The kernel headers BCC compiles against: unpacked once per boot, as
    # BCC itself would on its first run; timed on its own.
    local t0 kh
    kh=/tmp/kheaders-$(uname -r)
    t0=$(now_us)
    mkdir -p "$kh" && tar -xJf /sys/kernel/kheaders.tar.xz -C "$kh"
    emit "{\"kind\":\"arm-setup\",\"what\":\"bcc-kheaders-unpack\",\"ms\":$((($(now_us) - t0) / 1000))}"
    # Page the tools' binaries and libraries in (the root is 9p), so the
    # first sample of each does not also pay for that.
    "$INJECTCTL" --version >/dev/null
    "$ENGINE" --help >/dev/null 2>&1 || true
    bpftrace --version >/dev/null 2>&1 || true

    spawn_holders 1
    holder=${HOLDERS[-1]}
    for ((r = 1; r <= RUNS; r++)); do
        log "-- round $r"
        # Cold: nothing loaded or cached for the function (the policy reload
        # frees the daemon's cache of detached sites), so the request loads
        # and verifies a program. Cached: the same request again, once the
        # first one's site has been detached, within the grace period, so
        # the daemon re-attaches the program it kept.
        flush_sites
        arm_injectctl injectctl-dbus __x64_sys_openat ENOENT
        wait_for 30 site_gone __x64_sys_openat
        arm_injectctl injectctl-dbus-cached __x64_sys_openat ENOENT
        wait_for 30 site_gone __x64_sys_openat
        flush_sites
        arm_injectctl injectctl-varlink __x64_sys_openat ENOENT --varlink
        wait_for 30 site_gone __x64_sys_openat
        arm_injectctl injectctl-varlink-cached __x64_sys_openat ENOENT --varlink
        wait_for 30 site_gone __x64_sys_openat
        flush_sites
        arm_resident varlink-resident __x64_sys_openat ENOENT
        wait_for 30 site_gone __x64_sys_openat
        arm_resident varlink-resident-cached __x64_sys_openat ENOENT
        wait_for 30 site_gone __x64_sys_openat
        flush_sites
        arm_injectctl injectctl-dbus-kprobe __x64_sys_openat ENOENT -- --backend kprobe
        wait_for 30 site_gone __x64_sys_openat
        arm_injectctl injectctl-dbus-kprobe-cached __x64_sys_openat ENOENT -- --backend kprobe
        wait_for 30 site_gone __x64_sys_openat
        flush_sites
        arm_engine
        arm_bpftrace
        arm_fail_function
        flush_sites
        arm_injectctl injectctl-dbus-failslab should_failslab ENOMEM
        wait_for 30 site_gone should_failslab

        # Warm: another injection (another scope) already holds the site,
        # so the request writes map entries and loads nothing.
        out=$(vb_inject __x64_sys_openat "$holder")
        if hid=$(vb_id "$out"); then
            arm_injectctl injectctl-dbus-warm __x64_sys_openat ENOENT
            arm_injectctl injectctl-varlink-warm __x64_sys_openat ENOENT --varlink
            arm_resident varlink-resident-warm __x64_sys_openat ENOENT
            vb_cancel "$hid"
            wait_for 30 site_gone __x64_sys_openat
        else
            log "the warm site's holder injection was refused: $out"
        fi
    done
    for ((r = 1; r <= BCC_RUNS; r++)); do
        log "-- BCC run $r (minutes under TCG)"
        arm_bcc
    done
}

# ================================================================ hot path
#
# syscall-rate pinned to CPU 1 calls getppid in 300 rounds of 1 ms (each
# followed by a control round of getpid, which nothing hooks); each
# configuration is measured once per pass, passes interleave them, and
# report.py takes the 5th percentile of each sample's rounds: under TCG on
# a shared host the vCPU thread is preempted often, noise only ever adds
# time, and short rounds often run untouched (longer ones rarely do). The
# measuring process is never in any injection's scope: the scopes are
# holder processes.

hot_sample() { # CONFIG [EXTRA-JSON-MEMBERS]
    local out
    vb_restart_if_stalled
    out=$("${NEST[@]}" "$SYSCALL_RATE" --cpu 1 --rounds 300 --round-ms 1)
    emit "{\"kind\":\"hot\",\"config\":\"$1\",\"pass\":$PASS,\"result\":$out${2:+,$2}}"
}
# A prefix that runs the measuring process under N more shells, each
# waiting for it ("; exit" keeps bash from exec'ing it in its place): a
# process-scope injection used to walk the caller's whole ancestry on every
# call; now the caller's depth should not matter (a task-storage lookup).
NEST=()
nest() { # N
    local i
    NEST=()
    for ((i = 0; i < $1; i++)); do NEST+=(bash -c '"$@"; exit $?' nest); done
}

# hot_floor kprobe|fmod_ret: the empty program (floor.bpf.c).
hot_floor() {
    local pid name=empty-$1
    : >"$WORK/floor.out"
    "$FLOOR" "$1" "$HOT_FN" >"$WORK/floor.out" 2>&1 &
    pid=$!
    BG_PIDS+=("$pid")
    if wait_for 60 file_has "$WORK/floor.out" attached; then
        hot_sample "$name"
    else
        emit "{\"kind\":\"hot\",\"config\":\"$name\",\"pass\":$PASS,\"error\":$(jstr "$(<"$WORK/floor.out")")}"
    fi
    stop_tool "$pid" TERM
}

hot_bpftrace() {
    local pid
    : >"$WORK/bt.out"
    # BEGIN fires once every probe is attached.
    bpftrace --unsafe -e "kprobe:$HOT_FN /comm == \"nomatch\"/ { override(-1) } BEGIN { printf(\"attached\\n\") }" \
        >"$WORK/bt.out" 2>&1 &
    pid=$!
    BG_PIDS+=("$pid")
    if wait_for 120 file_has "$WORK/bt.out" attached; then
        hot_sample bpftrace-nomatch
    else
        emit "{\"kind\":\"hot\",\"config\":\"bpftrace-nomatch\",\"pass\":$PASS,\"error\":$(jstr "$(<"$WORK/bt.out")")}"
    fi
    stop_tool "$pid" INT
    ((!STOP_KILLED)) || log "bpftrace did not stop on SIGINT; killed"
}

# fail_function armed on the same function, failing every call of tasks
# with make-it-fail set; the measuring process has it clear.
hot_fail_function() {
    local check
    echo Y >"$FF/task-filter"
    echo 0 >"$FF/verbose"
    # -1 (no limit); 6.1 parses the file as unsigned, so as its 32-bit
    # pattern. Calls of tasks the filter excludes never count anyway.
    echo 4294967295 >"$FF/times"
    echo 0 >"$FF/probability"
    echo "$HOT_FN" >"$FF/inject"
    printf '%#x\n' -1 >"$FF/$HOT_FN/retval"   # read as unsigned hex
    echo 100 >"$FF/probability"
    check=$(echo 1 >/proc/self/make-it-fail && exec "$SYSCALL_RATE" --check)
    hot_sample fail_function-taskfilter "\"check\":$(jstr "$check")"
    echo 0 >"$FF/probability"
    echo >"$FF/inject"
    echo N >"$FF/task-filter"
}

# injectd with 1, 10, then 100 injections on the function, each scoped to
# a holder (with 1, also from 4 processes further down the process tree);
# the first holder then calls it to prove the site is live, and
# the counters must show that call and no other (calls_seen counts calls
# from inside a scope: the measuring process never is).
hot_injectd() { # BACKEND
    local backend=$1 check seen
    IDS=()
    spawn_check
    vb_inject_many "$HOT_FN" "$backend" "$CHECK_PID"
    if ((${#IDS[@]} != 1)); then
        emit "{\"kind\":\"hot\",\"config\":\"injectd-$backend-1\",\"pass\":$PASS,\"error\":\"the injection was refused (see the daemon log)\"}"
        release_check
        return 0
    fi
    hot_sample "injectd-$backend-1"
    nest 4
    hot_sample "injectd-$backend-1-deeper"
    nest 0
    vb_inject_many "$HOT_FN" "$backend" "${HOLDERS[@]:0:9}"
    hot_sample "injectd-$backend-10" "\"armed\":${#IDS[@]}"
    vb_inject_many "$HOT_FN" "$backend" "${HOLDERS[@]:9:90}"
    hot_sample "injectd-$backend-100" "\"armed\":${#IDS[@]}"
    release_check
    check=$CHECK
    seen=$(vb ListInjections '{"all":true}' | jq "[.reply.parameters.injections[] | select(.function == \"$HOT_FN\") | .calls_seen] | add")
    emit "{\"kind\":\"hot-check\",\"config\":\"injectd-$backend\",\"pass\":$PASS,\"armed\":${#IDS[@]},\"check\":$(jstr "$check"),\"calls_seen\":${seen:-null}}"
    vb_cancel_many "${IDS[@]}"
    wait_for 30 site_gone "$HOT_FN"
}

# One injection scoped to an empty cgroup: the caller pays one cgroup
# lookup instead of the task-storage lookup of a process scope.
hot_injectd_cgroup() { # BACKEND
    local backend=$1 out id cg=/sys/fs/cgroup/bench-scope
    mkdir -p "$cg"
    out=$(vb Inject "{\"function\":\"$HOT_FN\",\"error\":\"EPERM\",\"scope\":\"cgroup\",\"cgroup\":\"$cg\",\"duration_usec\":1800000000,\"detach\":true,\"backend\":\"$backend\"}")
    if id=$(vb_id "$out"); then
        hot_sample "injectd-$backend-1-cgroup"
        vb_cancel "$id"
        wait_for 30 site_gone "$HOT_FN"
    else
        emit "{\"kind\":\"hot\",\"config\":\"injectd-$backend-1-cgroup\",\"pass\":$PASS,\"error\":$(jstr "$out")}"
    fi
    rmdir "$cg"
}

# Every configuration sits between two measurements with nothing attached;
# report.py sets each against those two, so a host that slows down or
# speeds up during the run shifts numerator and denominator together.
bench_hot() {
    log "== hot path: $HOT_FN, $HOT_PASSES passes"
    ((${#HOLDERS[@]} >= 100)) || spawn_holders $((100 - ${#HOLDERS[@]}))
    for ((PASS = 1; PASS <= HOT_PASSES; PASS++)); do
        log "-- pass $PASS"
        hot_sample none
        hot_floor kprobe
        hot_sample none
        hot_floor fmod_ret
        hot_sample none
        hot_injectd kprobe
        hot_sample none
        hot_injectd fmod_ret
        hot_sample none
        hot_injectd_cgroup kprobe
        hot_sample none
        hot_injectd_cgroup fmod_ret
        hot_sample none
        hot_bpftrace
        hot_sample none
        hot_fail_function
        hot_sample none
    done
}

# ================================================================ sweep
#
# injectctl sweep over the sweep fixture of tests/vm (three eventfd()
# calls, should_failslab failed under __x64_sys_eventfd2): runs per second,
# and the share of each run spent outside the command (arming, disarming,
# reading the counters and the fault's stack). Cold: nothing else on
# should_failslab, so every run loads the program; warm: another injection
# keeps the site loaded.

sweep_once() { # NAME [INJECTCTL OPTIONS...]
    local name=$1 t0 t1 rc=0 summary
    shift
    rm -f "$WORK/sweep.json"
    t0=$(now_us)
    "$INJECTCTL" "$@" sweep --fail should_failslab,caller=__x64_sys_eventfd2 --report "$WORK/sweep.json" \
        -- "$SWEEP_TARGET" 3 >"$WORK/sweep.out" 2>&1 || rc=$?
    t1=$(now_us)
    if summary=$(jq -c '{runs: (.runs | length), stopped, cmd_usec: ([.runs[].duration_usec] | add), fired: ([.runs[] | select(.fired)] | length), problems: (.problems | length)}' "$WORK/sweep.json" 2>/dev/null); then
        emit "{\"kind\":\"sweep\",\"name\":\"$name\",\"status\":$rc,\"wall_usec\":$((t1 - t0)),\"summary\":$summary}"
        log "sweep $name: $summary in $(((t1 - t0) / 1000)) ms"
    else
        emit "{\"kind\":\"sweep\",\"name\":\"$name\",\"status\":$rc,\"error\":$(jstr "$(tail -5 "$WORK/sweep.out")")}"
        log "sweep $name failed: $(tail -5 "$WORK/sweep.out")"
    fi
}

bench_sweep() {
    local i t0 out hid
    log "== sweep"
    if ! "$INJECTCTL" sweep --help >/dev/null 2>&1 || [[ ! -x $SWEEP_TARGET ]]; then
        emit "{\"kind\":\"sweep\",\"name\":\"unavailable\",\"error\":\"sweep: not available (injectctl sweep or tests/vm/sweep-target is missing in this build)\"}"
        log "sweep: not available"
        return 0
    fi
    # The fixture alone, for scale.
    for i in 1 2 3; do
        t0=$(now_us)
        "$SWEEP_TARGET" 3 >/dev/null 2>&1 || true
        emit "{\"kind\":\"sweep-bare\",\"usec\":$(($(now_us) - t0))}"
    done
    # Cold: nothing cached when the sweep starts; its first run loads the
    # program, the later ones re-attach it (the daemon's site cache).
    flush_sites
    sweep_once dbus-cold
    wait_for 30 site_gone should_failslab
    flush_sites
    sweep_once varlink-cold --varlink
    wait_for 30 site_gone should_failslab
    ((${#HOLDERS[@]})) || spawn_holders 1
    out=$(vb_inject should_failslab "${HOLDERS[0]}")
    hid=$(vb_id "$out") || true
    sweep_once dbus-warm
    if [[ -n $hid ]]; then vb_cancel "$hid"; fi
    wait_for 30 site_gone should_failslab
}

# ================================================================ footprint

clk_tck=$(getconf CLK_TCK)
daemon_ticks() { local s; s=$(<"/proc/$INJECTD_PID/stat"); s=${s##*) }; read -ra f <<<"$s"; echo $((f[11] + f[12])); }
daemon_mem() { # prints "RSS_KB HWM_KB"
    local k v rss=0 hwm=0
    while read -r k v _; do
        case $k in VmRSS:) rss=$v ;; VmHWM:) hwm=$v ;; esac
    done <"/proc/$INJECTD_PID/status"
    echo "$rss $hwm"
}

# fp_emit STATE TICKS0 USEC0 [EXTRA]: the daemon's CPU since TICKS0 and
# USEC0, and its memory now.
fp_emit() {
    local ticks1 usec1 mem
    ticks1=$(daemon_ticks)
    usec1=$(now_us)
    read -r -a mem <<<"$(daemon_mem)"
    emit "{\"kind\":\"footprint\",\"state\":\"$1\",\"cpu_ticks\":$((ticks1 - $2)),\"clk_tck\":$clk_tck,\"window_usec\":$((usec1 - $3)),\"rss_kb\":${mem[0]},\"hwm_kb\":${mem[1]}${4:+,$4}}"
    log "footprint $1: rss ${mem[0]} kB, $((ticks1 - $2)) ticks in $(((usec1 - $3) / 1000)) ms"
}
fp_idle() { # STATE SECS
    local t u
    t=$(daemon_ticks) u=$(now_us)
    sleep "$2"
    fp_emit "$1" "$t" "$u"
}

# One client loop of the mix: inject, list, cancel through injectctl
# (a new process per command, as a test script would), until DEADLINE.
mix_loop() { # OUTFILE DEADLINE_US HOLDER [--varlink]
    local out=$1 deadline=$2 holder=$3 n=0 j id
    shift 3
    while (($(now_us) < deadline)); do
        j=$("$INJECTCTL" "$@" inject "$HOT_FN" --error EPERM --pid "$holder" --for 10min --detach --json \
            2>>"$WORK/client.log") || break
        id=$(vb_id "$j") || break
        "$INJECTCTL" "$@" list --json >/dev/null 2>>"$WORK/client.log" || break
        "$INJECTCTL" "$@" cancel "$id" 2>>"$WORK/client.log" || break
        n=$((n + 1))
    done
    echo "$n" >"$out"
}

bench_footprint() {
    local i t u deadline pids=() c
    log "== daemon footprint"
    ((${#HOLDERS[@]} >= 104)) || spawn_holders $((104 - ${#HOLDERS[@]}))
    fp_idle idle 10

    IDS=()
    t=$(now_us)
    vb_inject_many "$HOT_FN" auto "${HOLDERS[@]:0:100}"
    emit "{\"kind\":\"footprint-arm\",\"armed\":${#IDS[@]},\"usec\":$(($(now_us) - t))}"
    fp_idle armed-100 10

    # The client mix, with the 100 still armed: two injectctl loops over
    # D-Bus, one over Varlink, and one resident Varlink client cycling as
    # fast as one connection goes.
    t=$(daemon_ticks) u=$(now_us)
    deadline=$((u + MIX_SECS * 1000000))
    mix_loop "$WORK/mix.0" "$deadline" "${HOLDERS[100]}" & pids+=($!)
    mix_loop "$WORK/mix.1" "$deadline" "${HOLDERS[101]}" & pids+=($!)
    mix_loop "$WORK/mix.2" "$deadline" "${HOLDERS[102]}" --varlink & pids+=($!)
    python3 "$VBATCH" --cycle "$MIX_SECS" "$SOCKET" "$HOT_FN" "${HOLDERS[103]}" >"$WORK/mix.3" 2>>"$WORK/vb.err" & pids+=($!)
    wait "${pids[@]}" || true
    for i in 0 1 2 3; do c[i]=$(cat "$WORK/mix.$i" 2>/dev/null || echo 0); done
    fp_emit mix "$t" "$u" "\"cycles\":{\"injectctl-dbus\":$((c[0] + c[1])),\"injectctl-varlink\":${c[2]},\"varlink-resident\":${c[3]}}"

    vb_cancel_many "${IDS[@]}"
    wait_for 30 site_gone "$HOT_FN"
    fp_idle after-cancel 5
}

# ================================================================ main

: >"$RAW"
meta
start_daemon
want hot && bench_hot
want arm && bench_arm
want sweep && bench_sweep
want footprint && bench_footprint
# The daemon's own record of trouble, if any.
grep -iE 'error|warn' "$WORK/injectd.log" | tail -20 | while IFS= read -r l; do
    emit "{\"kind\":\"daemon-log\",\"line\":$(jstr "$l")}"
done
log "done"
