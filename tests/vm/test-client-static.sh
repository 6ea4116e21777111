#!/bin/bash
# injectctl-static in a job container's image that holds nothing but a
# shell and that binary (issue 14, acceptance 5): a root directory with a
# static busybox as /bin/sh, injectctl-static, a static fixture and the
# daemon's Varlink socket bind-mounted in; alice, chrooted into it with no
# capability, runs run, caps, list --json, inject --detach and cancel
# there, and run fails exactly the second getpgid() of its command.
#
# Why the static client: the ordinary injectctl cannot even start in such
# a root. It is a dynamic executable, and the image has neither the
# dynamic loader nor json-c: the kernel finds no
# /lib64/ld-linux-x86-64.so.2 and the shell says "not found" (127). This
# scenario shows that first.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

STATIC=$BUILD_DIR/src/client/injectctl-static
DYNAMIC=$BUILD_DIR/src/client/injectctl
GETPGID_REPORT=$BUILD_DIR/tests/vm/getpgid-report
[[ -x $STATIC ]] || fail "injectctl-static is not built at '$STATIC'"
[[ -x $GETPGID_REPORT ]] || fail "getpgid-report is not built at '$GETPGID_REPORT'"
BUSYBOX=$(command -v busybox) || fail "no busybox: tools/setup.sh installs busybox-static"

# The binaries that go into the root are static: no interpreter, no
# library. ldd and readelf on the host say so.
for bin in "$STATIC" "$BUSYBOX" "$GETPGID_REPORT"; do
    out=$(ldd "$bin" 2>&1) || true
    assert_contains "$out" "not a dynamic executable" "ldd '$bin'"
    assert_eq 0 "$(readelf --program-headers "$bin" | grep -c INTERP || true)" "program interpreters of '$bin'"
done
assert_eq 0 "$(readelf --dynamic "$STATIC" | grep -Ec 'NEEDED|libsystemd|libjson-c' || true)" \
    "shared libraries injectctl-static needs"
# The ordinary injectctl, for the contrast: it needs json-c and the C
# library from the image (libsystemd only when it speaks D-Bus, loaded
# then: test-client-lean).
out=$(ldd "$DYNAMIC")
assert_contains "$out" "libjson-c.so" "ldd of the dynamic injectctl"

daemon_setup
start_injectd

# The image: a shell (busybox, which answers to sh), the two static
# programs, the ordinary injectctl for the contrast, and an empty
# /run/injectd where the host mounts the socket, as `podman run -v`
# would. No /proc, /dev, /etc or /lib: nothing the image does not have.
root=$(mktemp -d /tmp/client-static-root.XXXXXX)
at_exit rm -rf "$root"
chmod 0755 "$root"
mkdir -p "$root/bin" "$root/run/injectd"
install -m 0755 "$BUSYBOX" "$root/bin/sh"
install -m 0755 "$STATIC" "$root/bin/injectctl-static"
install -m 0755 "$GETPGID_REPORT" "$root/bin/getpgid-report"
install -m 0755 "$DYNAMIC" "$root/bin/injectctl"
touch "$root/run/injectd/org.injectd.Injector"
mount --bind "$SOCKET" "$root/run/injectd/org.injectd.Injector"
at_exit umount "$root/run/injectd/org.injectd.Injector"
log "the image: $(cd "$root" && find . -type f | sort | paste -sd' ')"

alice_uid=$(id -u alice)
alice_gid=$(id -g alice)
injectd_gid=$(getent group injectd | cut -d: -f3)
CHROOT=$(command -v chroot)

# in_image CMD...: CMD run by the image's shell as alice (her groups, no
# capability: chroot drops them with the uid), chrooted into the image,
# in alice's session cgroup, with an environment that has only PATH.
in_image() {
    (
        echo "$BASHPID" >/sys/fs/cgroup/session-alice/cgroup.procs
        exec env -i PATH=/bin "$CHROOT" --userspec="$alice_uid:$alice_gid" \
            --groups="$alice_gid,$injectd_gid" "$root" /bin/sh -c "$*"
    )
}

# ---- the motivation: the dynamic injectctl cannot start here.
rc=0
err=$(in_image 'injectctl --version' 2>&1) || rc=$?
assert_eq 127 "$rc" "exit status of the dynamic injectctl in the image"
assert_contains "$err" "not found" "the dynamic injectctl in the image"
log "the dynamic injectctl in the image: $err"

# ---- the static one does.
out=$(in_image 'injectctl-static --version')
assert_contains "$out" "(static, Varlink only)" "injectctl-static --version in the image"

# It speaks only Varlink: --bus is a usage error that says so.
rc=0
err=$(in_image 'injectctl-static --bus caps' 2>&1) || rc=$?
assert_eq 2 "$rc" "exit status of injectctl-static --bus"
assert_contains "$err" "speaks only Varlink" "injectctl-static --bus"

# caps, over the socket; by default and with --varlink.
out=$(in_image 'injectctl-static caps')
assert_contains "$out" "Kernel:" "caps in the image"
assert_contains "$out" "backend kprobe" "caps in the image"
caps=$(in_image 'injectctl-static --varlink caps --json')
assert_eq true "$(jq .bpf.available <<<"$caps")" "caps --json .bpf.available in the image"

# run: exactly the second of three getpgid() calls fails, with EACCES.
rc=0
in_image "injectctl-static --varlink run --fail '__x64_sys_getpgid:EACCES,after=1,times=1' -- getpgid-report 3" \
    >"$DAEMON_WORK/run.out" 2>"$DAEMON_WORK/run.err" || rc=$?
assert_eq 0 "$rc" "run in the image: exit status (stderr: $(cat "$DAEMON_WORK/run.err"))"
assert_eq "ok EACCES ok" "$(cat "$DAEMON_WORK/run.out")" "run in the image: the getpgid() results"
summary=$(grep __x64_sys_getpgid "$DAEMON_WORK/run.err") || fail "run: no summary in '$(cat "$DAEMON_WORK/run.err")'"
assert_eq 1 "$(awk '{print $3}' <<<"$summary")" "run in the image: injected, in the summary"
assert_eq 0 "$(injections_left)" "injections after run in the image"

# The same command without injectctl: no fault.
assert_eq "ok ok ok" "$(in_image 'getpgid-report 3')" "getpgid() without an injection"

# inject --detach, list --json, cancel: the injection covers alice's
# cgroup, so getpgid-report in the image fails until it is cancelled.
assert_eq "[]" "$(in_image 'injectctl-static list --json')" "list --json in the image, before"
id=$(in_image 'injectctl-static --varlink inject __x64_sys_getpgid --error EPERM --comm getpgid-report --for 5min --detach')
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "inject --detach in the image: expected an id, saw '$id'"
assert_eq "EPERM EPERM" "$(in_image 'getpgid-report 2')" "getpgid() under the detached injection"
list=$(in_image 'injectctl-static list --json')
assert_eq "$id" "$(jq -r '.[0].id' <<<"$list")" "list --json in the image"
assert_eq 2 "$(jq '.[0].faults_injected' <<<"$list")" "list --json in the image: faults injected"
assert_eq "$alice_uid" "$(jq '.[0].owner_uid' <<<"$list")" "list --json in the image: the owner"
in_image "injectctl-static cancel $id"
assert_eq 0 "$(injections_left)" "injections after cancel in the image"
assert_eq "ok ok" "$(in_image 'getpgid-report 2')" "getpgid() after cancel"
assert_eq "[]" "$(in_image 'injectctl-static list --json')" "list --json in the image, after"

finish
