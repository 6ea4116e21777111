#!/bin/bash
# Attack (issue 29): container root fails host root's disk I/O.
#
# A policy rule lets root fail should_fail_bio on its own devices, the
# natural rule for CI containers that run as root and make their own loop
# images. Root in a Docker-style container (uid 0, no capabilities: an
# empty bounding set; a mount and pid namespace of its own; no user
# namespace) asks for a device scope on a loop device host root attached.
# Before the fix that was granted: ownership was the backing file's owner
# uid (0, as every file host root attaches), and when the container could
# not see the file the daemon looked its path up in its own mount
# namespace. Now a caller without privilege owns a loop device only by an
# fd of its backing file opened read-write (read-only for a read-only
# attachment), the same inode as the loop's (docs/security.md).
#
# Refused here, over Varlink and D-Bus: host root's device with its file
# visible in the container (bind-mounted read-only, as `-v host:ctr:ro`
# does), and hidden (a tmpfs over its directory), with injectctl's own
# choice of fd and with an attacker's: a read-only fd, an O_PATH fd, a
# decoy of the container's own at the same path, and no fd at all. Host
# root's reads of the device are untouched throughout. Granted: the
# container's own loop image, attached inside it, its backing file sent
# read-write by injectctl; its I/O fails with EIO.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
BUS_INJECT_FD=$BUILD_DIR/tests/vm/bus-inject-fd
[[ -x $INJECTCTL && -x $BUS_INJECT_FD ]] || fail "injectctl or bus-inject-fd is not built"
[[ -e /dev/loop-control ]] || fail "the test kernel has no loop devices"

daemon_setup
cat >/etc/injectd/policy.d/50-root-device.json <<'EOF'
{
  "rules": [
    {
      "name": "test-root-own-devices",
      "users": ["root"],
      "functions": ["should_fail_bio"],
      "errors": ["EIO"],
      "scopes": ["device"],
      "max-duration": "10min",
      "max-active": 8
    }
  ]
}
EOF
chmod 0644 /etc/injectd/policy.d/50-root-device.json
start_injectd

W=$DAEMON_WORK
H=$W/host                               # host root's directory of images
mkdir -p "$H" "$W/ctr"
head -c 8M /dev/urandom >"$H/host.img"
chmod 0644 "$H/host.img"
LH=$(losetup --show -f "$H/host.img") || fail "losetup host.img failed"
at_exit losetup -d "$LH"
HN=${LH#/dev/}
# host_read: host root's read of its whole device, O_DIRECT (no page
# cache between it and should_fail_bio); prints the checksum or fails.
host_read() { dd if="$LH" bs=1M iflag=direct status=none | sha256sum; }
sum=$(host_read) || fail "host root's read of $LH failed before anything was asked"
log "host root's $LH on $(cat "/sys/block/$HN/loop/backing_file"), diskseq $(cat "/sys/block/$HN/diskseq")"

# in_ctr VIEW CMD: CMD (a shell command line) as container root: uid 0
# with no capability (empty bounding set, nothing inheritable), in a pid
# and mount namespace of its own. VIEW is how it sees host root's
# directory $H: "visible", bind-mounted read-only; "hidden", a tmpfs over
# it, empty; "decoy", that tmpfs with a host.img of the container's own.
# Its own images go to $W/ctr, a tmpfs of its own. Host root sets the
# mounts up (a container's runtime does) and then becomes container root.
in_ctr() {
    local view=$1 setup
    case $view in
        visible) setup="mount --bind '$H' '$H' && mount -o remount,bind,ro '$H'" ;;
        hidden) setup="mount -t tmpfs -o size=1m none '$H'" ;;
        decoy) setup="mount -t tmpfs -o size=1m none '$H' && truncate -s 8M '$H/host.img'" ;;
        *) fail "in_ctr: unknown view '$view'" ;;
    esac
    unshare --mount --propagation private --pid --fork --mount-proc bash -c \
        "$setup && mount -t tmpfs -o size=64m none '$W/ctr' &&
         exec setpriv --bounding-set=-all --inh-caps=-all -- bash -c \"\$0\"" "$2"
}

caps=$(in_ctr visible 'id -u; grep ^CapEff /proc/self/status; readlink /proc/self/ns/pid')
log "container root: $(tr '\n' ' ' <<<"$caps")"
[[ $caps == 0$'\n'"CapEff:"*0000000000000000* ]] || fail "container root is not uid 0 without capabilities: $caps"

FOREIGN='(ScopeNotOwned|ScopeNotAllowed|NotAllowed|NotAuthorized)'
# refused WHAT VIEW CMD: container root's CMD must fail with FOREIGN's
# errors, arm nothing, and leave host root's reads as they were.
refused() {
    local what=$1 out rc=0
    out=$(in_ctr "$2" "$3" 2>&1) || rc=$?
    if ((rc == 0)); then
        "$INJECTCTL" cancel "$(tail -n1 <<<"$out")" >/dev/null 2>&1 || true
        fail "container root armed $what on host root's $LH ($2): $out"
    fi
    [[ $out =~ $FOREIGN ]] || fail "container root, $what ($2): expected /$FOREIGN/, saw '$out'"
    log "container root, $what ($2): refused ($out)"
    assert_eq 0 "$(injections_left)" "injections armed after container root's $what ($2)"
    assert_eq "$sum" "$(host_read)" "host root's read of $LH after container root's $what ($2)"
}

py_inject() {
    # py_inject SOCKET DEVICE PATH MODE: Inject over Varlink with the
    # Python client, sending PATH opened with MODE as backing_fd.
    echo "PYTHONPATH='$SRC_DIR/python' PYTHONDONTWRITEBYTECODE=1 python3 -c '
import os, sys
from injectd.client import Client
sock, dev, path, mode = sys.argv[1:5]
fd = os.open(path, {\"rdonly\": os.O_RDONLY, \"path\": os.O_PATH, \"rdwr\": os.O_RDWR}[mode] | os.O_CLOEXEC)
try:
    print(Client(sock).inject(\"should_fail_bio\", \"EIO\", device=dev, backing_fd=fd, detach=True, duration=60)[\"id\"])
except Exception as e:
    print(type(e).__name__, e)
    sys.exit(1)
' '$SOCKET' '$1' '$2' '$3'"
}

spec="inject should_fail_bio --error EIO --device $LH --for 1min --detach"
for view in visible hidden decoy; do
    for t in --varlink ""; do
        # injectctl's own fd: read-write where it can open one (the
        # decoy), none where it cannot (read-only mount, nothing there).
        refused "injectctl ${t:-(D-Bus)}" "$view" "\"$INJECTCTL\" $t $spec"
    done
    # No fd at all: the daemon does not look the path up for the caller.
    refused "Varlink without backing_fd" "$view" \
        "\"$VARLINK_CALL\" \"$SOCKET\" org.injectd.Injector.Inject '{\"function\":\"should_fail_bio\",\"error\":\"EIO\",\"device\":\"$HN\",\"detach\":true,\"duration_usec\":60000000}'"
done
# An attacker's fds of the host file it sees read-only: a read-only fd (a
# read-write attachment needs a read-write one), and O_PATH (which is what
# injectctl sent before, and passes for O_RDONLY in F_GETFL).
for mode in rdonly path; do
    refused "Python client, $mode fd of host.img" visible "$(py_inject "$HN" "$H/host.img" "$mode")"
done
refused "bus-inject-fd, read-only fd of host.img" visible \
    "exec 5<\"$H/host.img\"; \"$BUS_INJECT_FD\" --backing 5 $HN should_fail_bio EIO"
# The decoy opened read-write by the attacker itself, both transports.
refused "Python client, rdwr fd of its decoy" decoy "$(py_inject "$HN" "$H/host.img" rdwr)"
refused "bus-inject-fd, rdwr fd of its decoy" decoy \
    "exec 5<>\"$H/host.img\"; \"$BUS_INJECT_FD\" --backing 5 $HN should_fail_bio EIO"

# ---- the container's own loop image: attached inside (root needs no
# capability for that, only /dev/loop-control's owner uid), its backing
# file sent read-write by injectctl: granted, and its I/O fails.
for t in --varlink ""; do
    out=$(in_ctr hidden "
        head -c 4M /dev/urandom >'$W/ctr/own.img'
        L=\$(losetup --show -f '$W/ctr/own.img') || exit 3
        echo \"dev \$L\"
        dd if=\$L of=/dev/null bs=4k count=1 iflag=direct status=none && echo 'before ok'
        id=\$(\"$INJECTCTL\" $t inject should_fail_bio --error EIO --device \$L --for 1min --detach) || exit 4
        echo \"id \$id\"
        dd if=\$L of=/dev/null bs=4k count=1 iflag=direct status=none 2>&1 && echo 'after ok'
        \"$INJECTCTL\" $t cancel \$id >/dev/null; echo \"cancel \$?\"
        losetup -d \$L" 2>&1) || fail "container root's own loop image (${t:-D-Bus}) failed ($?): $out"
    log "container root's own image (${t:-D-Bus}): $(tr '\n' ' ' <<<"$out")"
    assert_contains "$out" "before ok" "the container's read of its own device before the injection"
    assert_contains "$out" "Input/output error" "the container's read of its own device under its injection"
    assert_not_contains "$out" "after ok" "the container's read of its own device under its injection"
    assert_contains "$out" "cancel 0" "the container's cancel of its own injection"
done

assert_eq 0 "$(injections_left)" "injections left"
assert_eq "$sum" "$(host_read)" "host root's read of $LH at the end"
stop_injectd
finish
