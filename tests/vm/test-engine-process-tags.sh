#!/bin/bash
# Process scopes are tags on tasks (docs/engine.md): threads that ran
# before arming, children and grandchildren forked after it, an exec, the
# nearest of nested scopes, one process in scopes on two sites, a process
# outside, an ended injection's tags against a new one, a scope that
# survives its SIGKILLed engine through adoption, and one engine that
# keeps its index of injections while another arms beside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

tags=/sys/fs/bpf/injectd/tags
TMP=$(mktemp -d)
export TMP FIXTURE
at_exit _kill_trees
_kill_trees() { local p; for p in $(cat "$TMP"/*.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done; }

# tree NAME: run $TMP/NAME.sh in the background, blocked on the fifo
# $TMP/NAME.go until `go NAME`; its output goes to $TMP/NAME.out.
tree() {
    mkfifo "$TMP/$1.go"
    bash "$TMP/$1.sh" >"$TMP/$1.out" 2>&1 &
    echo $! >"$TMP/$1.pid"
    TREE_PID=$!
    wait_until 120 grep -q '^ready' "$TMP/$1.out"
}
go() { echo >"$TMP/$1.go"; }

# result NAME LABEL: the fixture's result after the line LABEL in NAME.out.
result() {
    awk -v l="$2" '$0 == l {f = 1; next} f && /^results:/ {sub(/^results: /, ""); print; exit}' "$TMP/$1.out"
}

expect_tags_gone() {
    [[ ! -e $tags ]] || fail "expected $tags gone with the last process scope, saw: $(ls "$tags")"
}

# Threads that already ran when the injection was armed, on both backends.
for backend in fmod_ret kprobe; do
    start_fixture --threads 4 eventfd 8
    id=$(engine_arm __x64_sys_eventfd2 --error EMFILE --backend "$backend" --pid "$FIXTURE_PID" --for 5min)
    [[ -e $tags/fork ]] || fail "expected the fork program pinned at $tags/fork while a process scope is armed"
    release_fixture
    assert_eq "EMFILE EMFILE EMFILE EMFILE EMFILE EMFILE EMFILE EMFILE" "$FIXTURE_RESULTS" "4 threads' calls ($backend)"
    expect_counters "$id" 8 8 8
    "$ENGINE" disarm "$id" >/dev/null
    expect_tags_gone
done

# A child and a grandchild forked after arming, and the root itself after
# an exec, are in scope; a process outside is not.
cat >"$TMP/t.sh" <<'SH'
echo ready
read -r _ <"$TMP/t.go"
echo child; "$FIXTURE" eventfd 1
( echo grandchild; "$FIXTURE" eventfd 1; true )
echo exec; exec "$FIXTURE" eventfd 1
SH
tree t
id=$(engine_arm __x64_sys_eventfd2 --error EMFILE --pid "$TREE_PID" --for 5min)
assert_eq "results: 0" "$("$FIXTURE" eventfd 1 | grep '^results:')" "a process outside the scope"
go t
wait "$TREE_PID"
assert_eq EMFILE "$(result t child)" "a child forked after arming"
assert_eq EMFILE "$(result t grandchild)" "a grandchild forked after arming"
assert_eq EMFILE "$(result t exec)" "the root after exec()"
expect_counters "$id" 3 3 3
"$ENGINE" disarm "$id" >/dev/null
expect_tags_gone

# Nested scopes on one site: the nearest wins, whichever was armed first.
# The outer root is also in a scope on a second site (getppid), which the
# inner tree shares.
cat >"$TMP/outer.sh" <<'SH'
bash "$TMP/inner.sh" >"$TMP/inner.out" 2>&1 &
echo $! >"$TMP/inner.pid"
until grep -q '^ready' "$TMP/inner.out"; do sleep 0.1; done
echo ready
read -r _ <"$TMP/outer.go"
echo outer; "$FIXTURE" eventfd 1
echo outer-getppid; "$FIXTURE" getppid 1
wait
SH
cat >"$TMP/inner.sh" <<'SH'
echo ready
read -r _ <"$TMP/inner.go"
echo inner; "$FIXTURE" eventfd 1
echo inner-getppid; "$FIXTURE" getppid 1
( echo inner-grandchild; "$FIXTURE" eventfd 1; true )
SH
mkfifo "$TMP/inner.go"
tree outer
outer_pid=$TREE_PID
inner_pid=$(cat "$TMP/inner.pid")
outer_id=$(engine_arm __x64_sys_eventfd2 --error EMFILE --pid "$outer_pid" --for 5min)
inner_id=$(engine_arm __x64_sys_eventfd2 --error ENFILE --pid "$inner_pid" --for 5min)
ppid_id=$(engine_arm __do_sys_getppid --error EPERM --pid "$outer_pid" --for 5min)
go inner
go outer
wait "$outer_pid"
assert_eq EMFILE "$(result outer outer)" "the outer tree, on the outer scope"
assert_eq EPERM "$(result outer outer-getppid)" "the outer tree on the second site"
assert_eq ENFILE "$(result inner inner)" "the inner tree, on the nearest scope"
assert_eq ENFILE "$(result inner inner-grandchild)" "the inner tree's grandchild, on the nearest scope"
assert_eq EPERM "$(result inner inner-getppid)" "the inner tree on the second site (only the outer scope there)"
expect_counters "$outer_id" 1 1 1
expect_counters "$inner_id" 2 2 2
expect_counters "$ppid_id" 2 2 2
"$ENGINE" disarm "$inner_id" "$outer_id" "$ppid_id" >/dev/null
expect_tags_gone

# An ended injection's tags never match a new one: a task forked in scope
# leaves the tree (its parent exits), the injection ends, and a new one on
# the same root does not reach it, while it reaches the root.
cat >"$TMP/stale.sh" <<'SH'
echo ready
read -r _ <"$TMP/stale.go"
( bash "$TMP/orphan.sh" >"$TMP/orphan.out" 2>&1 & echo $! >"$TMP/orphan.pid" )
read -r _ <"$TMP/stale2.go"
echo root; "$FIXTURE" eventfd 1
SH
cat >"$TMP/orphan.sh" <<'SH'
echo during; "$FIXTURE" eventfd 1
read -r _ <"$TMP/orphan.go"
echo after; "$FIXTURE" eventfd 1
SH
mkfifo "$TMP/stale2.go" "$TMP/orphan.go"
tree stale
stale_pid=$TREE_PID
first=$(engine_arm __x64_sys_eventfd2 --error EMFILE --pid "$stale_pid" --for 5min)
go stale
wait_until 120 grep -q '^failed' "$TMP/orphan.out"
assert_eq EMFILE "$(result orphan during)" "the orphan-to-be, forked in scope"
orphan_ppid=$(awk '/^PPid:/ {print $2}' "/proc/$(cat "$TMP/orphan.pid")/status")
[[ $orphan_ppid != "$stale_pid" ]] || fail "expected the orphan reparented away from $stale_pid"
"$ENGINE" disarm "$first" >/dev/null
second=$(engine_arm __x64_sys_eventfd2 --error EMFILE --pid "$stale_pid" --for 5min)
go orphan
wait_until 120 bash -c '(($(grep -c "^failed" "$1") == 2))' _ "$TMP/orphan.out"
assert_eq 0 "$(result orphan after)" "a task tagged for the ended injection, under the new one"
go stale2
wait "$stale_pid"
assert_eq EMFILE "$(result stale root)" "the root, under the new injection"
expect_counters "$second" 1 1 1
"$ENGINE" disarm "$second" >/dev/null
expect_tags_gone

# Adoption after SIGKILL keeps the scope: the pinned fork program goes on
# tagging, so a child forked after adoption is in scope.
cat >"$TMP/adopt.sh" <<'SH'
echo ready
read -r _ <"$TMP/adopt.go"
echo child; "$FIXTURE" eventfd 1
SH
tree adopt
hold_out=$(mktemp)
"$ENGINE" arm __x64_sys_eventfd2 --error EMFILE --pid "$TREE_PID" --for 10min --hold >"$hold_out" &
holder=$!
wait_until 120 grep -q '^armed ' "$hold_out"
id=$(awk '/^armed/ {print $2}' "$hold_out")
kill -9 "$holder"
wait "$holder" || true
assert_eq adopted "$("$ENGINE" adopt --json | jq -r --arg id "$id" '.[] | select(.id == $id) | .action')" "the held injection"
[[ -e $tags/fork ]] || fail "expected the fork program still pinned after adoption"
go adopt
wait "$TREE_PID"
assert_eq EMFILE "$(result adopt child)" "a child forked after adoption"
"$ENGINE" disarm "$id" >/dev/null
expect_tags_gone

# An engine that lives on (the daemon does) keeps an index of injections in
# memory (engine-index.c); another engine's changes must reach it. The held
# engine arms first; a second one arms a process scope on another site; the
# held one's disarm then recomputes the process-scope roots from its list,
# which must include the second engine's, or the fork program that tags its
# children would go with the held one's scope.
sleep 600 &
first=$!
at_exit kill "$first"
cat >"$TMP/second.sh" <<'SH'
echo ready
read -r _ <"$TMP/second.go"
echo child; "$FIXTURE" eventfd 1
SH
tree second
hold_out=$(mktemp)
"$ENGINE" arm __x64_sys_getpgid --error ESRCH --pid "$first" --for 10min --hold >"$hold_out" &
holder=$!
wait_until 120 grep -q '^armed ' "$hold_out"
id=$(engine_arm __x64_sys_eventfd2 --error EMFILE --pid "$TREE_PID" --for 10min)
kill -TERM "$holder"
wait "$holder" || fail "the held engine failed to disarm: $(cat "$hold_out")"
assert_eq 1 "$("$ENGINE" list --json | jq length)" "injections left after the held one's disarm"
[[ -e $tags/fork ]] || fail "expected the fork program still pinned at $tags/fork for the second engine's scope"
go second
wait "$TREE_PID"
assert_eq EMFILE "$(result second child)" "a child of the second engine's scope, forked after the first one's disarm"
"$ENGINE" disarm "$id" >/dev/null
expect_tags_gone
finish
