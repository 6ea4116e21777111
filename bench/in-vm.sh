#!/bin/bash
# bench/in-vm.sh OUT_DIR [OPTIONS] - every measurement of issue 15's
# targets, inside the test VM.
#
# bench/run boots the VM once and runs this as root; it appends one JSON
# object per measurement to OUT_DIR/raw.jsonl (a share that reaches the
# host), and bench/report.py turns those into ratios, intervals, verdicts
# and bench/results.json. Nothing here judges a figure: this only measures.
#
# Options (bench/run passes them through):
#   --only LIST        comma-separated groups (default: all, in this order):
#                      hot (target 6), first (1), fresh (3), repeat (2),
#                      scale (5), fork (7), threads (4), sweep (8),
#                      clients (9)
#   --rounds N         paired rounds of every arm-latency target (default 15)
#   --hot-rounds N     paired rounds of the hot path (default 12)
#   --list-rounds N    paired rounds of ListInjections 256 against 1 and of
#                      fork+exit (default 8)
#   --threads N        idle threads of target 4 (default 10000)
#   --sweep-steps N    steps of each sweep (default 1000)
#   --sweep-chunk N    steps per paired round of the sweep (default 100)
#   --clients N        concurrent `injectctl run` clients (default 1000)
#
# The method (docs/performance.md, "Method"): every target is a ratio of a
# thing to its baseline, both measured back to back in each round (their
# order alternates between rounds), one ratio per round; report.py takes
# the median and a distribution-free 95% interval over the rounds.
#
# As deployed: dbus-daemon and polkitd run, polkit's rule (policy/
# 50-injectd.rules) grants alice (group injectd), and every request is
# alice's, from a systemd-like session cgroup three levels deep
# (/sys/fs/cgroup/user.slice/user-UID.slice/session-1.scope). Only the
# limits are raised (more injections, connections and no rate limit; a
# JSON rule letting alice hold thousands), since the targets arm hundreds.
set -euo pipefail

[[ ${INJECTD_IN_VM:-0} == 1 ]] || { echo "bench/in-vm.sh runs inside the test VM: use bench/run" >&2; exit 2; }
(($# >= 1)) || { echo "usage: bench/in-vm.sh OUT_DIR [OPTIONS]" >&2; exit 2; }
OUT=$1
shift
ALL_GROUPS=hot,first,fresh,repeat,scale,fork,threads,sweep,clients
ONLY=$ALL_GROUPS ROUNDS=15 HOT_ROUNDS=12 LIST_ROUNDS=8 THREADS=10000 SWEEP_STEPS=1000 SWEEP_CHUNK=100 CLIENTS=1000
while (($#)); do
    (($# >= 2)) || { echo "bench/in-vm.sh: '$1' needs a value" >&2; exit 2; }
    case $1 in
        --only) ONLY=$2 ;;
        --rounds) ROUNDS=$2 ;;
        --hot-rounds) HOT_ROUNDS=$2 ;;
        --list-rounds) LIST_ROUNDS=$2 ;;
        --threads) THREADS=$2 ;;
        --sweep-steps) SWEEP_STEPS=$2 ;;
        --sweep-chunk) SWEEP_CHUNK=$2 ;;
        --clients) CLIENTS=$2 ;;
        *) echo "bench/in-vm.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift 2
done

SRC_DIR=${SRC_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD_DIR=${BUILD_DIR:-$SRC_DIR/build}
INJECTD=$BUILD_DIR/src/daemon/injectd
SOCKET=/run/injectd/org.injectd.Injector
FF=/sys/kernel/debug/fail_function
POLKITD=/usr/lib/polkit-1/polkitd
# The cheap syscall of the hot path. __x64_sys_getppid is not on the 6.1
# kernel's error-injection list; __do_sys_getppid, the function it calls
# (the same address here), is, with type ERRNO.
HOT_FN=__do_sys_getppid
RAW=$OUT/raw.jsonl
WORK=$(mktemp -d /tmp/bench.XXXXXX)
chmod 0755 "$WORK"

# The clients run as alice and bob: copies on tmpfs that they can surely
# execute (the build tree's permissions are the host's), and which a
# thousand concurrent starts read from memory rather than over 9p.
BIN=$WORK/bin
mkdir -p "$BIN"
for f in src/client/injectctl bench/first-fault bench/syscall-rate bench/bench-floor bench/fork-rate \
         tests/vm/idle-threads bench/sweep-steps; do
    install -m 0755 "$BUILD_DIR/$f" "$BIN/"
done
install -m 0755 "$SRC_DIR/bench/varlink-batch.py" "$BIN/"
INJECTCTL=$BIN/injectctl FIRST_FAULT=$BIN/first-fault SYSCALL_RATE=$BIN/syscall-rate FLOOR=$BIN/bench-floor
FORK_RATE=$BIN/fork-rate IDLE_THREADS=$BIN/idle-threads SWEEP_STEPS_BIN=$BIN/sweep-steps VBATCH=$BIN/varlink-batch.py

log() { printf 'bench: [%4ds] %s\n' "$SECONDS" "$*" >&2; }
want() { [[ ,$ONLY, == *,$1,* ]]; }
emit() { printf '%s\n' "$1" >>"$RAW"; }
# A JSON string from text we produced (errno names, tool names, messages).
jstr() {
    local s=${1//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/ }
    s=${s//$'\t'/ }
    printf '"%s"' "$s"
}
now_us() { echo "${EPOCHREALTIME/./}"; }
ns_to_ms() { local d=$1; printf '%d.%03d' $((d / 1000000)) $(((d / 1000) % 1000)); }

# sample TARGET ROUND SERIES VALUE [EXTRA-JSON-MEMBERS]: one measurement of
# one side of a round's pair. fail TARGET ROUND SERIES WHY: one that could
# not be taken (report.py drops the round's pair and says why).
sample() { emit "{\"kind\":\"sample\",\"target\":\"$1\",\"round\":$2,\"series\":\"$3\",\"value\":$4${5:+,$5}}"; }
fail() {
    emit "{\"kind\":\"sample\",\"target\":\"$1\",\"round\":$2,\"series\":\"$3\",\"error\":$(jstr "$4")}"
    log "$1 round $2 $3: FAILED: $4"
}

# ---------------------------------------------------------------- cleanup

BG_PIDS=()
cleanup() {
    set +e
    mkdir -p "$OUT/logs" && cp "$WORK"/*.log "$WORK"/*.err "$OUT/logs/" 2>/dev/null
    [[ -d $FF ]] && { echo 0 >"$FF/probability"; echo >"$FF/inject"; } 2>/dev/null
    ((${#BG_PIDS[@]})) && kill -KILL "${BG_PIDS[@]}" 2>/dev/null
    [[ -n ${INJECTD_PID:-} ]] && kill "$INJECTD_PID" 2>/dev/null && wait "$INJECTD_PID" 2>/dev/null
    [[ -n ${POLKITD_PID:-} ]] && kill "$POLKITD_PID" 2>/dev/null
    [[ -n ${DBUS_PID:-} ]] && kill "$DBUS_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# wait_for SECS CMD...: poll CMD every 50 ms, at most SECS seconds.
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
# (and say so). Not in $(...): only this shell can reap.
stop_tool() {
    local pid=$1 sig=$2 i st
    kill "-$sig" "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    for ((i = 0; i < 100; i++)); do
        { IFS= read -r st <"/proc/$pid/stat"; } 2>/dev/null || break
        st=${st##*) }
        [[ ${st:0:1} == Z ]] && break
        sleep 0.1
    done
    if ((i == 100)); then
        kill -KILL "$pid" 2>/dev/null || true
        log "pid $pid did not stop on SIG$sig; killed"
    fi
    wait "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------- the world

ALICE=alice BOB=bob
# cg_of USER SCOPE: a systemd-like cgroup of USER, made if missing.
cg_of() {
    local uid cg
    uid=$(id -u "$1")
    cg=/sys/fs/cgroup/user.slice/user-$uid.slice/$2
    mkdir -p "$cg"
    echo "$cg"
}

setup_world() {
    install -m 0644 "$SRC_DIR/policy/org.injectd.policy" /usr/share/polkit-1/actions/
    install -m 0644 "$SRC_DIR/policy/50-injectd.rules" /usr/share/polkit-1/rules.d/
    install -m 0644 "$SRC_DIR/policy/org.injectd.Injector1.conf" /usr/share/dbus-1/system.d/
    getent group injectd >/dev/null || groupadd --system injectd
    id -u "$ALICE" >/dev/null 2>&1 || useradd -m -s /bin/bash "$ALICE"
    id -u "$BOB" >/dev/null 2>&1 || useradd -m -s /bin/bash "$BOB"
    usermod -a -G injectd "$ALICE"
    # The default policy's rules, with room for the hundreds of injections
    # the targets arm (the default's max-active is 16) and EIO, the error
    # of the first-request probes.
    mkdir -p /etc/injectd/policy.d
    rm -f /etc/injectd/policy.d/*
    cat >/etc/injectd/policy.d/50-bench.json <<'EOF'
{
  "rules": [
    {
      "name": "bench-syscalls",
      "description": "bench/in-vm.sh: alice (group injectd) may fail system calls of her own processes and cgroups, thousands at once.",
      "groups": ["injectd"],
      "functions": ["__x64_sys_*", "__do_sys_*", "should_failslab"],
      "errors": ["ENOENT", "EACCES", "EPERM", "EIO", "ENOMEM", "EINTR", "EAGAIN", "ENOSPC", "EBADF", "EINVAL", "EMFILE"],
      "scopes": ["cgroup", "process"],
      "max-duration": "2h",
      "max-active": 8192
    }
  ]
}
EOF
    ALICE_CG=$(cg_of "$ALICE" session-1.scope)
    BOB_CG=$(cg_of "$BOB" session-2.scope)
    # A cgroup alice owns, as systemd delegates one to her user manager:
    # the cgroup scope of the hot path's nested-cgroup case.
    ALICE_OWN_CG=$(cg_of "$ALICE" "user@$(id -u "$ALICE").service/app.slice/bench.scope")
    chown -R "$ALICE:$ALICE" "/sys/fs/cgroup/user.slice/user-$(id -u "$ALICE").slice/user@$(id -u "$ALICE").service"
    # bob's nested caller in a cgroup five levels deep (another session
    # than his tagged one: a cgroup with processes of its own has none
    # below it, as under systemd).
    NESTED_CG=$(cg_of "$BOB" session-3.scope/nested/deeper)

    # Target 4 adds 10,000 threads and target 9 thousands of processes.
    local tm
    tm=$(</proc/sys/kernel/threads-max)
    ((tm >= 40000)) || echo 40000 >/proc/sys/kernel/threads-max

    mkdir -p /run/dbus
    DBUS_PID=$(dbus-daemon --system --fork --print-pid)
    "$POLKITD" --no-debug >>"$WORK/polkitd.log" 2>&1 &
    POLKITD_PID=$!
    wait_for 120 name_has_owner org.freedesktop.PolicyKit1 || { log "polkitd did not take its name"; return 1; }
}
name_has_owner() {
    [[ $(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
        NameHasOwner s "$1" 2>/dev/null) == "b true" ]]
}

# The daemon as deployed but for its limits; --log-level=debug gives each
# arm's phases (load, verify, attach, tag) in its log.
DAEMON_ARGS=(--log-target=stderr --log-level=debug --rate=0 --max-active=4096 --max-per-function=4096
             --max-connections=4096 --max-connections-per-user=4096)
start_daemon() {
    ulimit -n 16384
    "$INJECTD" "${DAEMON_ARGS[@]}" >>"$WORK/injectd.log" 2>&1 &
    INJECTD_PID=$!
    wait_for 120 test -S "$SOCKET" || { log "injectd made no socket"; return 1; }
    wait_for 120 name_has_owner org.injectd.Injector1 || { log "injectd did not take its bus name"; return 1; }
}

# as USER CGROUP CMD...: CMD as USER (its groups, no capabilities) in CGROUP.
as_user() {
    local user=$1 cg=$2
    shift 2
    echo "$BASHPID" >"$cg/cgroup.procs"
    exec setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all -- "$@"
}

# ---------------------------------------------------------------- resident Varlink clients
#
# varlink-batch.py, started once per user and kept connected: vcall WHO
# METHOD PARAMS sends a call on WHO's connection (root or alice) and sets
# VLINE to the reply line {"t0_ns", "t1_ns", "reply"}. A reply that does
# not come within VB_TIMEOUT seconds is a daemon stall: it is recorded, a
# new client is started, and the call fails.
VB_TIMEOUT=300
declare -A VIN VOUT VPID
vstart() { # WHO
    local who=$1 in=$WORK/v-$1.in out=$WORK/v-$1.out fd
    rm -f "$in" "$out"
    mkfifo -m 0666 "$in" "$out"
    if [[ $who == root ]]; then
        python3 "$VBATCH" "$SOCKET" <"$in" >"$out" 2>>"$WORK/vb-$who.err" &
    else
        (as_user "$who" "$ALICE_CG" python3 "$VBATCH" "$SOCKET") <"$in" >"$out" 2>>"$WORK/vb-$who.err" &
    fi
    VPID[$who]=$!
    BG_PIDS+=($!)
    exec {fd}>"$in"
    VIN[$who]=$fd
    exec {fd}<"$out"
    VOUT[$who]=$fd
}
vread() { # WHO: one reply line into VLINE
    local rc=0
    IFS= read -r -t "$VB_TIMEOUT" VLINE <&"${VOUT[$1]}" || rc=$?
    ((rc == 0)) && return 0
    if ((rc > 128)); then
        vstalled "$1"
    else
        log "$1's Varlink client ended ($(tail -1 "$WORK/vb-$1.err" 2>/dev/null)); a new one"
        vrestart "$1"
    fi
    return 1
}
vcall() { # WHO METHOD PARAMS
    printf '{"method":"org.injectd.Injector.%s","parameters":%s}\n' "$2" "$3" >&"${VIN[$1]}"
    vread "$1"
}
vid() { [[ $1 =~ \"id\":\ *\"([0-9a-f]+)\" ]] && echo "${BASH_REMATCH[1]}"; }
vbackend() { [[ $1 =~ \"backend\":\ *\"([a-z_]+)\" ]] && echo "${BASH_REMATCH[1]}"; }
vstalled() {
    local who=$1 d=/proc/$INJECTD_PID
    log "no reply from injectd within ${VB_TIMEOUT}s on $who's Varlink connection; a new one"
    emit "{\"kind\":\"daemon-stall\",\"who\":\"$who\",\"daemon_state\":$(jstr "$(cut -d' ' -f3 "$d/stat" 2>/dev/null)"),\"wchan\":$(jstr "$(cat "$d/wchan" 2>/dev/null)"),\"stack\":$(jstr "$(cat "$d/stack" 2>/dev/null)"),\"log_tail\":$(jstr "$(tail -20 "$WORK/injectd.log")")}"
    vrestart "$who"
}
vrestart() { # WHO
    local who=$1 a=${VIN[$1]} b=${VOUT[$1]}
    kill -KILL "${VPID[$who]}" 2>/dev/null || true
    wait "${VPID[$who]}" 2>/dev/null || true
    exec {a}>&- {b}<&-
    vstart "$who"
}
# vinject WHO FUNCTION ERROR PID [EXTRA-MEMBERS]: a process-scope injection.
vinject() {
    vcall "$1" Inject "{\"function\":\"$2\",\"error\":\"$3\",\"scope\":\"process\",\"pid\":$4,\"duration_usec\":3600000000,\"detach\":true${5:+,$5}}"
}
vcancel() { [[ -n $2 ]] && vcall "$1" Cancel "{\"id\":\"$2\"}" || true; }
# vinject_many WHO FUNCTION PID...: one injection per PID, all written
# before the replies are read; appends the new ids to IDS.
vinject_many() {
    local who=$1 fn=$2 p
    shift 2
    for p; do
        printf '{"method":"org.injectd.Injector.Inject","parameters":{"function":"%s","error":"EPERM","scope":"process","pid":%d,"duration_usec":3600000000,"detach":true}}\n' \
            "$fn" "$p" >&"${VIN[$who]}"
    done
    for p; do
        vread "$who" || return 0
        if [[ $VLINE =~ \"id\":\ *\"([0-9a-f]+)\" ]]; then IDS+=("${BASH_REMATCH[1]}"); else log "Inject $fn for pid $p: ${VLINE:0:300}"; fi
    done
}
vcancel_many() { # WHO ID...
    local who=$1 id
    shift
    for id; do printf '{"method":"org.injectd.Injector.Cancel","parameters":{"id":"%s"}}\n' "$id" >&"${VIN[$who]}"; done
    for id; do vread "$who" || return 0; done
}
# ENGINE: the engine's statistics (GetCapabilities .engine), one JSON
# object or null. Not in $(...): a client started again after a failure
# must be this shell's.
engine_stats() {
    ENGINE=null
    vcall root GetCapabilities '{}' || return 0
    ENGINE=$(jq -c '.reply.parameters | (.engine // .capabilities.engine // null)' <<<"$VLINE" 2>/dev/null) || ENGINE=null
}
# The phases of one arm from the daemon's debug log ("Armed ID on 'F'
# (BACKEND) in T us: load L us, verify V us (N instructions), attach A
# us, tag G us"), as "phases":{...} members in ms; nothing if not found.
phases_of() { # ID
    local id=$1 line k out=''
    while [[ $id == 0?* ]]; do id=${id#0}; done
    line=$(grep -E "Armed 0*$id " "$WORK/injectd.log" | tail -1) || return 0
    [[ $line =~ \ in\ ([0-9]+)\ us ]] && out+="\"total_ms\":$(ns_to_ms $((BASH_REMATCH[1] * 1000)))"
    for k in load verify attach tag; do
        [[ $line =~ $k\ ([0-9]+)\ us ]] && out+="${out:+,}\"${k}_ms\":$(ns_to_ms $((BASH_REMATCH[1] * 1000)))"
    done
    [[ $line =~ \(([0-9]+)\ instructions\) ]] && out+="${out:+,}\"verified_insns\":${BASH_REMATCH[1]}"
    [[ $line =~ \(([a-z_]+)\)\ in ]] && out+="${out:+,}\"backend\":\"${BASH_REMATCH[1]}\""
    [[ -n $out ]] && printf ',"phases":{%s}' "$out"
    return 0
}
# ---------------------------------------------------------------- runners
#
# A runner is a bash of a user, in a cgroup, that runs the command lines it
# is given one after the other: the user's shell from which the benchmark
# starts clients, so that they are that user's processes in that cgroup
# (and, for bob's tagged runner, descendants of a tagged process). Its
# state (variables, background jobs) lasts between commands.
# runner_do NAME SECS CMDLINE: run CMDLINE; RUN_OUT is its stdout, RUN_RC
# its status; fails (and records why) when it takes longer than SECS.
declare -A RIN ROUT RPID RDIR
runner_start() { # NAME USER CGROUP
    local name=$1 user=$2 cg=$3 fd d=$WORK/run-$1
    mkdir -p "$d"
    chown "$user:$user" "$d"
    mkfifo "$d.in" "$d.out"
    (as_user "$user" "$cg" bash -c 'd=$1; while IFS= read -r l; do eval "$l" </dev/null >"$d/out" 2>>"$d/err"; echo "@@done $?"; done' runner "$d") \
        <"$d.in" >"$d.out" &
    RPID[$name]=$!
    BG_PIDS+=($!)
    RDIR[$name]=$d
    exec {fd}>"$d.in"
    RIN[$name]=$fd
    exec {fd}<"$d.out"
    ROUT[$name]=$fd
}
runner_do() {
    local name=$1 secs=$2 line
    printf '%s\n' "$3" >&"${RIN[$name]}"
    if ! IFS= read -r -t "$secs" line <&"${ROUT[$name]}"; then
        log "runner $name: no answer within ${secs}s to: ${3:0:200}"
        RUN_RC=124 RUN_OUT=''
        return 1
    fi
    RUN_RC=${line#@@done }
    RUN_OUT=$(cat "${RDIR[$name]}/out" 2>/dev/null)
}

# Holders: processes that only exist to be an injection's scope, children
# of a runner (so alice's own), blocked reading a pipe. They never call
# the functions measured here. holders NAME N: N more; HOLDERS_<NAME> lists them.
declare -a HOLDERS_alice=()
holders() {
    local name=$1 n=$2
    runner_do "$name" 600 "[[ -p \$d/hold.fifo ]] || mkfifo \"\$d/hold.fifo\"; exec 9<>\"\$d/hold.fifo\"; for ((i = 0; i < $n; i++)); do (read -r _ <&9) & echo \$!; done" ||
        return 1
    local -n arr=HOLDERS_$name
    mapfile -t -O "${#arr[@]}" arr <<<"$RUN_OUT"
}

# ---------------------------------------------------------------- probes

# start_probe [FIRST-FAULT OPTION...]: the arm-latency probe, as alice in
# her session cgroup; sets PROBE_PID. It fails the sample after 120 s.
start_probe() {
    PROBE_OUT=$WORK/probe.out
    : >"$PROBE_OUT"
    (as_user "$ALICE" "$ALICE_CG" "$FIRST_FAULT" --timeout 120 "$@") >"$PROBE_OUT" 2>&1 &
    PROBE_PID=$!
    wait_for 60 file_has "$PROBE_OUT" ready
}
# probe_ms T0_NS: waits for the probe; PROBE_MS is the time from T0_NS to
# its first fault, or PROBE_ERR says why there is none.
probe_ms() {
    local t0=$1 rc=0 out
    PROBE_MS='' PROBE_ERR=''
    wait "$PROBE_PID" || rc=$?
    out=$(<"$PROBE_OUT")
    if ((rc == 0)) && [[ $out =~ fault\ ([A-Z0-9?]+)\ ([0-9]+) ]]; then
        if ((BASH_REMATCH[2] < t0)); then
            PROBE_ERR="the probe failed (${BASH_REMATCH[1]}) before the request was made"
        else
            PROBE_MS=$(ns_to_ms $((BASH_REMATCH[2] - t0)))
        fi
    else
        PROBE_ERR="no fault (status $rc): ${out:0:200}"
    fi
}
# arm_resident TARGET ROUND SERIES FUNCTION ERROR [PROBE OPTION...]: alice's
# connected client arms FUNCTION for a new probe; the time from the call
# leaving to the probe's first fault is the sample, with the arm's phases.
arm_resident() {
    local target=$1 round=$2 series=$3 fn=$4 err=$5 t0 id
    shift 5
    start_probe "$@" || { fail "$target" "$round" "$series" "the probe did not start"; return 0; }
    if ! vinject alice "$fn" "$err" "$PROBE_PID" '"times":1'; then
        stop_tool "$PROBE_PID" KILL
        fail "$target" "$round" "$series" "no reply to Inject"
        return 0
    fi
    [[ $VLINE =~ \"t0_ns\":\ *([0-9]+) ]] && t0=${BASH_REMATCH[1]} || t0=0
    id=$(vid "$VLINE") || true
    if [[ -z $id ]]; then
        stop_tool "$PROBE_PID" KILL
        fail "$target" "$round" "$series" "Inject refused: ${VLINE:0:300}"
        return 0
    fi
    probe_ms "$t0"
    # With ARM_STATS set, also the engine's record of this arm (the last
    # one), which has what the log line lacks (tag_tasks: the tasks its
    # tagging visited, where the engine counts them).
    local last=''
    if [[ -n ${ARM_STATS:-} ]]; then
        engine_stats
        last=",\"last_arm\":$(jq -c '.last_arm // null' <<<"$ENGINE" 2>/dev/null || echo null)"
    fi
    if [[ -n $PROBE_MS ]]; then
        sample "$target" "$round" "$series" "$PROBE_MS" "\"function\":\"$fn\"$(phases_of "$id")$last"
        log "$target round $round $series: $PROBE_MS ms"
    else
        fail "$target" "$round" "$series" "$PROBE_ERR"
    fi
    vcancel alice "$id" >/dev/null
}

# fail_function's arm: the debugfs writes, in an order where nothing fires
# before the return value is set, then the probe's first fault.
#
# injectd's site of a function stays attached for a few seconds after its
# last injection ends (--site-linger). fail_function's kprobe on the same
# function beside it, gone again, and then the lingering site detached,
# crashed the 6.1 test kernel: a NULL pointer in kprobe_dispatcher under
# aggr_pre_handler (docs/kernel-support.md, "Two kprobes on one function").
# So fail_function arms a function only once injectd has let go of it;
# the wait is before the clock starts.
injectd_site_gone() { ! compgen -G "/sys/fs/bpf/injectd/sites/*-$1" >/dev/null; }
arm_fail_function() { # TARGET ROUND FUNCTION ERRNO-VALUE [PROBE OPTION...]
    local target=$1 round=$2 fn=$3 ev=$4 t0
    shift 4
    wait_for 120 injectd_site_gone "$fn" ||
        { fail "$target" "$round" fail_function "injectd's site of $fn stayed attached"; return 0; }
    start_probe "$@" || { fail "$target" "$round" fail_function "the probe did not start"; return 0; }
    t0=$(now_us)000
    echo 1 >"/proc/$PROBE_PID/make-it-fail"
    echo Y >"$FF/task-filter"
    echo 0 >"$FF/verbose"
    echo 1 >"$FF/times"
    echo 0 >"$FF/probability"
    echo "$fn" >"$FF/inject"
    printf '%#x\n' "$ev" >"$FF/$fn/retval"   # read as unsigned hex
    echo 100 >"$FF/probability"
    probe_ms "$t0"
    echo 0 >"$FF/probability"
    echo >"$FF/inject"
    echo N >"$FF/task-filter"
    if [[ -n $PROBE_MS ]]; then
        sample "$target" "$round" fail_function "$PROBE_MS" "\"function\":\"$fn\""
        log "$target round $round fail_function: $PROBE_MS ms"
    else
        fail "$target" "$round" fail_function "$PROBE_ERR"
    fi
}

# ---------------------------------------------------------------- functions never armed
#
# Targets 1 and 3 time the first request on a function never armed before,
# in every round: each round takes a system call of its own that the probe
# can make harmlessly with the arguments (-1, 0, 0, ...) (first-fault
# --syscall), failed with EIO, which none of them returns by itself. None
# is called by the probe otherwise (read, write, openat, nanosleep, exit
# are not here). NAME:NR, x86_64.
FRESH_CANDIDATES=(
    dup:32 dup2:33 dup3:292 fsync:74 fdatasync:75 fchdir:81 ftruncate:77 fchmod:91 fchown:93 flock:73
    getdents64:217 fstatfs:138 syncfs:306 fadvise64:221 readahead:187 fgetxattr:193 flistxattr:196
    fremovexattr:199 fsetxattr:190 getsid:124 getpgid:121 getpriority:140 sched_getscheduler:145
    sched_getparam:143 sched_get_priority_max:146 sched_get_priority_min:147 sched_rr_get_interval:148
    sched_getaffinity:204 getrlimit:97 getrusage:98 sysinfo:99 times:100 newuname:63 getcwd:79
    getitimer:36 getresuid:118 getresgid:120 getgroups:115 capget:125 pipe:22 pipe2:293 socket:41
    socketpair:53 epoll_create:213 epoll_create1:291 inotify_init1:294 timerfd_create:283
    memfd_create:319 userfaultfd:323 getpeername:52 getsockname:51 shutdown:48 listen:50 accept:43
    connect:42 bind:49 getsockopt:55 setsockopt:54 fcntl:72 chdir:80 access:21 newstat:4 newlstat:6
    statfs:137 readlink:89 chmod:90 mkdir:83 rmdir:84 unlink:87 truncate:76 mknod:133 creat:85
)
FRESH=()    # "FUNCTION NR", in order of use
declare -A LISTED   # the kernel's error-injection list
fresh_setup() {
    local c fn _
    while read -r fn _; do LISTED[$fn]=1; done </sys/kernel/debug/error_injection/list
    ((${#LISTED[@]})) || log "the error-injection list is empty: no function for the first-request targets"
    for c in "${FRESH_CANDIDATES[@]}"; do
        [[ -n ${LISTED[__x64_sys_${c%%:*}]:-} ]] && FRESH+=("__x64_sys_${c%%:*} ${c##*:}")
    done
    FRESH_NEXT=0
    log "${#FRESH[@]} functions for first requests"
}
# next_fresh: sets FRESH_FN and FRESH_NR to a function not armed yet.
next_fresh() {
    ((FRESH_NEXT < ${#FRESH[@]})) || return 1
    read -r FRESH_FN FRESH_NR <<<"${FRESH[FRESH_NEXT]}"
    FRESH_NEXT=$((FRESH_NEXT + 1))
}

# Functions that nothing in the VM calls during the run, for sites that
# must only be attached (targets 5, 6, 7): held by injections scoped to
# holders, which never call them.
RARE_CANDIDATES=(acct adjtimex chroot delete_module finit_module init_module kexec_load mount umount
    pivot_root swapon swapoff sethostname setdomainname quotactl settimeofday clock_settime clock_adjtime
    iopl ioperm modify_ldt sched_setparam sched_setscheduler mlockall munlockall vhangup sysfs ustat
    setns unshare mq_open mq_unlink msgget semget shmget add_key request_key keyctl fanotify_init
    name_to_handle_at open_by_handle_at pkey_alloc pkey_free migrate_pages move_pages mbind
    set_mempolicy get_mempolicy io_setup io_destroy lookup_dcookie remap_file_pages)
RARE=()
rare_setup() {
    local c
    for c in "${RARE_CANDIDATES[@]}"; do
        [[ -n ${LISTED[__x64_sys_$c]:-} ]] && RARE+=("__x64_sys_$c")
    done
    log "${#RARE[@]} rarely called functions for held sites"
}

# ---------------------------------------------------------------- meta

meta() {
    local bt
    bt=$(bpftrace --version 2>/dev/null | head -1) || bt=missing
    emit "{\"kind\":\"meta\",\"kernel\":$(jstr "$(uname -r)"),\"vcpus\":$(nproc),\"mem_kib\":$(awk '/MemTotal/ {print $2}' /proc/meminfo),\"bpftrace\":$(jstr "$bt"),\"hot_function\":\"$HOT_FN\",\"rounds\":$ROUNDS,\"hot_rounds\":$HOT_ROUNDS,\"list_rounds\":$LIST_ROUNDS,\"threads\":$THREADS,\"sweep_steps\":$SWEEP_STEPS,\"sweep_chunk\":$SWEEP_CHUNK,\"clients\":$CLIENTS,\"daemon_args\":$(jstr "${DAEMON_ARGS[*]}"),\"alice_cgroup\":$(jstr "${ALICE_CG#/sys/fs/cgroup}"),\"nested_cgroup\":$(jstr "${NESTED_CG#/sys/fs/cgroup}")}"
}

# first_in ROUND: 0 or 1, alternating, for which side of a pair goes first.
first_in() { echo $(($1 % 2)); }

# ================================================================ target 1
#
# A connected client's first request on a function never armed, against
# fail_function's arm of the same function, in each round: request to the
# probe's first fault (EIO) for both. A first request before the rounds
# (not counted) lets the daemon load whatever it loads once per lifetime.
bench_first() {
    local r
    log "== target 1: first request on a never-armed function vs fail_function, $ROUNDS rounds"
    if next_fresh; then
        arm_resident t1-warmup 0 injectd "$FRESH_FN" EIO --syscall "$FRESH_NR" --errno EIO
    fi
    for ((r = 1; r <= ROUNDS; r++)); do
        next_fresh || { fail t1 "$r" injectd "no function left that was never armed"; break; }
        log "t1 first request: round $r of $ROUNDS ($FRESH_FN)"
        if (($(first_in "$r"))); then
            arm_resident t1 "$r" injectd "$FRESH_FN" EIO --syscall "$FRESH_NR" --errno EIO
            arm_fail_function t1 "$r" "$FRESH_FN" -5 --syscall "$FRESH_NR" --errno EIO
        else
            arm_fail_function t1 "$r" "$FRESH_FN" -5 --syscall "$FRESH_NR" --errno EIO
            arm_resident t1 "$r" injectd "$FRESH_FN" EIO --syscall "$FRESH_NR" --errno EIO
        fi
    done
}

# ================================================================ target 3
#
# (a) A fresh `injectctl --varlink inject ... --detach` on a warm site
# (another injection holds it), against `injectctl --version`: the wall
# time of each command, started by alice's shell (the runner), which
# times it. (b) A fresh `injectctl inject` (default transport) as the first
# request on a function never armed, against bpftrace on another function
# never armed: request to first fault.
fresh_client() { # TARGET ROUND SERIES CMDLINE: time CMDLINE in alice's shell
    local target=$1 round=$2 series=$3
    if ! runner_do alice 300 "t0=\$EPOCHREALTIME; $4 >\"\$d/j\"; rc=\$?; t1=\$EPOCHREALTIME; echo \"\${t0/./} \${t1/./} \$rc\"; cat \"\$d/j\""; then
        fail "$target" "$round" "$series" "no answer within 300 s"
        return 1
    fi
    read -r FC_T0 FC_T1 FC_RC <<<"${RUN_OUT%%$'\n'*}"
    FC_JSON=${RUN_OUT#*$'\n'}
    [[ $RUN_OUT == *$'\n'* ]] || FC_JSON=''
    [[ $FC_RC == 0 ]] || { fail "$target" "$round" "$series" "status $FC_RC: ${FC_JSON:0:200} $(tail -2 "${RDIR[alice]}/err")"; return 1; }
}

bench_fresh() {
    local r hid id s
    log "== target 3a: fresh injectctl --varlink warm request vs injectctl --version, $ROUNDS rounds"
    ((${#HOLDERS_alice[@]} >= 2)) || holders alice 2
    vinject root __x64_sys_openat EPERM "${HOLDERS_alice[0]}"
    hid=$(vid "$VLINE") || { log "t3a: the warm site's holder was refused: ${VLINE:0:300}"; hid=''; }
    "$INJECTCTL" --version >/dev/null   # page it in
    for ((r = 1; r <= ROUNDS; r++)); do
        log "t3a fresh client: round $r of $ROUNDS"
        local order=(version inject)
        (($(first_in "$r"))) || order=(inject version)
        for s in "${order[@]}"; do
            if [[ $s == version ]]; then
                fresh_client t3a "$r" version "\"$INJECTCTL\" --version" || continue
                sample t3a "$r" version "$(ns_to_ms $(((FC_T1 - FC_T0) * 1000)))"
                log "t3a round $r version: $(ns_to_ms $(((FC_T1 - FC_T0) * 1000))) ms"
            else
                fresh_client t3a "$r" inject "\"$INJECTCTL\" --varlink inject __x64_sys_openat --error EPERM --pid ${HOLDERS_alice[1]} --for 10min --detach --json" || continue
                id=$(vid "$FC_JSON") || true
                sample t3a "$r" inject "$(ns_to_ms $(((FC_T1 - FC_T0) * 1000)))" "\"id\":\"$id\"$(phases_of "$id")"
                log "t3a round $r inject: $(ns_to_ms $(((FC_T1 - FC_T0) * 1000))) ms"
                vcancel root "$id" >/dev/null
            fi
        done
    done
    vcancel root "$hid" >/dev/null

    log "== target 3b: fresh injectctl first request vs bpftrace, $ROUNDS rounds"
    for ((r = 1; r <= ROUNDS; r++)); do
        log "t3b fresh first request vs bpftrace: round $r of $ROUNDS"
        local order=(injectctl bpftrace)
        (($(first_in "$r"))) || order=(bpftrace injectctl)
        for s in "${order[@]}"; do
            next_fresh || { fail t3b "$r" "$s" "no function left that was never armed"; continue; }
            if [[ $s == bpftrace ]]; then
                arm_bpftrace t3b "$r" "$FRESH_FN" "$FRESH_NR"
            else
                start_probe --syscall "$FRESH_NR" --errno EIO || { fail t3b "$r" injectctl "the probe did not start"; continue; }
                if fresh_client t3b "$r" injectctl "\"$INJECTCTL\" inject $FRESH_FN --error EIO --pid $PROBE_PID --times 1 --for 2min --detach --json"; then
                    probe_ms "${FC_T0}000"
                    id=$(vid "$FC_JSON") || true
                    if [[ -n $PROBE_MS ]]; then
                        sample t3b "$r" injectctl "$PROBE_MS" "\"function\":\"$FRESH_FN\",\"id\":\"$id\"$(phases_of "$id")"
                        log "t3b round $r injectctl: $PROBE_MS ms"
                    else
                        fail t3b "$r" injectctl "$PROBE_ERR"
                    fi
                    vcancel root "$id" >/dev/null
                else
                    stop_tool "$PROBE_PID" KILL
                fi
            fi
        done
    done
}

# bpftrace as root, failing FUNCTION for the probe by its comm, from the
# start of the command to the probe's first fault.
arm_bpftrace() { # TARGET ROUND FUNCTION NR
    local t0 pid
    start_probe --syscall "$4" --errno EIO || { fail "$1" "$2" bpftrace "the probe did not start"; return 0; }
    t0=$(now_us)000
    bpftrace --unsafe -e "kprobe:$3 /comm == \"benchprobe\"/ { override(-5) }" >"$WORK/bpftrace.log" 2>&1 &
    pid=$!
    BG_PIDS+=("$pid")
    probe_ms "$t0"
    stop_tool "$pid" INT
    if [[ -n $PROBE_MS ]]; then
        sample "$1" "$2" bpftrace "$PROBE_MS" "\"function\":\"$3\""
        log "$1 round $2 bpftrace: $PROBE_MS ms"
    else
        fail "$1" "$2" bpftrace "$PROBE_ERR $(tail -3 "$WORK/bpftrace.log")"
    fi
}

# ================================================================ target 2
#
# A repeat request on a recently used function (its last injection was
# cancelled just before) against a warm one (another injection holds the
# site), both from alice's connected client, on __x64_sys_openat.
bench_repeat() {
    local r hid
    log "== target 2: repeat request on a recently used function vs a warm one, $ROUNDS rounds"
    ((${#HOLDERS_alice[@]} >= 1)) || holders alice 1
    # Used once, so the first round's repeat is a repeat too.
    arm_resident t2-warmup 0 repeat __x64_sys_openat ENOENT
    for ((r = 1; r <= ROUNDS; r++)); do
        log "t2 repeat request: round $r of $ROUNDS"
        if (($(first_in "$r"))); then
            arm_resident t2 "$r" repeat __x64_sys_openat ENOENT
            t2_warm "$r"
        else
            t2_warm "$r"
            # The warm sample's injections ended just now: used recently.
            arm_resident t2 "$r" repeat __x64_sys_openat ENOENT
        fi
    done
}
t2_warm() {
    local hid
    vinject root __x64_sys_openat EPERM "${HOLDERS_alice[0]}"
    hid=$(vid "$VLINE") || { fail t2 "$1" warm "the holder injection was refused: ${VLINE:0:300}"; return 0; }
    arm_resident t2 "$1" warm __x64_sys_openat ENOENT
    vcancel root "$hid" >/dev/null
}

# ================================================================ target 5
#
# (a) ListInjections from alice's connected client with 256 of her
# injections armed, against 1 (the median of 5 calls each side). (b) An
# arm on a warm site with 32 sites attached, against 1 attached. Each
# round measures one state, switches, measures the other: one switch per
# round, and the order alternates with it.
LIST_FN=__x64_sys_openat
bench_scale() {
    local r state=1 i ids=() hid one
    log "== target 5a: ListInjections with 256 armed vs 1, $LIST_ROUNDS rounds"
    ((${#HOLDERS_alice[@]} >= 256)) || holders alice $((256 - ${#HOLDERS_alice[@]}))
    IDS=()
    vinject_many alice "$LIST_FN" "${HOLDERS_alice[0]}"
    one=("${IDS[@]}")
    ((${#one[@]} == 1)) || { fail t5a 0 one "the first injection was refused"; return 0; }
    for ((r = 1; r <= LIST_ROUNDS; r++)); do
        log "t5a ListInjections: round $r of $LIST_ROUNDS"
        t5a_list "$r" "$state"
        if ((state == 1)); then
            IDS=()
            vinject_many alice "$LIST_FN" "${HOLDERS_alice[@]:1:255}"
            ids=("${IDS[@]}")
            state=256
            ((${#ids[@]} == 255)) || log "t5a: only ${#ids[@]} of 255 injections armed"
        else
            vcancel_many alice "${ids[@]}"
            ids=()
            state=1
        fi
        t5a_list "$r" "$state"
    done
    ((${#ids[@]})) && vcancel_many alice "${ids[@]}"
    vcancel_many alice "${one[@]}"

    log "== target 5b: an arm with 32 sites attached vs 1, $ROUNDS rounds"
    ((${#RARE[@]} >= 31)) || { fail t5b 0 arm32 "only ${#RARE[@]} functions to hold 31 other sites on"; return 0; }
    vinject root __x64_sys_openat EPERM "${HOLDERS_alice[0]}"
    hid=$(vid "$VLINE") || { fail t5b 0 arm1 "the holder injection was refused: ${VLINE:0:300}"; return 0; }
    state=1 ids=()
    for ((r = 1; r <= ROUNDS; r++)); do
        log "t5b arm with 32 sites: round $r of $ROUNDS"
        arm_resident t5b "$r" "arm$state" __x64_sys_openat ENOENT
        if ((state == 1)); then
            IDS=()
            for ((i = 0; i < 31; i++)); do
                vinject root "${RARE[i]}" EPERM "${HOLDERS_alice[0]}" && id=$(vid "$VLINE") && IDS+=("$id")
            done
            ids=("${IDS[@]}")
            ((${#ids[@]} == 31)) || log "t5b: only ${#ids[@]} of 31 other sites armed"
            state=32
        else
            vcancel_many root "${ids[@]}"
            ids=()
            state=1
        fi
        arm_resident t5b "$r" "arm$state" __x64_sys_openat ENOENT
    done
    ((${#ids[@]})) && vcancel_many root "${ids[@]}"
    vcancel root "$hid" >/dev/null
}
t5a_list() { # ROUND STATE: 5 calls, each a sample
    local k
    for ((k = 0; k < 5; k++)); do
        if vcall alice ListInjections '{}' && [[ $VLINE =~ \"t0_ns\":\ *([0-9]+).*\"t1_ns\":\ *([0-9]+) ]]; then
            sample t5a "$1" "list$2" "$(ns_to_ms $((BASH_REMATCH[2] - BASH_REMATCH[1])))" \
                "\"listed\":$(jq '.reply.parameters.injections | length' <<<"$VLINE")"
        else
            fail t5a "$1" "list$2" "ListInjections failed: ${VLINE:0:200}"
        fi
    done
}

# ================================================================ target 6
#
# The hot path: getppid() from bob's processes while alice has an
# injection on __do_sys_getppid. (a) The caller carries a tag of another
# user's scope: root armed a process scope (on another function) whose
# root is bob's shell, the caller's parent. (b) The caller sits in
# bob's cgroup five levels deep, while alice's injection is scoped to a
# cgroup of hers. Each against the empty program of the backend injectd
# used, with no-program samples around them in the same round.
#
# syscall-rate pinned to CPU 1 calls getppid in 300 rounds of 1 ms (each
# followed by a control round of getpid); report.py takes the 5th
# percentile of each sample's rounds: under TCG on a shared host the vCPU
# thread is preempted often, noise only ever adds time, and short rounds
# often run untouched.
hot_sample() { # RUNNER ROUND SERIES
    if runner_do "$1" 300 "\"$SYSCALL_RATE\" --cpu 1 --rounds 300 --round-ms 1"; then
        if [[ $RUN_RC == 0 && $RUN_OUT == '{'* ]]; then
            sample t6 "$2" "$3" null "\"result\":$RUN_OUT"
            return 0
        fi
    fi
    fail t6 "$2" "$3" "syscall-rate: status $RUN_RC ${RUN_OUT:0:200}"
}
# The no-program and empty-program samples need __do_sys_getppid without
# injectd's program on it. After each cancel of alice's injection there,
# its site lingers attached for a few seconds (--site-linger), and the
# program runs on every call: in the run of 2026-12-05, which did not
# wait, it added about 550 ns to every no-program sample, and the floor ran
# beside it on one aggregated kprobe. So those samples wait for it to go.
hot_unarmed() { # ROUND SERIES
    wait_for 120 injectd_site_gone "$HOT_FN" && return 0
    fail t6 "$1" "$2" "injectd's site of $HOT_FN stayed attached"
    return 1
}
hot_none() { # ROUND
    hot_unarmed "$1" none && hot_sample nested "$1" none
    return 0
}
hot_floor() { # ROUND BACKEND
    local pid
    hot_unarmed "$1" floor || return 0
    : >"$WORK/floor.out"
    "$FLOOR" "$2" "$HOT_FN" >"$WORK/floor.out" 2>&1 &
    pid=$!
    BG_PIDS+=("$pid")
    if wait_for 120 file_has "$WORK/floor.out" attached; then
        hot_sample nested "$1" floor
    else
        fail t6 "$1" floor "bench-floor: $(<"$WORK/floor.out")"
    fi
    stop_tool "$pid" TERM
}
bench_hot() {
    local r tagid id backend
    log "== target 6: hot path, tagged and nested callers vs the empty program, $HOT_ROUNDS rounds"
    ((${#HOLDERS_alice[@]} >= 1)) || holders alice 1
    ((${#RARE[@]})) || { fail t6 0 tagged "no function to hold the tag's injection on"; return 0; }
    runner_start tagged "$BOB" "$BOB_CG"
    runner_start nested "$BOB" "$NESTED_CG"
    # The tag: root's process scope rooted at bob's tagged runner.
    vinject root "${RARE[0]}" EPERM "${RPID[tagged]}"
    tagid=$(vid "$VLINE") || { fail t6 0 tagged "the tagging injection was refused: ${VLINE:0:300}"; return 0; }
    # Which backend alice's injection gets, for the floor to match.
    vinject alice "$HOT_FN" EPERM "${HOLDERS_alice[0]}"
    backend=$(vbackend "$VLINE") || backend=kprobe
    vcancel alice "$(vid "$VLINE")" >/dev/null
    emit "{\"kind\":\"hot-setup\",\"backend\":\"$backend\",\"tag_function\":\"${RARE[0]}\"}"
    for ((r = 1; r <= HOT_ROUNDS; r++)); do
        log "t6 hot path: round $r of $HOT_ROUNDS ($backend)"
        hot_none "$r"
        hot_floor "$r" "$backend"
        hot_none "$r"
        # (a) process scope on alice's holder; bob's tagged caller.
        vinject alice "$HOT_FN" EPERM "${HOLDERS_alice[0]}"
        if id=$(vid "$VLINE"); then
            hot_sample tagged "$r" tagged
            vcancel alice "$id" >/dev/null
        else
            fail t6 "$r" tagged "Inject refused: ${VLINE:0:300}"
        fi
        # (b) cgroup scope on alice's own cgroup; bob's nested caller.
        vcall alice Inject "{\"function\":\"$HOT_FN\",\"error\":\"EPERM\",\"scope\":\"cgroup\",\"cgroup\":\"$ALICE_OWN_CG\",\"duration_usec\":3600000000,\"detach\":true}"
        if id=$(vid "$VLINE"); then
            hot_sample nested "$r" nested
            vcancel alice "$id" >/dev/null
        else
            fail t6 "$r" nested "Inject refused: ${VLINE:0:300}"
        fi
        hot_none "$r"
    done
    vcancel root "$tagid" >/dev/null
}

# ================================================================ target 7
#
# fork+exit rate of bob's nested caller (outside every scope) with a
# process scope armed (alice's, on another function), against none armed.
fork_sample() { # ROUND SERIES
    if runner_do nested 300 "\"$FORK_RATE\" --cpu 1 --rounds 40 --forks 10" && [[ $RUN_RC == 0 && $RUN_OUT == '{'* ]]; then
        sample t7 "$1" "$2" null "\"result\":$RUN_OUT"
    else
        fail t7 "$1" "$2" "fork-rate: status $RUN_RC ${RUN_OUT:0:200}"
    fi
}
bench_fork() {
    local r state=without id=''
    log "== target 7: fork+exit with a process scope armed vs without, $LIST_ROUNDS rounds"
    ((${#HOLDERS_alice[@]} >= 1)) || holders alice 1
    [[ -n ${RPID[nested]:-} ]] || runner_start nested "$BOB" "$NESTED_CG"
    for ((r = 1; r <= LIST_ROUNDS; r++)); do
        log "t7 fork+exit: round $r of $LIST_ROUNDS"
        fork_sample "$r" "$state"
        if [[ $state == without ]]; then
            vinject alice "${RARE[1]:-$LIST_FN}" EPERM "${HOLDERS_alice[0]}"
            id=$(vid "$VLINE") || { fail t7 "$r" with "Inject refused: ${VLINE:0:300}"; continue; }
            state=with
        else
            vcancel alice "$id" >/dev/null
            id='' state=without
        fi
        fork_sample "$r" "$state"
    done
    vcancel alice "$id" >/dev/null
}

# ================================================================ target 4
#
# A process-scope arm (alice's connected client, a warm site, a new probe
# as the scope's root) with THREADS idle threads of another process on the
# machine, against none. One switch per round: the threads are started or
# stopped between the two samples.
threads_up() {
    local t0
    t0=$(now_us)
    : >"$WORK/threads.out"
    "$IDLE_THREADS" "$THREADS" >"$WORK/threads.out" 2>&1 &
    THREADS_PID=$!
    BG_PIDS+=($!)
    if ! wait_for 900 file_has "$WORK/threads.out" ready; then
        emit "{\"kind\":\"threads\",\"error\":$(jstr "idle-threads $THREADS: $(<"$WORK/threads.out")")}"
        stop_tool "$THREADS_PID" KILL
        THREADS_PID=''
        return 1
    fi
    emit "{\"kind\":\"threads\",\"what\":\"start\",\"threads\":$THREADS,\"ms\":$((($(now_us) - t0) / 1000)),\"tasks\":\"$(cut -d' ' -f4 /proc/loadavg)\"}"
}
threads_down() {
    local t0
    [[ -n ${THREADS_PID:-} ]] || return 0
    t0=$(now_us)
    stop_tool "$THREADS_PID" TERM
    THREADS_PID=''
    emit "{\"kind\":\"threads\",\"what\":\"stop\",\"ms\":$((($(now_us) - t0) / 1000))}"
}
bench_threads() {
    local r state=without hid
    log "== target 4: process-scope arm with $THREADS idle threads vs without, $ROUNDS rounds"
    ((${#HOLDERS_alice[@]} >= 1)) || holders alice 1
    vinject root __x64_sys_openat EPERM "${HOLDERS_alice[0]}"
    hid=$(vid "$VLINE") || { fail t4 0 with "the holder injection was refused: ${VLINE:0:300}"; return 0; }
    local ARM_STATS=1
    for ((r = 1; r <= ROUNDS; r++)); do
        log "t4 arm with $THREADS threads: round $r of $ROUNDS"
        arm_resident t4 "$r" "$state" __x64_sys_openat ENOENT
        if [[ $state == without ]]; then
            threads_up || { fail t4 "$r" with "the idle threads did not start"; break; }
            state=with
        else
            threads_down
            state=without
        fi
        arm_resident t4 "$r" "$state" __x64_sys_openat ENOENT
    done
    threads_down
    vcancel root "$hid" >/dev/null
}

# ================================================================ target 8
#
# injectctl sweep over sweep-steps (SWEEP_STEPS eventfd() calls a run,
# each failure handled and the rest made anyway, so every run costs the
# same), failing __x64_sys_eventfd2 with EMFILE, as alice. The steps are
# cut into chunks of SWEEP_CHUNK runs (--max), cold and warm in turn: cold
# with nothing else on the function (the first cold chunk after the sites
# are flushed, so it loads what a first sweep loads), warm with another
# injection holding the site. A chunk's seconds per run is its sample.
sweep_chunk() { # ROUND SERIES
    local r=$1 s=$2 e0 e1 summary
    engine_stats
    e0=$ENGINE
    rm -f "$WORK/run-alice/sweep.json"
    if ! runner_do alice 1100 "t0=\$EPOCHREALTIME; \"$INJECTCTL\" sweep --max $SWEEP_CHUNK --fail __x64_sys_eventfd2:EMFILE --report \"\$d/sweep.json\" -- \"$SWEEP_STEPS_BIN\" $SWEEP_STEPS >/dev/null 2>\"\$d/sweep.err\"; rc=\$?; t1=\$EPOCHREALTIME; echo \"\${t0/./} \${t1/./} \$rc\""; then
        fail t8 "$r" "$s" "the sweep did not end within 1100 s"
        return 0
    fi
    engine_stats
    e1=$ENGINE
    read -r FC_T0 FC_T1 FC_RC <<<"$RUN_OUT"
    if summary=$(jq -c '{runs: (.runs | length), stopped, fired: ([.runs[] | select(.fired)] | length), problems: (.problems | length), cmd_usec: ([.runs[].duration_usec] | add)}' "$WORK/run-alice/sweep.json" 2>/dev/null) &&
        [[ $(jq .runs <<<"$summary") -gt 0 ]]; then
        local runs wall
        runs=$(jq .runs <<<"$summary")
        wall=$((FC_T1 - FC_T0))
        sample t8 "$r" "$s" "$(ns_to_ms $((wall * 1000 / runs)))" "\"status\":$FC_RC,\"wall_ms\":$((wall / 1000)),\"summary\":$summary,\"engine_before\":$e0,\"engine_after\":$e1"
        log "t8 round $r $s: $runs runs in $((wall / 1000)) ms"
    else
        fail t8 "$r" "$s" "status $FC_RC, no report: $(tail -3 "$WORK/run-alice/err" "$WORK/run-alice/sweep.err" 2>/dev/null)"
    fi
}
bench_sweep() {
    local r rounds hid='' order
    rounds=$(((SWEEP_STEPS + SWEEP_CHUNK - 1) / SWEEP_CHUNK))
    log "== target 8: a $SWEEP_STEPS-step sweep, cold vs warm, $rounds rounds of $SWEEP_CHUNK steps"
    ((${#HOLDERS_alice[@]} >= 1)) || holders alice 1
    vcall root ReloadPolicy '{}' >/dev/null || true   # frees the daemon's cached sites
    for ((r = 1; r <= rounds; r++)); do
        log "t8 sweep: round $r of $rounds"
        order=(cold warm)
        (($(first_in "$r"))) || order=(warm cold)
        for s in "${order[@]}"; do
            if [[ $s == warm ]]; then
                vinject root __x64_sys_eventfd2 EPERM "${HOLDERS_alice[0]}"
                hid=$(vid "$VLINE") || { fail t8 "$r" warm "the holder injection was refused: ${VLINE:0:300}"; continue; }
                sweep_chunk "$r" warm
                vcancel root "$hid" >/dev/null
            else
                sweep_chunk "$r" cold
            fi
        done
    done
}

# ================================================================ target 9
#
# CLIENTS concurrent `injectctl --varlink run --fail __do_sys_getppid:EPERM
# -- first-fault --hold ...` started at once by alice's shell. Each client
# arms, starts its command, which says "ready" and waits; once all are
# ready (or none became ready for 10 minutes) each is released (SIGUSR1),
# makes getppid() calls until one fails with EPERM, and exits 0: the
# client then exits 0. A client that exits otherwise was not served; one
# that has not exited 20 minutes after the release was lost (killed). The
# daemon's CPU time (utime + stime) over the whole is divided by the
# clients.
clk_tck=$(getconf CLK_TCK)
# Empty when the daemon is gone.
daemon_ticks() { local s f; s=$(<"/proc/$INJECTD_PID/stat") || return 0; s=${s##*) }; read -ra f <<<"$s"; echo $((f[11] + f[12])); }
daemon_rss() { awk '/^VmRSS/ {r=$2} /^VmHWM/ {h=$2} END {print r, h}' "/proc/$INJECTD_PID/status" 2>/dev/null; }
mem_avail() { awk '/MemAvailable/ {print $2}' /proc/meminfo; }
# What the machine and the daemon were doing when arms stopped coming.
clients_stuck() { # N READY
    local dp=/proc/$INJECTD_PID
    log "t9: arms stopped at $2 of $1; recording the state"
    emit "{\"kind\":\"clients-stuck\",\"clients\":$1,\"ready\":$2,\"daemon_state\":$(jstr "$(cut -d' ' -f3 "$dp/stat" 2>/dev/null)"),\"wchan\":$(jstr "$(cat "$dp/wchan" 2>/dev/null)"),\"stack\":$(jstr "$(cat "$dp/stack" 2>/dev/null)"),\"daemon_fds\":$(find "$dp/fd" -mindepth 1 2>/dev/null | wc -l),\"daemon_fd_limit\":$(jstr "$(grep 'open files' "$dp/limits")"),\"alice_injectctl\":$(pgrep -c -u "$ALICE" -x injectctl || true),\"alice_probes\":$(pgrep -c -u "$ALICE" -x benchprobe || true),\"alice_tasks\":$(pgrep -c -u "$ALICE" || true),\"mem_available_kib\":$(mem_avail),\"polkitd_alive\":$(kill -0 "$POLKITD_PID" 2>/dev/null && echo true || echo false),\"client_err_sample\":$(jstr "$(cat "${RDIR[alice]}"/c.*.err 2>/dev/null | grep -vE "^ *$|^FUNCTION +MATCHED|^$HOT_FN " | sort | uniq -c | sort -rn | head -5)"),\"dmesg\":$(jstr "$(dmesg | tail -8)"),\"log_tail\":$(jstr "$(grep -v 'Armed\|event=' "$WORK/injectd.log" | tail -8)")}"
}
bench_clients() {
    local n=$CLIENTS d t0 f line rss hwm ticks0 ticks1 e0 e1 ready=0 last=-1 since i minmem served=0 failed=0 lost=0 tarm trel tdone reasons
    log "== target 9: $n concurrent injectctl run clients"
    d=${RDIR[alice]}
    rm -f "$d"/c.*
    engine_stats
    e0=$ENGINE
    ticks0=$(daemon_ticks)
    minmem=$(mem_avail)
    t0=$(now_us)
    runner_do alice 900 "CL=(); for ((i = 0; i < $n; i++)); do \"$INJECTCTL\" --varlink run --fail $HOT_FN:EPERM --for 1h -- \"$FIRST_FAULT\" --hold --timeout 1800 --interval-us 20000 --syscall 110 --errno EPERM >\"\$d/c.\$i.out\" 2>\"\$d/c.\$i.err\" & CL+=(\$!); done; echo \${#CL[@]}" ||
        { emit "{\"kind\":\"clients\",\"error\":\"the clients could not all be started within 900 s\"}"; }
    log "t9: $RUN_OUT clients started in $((($(now_us) - t0) / 1000)) ms"
    # Until every one is ready, or none more for 2 minutes (arms come
    # every few seconds at worst under TCG).
    since=$SECONDS
    while ((ready < n && SECONDS - since < 120)); do
        sleep 5
        ready=$(cat "$d"/c.*.out 2>/dev/null | grep -c '^ready' || true)
        local m
        m=$(mem_avail)
        ((m < minmem)) && minmem=$m
        if ((ready != last)); then
            last=$ready since=$SECONDS
            log "t9: $ready of $n clients armed and ready"
            emit "{\"kind\":\"progress\",\"target\":\"t9\",\"ready\":$ready}"
        fi
        # Every client still running is ready: the others gave up.
        (($(pgrep -c -u "$ALICE" -x injectctl || true) <= ready)) && break
    done
    tarm=$(($(now_us) - t0))
    ((ready == n)) || clients_stuck "$n" "$ready"
    # Release every ready one, then wait until those and their clients
    # have exited (at most 5 minutes); the rest never armed.
    local rel=() p alive
    for f in "$d"/c.*.out; do
        line=''
        { IFS= read -r line <"$f"; } 2>/dev/null || true
        if [[ $line =~ ^ready\ ([0-9]+) ]]; then
            p=${BASH_REMATCH[1]}
            # Its client too (the probe's parent), which ends the run after it.
            { read -r _ _ _ pp _ <"/proc/$p/stat" && rel+=("$pp"); } 2>/dev/null || true
            kill -USR1 "$p" 2>/dev/null || true
            rel+=("$p")
        fi
    done
    since=$SECONDS
    while ((SECONDS - since < 300)); do
        alive=0
        for p in "${rel[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
        ((alive == 0)) && break
        emit "{\"kind\":\"progress\",\"target\":\"t9\",\"running\":$alive}"
        sleep 3
    done
    trel=$(($(now_us) - t0 - tarm))
    # Those still running are lost (released) or never armed: kill them so
    # the runner's wait returns.
    for i in $(pgrep -u "$ALICE" -x injectctl || true) $(pgrep -u "$ALICE" -x benchprobe || true); do
        kill -KILL "$i" 2>/dev/null || true
    done
    runner_do alice 600 "for i in \${!CL[@]}; do wait \${CL[i]}; echo \"\$i \$?\"; done" || true
    ticks1=$(daemon_ticks)
    engine_stats
    e1=$ENGINE
    tdone=$(($(now_us) - t0))
    local not_armed=0
    while read -r i rc; do
        [[ -n $i ]] || continue
        if ((rc == 0)); then
            served=$((served + 1))
        elif ((rc == 137)) && ! grep -q '^ready' "$d/c.$i.out" 2>/dev/null; then
            not_armed=$((not_armed + 1))
        elif ((rc == 137)); then
            lost=$((lost + 1))
        else
            failed=$((failed + 1))
        fi
    done <<<"$RUN_OUT"
    # What the clients said other than run's summary (its header and row).
    reasons=$(cat "$d"/c.*.err 2>/dev/null | grep -vE "^ *$|^FUNCTION +MATCHED|^$HOT_FN " | sed 's/[0-9a-f]\{16\}/ID/g; s/[0-9]\+/N/g' | sort | uniq -c | sort -rn | head -8) || true
    read -r rss hwm <<<"$(daemon_rss)"
    local cpu=null gone=false died=''
    [[ -n $ticks1 ]] && cpu=$((ticks1 - ticks0))
    if ! kill -0 "$INJECTD_PID" 2>/dev/null; then
        # How it ended: its exit status (137: SIGKILL), and what the
        # kernel said of it (the OOM killer's line, a segfault).
        gone=true
        local st=0
        wait "$INJECTD_PID" 2>/dev/null || st=$?
        died="exit status $st; kernel: $( (dmesg | grep -E "injectd|Out of memory" | tail -3 | tr '\n' ' ') || true)"
        log "t9: injectd is gone ($died)"
    fi
    emit "{\"kind\":\"clients\",\"daemon_died\":$(jstr "$died"),\"clients\":$n,\"ready\":$ready,\"served\":$served,\"failed\":$failed,\"not_armed\":$not_armed,\"lost\":$lost,\"arm_all_ms\":$((tarm / 1000)),\"release_ms\":$((trel / 1000)),\"total_ms\":$((tdone / 1000)),\"daemon_cpu_ticks\":$cpu,\"clk_tck\":$clk_tck,\"daemon_rss_kib\":${rss:-null},\"daemon_hwm_kib\":${hwm:-null},\"daemon_gone\":$gone,\"min_mem_available_kib\":$minmem,\"mem_total_kib\":$(awk '/MemTotal/ {print $2}' /proc/meminfo),\"engine_before\":$e0,\"engine_after\":$e1,\"client_errors\":$(jstr "$reasons")}"
    log "t9: $served served, $failed failed, $not_armed never armed, $lost lost of $n; daemon CPU $cpu ticks"
    rm -f "$d"/c.*
}

# ================================================================ main

: >"$RAW"
setup_world
start_daemon
meta
vstart root
vstart alice
runner_start alice "$ALICE" "$ALICE_CG"
fresh_setup
rare_setup
holders alice 2
# Page the tools in (the root is 9p), so no first sample pays for that.
"$INJECTCTL" --version >/dev/null
bpftrace --version >/dev/null 2>&1 || true
"$FIRST_FAULT" --timeout 1 /nonexistent >/dev/null 2>&1 || true

# A group that fails part-way is recorded and the next one runs: the
# groups call each step's status themselves (set -e does not apply in a
# function called from an || list), and a step that failed is a failed
# sample with its reason.
for g in ${ONLY//,/ }; do
    case ,$ALL_GROUPS, in
        *,$g,*)
            rc=0
            "bench_$g" || rc=$?
            if ((rc != 0)); then
                emit "{\"kind\":\"group-failed\",\"group\":\"$g\",\"status\":$rc}"
                log "group $g failed (status $rc)"
            fi
            ;;
        *) log "unknown group '$g' (groups: $ALL_GROUPS)" ;;
    esac
done
# The daemon's own record of trouble, if any.
grep -iE 'error|warn' "$WORK/injectd.log" | tail -20 | while IFS= read -r l; do
    emit "{\"kind\":\"daemon-log\",\"line\":$(jstr "$l")}"
done
log "done"
