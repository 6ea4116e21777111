#!/bin/bash
# The site cache, for fmod_ret sites: when a function's last injection
# ends, its program is detached (no link, no trampoline: callers pay
# nothing) but kept loaded, with emptied maps, so the next injection on
# that function re-attaches the same program instead of loading and
# verifying a new one. A kprobe site needs no cache: every one runs the
# kprobe program loaded at start, and its first injection only attaches
# it (test-daemon-shared-kprobe.sh tells more). A re-attached
# site fails exactly what its new injection asks for, a scope of the old
# injection never matches again, and the program is freed when its grace
# period ends, when the cap says so, and when the daemon stops. The
# process-scope tagging programs are loaded once at start and kept. The
# capabilities' engine statistics tell a cold arm (loaded and verified)
# from a warm one (re-attached), phase by phase. --max-per-function caps
# the injections on one function. The daemon runs with --site-linger=0:
# here a site is detached as soon as its last injection ends, so its
# program goes to the cache at once (test-daemon-site-linger.sh tests the
# linger, the stage before).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

# Long enough for the checks between two injections, however slow the
# VM; the expiry itself is tested with a short grace period, at the end.
daemon_setup
start_injectd --site-linger=0 --site-cache=10min

PINS=/sys/fs/bpf/injectd/sites
TAGS=/sys/fs/bpf/injectd/tags

# inject FUNCTION BACKEND PID EXTRA-JSON: a detached ENOENT injection as
# root, scoped to PID; prints its id.
inject() { root_inject "$1" ENOENT "$2" "$3" "$4"; }
cancel() { root_cancel "$1"; }

# link_prog SITE: the id of the program the site's pinned link attaches.
link_prog() {
    bpftool link show pinned "$PINS/$1/link" --json | jq -r .prog_id
}

# expect_detached PROG: nothing attaches PROG, and nothing of ours is pinned.
expect_detached() {
    local prog=$1 links perf
    links=$(bpftool link show --json | jq -r --argjson p "$prog" '[.[] | select(.prog_id == $p)] | length')
    assert_eq 0 "$links" "links attaching the cached program $prog"
    perf=$(bpftool perf list --json | jq -r --argjson p "$prog" '[.[] | select(.prog_id == $p)] | length')
    assert_eq 0 "$perf" "perf events (kprobes) running the cached program $prog"
    [[ -z $(find "$PINS" -mindepth 1 2>/dev/null) ]] || fail "a cached site is still pinned: $(find "$PINS")"
}

# expect_empty_maps: the cached program's scopes and slots hold nothing.
# They are inner maps, not the program's own (those are the outer maps):
# with nothing armed, every map called scopes or slots is the cached one's.
expect_empty_maps() {
    local dump=$DAEMON_WORK/map.json map name n seen=0
    for map in $(bpftool map show --json | jq -r '.[] | select(.name == "scopes" or .name == "slots") | .id'); do
        seen=$((seen + 1))
        bpftool map show id "$map" --json >"$dump" 2>&1 || fail "cannot show map $map: $(cat "$dump")"
        name=$(jq -r .name "$dump")
        bpftool map dump id "$map" --json >"$dump" 2>&1 || fail "cannot dump map $map ($name): $(head -c 500 "$dump")"
        # A slot's first 8 bytes are its injection id, 0 when free.
        n=$(jq 'if type == "array" then [.[] | select(.value[0:8] | any(. != "0x00"))] | length else . end' \
            "$dump") || fail "unexpected dump of map $map ($name): $(head -c 500 "$dump")"
        assert_eq 0 "$n" "entries in use in the cached program's $name map"
    done
    assert_eq 2 "$seen" "scopes and slots maps kept with the cached program"
}

# expect_phases STATS WHICH: the last arm's phases, as a cold (loaded and
# verified) or a warm (re-attached) arm of a process scope shows them.
expect_phases() {
    local st=$1 which=$2 p
    p=$(jq -c .last_arm <<<"$st")
    if [[ $which == cold ]]; then
        jq -e '.load_usec > 0 and .verify_usec > 0 and .verified_insns > 0' <<<"$p" >/dev/null ||
            fail "expected load, verify and verified_insns > 0 for a cold arm, saw $p"
    else
        jq -e '.load_usec == 0 and .verify_usec == 0 and .verified_insns == 0' <<<"$p" >/dev/null ||
            fail "expected no load, verify or verified_insns for a re-attached site, saw $p"
    fi
    jq -e '.attach_usec > 0 and .tag_usec > 0 and .total_usec >= .load_usec + .verify_usec + .attach_usec + .tag_usec' \
        <<<"$p" >/dev/null || fail "expected attach and tag > 0, within the total, saw $p"
}

# expect_tags_held: the daemon's tagging programs are the ones it loaded
# at start ($TAG_PROG), still attached (one link) while no process scope
# holds them pinned.
expect_tags_held() {
    local links
    assert_eq "$TAG_PROG" "$(prog_ids inject_tag_fork)" "inject_tag_fork programs loaded"
    [[ ! -e $TAGS ]] || fail "expected $TAGS unpinned with no process scope armed, saw: $(ls "$TAGS")"
    links=$(bpftool link show --json | jq -r --argjson p "$TAG_PROG" '[.[] | select(.prog_id == $p)] | length')
    assert_eq 1 "$links" "links attaching the held fork program $TAG_PROG"
}

# one_round BACKEND PROGNAME: an injection, then a second one on the same
# function that must reuse the first one's program; sets ROUND_PROG to it.
one_round() {
    local backend=$1 progname=$2 id1 id2 prog1 prog2 f1_results
    local site=$backend-__x64_sys_openat

    # First injection, on fixture 1, which stays alive (blocked) after it ends.
    start_fixture openat 6 /etc/hostname
    local f1=$FIXTURE_PID f1_fd=$FIXTURE_FD f1_out=$FIXTURE_OUT
    local before st
    before=$(engine_stats)
    id1=$(inject __x64_sys_openat "$backend" "$f1" '')
    st=$(engine_stats)
    expect_phases "$st" cold
    assert_eq "$TAG_PROG" "$(bpftool link show pinned "$TAGS/fork" --json | jq -r .prog_id)" \
        "the fork program pinned for the process scope (the one loaded at start)"
    assert_eq "$(($(jq .programs_loaded <<<"$before") + 1))" "$(jq .programs_loaded <<<"$st")" "programs loaded after a cold arm"
    assert_eq "$(($(jq .arms <<<"$before") + 1))" "$(jq .arms <<<"$st")" "arms counted after a cold arm"
    prog1=$(link_prog "$site")
    [[ $prog1 =~ ^[0-9]+$ ]] || fail "no program attached to $site: '$prog1'"
    log "$backend: first injection $id1 runs program $prog1"
    cancel "$id1"

    # Detached, still loaded, emptied; the tagging programs too.
    expect_tags_held
    assert_eq "$prog1" "$(prog_ids "$progname")" "programs called $progname after the cancel"
    expect_detached "$prog1"
    expect_empty_maps

    # Second injection on the same function: the same program, re-attached.
    start_fixture openat 10 /etc/hostname
    before=$st
    id2=$(inject __x64_sys_openat "$backend" "$FIXTURE_PID" ',"after":2,"every":3')
    st=$(engine_stats)
    expect_phases "$st" warm
    assert_eq "$(jq .programs_loaded <<<"$before")" "$(jq .programs_loaded <<<"$st")" "programs loaded after a re-attach"
    assert_eq "$(($(jq .programs_reattached <<<"$before") + 1))" "$(jq .programs_reattached <<<"$st")" "programs re-attached"
    prog2=$(link_prog "$site")
    assert_eq "$prog1" "$prog2" "program of the second injection on $site (re-attached, not loaded)"
    assert_eq "$prog1" "$(prog_ids "$progname")" "programs called $progname while re-attached"
    release_fixture
    assert_eq "0 0 0 0 ENOENT 0 0 ENOENT 0 0" "$FIXTURE_RESULTS" "results on the re-attached site"
    expect_counters "$id2" 10 10 2

    # Fixture 1 was the first injection's scope: none of its calls fail,
    # and the second injection does not see them.
    FIXTURE_PID=$f1 FIXTURE_FD=$f1_fd FIXTURE_OUT=$f1_out
    release_fixture
    f1_results=$FIXTURE_RESULTS
    assert_eq "0 0 0 0 0 0" "$f1_results" "results in the first injection's old scope"
    expect_counters "$id2" 10 10 2
    cancel "$id2"
    expect_detached "$prog1"
    ROUND_PROG=$prog1
}

# tags.bpf.c is loaded once, when the daemon starts, and kept: process
# scopes going from none to one pin it again rather than load it again.
# The daemon owns its names before it has started (adopted, loaded this):
# a call it answers is one made after.
engine_stats >/dev/null
TAG_PROG=$(prog_ids inject_tag_fork)
[[ $TAG_PROG =~ ^[0-9]+$ ]] || fail "expected one inject_tag_fork program loaded at start, saw '$TAG_PROG'"
expect_tags_held

one_round fmod_ret inject_fmod_ret

# kprobe: no cache, and no load either. Each injection attaches the program
# loaded at start (a new perf event), and its cancel detaches it.
kprobe_round() {
    local id before st i
    for i in 1 2; do
        start_fixture openat 3 /etc/hostname
        before=$(engine_stats)
        id=$(inject __x64_sys_openat kprobe "$FIXTURE_PID" '')
        st=$(engine_stats)
        expect_phases "$st" warm
        assert_eq "$(jq .programs_loaded <<<"$before")" "$(jq .programs_loaded <<<"$st")" "programs loaded by a kprobe arm"
        assert_eq "$KPROBE_PROG" "$(link_prog kprobe-__x64_sys_openat)" "the program attached by kprobe arm $i"
        release_fixture
        assert_eq "ENOENT ENOENT ENOENT" "$FIXTURE_RESULTS" "results under kprobe injection $i"
        cancel "$id"
        expect_detached "$KPROBE_PROG"
        assert_eq "$KPROBE_PROG" "$(prog_ids inject_kprobe)" "inject_kprobe programs after kprobe cancel $i"
    done
}
KPROBE_PROG=$(prog_ids inject_kprobe)
[[ $KPROBE_PROG =~ ^[0-9]+$ ]] || fail "expected one inject_kprobe program loaded at start, saw '$KPROBE_PROG'"
kprobe_round

expect_tags_held

# The daemon's shutdown frees the cached program, the kprobe one and the
# tagging ones (check_clean).
stop_injectd
check_clean

# The grace period ends: the program is freed (RCU may take a moment).
GRACE=8
start_injectd --site-linger=0 --site-cache=${GRACE}s
start_fixture openat 1 /etc/hostname
cancel "$(inject __x64_sys_openat fmod_ret "$FIXTURE_PID" '')"
prog=$(prog_ids inject_fmod_ret)
[[ -n $prog ]] || fail "no program cached after the cancel"
release_fixture
gone() { [[ -z $(prog_ids inject_fmod_ret) ]]; }
wait_until $((GRACE + 30)) gone
log "fmod_ret: cached program $prog freed after its grace period"

# The cap: with room for one cached program, caching a second frees the
# least recently used.
stop_injectd
check_clean
start_injectd --site-linger=0 --site-cache=10min --site-cache-max=1
start_fixture openat 1 /etc/hostname
cancel "$(inject __x64_sys_openat fmod_ret "$FIXTURE_PID" '')"
assert_eq 1 "$(prog_ids inject_fmod_ret | wc -l)" "cached programs after one function"
cancel "$(inject __x64_sys_read fmod_ret "$FIXTURE_PID" '')"
release_fixture
one_left() { [[ $(prog_ids inject_fmod_ret | wc -l) == 1 ]]; }
wait_until 120 one_left

# Off: the program goes with its site, as before the cache.
stop_injectd
check_clean
start_injectd --site-linger=0 --site-cache=0
engine_stats >/dev/null
TAG_PROG=$(prog_ids inject_tag_fork)
start_fixture openat 1 /etc/hostname
cancel "$(inject __x64_sys_openat fmod_ret "$FIXTURE_PID" '')"
release_fixture
# The site and its program went; the tagging programs stay while the
# daemon runs (RCU may take a moment to free a program).
site_freed() { [[ -z $(prog_ids inject_fmod_ret) ]] && ! compgen -G "$PINS/*" >/dev/null; }
wait_until 120 site_freed
expect_tags_held
stop_injectd
check_clean

# The cap on injections per function: --max-per-function. The third
# injection on a function armed twice is refused; the slot a cancel frees
# is taken again.
start_injectd --site-linger=0 --max-per-function=2
out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.GetCapabilities '{}') || fail "GetCapabilities failed: $out"
assert_eq 2 "$(jq -r .parameters.capabilities.limits.max_per_function <<<"$out")" "limits.max_per_function"
holders=()
for i in 1 2 3; do
    sleep 600 &
    holders+=($!)
    at_exit kill "$!"
done
a=$(inject __x64_sys_getpgid fmod_ret "${holders[0]}" '')
b=$(inject __x64_sys_getpgid fmod_ret "${holders[1]}" '')
out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Inject \
    "{\"function\":\"__x64_sys_getpgid\",\"error\":\"ENOENT\",\"backend\":\"fmod_ret\",\"scope\":\"process\",\"pid\":${holders[2]},\"detach\":true,\"duration_usec\":300000000}" || true)
assert_eq org.injectd.Injector.TooManyInjections "$(jq -r .error <<<"$out")" "error for a third injection on the function"
assert_contains "$(jq -r .parameters.message <<<"$out")" "already has 2 injections armed" "its message"
cancel "$a"
c=$(inject __x64_sys_getpgid fmod_ret "${holders[2]}" '')
assert_eq 2 "$(bpftool map show pinned "$PINS/fmod_ret-__x64_sys_getpgid/slots" --json | jq .max_entries)" \
    "slots of the site loaded with --max-per-function=2"
cancel "$b"
cancel "$c"
stop_injectd
check_clean

finish
