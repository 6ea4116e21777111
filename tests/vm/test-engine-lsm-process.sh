#!/bin/bash
# security_file_open through fmod_ret with EACCES, scoped to a process tree:
# the tree's children (forked after arming, too) fail, a sibling does not.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

out=$(mktemp)
go=/tmp/lsm-process-go
rm -f "$go"
# The tree: a shell that spins (a builtin test opens no file) until told to
# go, then opens a file itself, runs cat (a child: its exec opens a file
# too), and opens a file from a forked subshell (a grandchild).
bash -c 'echo ready; until [[ -e $1 ]]; do :; done
         read -r _ </etc/hostname; echo "self=$?"
         cat /etc/hostname; echo "child=$?"
         ( read -r _ </etc/hostname; echo "grandchild=$?" )' _ "$go" >"$out" 2>&1 &
tree=$!
wait_until 120 grep -q ready "$out"

id=$(engine_arm security_file_open --error EACCES --backend fmod_ret --pid "$tree" --for 5min)
assert_eq fmod_ret "$(engine_field "$id" backend)" "backend"

# A sibling, started the same way and at the same time, is not in the tree.
assert_succeeds cat /etc/hostname
touch "$go"
wait "$tree"
rm -f "$go"
res=$(cat "$out")
assert_contains "$res" "Permission denied" "the tree's errors"
assert_contains "$res" "self=1" "the tree's root opening a file"
assert_contains "$res" "child=126" "the child cat (its exec is refused)"
assert_contains "$res" "grandchild=1" "a grandchild opening a file"
assert_succeeds cat /etc/hostname

# An LSM hook is fmod_ret-only.
assert_fails_with "use the fmod_ret backend" \
    "$ENGINE" arm security_file_open --error EACCES --backend kprobe --pid $$
finish
