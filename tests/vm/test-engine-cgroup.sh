#!/bin/bash
# __x64_sys_openat fails with ENOENT for one cgroup only; the counters match
# the calls made.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

cg=$(make_cgroup engine-cgroup-test)
id=$(engine_arm __x64_sys_openat --error ENOENT --cgroup "$cg" --for 5min)
jq -e '.scope.kind == "cgroup" and .scope.level == 1' <<<"$("$ENGINE" show "$id" --json)" >/dev/null ||
    fail "scope: expected cgroup at level 1, saw $("$ENGINE" show "$id" --json | jq -c .scope)"

# cat in the cgroup fails; the same cat outside succeeds.
assert_fails_with "No such file or directory" run_in_cgroup "$cg" cat /etc/hostname
assert_succeeds cat /etc/hostname

# Exact counts: a process moved into the cgroup before its first call makes
# 7 openat calls, and only those are seen.
before=$(engine_field "$id" seen)
start_fixture openat 7 /etc/hostname
echo "$FIXTURE_PID" >"$cg/cgroup.procs"
release_fixture
results=$FIXTURE_RESULTS
assert_eq "ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT" "$results" "results in the cgroup"
after=$(engine_field "$id" seen)
assert_eq 7 $((after - before)) "calls seen during the fixture"
expect_counters "$id" "$after" "$after" "$after"

# A sub-cgroup is part of the subtree.
sub=$cg/child
mkdir "$sub"
assert_fails_with "No such file or directory" run_in_cgroup "$sub" cat /etc/hostname
rmdir "$sub"

# The fixture outside the cgroup is untouched, and not counted.
before=$(engine_field "$id" seen)
start_fixture openat 5 /etc/hostname
release_fixture
results=$FIXTURE_RESULTS
assert_eq "0 0 0 0 0" "$results" "results outside the cgroup"
assert_eq "$before" "$(engine_field "$id" seen)" "calls seen from outside"

"$ENGINE" disarm "$id" >/dev/null
assert_succeeds run_in_cgroup "$cg" cat /etc/hostname

# With a uid filter, only tasks fully running as that user fail: not root's,
# and not a setuid-root program the user starts inside the scope.
add_user engine-tester
uid=$(id -u engine-tester)
[[ -u /usr/bin/mount ]] || fail "expected /usr/bin/mount to be setuid root for this check"
id=$(engine_arm __x64_sys_openat --error ENOENT --cgroup "$cg" --uid "$uid" --for 5min)
assert_eq "$uid" "$(engine_field "$id" uid)" "the injection's uid filter"
as_tester=(setpriv --reuid=engine-tester --regid=engine-tester --init-groups --)
assert_fails_with "No such file or directory" run_in_cgroup "$cg" "${as_tester[@]}" cat /etc/hostname
assert_succeeds run_in_cgroup "$cg" cat /etc/hostname
out=$(run_in_cgroup "$cg" "${as_tester[@]}" mount --version 2>&1) ||
    fail "a setuid program in the user's scope was failed: $out"
"$ENGINE" disarm "$id" >/dev/null
finish
