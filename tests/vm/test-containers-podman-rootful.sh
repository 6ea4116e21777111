#!/bin/bash
# Rootful podman (issue 14, item 4; acceptance 1, 2, 4, 5): root's job
# container asks the host's daemon for a fault through the Varlink socket
# bind-mounted read-write, the only host path it gets, with the static
# client in an image that holds nothing else but a shell and the test
# program; exactly its second getpgid() fails, while root outside the
# container and a second container of root's are untouched; sweep works
# there as on the host.
#
# How rootful podman runs in the plain VM (no systemd, no network):
# /etc/containers/storage.conf with driver vfs and the graph root on /tmp
# (a tmpfs: overlay cannot stack on the 9p root's overlay),
# containers.conf with cgroup_manager cgroupfs and events_logger file.
# Each container: podman run --rm -i --network=none -v SOCKET:SOCKET IMAGE
# CMD. The container's root is the host's uid 0 without CAP_SYS_ADMIN, an
# ordinary caller to the daemon: grant_container_root writes the policy
# rule an administrator would (lib-containers.sh): root may, in podman's
# container cgroups (/libpod_parent/libpod-*/** with cgroupfs) only; root
# outside them is refused (check_root_outside_refused).
#
# The job runs with --cap-drop=all: root holding the runtime's default
# capabilities in the initial user namespace arms its fault but is spared
# by it, as every task holding a capability there is (ctr_check_caps,
# lib-containers.sh, shows both).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"
. "$(dirname "$0")/lib-containers.sh"

daemon_setup
grant_container_root "/libpod_parent/libpod-*/**"
start_injectd

work=$(mktemp -d /tmp/containers.XXXXXX)
at_exit rm -rf "$work"

podman_prepare root
# Once: the scenario's teardown, or at exit if it stopped earlier (a second
# podman command would start the rootless pause process again).
_podman_cleanup() {
    [[ ! -e $work/cleaned ]] || return 0
    : >"$work/cleaned"
    podman rm --force --all >/dev/null 2>&1
    podman system reset --force >/dev/null 2>&1
    rm -rf /tmp/podman-graph-root /run/podman-run-root
}
at_exit _podman_cleanup

make_image_root "$work/root"
make_image_tar "$work/root" "$work/image.tar"
log "podman import, rootful"
podman import --quiet "$work/image.tar" "$IMAGE" >/dev/null

rootful_runtime podman "root, rootful podman" -v "$SOCKET:$SOCKET"

check_root_outside_refused
ctr_check_caps "$work"
ctr_checks "$work"

assert_eq "" "$(podman ps --all --quiet)" "containers left"
_podman_cleanup
assert_no_process "conmon" -x conmon

finish
