#!/bin/bash
# Device scopes (issue 17, acceptance 2): alice attaches a loop device on
# her own image; a block fault scoped to that device (should_fail_bio,
# EIO) fails her file system's I/O, including I/O that no task of hers
# submits, while I/O to another loop device at the same moment is
# untouched.
#
# The contexts shown, honestly: should_fail_bio runs where a bio is
# submitted (submit_bio_noacct), and a failed bio completes (bio_endio)
# right there. The faults this test finds are (1) in the flusher, a
# kworker that writes back the pages alice left dirty when root runs
# syncfs, a kernel thread in no cgroup or process tree of alice's, and (2)
# in alice's own dd: fsync's writeback and an O_DIRECT read (and root's
# sync process, submitting her file system's metadata). Interrupt context
# is not shown: a loop device is submitted nothing from interrupts.
#
# Her file system has no journal and is mounted errors=continue, so that a
# failed write neither aborts a journal nor makes it read-only: each of
# her operations fails by its own I/O, with EIO. bob's file systems are
# ordinary ext4.
#
# Another user's task that submits I/O to her device (bob's read of a
# file of hers, root's sync) is counted in her events but not shown.
#
# Then the refusals, as alice: bob's loop device (foreign: no rule grants
# it), a function whose arguments name no block device, devices that do
# not exist, a partition, a name that is a path. Loop devices on files in
# a mount namespace the daemon does not see: injectctl sends the backing
# file (backing_fd), opened read-write, without which the device is not
# hers (the daemon looks no path up for her), and a decoy of
# alice's at the path of bob's file does not make his device hers. And the
# scope is the disk as attached: when root detaches her loop device and
# attaches bob's image to the same number, her armed injection no longer
# fails anything there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
command -v mkfs.ext4 >/dev/null || fail "mkfs.ext4 is missing (e2fsprogs, tools/setup.sh)"
grep -qw ext4 /proc/filesystems || fail "the test kernel has no ext4"
[[ -e /sys/block/loop0 || -e /dev/loop-control ]] || fail "the test kernel has no loop devices"

daemon_setup
start_injectd

# Which functions take a device scope: ListFunctions says, and injectctl.
assert_eq true "$(as alice "$INJECTCTL" functions should_fail_bio --json | jq '.[0].device_scope')" \
    "should_fail_bio's device_scope in ListFunctions"
assert_eq null "$(as alice "$INJECTCTL" functions should_failslab --json | jq '.[0].device_scope')" \
    "should_failslab's device_scope in ListFunctions"
assert_contains "$(as alice "$INJECTCTL" functions should_fail_bio)" "should_fail_bio takes a device scope" \
    "injectctl functions should_fail_bio"

cat >/etc/injectd/policy.d/20-device.json <<'EOF'
{
  "rules": [
    {
      "name": "test-device",
      "groups": ["injectd"],
      "functions": ["should_fail_bio"],
      "errors": ["EIO"],
      "scopes": ["device"],
      "max-duration": "10min",
      "max-active": 4
    }
  ]
}
EOF
at_exit rm -f /etc/injectd/policy.d/20-device.json
"$INJECTCTL" reload-policy >/dev/null

W=$DAEMON_WORK
# The pages alice leaves dirty stay so until someone syncs: no periodic
# writeback, no expiry, during the test.
at_exit eval "echo $(cat /proc/sys/vm/dirty_writeback_centisecs) >/proc/sys/vm/dirty_writeback_centisecs"
at_exit eval "echo $(cat /proc/sys/vm/dirty_expire_centisecs) >/proc/sys/vm/dirty_expire_centisecs"
echo 0 >/proc/sys/vm/dirty_writeback_centisecs
echo 360000 >/proc/sys/vm/dirty_expire_centisecs

# image PATH OWNER SIZE MKFS-OPTION...: an ext4 image file owned by OWNER.
image() {
    local path=$1 owner=$2 size=$3 out
    shift 3
    truncate -s "$size" "$path"
    out=$(mkfs.ext4 -q -F "$@" "$path" 2>&1) || fail "mkfs.ext4 '$path' failed: $out"
    chown "$owner:$owner" "$path"
}
image "$W/alice.img" alice 32M -O ^has_journal
image "$W/bob.img" bob 32M
image "$W/bob2.img" bob 16M
LA=$(losetup --show -f "$W/alice.img") || fail "losetup alice.img failed"
at_exit losetup -d "$LA"
LB=$(losetup --show -f "$W/bob.img") || fail "losetup bob.img failed"
at_exit losetup -d "$LB"
A=${LA#/dev/}
B=${LB#/dev/}
MA=$W/alice-mnt
MB=$W/bob-mnt
mkdir -p "$MA" "$MB"
mount -o errors=continue "$LA" "$MA"
at_exit eval "umount '$MA' 2>/dev/null || umount -l '$MA' 2>/dev/null || true"
mount "$LB" "$MB"
at_exit eval "umount '$MB' 2>/dev/null || umount -l '$MB'"
chown alice:alice "$MA"
chown bob:bob "$MB"
log "alice's $LA (diskseq $(cat "/sys/block/$A/diskseq")) on $MA, bob's $LB on $MB"

# What both write: 1 MiB, with its checksum.
SRC=$W/src
head -c 1M /dev/urandom >"$SRC"
chmod 0644 "$SRC"
sum=$(sha256sum <"$SRC")

# Before anything is armed: a file of alice's on disk, and one in her page
# cache only (dirty, left for the flusher).
as alice dd if="$SRC" of="$MA/old" bs=64k conv=fsync status=none
as alice dd if="$SRC" of="$MA/lazy" bs=64k status=none
assert_eq "$sum" "$(as alice dd if="$MA/old" bs=64k iflag=direct status=none | sha256sum)" \
    "alice's file read back before the fault"

# ---- the ways to name a device, over both transports: MAJ:MIN over
# Varlink, the kernel name over D-Bus; the document names the disk.
id=$(as alice "$INJECTCTL" --varlink inject should_fail_bio --error EIO --device "$(cat "/sys/block/$A/dev")" \
    --for 1min --detach) || fail "alice could not arm should_fail_bio on $(cat "/sys/block/$A/dev") over Varlink"
assert_eq "device:$A" "$(as alice "$INJECTCTL" show "$id" --json | jq -r .scope)" "the scope of MAJ:MIN"
as alice "$INJECTCTL" cancel "$id" >/dev/null
id=$(as alice "$INJECTCTL" inject should_fail_bio --error EIO --device "$A" --for 1min --detach) ||
    fail "alice could not arm should_fail_bio on $A over D-Bus"
assert_eq "device:$A" "$(as alice "$INJECTCTL" show "$id" --json | jq -r .scope)" "the scope of a kernel name"
as alice "$INJECTCTL" cancel "$id" >/dev/null

# ---- armed on /dev/loopN (as losetup prints it), watched from the start.
id=$(as alice "$INJECTCTL" inject should_fail_bio --error EIO --device "$LA" --for 5min --detach) ||
    fail "alice could not arm should_fail_bio on $LA"
doc=$(as alice "$INJECTCTL" list --json | jq -c --arg id "$id" '.[] | select(.id == $id)')
assert_eq "device:$A" "$(jq -r .scope <<<"$doc")" "the scope in list --json"
events=$W/events.json
start_as alice "$events" "$W/watch.err" "$INJECTCTL" --varlink watch --json "$id"
watch_pid=$BG_PID
wait_until 120 grep -q '"watching"' "$events"

# faults JQ-FILTER: how many of the fault events so far pass JQ-FILTER.
faults() { jq -s "[.[] | select(.type == \"fault\") | select($1)] | length" "$events"; }
# has_fault JQ-FILTER: whether one has (for wait_until).
has_fault() { (($(faults "$1") > 0)); }

# (1) Writeback by the kernel: root's syncfs hands alice's dirty pages to
# the flusher, a kworker, which submits their bios. syncfs reports the
# write error or not (its errseq); either is fine here.
sync -f "$MA" 2>/dev/null || true
wait_until 120 has_fault '.comm | startswith("kworker")'
log "faults after root's syncfs, by comm: $(jq -r 'select(.type == "fault") | .comm' "$events" | sort | uniq -c | tr -s ' \n' ' ')"

# (2) At the same moment, alice's own I/O on her device and bob's on his:
# hers fails, his is untouched, data and all.
as alice bash -c "dd if='$SRC' of='$MA/new' bs=64k conv=fsync status=none; echo \"write \$?\"
                  dd if='$MA/old' of=/dev/null bs=64k iflag=direct status=none; echo \"read \$?\"" \
    >"$W/alice.out" 2>"$W/alice.err" &
alice_io=$!
as bob bash -c "dd if='$SRC' of='$MB/f' bs=64k conv=fsync status=none; echo \"write \$?\"
                dd if='$MB/f' bs=64k iflag=direct status=none | sha256sum" >"$W/bob.out" 2>"$W/bob.err" &
bob_io=$!
wait "$alice_io" || true
wait "$bob_io" || true
log "alice: $(tr '\n' ' ' <"$W/alice.out")/ $(tr '\n' ' ' <"$W/alice.err")"
log "bob: $(tr '\n' ' ' <"$W/bob.out")/ $(tr '\n' ' ' <"$W/bob.err")"
assert_eq "write 1 read 1" "$(grep -E '^(write|read) ' "$W/alice.out" | tr '\n' ' ' | sed 's/ $//')" \
    "the exit status of alice's dd (write with fsync, O_DIRECT read)"
[[ $(grep -c 'Input/output error' "$W/alice.err") -ge 2 ]] ||
    fail "alice's dd did not both fail with EIO: $(cat "$W/alice.err")"
assert_eq "write 0" "$(head -n1 "$W/bob.out")" "bob's write with fsync, during alice's faults"
assert_eq "$sum" "$(sed -n 2p "$W/bob.out")" "bob's file read back with O_DIRECT, during alice's faults"
[[ ! -s $W/bob.err ]] || fail "bob's I/O complained: $(cat "$W/bob.err")"
wait_until 120 has_fault '.comm == "dd"'

# (3) Another user's task on her device is not hers to see (issue 29):
# bob reads a file of hers, his bio fails, and her events count that
# fault with its task redacted (pid 0, no comm, no stack), never his pid.
# Likewise root's sync, which submitted her file system's metadata in (1).
redacted() { faults '.pid == 0 and .tgid == 0 and .comm == "" and (.stack | length) == 0'; }
r0=$(redacted)
out=$(as bob bash -c "echo \"pid \$\$\"; exec dd if='$MA/old' of=/dev/null bs=64k iflag=direct status=none" 2>&1) &&
    fail "bob's read of alice's file under her injection succeeded: $out"
assert_contains "$out" "Input/output error" "bob's read of alice's file under her injection"
bob_pid=$(sed -n 's/^pid //p' <<<"$out")
# Until his fault's event is in: redacted, or (the defense gone) his.
bobs() { faults ".tgid == $bob_pid or .pid == $bob_pid"; }
wait_until 120 eval '(($(redacted) > r0 || $(bobs) > 0))'
log "bob's read (pid $bob_pid): $out; redacted events $r0, then $(redacted)"
assert_eq 0 "$(bobs)" "fault events showing bob's dd to alice"
assert_eq 0 "$(faults '.comm == "sync"')" "fault events showing root's sync to alice"

# Counters: every fault the injection counts is an event, or counted as
# suppressed (the event rate); and it counts at least alice's failures.
# The events of the last faults may still be on their way: wait until
# they are all in before the cancel.
caught_up() {
    local doc
    doc=$(as alice "$INJECTCTL" show "$id" --json) || return 1
    (($(jq -r .faults_injected <<<"$doc") == $(faults true) + $(jq -r '.events_suppressed // 0' <<<"$doc")))
}
wait_until 120 caught_up
as alice "$INJECTCTL" cancel "$id" >/dev/null
wait_until 120 bash -c "! kill -0 $watch_pid 2>/dev/null"
final=$(jq -c 'select(.type == "removed") | .injection' "$events")
[[ -n $final ]] || fail "no removed event for $id in $(cat "$events")"
injected=$(jq -r .faults_injected <<<"$final")
suppressed=$(jq -r '.events_suppressed // 0' <<<"$final")
seen=$(faults true)
log "injected $injected; fault events $seen, suppressed $suppressed;" \
    "comms $(jq -r 'select(.type == "fault") | .comm' "$events" | sort | uniq -c | tr -s ' \n' ' ')"
((injected >= 2)) || fail "faults injected: $injected, alice saw at least 2 failures"
assert_eq "$injected" $((seen + suppressed)) "faults injected, against fault events and suppressed ones"
assert_eq 0 "$(faults '.function != "should_fail_bio" or .value != -5')" "fault events of another function or value"

# run's SPEC key: the same scope for a command's lifetime.
out=$(as alice "$INJECTCTL" run --fail "should_fail_bio:EIO,device=$LA" -- \
    dd if="$MA/old" of=/dev/null bs=64k iflag=direct status=none 2>&1) && fail "alice's read under run succeeded: $out"
assert_contains "$out" "Input/output error" "alice's read under run --fail should_fail_bio:EIO,device=$LA"
assert_contains "$out" should_fail_bio "run's summary"

# The other backend: an fmod_ret program reads the bio through
# bpf_get_func_arg() where the kprobe one reads a register. Bob's device,
# beside it, is untouched by it as well.
id=$(as alice "$INJECTCTL" inject should_fail_bio --error EIO --device "$LA" --backend fmod_ret \
    --for 5min --detach) || fail "alice could not arm her device with the fmod_ret backend: $id"
out=$(as alice dd if="$MA/old" of=/dev/null bs=64k iflag=direct status=none 2>&1) &&
    fail "alice's read under the fmod_ret backend succeeded: $out"
assert_contains "$out" "Input/output error" "alice's read under the fmod_ret backend"
assert_eq "$sum" "$(as bob dd if="$MB/f" bs=64k iflag=direct status=none | sha256sum)" \
    "bob's file read back with O_DIRECT beside the fmod_ret injection"
assert_eq fmod_ret "$(as alice "$INJECTCTL" show "$id" --json | jq -r .backend)" "the injection's backend"
as alice "$INJECTCTL" cancel "$id" >/dev/null

# ---- refusals, as alice, each leaving nothing armed.
# refused WHAT WANT OPTION...: alice's inject with OPTIONs is refused with
# an error matching the regex WANT.
refused() {
    local what=$1 want=$2 out rc=0
    shift 2
    out=$(as alice "$INJECTCTL" inject "$@" --for 1min --detach 2>&1) || rc=$?
    if ((rc == 0)); then
        as alice "$INJECTCTL" cancel "$out" >/dev/null 2>&1 || true
        fail "alice armed $what: $out"
    fi
    [[ $out =~ $want ]] || fail "alice on $what: expected /$want/, saw '$out'"
    log "alice on $what: refused ($out)"
    assert_eq 0 "$(injections_left)" "injections armed after alice's try on $what"
}
bio=(should_fail_bio --error EIO)
# How a device that is not hers is refused: no rule grants foreign-device
# and polkit does not give her inject-global.
FOREIGN='(ScopeNotOwned|ScopeNotAllowed|NotAllowed|NotAuthorized)'
refused "bob's loop device" "$FOREIGN" "${bio[@]}" --device "$LB"
refused "bob's loop device as MAJ:MIN" "$FOREIGN" \
    "${bio[@]}" --device "$(cat "/sys/block/$B/dev")"
refused "a device scope on should_failslab" 'BadScope.*no device' should_failslab --error ENOMEM --device "$LA"
[[ ! -e /sys/block/loop99 ]] || fail "loop99 exists: the test needs a loop device that does not"
for d in loop99 /dev/nope 7:99999 nope:1; do
    refused "device '$d', which does not exist" 'BadScope.*(No block device|not a block device name)' \
        "${bio[@]}" --device "$d"
done
refused "a network device" 'BadScope.*network device: device scopes are block devices only' "${bio[@]}" --device lo
refused "a path that climbs out of /dev" 'BadScope.*not a block device name' "${bio[@]}" --device "/dev/../$A"
refused "a path below /dev" 'BadScope.*not a block device name' "${bio[@]}" --device "/dev/block/$(cat "/sys/block/$A/dev")"

# A partition of a loop device on an image of hers: one MBR entry (type
# 0x83, sectors 2048..4095), scanned by losetup -P. Only whole disks are
# scopes.
truncate -s 4M "$W/parts.img"
printf '\x00\x00\x00\x00\x83\x00\x00\x00\x00\x08\x00\x00\x00\x08\x00\x00' |
    dd of="$W/parts.img" bs=1 seek=446 conv=notrunc status=none
printf '\x55\xaa' | dd of="$W/parts.img" bs=1 seek=510 conv=notrunc status=none
chown alice:alice "$W/parts.img"
LP=$(losetup --show -f -P "$W/parts.img") || fail "losetup -P parts.img failed"
at_exit losetup -d "$LP"
wait_until 120 test -e "/sys/block/${LP#/dev/}/${LP#/dev/}p1"
refused "a partition of her loop device" 'BadScope.*partition' "${bio[@]}" --device "${LP#/dev/}p1"
refused "a partition of her loop device, as MAJ:MIN" 'BadScope.*partition' "${bio[@]}" \
    --device "$(cat "/sys/block/${LP#/dev/}/${LP#/dev/}p1/dev")"

# ---- backing files the daemon cannot see: images on a tmpfs mounted in
# a mount namespace of their own, as a container's files are. The path
# sysfs gives names nothing in the daemon's mount namespace, or (where
# alice put a decoy of hers) another file. injectctl opens the path where
# she runs and sends the file (backing_fd), which the daemon checks by
# identity: her image is hers, bob's is not, whatever the path shows.
mkdir -p "$W/private"
chown alice:alice "$W/private"
# The namespace starts as a copy of this one: it lets go of the loop
# devices' file systems at once, or they would stay mounted there and
# their devices busy.
unshare -m --propagation private bash -c \
    'umount "$2" "$3" && mount -t tmpfs -o size=16m,mode=0755 none "$1" && echo ready && exec sleep 1000' \
    _ "$W/private" "$MA" "$MB" >"$W/ns.out" &
ns_pid=$!
at_exit eval "kill $ns_pid 2>/dev/null || true"
wait_until 120 grep -q ready "$W/ns.out"
private() { nsenter -t "$ns_pid" -m -- "$@"; }
private_alice() { private setpriv --reuid=alice --regid=alice --init-groups --inh-caps=-all -- "$@"; }
for f in c d; do
    private truncate -s 4M "$W/private/$f.img"
done
private chown alice:alice "$W/private/c.img"
private chown bob:bob "$W/private/d.img"
LC=$(private losetup --show -f "$W/private/c.img") || fail "losetup of the private c.img failed"
at_exit losetup -d "$LC"
LD=$(private losetup --show -f "$W/private/d.img") || fail "losetup of the private d.img failed"
at_exit losetup -d "$LD"
as alice touch "$W/private/d.img"       # the decoy, in the daemon's view
log "private images: $LC ($(cat "/sys/block/${LC#/dev/}/loop/backing_file")), $LD"
for T in "" --varlink; do
    id=$(private_alice "$INJECTCTL" $T inject "${bio[@]}" --device "$LC" --for 1min --detach) ||
        fail "alice could not arm her loop device on a file the daemon cannot see (${T:-D-Bus})"
    assert_eq "device:${LC#/dev/}" "$("$INJECTCTL" show "$id" --json | jq -r .scope)" "the scope of $LC"
    "$INJECTCTL" cancel "$id" >/dev/null
done
# Without the fd, by the path alone: the daemon cannot tell.
out=$(vl alice org.injectd.Injector.Inject \
    "{\"function\":\"should_fail_bio\",\"error\":\"EIO\",\"device\":\"${LC#/dev/}\",\"detach\":true}" 2>&1) &&
    fail "alice's loop device was armed by a path the daemon cannot see: $out"
[[ $out =~ $FOREIGN ]] || fail "alice's Inject on $LC without backing_fd: expected /$FOREIGN/, saw '$out'"
assert_contains "$out" "no backing file was sent" "alice's Inject on $LC without backing_fd"
log "without backing_fd: $out"
# bob's, whose path in the daemon's view is alice's decoy: refused with
# the fd injectctl sends (the decoy, from her namespace; his file, from
# the private one: neither is both the backing file and hers) and by the
# path alone.
refused "bob's private loop device, her decoy at its path" "$FOREIGN" "${bio[@]}" --device "$LD"
out=$(private_alice "$INJECTCTL" inject "${bio[@]}" --device "$LD" --for 1min --detach 2>&1) &&
    fail "alice armed bob's private loop device, sending his file: $out"
[[ $out =~ $FOREIGN ]] || fail "alice on bob's private loop device, sending his file: expected /$FOREIGN/, saw '$out'"
out=$(vl alice org.injectd.Injector.Inject \
    "{\"function\":\"should_fail_bio\",\"error\":\"EIO\",\"device\":\"${LD#/dev/}\",\"detach\":true}" 2>&1) &&
    fail "bob's private loop device was armed for alice by her decoy's path: $out"
log "bob's private loop device, her decoy at its path, without backing_fd: $out"
assert_eq 0 "$(injections_left)" "injections armed after alice's tries on $LD"
# The loop devices hold their files (and the tmpfs) from here on.
kill "$ns_pid"
wait "$ns_pid" || true

# ---- the disk as attached: alice's injection is armed on $LA; root
# detaches it and attaches bob's image in its place (same number, a new
# diskseq). Her injection must not fail bob's I/O there.
id=$(as alice "$INJECTCTL" inject should_fail_bio --error EIO --device "$LA" --for 5min --detach) ||
    fail "alice could not arm should_fail_bio on $LA again"
seq_before=$(cat "/sys/block/$A/diskseq")
umount "$MA"
losetup -d "$LA"
wait_until 120 losetup "$LA" "$W/bob2.img"
seq_after=$(cat "/sys/block/$A/diskseq")
log "$LA: diskseq $seq_before, then $seq_after with bob2.img"
[[ $seq_after != "$seq_before" ]] || fail "$LA kept its diskseq $seq_before across detach and attach"
before=$(as alice "$INJECTCTL" show "$id" --json 2>/dev/null | jq -r .faults_injected) || before=gone
mount "$LA" "$MA"
chown bob:bob "$MA"
out=$(as bob bash -c "dd if='$SRC' of='$MA/f' bs=64k conv=fsync status=none &&
                      dd if='$MA/f' bs=64k iflag=direct status=none | sha256sum" 2>&1) ||
    fail "bob's I/O on $LA (bob2.img) failed under alice's old injection: $out"
assert_eq "$sum" "$out" "bob's file on $LA (bob2.img) read back with O_DIRECT"
after=$(as alice "$INJECTCTL" show "$id" --json 2>/dev/null | jq -r .faults_injected) || after=gone
log "alice's injection on the old $LA: injected $before after the detach, $after after bob's I/O"
assert_eq "$before" "$after" "faults of alice's injection on the old $LA during bob's I/O on the new one"
# And $LA is bob's now: hers to name no more.
as alice "$INJECTCTL" cancel "$id" >/dev/null 2>&1 || true
refused "$LA, attached to bob's image now" "$FOREIGN" "${bio[@]}" --device "$LA"

umount "$MA"
assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
