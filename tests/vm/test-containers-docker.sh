#!/bin/bash
# Docker (issue 14, item 4; acceptance 1, 2, 4, 5): root's job container
# asks the host's daemon for a fault through the Varlink socket
# bind-mounted read-write, the only host path it gets, with the static
# client in an image that holds nothing else but a shell and the test
# program; exactly its second getpgid() fails, while root outside the
# container and a second container of root's are untouched; sweep works
# there as on the host.
#
# How Docker runs in the plain VM (no systemd, no veth, no bridge): the
# scenario starts dockerd itself (start_dockerd, lib-containers.sh:
# --data-root on /tmp, --storage-driver=vfs, --iptables=false
# --ip6tables=false --bridge=none, native.cgroupdriver=cgroupfs), which
# starts its own containerd; the image comes from `docker import` of a
# tarball. Each container: docker run --rm -i --network=none --mount
# type=bind,src=SOCKET,dst=SOCKET IMAGE CMD. The container's root is the
# host's uid 0 without CAP_SYS_ADMIN, an ordinary caller to the daemon:
# grant_container_root writes the policy rule an administrator would: root
# may, in Docker's container cgroups (/docker/* with cgroupfs) only; root
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
grant_container_root "/docker/*"
start_injectd

work=$(mktemp -d /tmp/containers.XXXXXX)
at_exit rm -rf "$work"

start_dockerd

make_image_root "$work/root"
make_image_tar "$work/root" "$work/image.tar"
log "docker import"
docker import "$work/image.tar" "$IMAGE" >/dev/null

rootful_runtime docker "root, Docker" --mount "type=bind,src=$SOCKET,dst=$SOCKET"

check_root_outside_refused
ctr_check_caps "$work"
ctr_checks "$work"

assert_eq "" "$(docker ps --all --quiet)" "containers left"
_stop_dockerd
assert_no_process "dockerd, containerd or shim" -f '^(dockerd|containerd)( |$)|containerd-shim'

finish
