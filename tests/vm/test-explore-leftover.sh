#!/bin/bash
# explore's leftover detector (issue 28, item 7; docs/explore.md,
# "Leftovers"), on the normal kernel: what a run's tree leaves behind
# compared with before the run is a finding of the "leftover" detector,
# naming the device, its backing file and the mount point.
#  1. A btrfs script that cleans up after itself (unmount, losetup -d),
#     explored over open_ctree and sync(2): the run that fails open_ctree
#     at its entry leaves its loop device attached and held open by btrfs
#     (docs/findings/btrfs-open-ctree-leaks-devices.md): one finding that
#     names that device; the run that fails sync(2) leaves nothing: none.
#  2. A script that leaves a loop device attached (losetup without -d) and
#     a tmpfs mounted: both reported, in the text, JSON and HTML reports;
#     the backing file is the run's own (an argument of the command).
#  3. The same script cleaning up: no finding.
#  4. A loop device whose last close comes just after the run ends (a
#     process the run started in a session of its own, out of reach of the
#     run's kill of its process group, holds it until 1 s after the
#     script has exited; losetup -d set its autoclear): it detaches within
#     the settle and is not a finding.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built"

daemon_setup
start_injectd

loops() { losetup -a | sort; }

# explore_leftover NAME SCRIPT ARGS...: explores SCRIPT over sync(2) (and
# open_ctree, for NAME btrfs), report in /tmp/lo-NAME.{json,html,out,err};
# its exit status in $rc.
explore_leftover() {
    local name=$1
    shift
    local fns=(--functions '*_sys_sync')
    [[ $name == btrfs ]] && fns+=(--functions open_ctree)
    rc=0
    # --jobs 1: a leftover is compared with the whole machine before the
    # run, so runs side by side would see each other's; and with --jobs 2
    # each run's /tmp is its own, where these scripts are not.
    "$INJECTCTL" --varlink explore --jobs 1 "${fns[@]}" --timeout 120s --report "/tmp/lo-$name.json" \
        --html "/tmp/lo-$name.html" -- "$@" >"/tmp/lo-$name.out" 2>"/tmp/lo-$name.err" || rc=$?
    cat "/tmp/lo-$name.err" "/tmp/lo-$name.out" >&2
    jq -e . "/tmp/lo-$name.json" >/dev/null || fail "$name: the report is not JSON"
    assert_eq "done" "$(jq -r .stopped "/tmp/lo-$name.json")" "$name: how explore ended"
}

# 1. btrfs, open_ctree.
log "1. a btrfs script: open_ctree's run leaves its loop device, sync's run nothing"
cat >/tmp/lo-btrfs.sh <<'SH'
#!/bin/bash
set -e
img=$1 mnt=/tmp/lo-btrfs.mnt dev=
cleanup() {
    if mountpoint -q $mnt; then umount $mnt || true; fi
    if [[ -n $dev ]]; then losetup -d $dev || true; fi
    rm -f $img
}
trap cleanup EXIT
mkdir -p $mnt
truncate -s 128M $img
mkfs.btrfs -q $img >/dev/null 2>&1
dev=$(losetup --find --show $img)
mount $dev $mnt
echo hello >$mnt/file
sync
umount $mnt
SH
before=$(loops)
explore_leftover btrfs bash /tmp/lo-btrfs.sh /tmp/lo-btrfs.img
r=/tmp/lo-btrfs.json
assert_eq 1 "$rc" "explore's exit status with a finding"
assert_eq 1 "$(jq '[.runs[] | select(.function == "open_ctree" and .fired)] | length' $r)" "open_ctree's run"
assert_eq 1 "$(jq '[.runs[] | select((.function | endswith("sys_sync")) and .fired)] | length' $r)" "sync's run"
left=$(comm -13 <(echo "$before") <(loops))
log "loop devices left: $left"
assert_eq 1 "$(grep -c . <<<"$left")" "loop devices left after the explore"
dev=${left%%:*}
assert_eq '[]' "$(jq -c '[.runs[] | select(.function != "open_ctree") | .reports[] | select(.detector == "leftover")]' $r)" \
    "leftover reports of the runs that did not fail open_ctree"
f=$(jq -c '[.findings[] | select(.detector == "leftover")]' $r)
assert_eq 1 "$(jq length <<<"$f")" "leftover findings: $f"
assert_eq open_ctree "$(jq -r '.[0].function' <<<"$f")" "the leftover finding's failed function"
assert_contains "$(jq -r '.[0].title' <<<"$f")" "loop device $dev left attached" "the finding's title"
assert_contains "$(jq -r '.[0].title' <<<"$f")" "/tmp/lo-btrfs.img" "the finding names the backing file"
assert_contains "$(jq -r '.[0].title' <<<"$f")" "the run's own file" "the backing file is the run's"
assert_contains "$(jq -r '.[0].title' <<<"$f")" "held open" "btrfs holds the device"
assert_contains "$(jq -r '.[0].report' <<<"$f")" "autoclear: yes" "losetup -d set its autoclear"
assert_eq 1 "$(jq '[.runs[] | select(.function == "open_ctree") | .reports[] | select(.detector == "leftover")] | length' $r)" \
    "the leftover report in open_ctree's run"

# 2. A loop device and a mount left on purpose.
log "2. a script that leaves a loop device attached and a tmpfs mounted"
cat >/tmp/lo-leak.sh <<'SH'
#!/bin/bash
img=$1
[[ -e $img ]] || truncate -s 4M $img
dev=$(losetup --find --show $img)
mnt=$(mktemp -d /tmp/lo-leak-mnt.XXXXXX)
mount -t tmpfs lo-leak-tmpfs $mnt
sync
if [[ $2 == clean ]]; then umount $mnt; rmdir $mnt; losetup -d $dev; fi
exit 0
SH
before=$(loops)
explore_leftover leak bash /tmp/lo-leak.sh /tmp/lo-leak.img
r=/tmp/lo-leak.json
assert_eq 1 "$rc" "explore's exit status with findings"
# The discovery run left one too, before the first run: not a run's.
new=$(comm -13 <(echo "$before") <(loops))
assert_eq 2 "$(grep -c . <<<"$new")" "loop devices attached (the discovery's, the run's)"
run_dev=$(jq -r '.findings[] | select(.detector == "leftover" and (.title | test("^loop"))) | .title' $r |
    sed -n 's|^loop device \(/dev/loop[0-9]*\) .*|\1|p')
[[ -n $run_dev ]] || fail "no leftover finding names a loop device: $(jq -c '[.findings[].title]' $r)"
assert_contains "$new" "$run_dev:" "the device named is one left"
t=$(jq -r '.findings[] | select(.detector == "leftover" and (.title | test("^loop"))) | .title' $r)
assert_contains "$t" "/tmp/lo-leak.img, the run's own file" "the loop finding's backing file"
assert_contains "$t" "not held open" "nothing holds the loop device"
t=$(jq -r '.findings[] | select(.detector == "leftover" and (.title | test("mount"))) | .title' $r)
assert_contains "$t" "tmpfs mount of lo-leak-tmpfs left on /tmp/lo-leak-mnt." "the mount finding"
assert_eq 2 "$(jq '[.findings[] | select(.detector == "leftover")] | length' $r)" "leftover findings"
assert_contains "$(cat /tmp/lo-leak.out)" "[leftover] loop device $run_dev left attached" "the text report"
assert_contains "$(cat /tmp/lo-leak.out)" "[leftover] tmpfs mount of lo-leak-tmpfs" "the text report's mount"
assert_contains "$(cat /tmp/lo-leak.html)" "leftover" "the HTML report"
assert_contains "$(cat /tmp/lo-leak.html)" "$run_dev" "the HTML report names the device"
# What the script left, gone, for the next.
while read -r m; do umount "$m"; done < <(findmnt -rn -o TARGET -t tmpfs | grep '^/tmp/lo-leak-mnt')
losetup -j /tmp/lo-leak.img | cut -d: -f1 | xargs -r -n1 losetup -d

# 3. The same, cleaning up.
log "3. the same script, cleaning up: no finding"
before=$(loops)
explore_leftover clean bash /tmp/lo-leak.sh /tmp/lo-leak.img clean
assert_eq 0 "$rc" "explore's exit status without a finding"
assert_eq 0 "$(jq '.findings | length' /tmp/lo-clean.json)" "findings"
assert_eq "$before" "$(loops)" "loop devices"

# 4. The last close after the run's end: within the settle, not a finding.
log "4. a loop device that detaches 1 s after the run: not a finding"
cat >/tmp/lo-late.sh <<'SH'
#!/bin/bash
dev=$(losetup --find --show $1)
# The holder closes it 1 s after this script has exited (explore reads
# the run's counters and output first: 0.3 s was over by then).
# losetup -d only once it holds it, else the device is detached at once.
rm -f /tmp/lo-late.held
setsid bash -c "exec 3<$dev; touch /tmp/lo-late.held; while kill -0 $$ 2>/dev/null; do sleep 0.05; done; sleep 1" \
    </dev/null >/dev/null 2>&1 &
while [[ ! -e /tmp/lo-late.held ]]; do sleep 0.05; done
losetup -d $dev
sync
SH
before=$(loops)
explore_leftover late bash /tmp/lo-late.sh /tmp/lo-leak.img
assert_eq 0 "$rc" "explore's exit status without a finding"
assert_eq 0 "$(jq '.findings | length' /tmp/lo-late.json)" "findings"
same_loops() { [[ $before == "$(loops)" ]]; }
wait_until 120 same_loops

stop_injectd
check_clean
finish
