# shellcheck shell=bash
# tests/vm/lib.sh - shared helpers for the VM scenarios (tests/vm/test-*.sh).
#
# A scenario runs as root INSIDE the test VM (tests/vm/run, see its header)
# and starts with
#
#     . "$(dirname "$0")/lib.sh"
#
# then does its work with the helpers below, registers its own cleanups with
# `at_exit`, and ends with `finish`: that runs the cleanups, proves nothing
# was left behind (check_clean) and prints "PASS <name>". A scenario that
# stops anywhere else, through `fail` or a failing command (set -e), prints
# "FAIL <name>" with the reason and the line, after running its cleanups.
#
# Variables: SRC_DIR, BUILD_DIR (from the environment meson passes, else
# derived), ENGINE (the engine's CLI test tool), TEST_NAME.
# Knobs: INJECTD_CLEAN_FORBIDDEN (see check_clean); INJECTD_VM_ALLOW_HOST=1
# lets a scenario run outside the VM (for debugging lib.sh itself only).
set -euo pipefail
set -E # the ERR trap also fires inside functions

TEST_NAME=$(basename "$0" .sh)
TEST_NAME=${TEST_NAME#test-}

if [[ ${INJECTD_IN_VM:-0} != 1 && ${INJECTD_VM_ALLOW_HOST:-0} != 1 ]]; then
    echo "$TEST_NAME: runs inside the test VM: tests/vm/run -- $0" >&2
    exit 2
fi

SRC_DIR=${SRC_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
if [[ -z ${BUILD_DIR:-} ]]; then
    # meson runs tests from the build directory.
    if [[ -d $PWD/meson-private ]]; then BUILD_DIR=$PWD; else BUILD_DIR=$SRC_DIR/build; fi
fi
ENGINE=$BUILD_DIR/src/engine/injectd-engine
export SRC_DIR BUILD_DIR ENGINE

# State shared with subshells: helpers are often called as $(helper), and a
# subshell cannot change the scenario's variables.
_state=$(mktemp -d /run/injectd-vmtest.XXXXXX)

# ---------------------------------------------------------------- sanitizers

# In a build with -Db_sanitize=address,undefined (docs/sanitizers.md) every
# sanitizer report fails the scenario, whichever process made it: the
# daemon, whose exit status few scenarios look at; a client that is
# expected to fail anyway; a helper. Reports go to files in
# _sanitizer_dir (writable by the test users too) that finish() checks, as
# well as making their process fail. LeakSanitizer runs at every exit of an
# instrumented program, so a leak is a report, except the one-time library
# allocations listed, with reasons, in tests/sanitizers/lsan.supp. The
# variables are harmless to programs built without sanitizers; the
# caller's own options (passed in by tests/vm/run) come first, ours win.
_sanitizer_dir=$(mktemp -d /run/injectd-sanitizer.XXXXXX)
chmod 1777 "$_sanitizer_dir"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}halt_on_error=1:print_stacktrace=1:log_path=$_sanitizer_dir/asan
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1:log_path=$_sanitizer_dir/ubsan
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$SRC_DIR/tests/sanitizers/lsan.supp

# ---------------------------------------------------------------- logging

log() { printf '%s: %s\n' "$TEST_NAME" "$*" >&2; }

# Where the scenario called us from: the first frame outside this file.
_caller() {
    local i
    for ((i = 1; i < ${#BASH_SOURCE[@]}; i++)); do
        if [[ ${BASH_SOURCE[i]} != "${BASH_SOURCE[0]}" ]]; then
            echo "${BASH_SOURCE[i]##*/}:${BASH_LINENO[i - 1]}"
            return
        fi
    done
    echo "?"
}

_failed() { [[ -e $_state/failed ]]; }
fail() {
    : >"$_state/failed"
    printf 'FAIL %s (%s): %s\n' "$TEST_NAME" "$(_caller)" "$*" >&2
    exit 1
}

# A command that fails under set -e says which one and where.
_on_err() {
    local rc=$1 cmd=$2 where=$3
    _failed && return
    : >"$_state/failed"
    printf 'FAIL %s (%s): command failed with status %d: %s\n' \
        "$TEST_NAME" "$where" "$rc" "$cmd" >&2
}
trap '_on_err $? "$BASH_COMMAND" "${BASH_SOURCE[0]##*/}:$LINENO"' ERR

# ---------------------------------------------------------------- cleanup

# at_exit CMD [ARG...]: run CMD when the scenario ends, however it ends;
# the last registered runs first. Failures there are reported, not fatal.
# Call it from the scenario's own shell, not inside $(...).
_at_exit=()
at_exit() {
    local q
    printf -v q '%q ' "$@"
    _at_exit+=("$q")
}

_run_at_exit() {
    local i
    for ((i = ${#_at_exit[@]} - 1; i >= 0; i--)); do
        eval "${_at_exit[i]}" || log "cleanup '${_at_exit[i]}' failed, ignoring"
    done
    _at_exit=()
}

_finished=0
_on_exit() {
    local rc=$?
    trap - ERR
    set +e
    _run_at_exit
    _remove_cgroups
    if ((!_finished)); then
        _failed || printf 'FAIL %s: exited (status %d) without calling finish\n' "$TEST_NAME" "$rc" >&2
        ((rc)) || rc=1
    fi
    _sanitizer_reports >&2
    rm -rf "$_state" "$_sanitizer_dir"
    exit "$rc"
}
trap _on_exit EXIT

# ---------------------------------------------------------------- assertions

# assert_eq EXPECTED SEEN WHAT
assert_eq() {
    [[ $1 == "$2" ]] || fail "$3: expected '$1', saw '$2'"
}

# assert_contains HAYSTACK NEEDLE WHAT
assert_contains() {
    [[ $1 == *"$2"* ]] || fail "$3: expected to contain '$2', saw '$1'"
}

# assert_not_contains HAYSTACK NEEDLE WHAT
assert_not_contains() {
    [[ $1 != *"$2"* ]] || fail "$3: expected not to contain '$2', saw '$1'"
}

# assert_succeeds CMD [ARG...]: CMD exits 0 (its output is shown otherwise).
assert_succeeds() {
    local out rc=0
    out=$("$@" 2>&1) || rc=$?
    ((rc == 0)) || fail "expected '$*' to succeed, saw status $rc: $out"
    [[ -z $out ]] || printf '%s\n' "$out"
}

# assert_fails_with TEXT CMD [ARG...]: CMD exits non-zero and its stderr
# contains TEXT, e.g. "Cannot allocate memory" (strerror of ENOMEM).
assert_fails_with() {
    local text=$1 err rc=0
    shift
    err=$("$@" 2>&1 >/dev/null) || rc=$?
    ((rc != 0)) || fail "expected '$*' to fail with '$text', saw it succeed (stderr: '$err')"
    [[ $err == *"$text"* ]] || fail "expected '$*' to fail with '$text', saw status $rc and stderr '$err'"
}

# wait_until SECS CMD [ARG...]: poll CMD every 0.1 s until it succeeds.
# SECS bounds only a wait for something that never comes: a passing test
# returns as soon as CMD succeeds. Keep it generous (120 s and up): under
# TCG on a loaded CI machine, a step that takes a second idle has taken
# over ten (a load and verify, polkitd's first answer, a daemon's start).
wait_until() {
    local secs=$1 i
    shift
    for ((i = 0; i < secs * 10; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "waited ${secs}s for '$*' in vain"
}

# ---------------------------------------------------------------- cgroups

# make_cgroup NAME: create /sys/fs/cgroup/NAME and print its path; it is
# removed (its processes killed) when the scenario ends. No controller is
# needed to scope an injection.
make_cgroup() {
    local cg=/sys/fs/cgroup/$1
    mkdir -p "$cg"
    echo "$cg" >>"$_state/cgroups"
    echo "$cg"
}

# Children first: the list is in creation order, so remove it backwards.
_remove_cgroups() {
    local cg i
    [[ -e $_state/cgroups ]] || return 0
    while IFS= read -r cg; do
        [[ -d $cg ]] || continue
        echo 1 >"$cg/cgroup.kill" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            rmdir "$cg" 2>/dev/null && break
            sleep 0.1
        done
        if [[ -d $cg ]]; then log "cannot remove cgroup '$cg', ignoring"; fi
    done < <(tac "$_state/cgroups")
    rm -f "$_state/cgroups"
}

# run_in_cgroup PATH CMD [ARG...]: run CMD inside the cgroup at PATH (a
# subshell moves itself there, then execs CMD, so CMD's first instruction
# already runs in the cgroup).
run_in_cgroup() {
    local cg=$1
    shift
    (
        echo "$BASHPID" >"$cg/cgroup.procs"
        exec "$@"
    )
}

# ---------------------------------------------------------------- users

# add_user NAME: a normal user with a home directory (in the VM's overlay:
# the host's /etc is untouched).
add_user() {
    id -u "$1" >/dev/null 2>&1 || useradd -m -s /bin/bash "$1"
}

# run_as USER CMD [ARG...]: run CMD as USER with its groups, no capabilities,
# and HOME/USER/LOGNAME set; the rest of the environment is kept.
run_as() {
    local user=$1 home
    shift
    home=$(getent passwd "$user" | cut -d: -f6)
    HOME=$home USER=$user LOGNAME=$user \
        setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all -- "$@"
}

# ---------------------------------------------------------------- btrfs

# make_btrfs_image PATH: a fresh 128 MiB btrfs file system in a file.
make_btrfs_image() {
    local out
    rm -f "$1"
    truncate -s 128M "$1"
    # -q still prints a note about changed defaults: show output on failure only.
    out=$(mkfs.btrfs -q "$1" 2>&1) || fail "mkfs.btrfs '$1' failed: $out"
}

# ---------------------------------------------------------------- leftovers

# What may stay under /sys/fs/bpf/injectd when nothing is injected: entries
# matching any of these globs (relative to that directory) are leftovers.
: "${INJECTD_CLEAN_FORBIDDEN:=sites/*}"

_leftovers() {
    local pin=/sys/fs/bpf/injectd entry rel pat
    if [[ -d $pin ]]; then
        while IFS= read -r entry; do
            rel=${entry#"$pin"/}
            for pat in $INJECTD_CLEAN_FORBIDDEN; do
                # shellcheck disable=SC2053 # $pat is a glob on purpose
                if [[ $rel == $pat ]]; then echo "pinned: $entry"; fi
            done
        done < <(find "$pin" -mindepth 1)
    fi
    # Program names are cut to 15 characters (BPF_OBJ_NAME_LEN - 1), so
    # this matches every injectd program by its prefix.
    bpftool prog show 2>/dev/null | sed -n 's/^\([0-9]*\): .* name \(inject[^ ]*\) .*/program: \2 (id \1)/p'
}

# check_clean: no injection left pinned, no injectd program loaded. A freed
# program can linger for a moment (the kernel releases it after an RCU
# grace period), so it polls for up to 3 s before it fails.
check_clean() {
    local left i
    for ((i = 0; i < 30; i++)); do
        left=$(_leftovers)
        [[ -z $left ]] && return 0
        sleep 0.1
    done
    fail "expected nothing left behind, saw: ${left//$'\n'/; }"
}

# Prints every sanitizer report so far (and what stop_injectd noted about
# the daemon's exit); nothing if there is none.
_sanitizer_reports() {
    local f
    for f in "$_sanitizer_dir"/*; do
        [[ -s $f ]] || continue
        printf '%s: %s:\n' "$TEST_NAME" "${f##*/}"
        sed 's/^/  | /' "$f"
    done
}

# check_sanitizers: fail if a sanitizer reported anything (the reports
# follow the FAIL line).
check_sanitizers() {
    [[ -z $(_sanitizer_reports) ]] || fail "sanitizer reports, below"
}

# finish: the last line of every scenario.
finish() {
    _run_at_exit
    _remove_cgroups
    check_sanitizers
    check_clean
    _finished=1
    echo "PASS $TEST_NAME"
}
