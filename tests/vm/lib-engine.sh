# shellcheck shell=bash
# tests/vm/lib-engine.sh - helpers for the scenarios that drive the engine
# through injectd-engine. Source after lib.sh.

FIXTURE=$BUILD_DIR/tests/vm/syscall-loop
[[ -x $ENGINE ]] || fail "injectd-engine is not built at '$ENGINE'"
[[ -x $FIXTURE ]] || fail "the syscall-loop fixture is not built at '$FIXTURE'"

# Whatever a scenario arms is disarmed when it ends, even on failure; the
# final check_clean then proves the engine itself left nothing.
at_exit _engine_disarm_all
_engine_disarm_all() { "$ENGINE" disarm --all >/dev/null 2>&1 || true; }

# engine_arm ARG...: arm, print the new injection's id.
engine_arm() {
    local out
    out=$("$ENGINE" arm --json "$@") || fail "arm $* was refused"
    jq -er .id <<<"$out" || fail "arm printed no id: $out"
}

# engine_field ID FIELD: one field of the injection's JSON (e.g. injected).
engine_field() {
    "$ENGINE" show "$1" --json | jq -er ".$2"
}

# expect_counters ID SEEN MATCHED INJECTED (use - to skip one).
expect_counters() {
    local id=$1 js
    js=$("$ENGINE" show "$id" --json) || fail "show $id failed"
    [[ $2 == - ]] || assert_eq "$2" "$(jq -r .seen <<<"$js")" "calls seen by $id"
    [[ $3 == - ]] || assert_eq "$3" "$(jq -r .matched <<<"$js")" "calls matched by $id"
    [[ $4 == - ]] || assert_eq "$4" "$(jq -r .injected <<<"$js")" "faults injected by $id"
}

# start_fixture ARG...: start `syscall-loop --wait ARG...`, blocked before
# its first call, so a test can scope an injection to it (by pid or by
# moving it into a cgroup) first. Sets FIXTURE_PID and FIXTURE_OUT.
start_fixture() {
    local fifo
    fifo=$(mktemp -u /tmp/fixture-fifo.XXXXXX)
    mkfifo "$fifo"
    FIXTURE_OUT=$(mktemp /tmp/fixture-out.XXXXXX)
    "$FIXTURE" --wait "$@" <"$fifo" >"$FIXTURE_OUT" 2>&1 &
    FIXTURE_PID=$!
    exec {FIXTURE_FD}>"$fifo"
    rm -f "$fifo"
    # Blocked in read(2) (syscall 0): done with its start-up opens.
    wait_until 120 grep -q '^0 ' "/proc/$FIXTURE_PID/syscall"
}

# release_fixture: let it run, wait for it, and set FIXTURE_RESULTS to its
# "results:" line. Not in $(...): a subshell cannot wait for our child.
release_fixture() {
    local rc=0
    printf x >&"$FIXTURE_FD"
    exec {FIXTURE_FD}>&-
    wait "$FIXTURE_PID" || rc=$?
    ((rc == 0)) || fail "syscall-loop exited with $rc: $(cat "$FIXTURE_OUT")"
    FIXTURE_RESULTS=$(sed -n 's/^results: //p' "$FIXTURE_OUT")
}
