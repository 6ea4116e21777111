#!/bin/bash
# Arming a process scope tags the root's subtree, not every task on the
# machine (docs/engine.md, "Keeping the tags"): with 5,000 idle threads of
# an unrelated process running, an `injectctl run` arm visits one task (its
# held child) and a --pid arm on a tree visits exactly the tree's tasks,
# counted by the engine (`tag_tasks` in GetCapabilities' engine
# statistics, and its debug log). The count, never the time: it does not
# depend on how loaded the machine is. The tree's grandchild, whose threads
# ran before the arm, is in scope. The fallback, a pass over every task,
# shows what the count is without the walk.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
IDLE_FIXTURE=$BUILD_DIR/tests/vm/idle-threads
[[ -x $INJECTCTL && -x $IDLE_FIXTURE ]] || fail "injectctl or idle-threads is not built"
IDLE_THREADS=5000
TMP=$(mktemp -d)

daemon_setup
start_injectd --log-level=debug

# engine_stats: the capabilities document's "engine" object.
engine_stats() {
    local out
    out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.GetCapabilities '{}') || fail "GetCapabilities failed: $out"
    jq -ec .parameters.capabilities.engine <<<"$out" || fail "no engine statistics in the capabilities: $out"
}

# tasks PID...: how many threads the processes have.
tasks() {
    local p n=0
    for p in "$@"; do
        n=$((n + $(find "/proc/$p/task" -mindepth 1 -maxdepth 1 | wc -l)))
    done
    echo "$n"
}

# The unrelated load: one process of $IDLE_THREADS threads, each asleep.
"$IDLE_FIXTURE" "$IDLE_THREADS" >"$TMP/idle.out" 2>&1 &
IDLE=$!
_stop_idle() { kill "$IDLE" 2>/dev/null || true; }
at_exit _stop_idle
wait_until 600 grep -q '^ready' "$TMP/idle.out"
n=$(tasks "$IDLE")
((n > IDLE_THREADS)) || fail "expected more than $IDLE_THREADS tasks in the idle process, saw $n"
total=$(find /proc/[0-9]*/task -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
log "$total tasks on the machine"

# 1. injectctl run: the root is its held child, which has no children and
# one thread when the arm tags it.
rc=0
out=$("$INJECTCTL" --varlink run --fail __x64_sys_eventfd2:EMFILE -- "$FIXTURE" eventfd 2 2>"$TMP/run.err") || rc=$?
cat "$TMP/run.err" >&2
assert_eq 0 "$rc" "injectctl run's exit status"
assert_contains "$out" "results: EMFILE EMFILE" "the run's calls, in scope"
st=$(engine_stats)
assert_eq 1 "$(jq .last_arm.tag_tasks <<<"$st")" "tasks the run's arm visited to tag ($total on the machine)"
assert_contains "$(cat "$DAEMON_LOG")" "Tagged for 1 new process-scope root(s): 1 task(s) visited" \
    "the engine's debug log of the run's tagging"
assert_not_contains "$(cat "$DAEMON_LOG")" "tagging every task on the machine instead" "the debug log"

# 2. --pid on a tree that ran before the arm: a shell (the root), a shell
# it forked, and the fixture under that with 2 threads besides its main
# one, all blocked until released.
mkfifo "$TMP/go"
# Open for reading and writing here, so that the fixture's open of it for
# reading does not block.
exec {go}<>"$TMP/go"
cat >"$TMP/tree.sh" <<SH
bash -c '"$FIXTURE" --wait --threads 2 eventfd 4 <"$TMP/go" >"$TMP/gc.out" 2>&1 & echo \$! >"$TMP/gc.pid"; wait'
SH
bash "$TMP/tree.sh" &
ROOT=$!
_stop_tree() { kill "$ROOT" "${GC:-}" 2>/dev/null || true; }
at_exit _stop_tree
wait_until 120 test -s "$TMP/gc.pid"
GC=$(cat "$TMP/gc.pid")
MID=$(awk '{print $4}' "/proc/$GC/stat")
assert_eq "$ROOT" "$(awk '{print $4}' "/proc/$MID/stat")" "the middle shell's parent"
wait_until 120 test "$(tasks "$GC")" -eq 3
wait_until 120 grep -q '^0 ' "/proc/$GC/syscall"
want=$(tasks "$ROOT" "$MID" "$GC")
out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Inject \
    "{\"function\":\"__x64_sys_eventfd2\",\"error\":\"EMFILE\",\"scope\":\"process\",\"pid\":$ROOT,\"detach\":true,\"duration_usec\":300000000}") ||
    fail "Inject --pid $ROOT was refused: $out"
id=$(jq -er .parameters.id <<<"$out") || fail "Inject printed no id: $out"
st=$(engine_stats)
assert_eq "$want" "$(jq .last_arm.tag_tasks <<<"$st")" "tasks the tree's arm visited: its $want"
printf x >&"$go"
exec {go}>&-
wait "$ROOT"
assert_eq "results: EMFILE EMFILE EMFILE EMFILE" "$(grep '^results:' "$TMP/gc.out")" \
    "the grandchild's calls, from threads that ran before the arm"

# 3. The fallback, and what the count would be without the walk: with the
# subtree program's pin gone (as under a tags directory an older engine
# pinned), the next root is tagged by a pass over every task on the
# machine, and says so.
rm /sys/fs/bpf/injectd/tags/subtree
sleep infinity &
OTHER=$!
_stop_other() { kill "$OTHER" 2>/dev/null || true; }
at_exit _stop_other
out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Inject \
    "{\"function\":\"__x64_sys_eventfd2\",\"error\":\"EMFILE\",\"scope\":\"process\",\"pid\":$OTHER,\"detach\":true,\"duration_usec\":300000000}") ||
    fail "Inject --pid $OTHER was refused: $out"
id2=$(jq -er .parameters.id <<<"$out") || fail "Inject printed no id: $out"
n=$(engine_stats | jq .last_arm.tag_tasks)
((n > IDLE_THREADS)) || fail "expected the fallback to visit every task (more than $IDLE_THREADS), saw $n"
assert_contains "$(cat "$DAEMON_LOG")" "tagging every task on the machine instead" "the debug log of the fallback"
for i in "$id" "$id2"; do
    "$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Cancel "{\"id\":\"$i\"}" >/dev/null || fail "Cancel $i failed"
done
_stop_other

_stop_idle
finish
