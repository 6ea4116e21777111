#!/bin/bash
# One kprobe program for every function: the daemon loads and verifies it
# once, at start, and a first request on a function only creates the
# function's maps and attaches that program, with the site's index as the
# attach cookie. Two functions armed one after the other run the same
# program, and neither arm loads or verifies anything. The cookie keeps the
# sites apart: f1 armed for process A and f2 for process B, B's calls of f1
# and A's calls of f2 are untouched. After the cancels nothing is attached
# (no kprobe left in the kernel's list, no link, no perf event) and the
# sites' maps are gone; once the daemon ends, no program and no map of
# ours is left.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

daemon_setup
start_injectd

PINS=/sys/fs/bpf/injectd/sites
F1=__x64_sys_openat
F2=__x64_sys_eventfd2
KPROBES=/sys/kernel/debug/kprobes/list
[[ -e $KPROBES ]] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
[[ -r $KPROBES ]] || fail "cannot read $KPROBES"

# inject FUNCTION ERROR PID: a detached kprobe injection as root, scoped
# to PID; prints its id.
inject() { root_inject "$1" "$2" kprobe "$3"; }
cancel() { root_cancel "$1"; }

# seen_injected ID: "SEEN INJECTED" of an armed injection.
seen_injected() {
    "$VARLINK_CALL" "$SOCKET" org.injectd.Injector.ListInjections '{"all":true}' |
        jq -r --arg id "$1" '.parameters.injections[] | select(.id == $id) | "\(.calls_seen) \(.faults_injected)"'
}

# maps_named NAME...: how many loaded maps have one of these names.
maps_named() {
    bpftool map show --json | jq --args '[.[] | select(.name as $n | $ARGS.positional | index($n))] | length' "$@"
}

link_prog() {
    bpftool link show pinned "$PINS/kprobe-$1/link" --json | jq -r .prog_id
}

# expect_attach_only STATS-BEFORE STATS-AFTER: the last arm loaded and
# verified nothing, and attached.
expect_attach_only() {
    local p
    p=$(jq -c .last_arm <<<"$2")
    jq -e '.load_usec == 0 and .verify_usec == 0 and .verified_insns == 0 and .attach_usec > 0' <<<"$p" >/dev/null ||
        fail "expected an arm that only attaches (no load, no verify), saw $p"
    assert_eq "$(jq .programs_loaded <<<"$1")" "$(jq .programs_loaded <<<"$2")" "programs loaded by the arm"
}

# The program was loaded and verified when the daemon started.
st0=$(engine_stats)
PROG=$(prog_ids inject_kprobe)
[[ $PROG =~ ^[0-9]+$ ]] || fail "expected one inject_kprobe program loaded at start, saw '$PROG'"
jq -e '.kprobe_program.verify_usec > 0 and .kprobe_program.verified_insns > 0' <<<"$st0" >/dev/null ||
    fail "expected the shared kprobe program's load in the statistics, saw $(jq -c .kprobe_program <<<"$st0")"
log "the shared kprobe program is $PROG: $(jq -c .kprobe_program <<<"$st0")"

# Two processes, each one openat then three eventfd2 calls (the openat's
# result on its own line).
start_fixture open-eventfd 3 /etc/hostname
a_pid=$FIXTURE_PID a_fd=$FIXTURE_FD a_out=$FIXTURE_OUT
start_fixture open-eventfd 3 /etc/hostname
b_pid=$FIXTURE_PID b_fd=$FIXTURE_FD b_out=$FIXTURE_OUT

id1=$(inject $F1 ENOENT "$a_pid")
st1=$(engine_stats)
expect_attach_only "$st0" "$st1"
id2=$(inject $F2 EINVAL "$b_pid")
st2=$(engine_stats)
expect_attach_only "$st1" "$st2"
assert_eq "$PROG" "$(prog_ids inject_kprobe)" "inject_kprobe programs with two functions armed"
assert_eq "$PROG" "$(link_prog $F1)" "the program attached to $F1"
assert_eq "$PROG" "$(link_prog $F2)" "the program attached to $F2"
grep -qw "$F1" "$KPROBES" || fail "no kprobe on $F1 while armed: $(cat "$KPROBES")"
grep -qw "$F2" "$KPROBES" || fail "no kprobe on $F2 while armed: $(cat "$KPROBES")"

# Each fails only its own function, only in its own scope.
FIXTURE_PID=$a_pid FIXTURE_FD=$a_fd FIXTURE_OUT=$a_out
release_fixture
assert_eq ENOENT "$(sed -n 's/^open: //p' "$a_out")" "A's openat ($F1 armed for A)"
assert_eq "0 0 0" "$FIXTURE_RESULTS" "A's eventfd2 calls ($F2 armed for B)"
FIXTURE_PID=$b_pid FIXTURE_FD=$b_fd FIXTURE_OUT=$b_out
release_fixture
assert_eq 0 "$(sed -n 's/^open: //p' "$b_out")" "B's openat ($F1 armed for A)"
assert_eq "EINVAL EINVAL EINVAL" "$FIXTURE_RESULTS" "B's eventfd2 calls ($F2 armed for B)"
assert_eq "1 1" "$(seen_injected "$id1")" "$F1's injection: calls seen, faults"
assert_eq "3 3" "$(seen_injected "$id2")" "$F2's injection: calls seen, faults"

cancel "$id1"
cancel "$id2"

# Nothing attached, nothing pinned, the sites' maps freed (RCU may take a
# moment); the program stays loaded for the next request.
detached() {
    ! grep -qw -e "$F1" -e "$F2" "$KPROBES" &&
        [[ $(bpftool link show --json | jq --argjson p "$PROG" '[.[] | select(.prog_id == $p)] | length') == 0 ]] &&
        [[ $(bpftool perf list --json | jq --argjson p "$PROG" '[.[] | select(.prog_id == $p)] | length') == 0 ]] &&
        [[ $(maps_named scopes slots site) == 0 ]] &&
        ! compgen -G "$PINS/*" >/dev/null
}
wait_until 120 detached
assert_eq "$PROG" "$(prog_ids inject_kprobe)" "inject_kprobe programs after the cancels"

# A repeat request on a function used before is only an attach too.
start_fixture openat 2 /etc/hostname
st3=$(engine_stats)
id3=$(inject $F1 ENOENT "$FIXTURE_PID")
expect_attach_only "$st3" "$(engine_stats)"
release_fixture
assert_eq "ENOENT ENOENT" "$FIXTURE_RESULTS" "openat results on the re-created site"
cancel "$id3"
wait_until 120 detached

# The daemon's end frees the program and every map of ours.
stop_injectd
check_clean
no_maps() { [[ $(maps_named scopes slots site site_scopes site_slots site_infos inject_events) == 0 ]]; }
wait_until 120 no_maps

finish
