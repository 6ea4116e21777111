#!/bin/bash
# Rootless podman as alice (issue 14, item 4; acceptance 1, 2, 4, 5): a job
# container of hers asks the host's daemon for a fault through the only
# host path it gets, the Varlink socket bind-mounted read-write, with the
# static client in an image that holds nothing else but a shell and the
# test program; exactly its second getpgid() fails, while alice outside
# the container and a second container of hers are untouched; sweep works
# there as on the host.
#
# How rootless podman runs in the plain VM (no systemd, no logind, no
# network): alice has subordinate ids (/etc/subuid, /etc/subgid, used by
# the setuid newuidmap/newgidmap of uidmap), a runtime directory
# /run/user/UID that is hers (XDG_RUNTIME_DIR), her session cgroup
# delegated to her (chowned, as logind's user@.service is), and podman
# configured in ~/.config/containers: storage driver vfs with the graph
# root on /tmp (a tmpfs: overlay cannot stack on the 9p root's overlay),
# cgroup_manager cgroupfs and events_logger file (no systemd). Each
# container: podman run --rm -i --network=none -v SOCKET:SOCKET IMAGE CMD.
# The container's root is alice on the host (user namespace), so the
# default policy (group injectd) and polkit's sample rule judge her.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"
. "$(dirname "$0")/lib-containers.sh"

daemon_setup
start_injectd

work=$(mktemp -d /tmp/containers.XXXXXX)
chmod 0755 "$work"
at_exit rm -rf "$work"

grep -q '^alice:' /etc/subuid || echo alice:100000:65536 >>/etc/subuid
grep -q '^alice:' /etc/subgid || echo alice:100000:65536 >>/etc/subgid
chown -R alice: /sys/fs/cgroup/session-alice
podman_prepare alice
alice_uid=$(id -u alice)

# alice's podman, in her session cgroup, with her own environment.
apodman() {
    as alice env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/alice USER=alice LOGNAME=alice \
        XDG_RUNTIME_DIR="/run/user/$alice_uid" podman "$@"
}
# Once: the scenario's teardown, or at exit if it stopped earlier (a second
# podman command would start the rootless pause process again).
_podman_cleanup() {
    [[ ! -e $work/cleaned ]] || return 0
    : >"$work/cleaned"
    apodman rm --force --all >/dev/null 2>&1
    apodman system reset --force >/dev/null 2>&1
    # podman's rootless pause process holds her user namespace.
    local pause=/run/user/$alice_uid/libpod/tmp/pause.pid
    if [[ -s $pause ]]; then kill "$(cat "$pause")" 2>/dev/null; fi
    rm -rf "/tmp/podman-graph-alice" "/run/user/$alice_uid"
}
at_exit _podman_cleanup

make_image_root "$work/root"
make_image_tar "$work/root" "$work/image.tar"
chmod 0644 "$work/image.tar"
log "podman import, rootless"
apodman import --quiet "$work/image.tar" "$IMAGE" >/dev/null

CTR_WHO="alice, rootless podman"
ctr_run() {
    local name=$1
    shift
    apodman run --rm -i --name "$name" --network=none -v "$SOCKET:$SOCKET" "$IMAGE" "$@"
}
host_user() { as alice "$@"; }

ctr_checks "$work"

# Nothing of alice's is left: no container, no conmon, no pause process.
_podman_cleanup
assert_no_process "process of alice's (podman's pause process, conmon, a container)" -u alice

finish
