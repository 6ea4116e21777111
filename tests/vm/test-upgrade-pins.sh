#!/bin/bash
# Today's daemon started over pins that the previous release made (issue
# 29, item 5). The previous release's injectd (INJECTD_OLD, built from the
# commit tests/vm/previous-release names, by tests/vm/upgrade.sh on the
# host) arms two injections, one per backend, and stops with
# --keep-on-exit: its sites stay pinned and attached. Today's injectd then
# starts over them. It must either adopt them (listed, still failing what
# they failed, cancellable) or remove them whole (nothing of theirs left
# pinned or attached, nothing failing), and say which; and either way, arm
# new injections on the same functions afterwards, which an outer map or a
# site of the old layout left in place would refuse or misread.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

[[ -x ${INJECTD_OLD:-} ]] ||
    fail "INJECTD_OLD is not the previous release's injectd: '${INJECTD_OLD:-}' (tests/vm/upgrade.sh builds it)"
NEW_INJECTD=$INJECTD
SITES=/sys/fs/bpf/injectd/sites

daemon_setup

inject() { vl alice org.injectd.Injector.Inject "$1" | jq -er .parameters.id || fail "Inject $1 was refused"; }
site_dirs() { ls "$SITES" 2>/dev/null | grep -v '^tmp-' || true; }
kprobes_on() { grep -c " $1" /sys/kernel/debug/kprobes/list 2>/dev/null || true; }
mount -t debugfs none /sys/kernel/debug 2>/dev/null || true

log "the previous release ($(cat "$SRC_DIR/tests/vm/previous-release" | grep -v '^#' | head -1)) arms"
INJECTD=$INJECTD_OLD
start_injectd --keep-on-exit
old_kp=$(inject '{"function":"__x64_sys_openat","error":"ENOENT","comm":"cat","detach":true,"backend":"kprobe","duration_usec":300000000}')
old_fm=$(inject '{"function":"__x64_sys_getpgid","error":"EPERM","comm":"ionice","detach":true,"backend":"fmod_ret","duration_usec":300000000}')
assert_fails_with "No such file or directory" as alice cat /etc/hostname
# And root's on should_fail_bio, for a sleeper that does no I/O: that
# release's program knows no device scope (below).
sleep 600 &
sleeper=$!
at_exit kill "$sleeper"
old_bio=$(root_inject should_fail_bio EIO kprobe "$sleeper")
stop_injectd
old_sites=$(site_dirs)
[[ -n $old_sites ]] || fail "the previous release left no site pinned with --keep-on-exit"
log "pinned by the previous release: $(echo $old_sites)"
# Still failing with no daemon: the pins hold it.
assert_fails_with "No such file or directory" as alice cat /etc/hostname

log "today's injectd starts over them"
INJECTD=$NEW_INJECTD
: >"$DAEMON_LOG.new"
start_injectd
list=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.ListInjections '{"all":true}')
ids=$(jq -r '[.parameters.injections[].id] | sort | join(",")' <<<"$list")
if [[ -n $ids ]]; then
    verdict=adopted
    assert_eq "$(printf '%s\n' "$old_kp" "$old_fm" "$old_bio" | sort | paste -sd,)" "$ids" "the injections adopted"
    assert_fails_with "No such file or directory" as alice cat /etc/hostname
    grep -E "adopt|Adopt" "$DAEMON_LOG" | tail -3 >&2
else
    verdict=removed
    # Nothing of theirs is left pinned, attached or failing.
    for s in $old_sites; do
        [[ ! -e $SITES/$s ]] || fail "the old site $s is still pinned: $(ls "$SITES/$s")"
    done
    out=$(as alice cat /etc/hostname) || fail "cat still fails after the old injections were removed"
    [[ -n $out ]] || fail "cat printed nothing"
    # And the daemon said so.
    grep -q "were made by an injectd whose structures differ from this build's" "$DAEMON_LOG" ||
        fail "the daemon did not say it removed the old pins: $(tail -20 "$DAEMON_LOG")"
    for f in __x64_sys_openat should_fail_bio; do
        [[ $(kprobes_on "$f") == 0 ]] || fail "a kprobe is left on $f: $(grep "$f" /sys/kernel/debug/kprobes/list)"
    done
fi
log "today's injectd $verdict the previous release's injections: $(grep -E 'structures differ|dopt' "$DAEMON_LOG" | tail -4 | tr '\n' ';')"

# New injections on the same functions, both backends, for bob's cat (in
# group injectd for polkit's default rule; a rule of his own for these).
log "new injections on the same functions"
usermod -a -G injectd bob
vl_bob() { vl bob org.injectd.Injector.Inject "$1" | jq -er .parameters.id; }
cat >/etc/injectd/policy.d/20-upgrade.json <<POLICY
{ "rules": [ { "name": "upgrade", "users": ["bob"], "functions": ["__x64_sys_openat", "__x64_sys_getpgid", "__x64_sys_getpriority"],
               "errors": ["EACCES", "ESRCH", "EPERM"], "scopes": ["cgroup"], "max-duration": "10min", "max-active": 4 } ] }
POLICY
kill -HUP "$INJECTD_PID"
wait_until 60 grep -q "Policy: .* loaded" "$DAEMON_LOG"
new_kp=$(vl_bob '{"function":"__x64_sys_openat","error":"EACCES","comm":"cat","detach":true,"backend":"kprobe","duration_usec":120000000}') ||
    fail "a new kprobe injection on __x64_sys_openat was refused: $(tail -5 "$DAEMON_LOG")"
assert_fails_with "Permission denied" as bob cat /etc/hostname
new_fm=$(vl_bob '{"function":"__x64_sys_getpgid","error":"ESRCH","comm":"cat","detach":true,"backend":"fmod_ret","duration_usec":120000000}') ||
    fail "a new fmod_ret injection on __x64_sys_getpgid was refused: $(tail -5 "$DAEMON_LOG")"

# A function the previous release never pinned, and a device scope on
# should_fail_bio: both need a site of today's build published in the
# outer maps, which an outer map of another layout refuses (EINVAL).
new_other=$(vl_bob '{"function":"__x64_sys_getpriority","error":"EPERM","comm":"cat","detach":true,"backend":"kprobe","duration_usec":120000000}') ||
    fail "a new injection on a function not pinned before was refused: $(tail -5 "$DAEMON_LOG")"
[[ $verdict == adopted ]] && root_cancel "$old_bio" && ids=$(sed "s/$old_bio//; s/,,/,/; s/^,//; s/,\$//" <<<"$ids")
truncate -s 16M "$DAEMON_WORK/disk.img"
loop=$(losetup --show -f "$DAEMON_WORK/disk.img") || fail "losetup failed"
at_exit losetup -d "$loop"
out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Inject \
    "{\"function\":\"should_fail_bio\",\"error\":\"EIO\",\"scope\":\"device\",\"device\":\"${loop#/dev/}\",\"detach\":true,\"duration_usec\":60000000}") ||
    fail "a device scope on should_fail_bio was refused: $out"
new_dev=$(jq -er .parameters.id <<<"$out")

# Everything cancelled: nothing left pinned or attached.
for id in ${ids//,/ } $new_kp $new_fm $new_other $new_dev; do
    root_cancel "$id"
done
assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
[[ -z $(site_dirs) ]] || fail "sites left pinned: $(site_dirs)"
finish
