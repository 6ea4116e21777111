#!/bin/bash
# The linger: when a function's last injection ends, its site stays
# attached, empty, for --site-linger, so a request on it in that time only
# writes map entries (no attach), as on a site another injection holds.
# Both backends linger; an fmod_ret site's program then joins the site
# cache (test-daemon-site-cache.sh). Defended here:
# * nothing fails while a site lingers: the old injection's scope and any
#   other caller of the function call it freely, while the program
#   attached there runs for every call (counted with bpf_stats_enabled);
# * a request within the linger re-uses the site: the same link, no
#   attach, no load (GetCapabilities' engine statistics say so, and count
#   the lingering sites);
# * the site is really gone once the linger is over: no pin, no kprobe,
#   no link of the program;
# * the daemon's stop during a linger detaches it at once, and a daemon
#   killed during one leaves the empty site attached (failing nothing)
#   until the next daemon's start retires it; the sites of the injections
#   a stop cancels do not linger;
# * one backend per function: a lingering site of the other backend is
#   detached before a request attaches its own (its faults would be lost
#   beside it), and an armed one refuses a request naming the other; also
#   across engines (injectd-engine beside the daemon) and after the
#   daemon's restart, which an arm learns from the engine's index, not
#   from bpffs;
# * --site-linger=0 detaches at once; a bad value is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

daemon_setup

PINS=/sys/fs/bpf/injectd/sites
# kprobe on a function nobody else in the VM calls, so that the program's
# run count is the test's own calls; fmod_ret on another one.
F=__x64_sys_eventfd2
G=__x64_sys_openat
KPROBES=/sys/kernel/debug/kprobes/list
[[ -e $KPROBES ]] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
[[ -r $KPROBES ]] || fail "cannot read $KPROBES"

inject() { root_inject "$1" "$2" "$3" "$4"; }   # FUNCTION ERROR BACKEND PID: prints the id
cancel() { root_cancel "$1"; }
link_id() { bpftool link show pinned "$PINS/$1/link" --json | jq -r .id; }
# refuse_fmod_ret FUNCTION WHAT: an fmod_ret request on FUNCTION is refused
# beside WHAT, a kprobe site with injections armed, saying why.
refuse_fmod_ret() {
    local out
    out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Inject \
        "{\"function\":\"$1\",\"error\":\"ENOENT\",\"backend\":\"fmod_ret\",\"scope\":\"process\",\"pid\":$$,\"detach\":true,\"duration_usec\":300000000}") &&
        fail "an fmod_ret Inject on $1 was armed beside $2: $out"
    assert_contains "$out" "BackendUnavailable" "the refusal of fmod_ret beside $2"
    assert_contains "$out" "armed through the kprobe backend" "the refusal's reason beside $2"
    [[ ! -e $PINS/fmod_ret-$1 ]] || fail "the refused fmod_ret request left a site of $1 beside $2"
}
kprobe_on() { grep -qw "$1" "$KPROBES"; }
stat_is() { # STATS FIELD VALUE WHAT
    assert_eq "$3" "$(jq -r ".$2" <<<"$1")" "$4 ($2)"
}
# run_cnt PROG: how often the program ran (kernel.bpf_stats_enabled=1;
# bpftool leaves the count out while it is 0).
run_cnt() {
    local n
    assert_eq 1 "$(sysctl -n kernel.bpf_stats_enabled)" "kernel.bpf_stats_enabled"
    n=$(bpftool prog show id "$1" --json | jq -r '.run_cnt // 0')
    [[ $n =~ ^[0-9]+$ ]] || fail "no run count for program $1 (bpf_stats_enabled?): '$n'"
    echo "$n"
}
# expect_reused BEFORE AFTER: the last arm found its site lingering: no
# attach, no load.
expect_reused() {
    jq -e '.last_arm.attach_usec == 0 and .last_arm.load_usec == 0 and .last_arm.verify_usec == 0' \
        <<<"$2" >/dev/null || fail "expected an arm with no attach or load, saw $(jq -c .last_arm <<<"$2")"
    stat_is "$2" linger_reuses "$(($(jq .linger_reuses <<<"$1") + 1))" "arms that re-used a lingering site"
    stat_is "$2" programs_loaded "$(jq .programs_loaded <<<"$1")" "programs loaded"
    stat_is "$2" programs_reattached "$(jq .programs_reattached <<<"$1")" "programs re-attached"
}

# ---------------------------------------------------------------- bad input
for bad in 11min abc; do
    out=$(timeout 60 "$INJECTD" --log-target=stderr "--site-linger=$bad" 2>&1) &&
        fail "injectd started with --site-linger=$bad"
    assert_contains "$out" "Invalid --site-linger '$bad'" "the refusal of --site-linger=$bad"
done

# ---------------------------------------------------------------- a long linger
# Long enough for every check below on a loaded machine under TCG.
start_injectd --site-linger=10min
sysctl -q kernel.bpf_stats_enabled=1
at_exit sysctl -q kernel.bpf_stats_enabled=0
# The daemon owns its names before it has loaded its program: a call it
# answers is one made after.
engine_stats >/dev/null
PROG=$(prog_ids inject_kprobe)
[[ $PROG =~ ^[0-9]+$ ]] || fail "expected one inject_kprobe program loaded at start, saw '$PROG'"

start_fixture eventfd 3
a_pid=$FIXTURE_PID a_fd=$FIXTURE_FD a_out=$FIXTURE_OUT
id=$(inject $F EINVAL kprobe "$a_pid")
link=$(link_id kprobe-$F)
cancel "$id"
st=$(engine_stats)
stat_is "$st" sites_lingering 1 "sites lingering after the cancel"
assert_eq "$link" "$(link_id kprobe-$F)" "the lingering site's link (still pinned)"
kprobe_on $F || fail "no kprobe on $F while its site lingers: $(cat "$KPROBES")"
log "kprobe site of $F lingers, link $link: $(jq -c '{sites_lingering, linger_reuses, lingers_ended}' <<<"$st")"

# Nothing fails while it lingers: not the old injection's scope, not a new
# process; and the program did run for each of their calls.
runs0=$(run_cnt "$PROG")
FIXTURE_PID=$a_pid FIXTURE_FD=$a_fd FIXTURE_OUT=$a_out
release_fixture
assert_eq "0 0 0" "$FIXTURE_RESULTS" "eventfd2 results in the old injection's scope, lingering"
start_fixture eventfd 20
release_fixture
assert_eq "$(printf '0 %.0s' {1..20} | sed 's/ $//')" "$FIXTURE_RESULTS" "eventfd2 results of another process, lingering"
runs1=$(run_cnt "$PROG")
((runs1 - runs0 >= 23)) || fail "expected the lingering site's program to run for the 23 calls, it ran $((runs1 - runs0)) times"
log "23 calls while lingering, none failed; the program ran $((runs1 - runs0)) times"

# A request within the linger re-uses the site: the same link.
start_fixture eventfd 3
id=$(inject $F EINVAL kprobe "$FIXTURE_PID")
st2=$(engine_stats)
expect_reused "$st" "$st2"
stat_is "$st2" sites_lingering 0 "sites lingering once re-used"
assert_eq "$link" "$(link_id kprobe-$F)" "the link of the re-used site"
release_fixture
assert_eq "EINVAL EINVAL EINVAL" "$FIXTURE_RESULTS" "eventfd2 results on the re-used site"
cancel "$id"
stat_is "$(engine_stats)" sites_lingering 1 "sites lingering after the second cancel"

# fmod_ret lingers too, attached, before its program would join the cache.
start_fixture openat 2 /etc/hostname
b_pid=$FIXTURE_PID b_fd=$FIXTURE_FD b_out=$FIXTURE_OUT
id=$(inject $G ENOENT fmod_ret "$b_pid")
flink=$(link_id fmod_ret-$G)
cancel "$id"
st=$(engine_stats)
stat_is "$st" sites_lingering 2 "sites lingering (kprobe and fmod_ret)"
stat_is "$st" programs_cached 0 "fmod_ret programs cached detached while their site lingers"
assert_eq "$flink" "$(link_id fmod_ret-$G)" "the lingering fmod_ret site's link"
FIXTURE_PID=$b_pid FIXTURE_FD=$b_fd FIXTURE_OUT=$b_out
release_fixture
assert_eq "0 0" "$FIXTURE_RESULTS" "openat results in the old fmod_ret injection's scope, lingering"
start_fixture openat 2 /etc/hostname
id=$(inject $G ENOENT fmod_ret "$FIXTURE_PID")
st2=$(engine_stats)
expect_reused "$st" "$st2"
assert_eq "$flink" "$(link_id fmod_ret-$G)" "the link of the re-used fmod_ret site"
release_fixture
assert_eq "ENOENT ENOENT" "$FIXTURE_RESULTS" "openat results on the re-used fmod_ret site"
cancel "$id"
# One backend serves a function at a time: beside an fmod_ret trampoline,
# a kprobe's override on the same function failed none of its calls (seen
# on 6.1 in vm-attack-filecaps once the fmod_ret site lingered). A kprobe
# request on G detaches G's lingering fmod_ret site first, and fails.
start_fixture openat 2 /etc/hostname
id=$(inject $G ENOENT kprobe "$FIXTURE_PID")
[[ ! -e $PINS/fmod_ret-$G ]] || fail "the lingering fmod_ret site of $G is still pinned beside its kprobe site"
release_fixture
assert_eq "ENOENT ENOENT" "$FIXTURE_RESULTS" "openat results through kprobe, after G's fmod_ret site lingered"
# While that one is armed, a request that names fmod_ret is refused, saying why.
refuse_fmod_ret $G "its armed kprobe site"
cancel "$id"
stat_is "$(engine_stats)" sites_lingering 2 "sites lingering before the daemon stops"
# And one still armed, which the stop cancels: its site must not linger.
sleep 600 &
holder=$!
at_exit kill "$holder"
inject __x64_sys_getpgid EPERM kprobe "$holder" >/dev/null

# The daemon's stop detaches the lingering sites at once, and the site of
# the injection it cancels.
stop_injectd
[[ ! -e /sys/fs/bpf/injectd ]] || fail "pins left after a stop during a linger: $(find /sys/fs/bpf/injectd)"
! kprobe_on $F || fail "a kprobe on $F is left after a stop during a linger"
check_clean

# ---------------------------------------------------------------- killed during a linger
start_injectd --site-linger=10min
start_fixture eventfd 2
id=$(inject $F EINVAL kprobe "$FIXTURE_PID")
cancel "$id"
stat_is "$(engine_stats)" sites_lingering 1 "sites lingering before the kill"
kill -9 "$INJECTD_PID"
wait "$INJECTD_PID" || true
INJECTD_PID=
# Nobody detaches it now; it fails nothing.
[[ -e $PINS/kprobe-$F/link ]] || fail "the lingering site went with the killed daemon"
release_fixture
assert_eq "0 0" "$FIXTURE_RESULTS" "eventfd2 results in the old scope, the daemon killed during the linger"
# The next daemon retires it as it adopts what is pinned.
start_injectd --site-linger=10min
site_gone() { ! compgen -G "$PINS/kprobe-$F" >/dev/null && ! kprobe_on $F; }
wait_until 120 site_gone
grep -q "Detaching the site '$PINS/kprobe-$F'" "$DAEMON_LOG" || fail "no log line for the retired site"
stat_is "$(engine_stats)" sites_lingering 0 "sites lingering after the restart"
stop_injectd
check_clean

# ---------------------------------------------------------------- the linger ends
start_injectd --site-linger=3s --site-cache=10min
start_fixture eventfd 1
id=$(inject $F EINVAL kprobe "$FIXTURE_PID")
release_fixture
cancel "$id"
start_fixture openat 1 /etc/hostname
id=$(inject $G ENOENT fmod_ret "$FIXTURE_PID")
release_fixture
cancel "$id"
# The timer detaches both: no pin, no kprobe, no link of the kprobe
# program. The bound is for a loaded machine, not the linger.
all_gone() {
    ! compgen -G "$PINS/*" >/dev/null && ! kprobe_on $F &&
        [[ $(bpftool link show --json | jq --argjson p "$PROG" '[.[] | select(.prog_id == $p)] | length') == 0 ]]
}
PROG=$(prog_ids inject_kprobe)
wait_until 120 all_gone
st=$(engine_stats)
stat_is "$st" sites_lingering 0 "sites lingering after the linger"
stat_is "$st" lingers_ended 2 "lingers ended"
stat_is "$st" programs_cached 1 "fmod_ret programs cached, detached, once the linger ended"
# A request after the linger attaches again.
start_fixture eventfd 1
id=$(inject $F EINVAL kprobe "$FIXTURE_PID")
jq -e '.last_arm.attach_usec > 0' <<<"$(engine_stats)" >/dev/null || fail "expected an attach after the linger"
release_fixture
assert_eq EINVAL "$FIXTURE_RESULTS" "eventfd2 results on the site attached again"
cancel "$id"
stop_injectd
check_clean

# ---------------------------------------------------------------- one backend, across engines and restarts
# An arm asks the engine's index, not bpffs, whether the function has a
# site of the other backend. injectd-engine, another engine, reads its index
# from the pins: it must know the daemon's lingering site (pinned, with no
# injection), and cut it. The daemon must learn of the site injectd-engine
# pinned, and know the site it adopted at its start.
start_injectd --site-linger=10min
start_fixture openat 1 /etc/hostname
id=$(inject $G ENOENT fmod_ret "$FIXTURE_PID")
release_fixture
cancel "$id"
[[ -e $PINS/fmod_ret-$G/link ]] || fail "the fmod_ret site of $G does not linger"
sleep 600 &
holder=$!
at_exit kill "$holder"
engine_id=$(engine_arm $G --error ENOENT --backend kprobe --pid "$holder" --for 10min)
[[ ! -e $PINS/fmod_ret-$G ]] || fail "injectd-engine armed kprobe on $G beside the daemon's lingering fmod_ret site"
refuse_fmod_ret $G "the kprobe site injectd-engine pinned"
"$ENGINE" disarm "$engine_id" >/dev/null || fail "cannot disarm $engine_id"
# Killed (so that its injection stays) and started again.
id=$(inject $G ENOENT kprobe "$holder")
kill -9 "$INJECTD_PID"
wait "$INJECTD_PID" || true
INJECTD_PID=
start_injectd --site-linger=10min
refuse_fmod_ret $G "the kprobe site the daemon adopted"
cancel "$id"
stop_injectd
check_clean

# ---------------------------------------------------------------- no linger
start_injectd --site-linger=0
start_fixture eventfd 1
id=$(inject $F EINVAL kprobe "$FIXTURE_PID")
release_fixture
cancel "$id"
# At once: the cancel's reply comes after the site was retired.
! compgen -G "$PINS/*" >/dev/null || fail "a site is pinned after the cancel with --site-linger=0: $(find "$PINS")"
! kprobe_on $F || fail "a kprobe on $F is left after the cancel with --site-linger=0"
stat_is "$(engine_stats)" sites_lingering 0 "sites lingering with --site-linger=0"
stop_injectd
check_clean

finish
