#!/bin/bash
# tools/setup.sh - make this machine able to build and test injectd, then
# configure and build it in ./build.
#
# Debian 12, as root. Idempotent: apt runs only when a package is missing,
# so a second run goes straight to meson (a few seconds). Installs what the
# build (clang, bpftool, libbpf, libsystemd, json-c, libcap, meson), the
# tests (QEMU for the VM suite, btrfs-progs, D-Bus, polkit, ...),
# tests/vm/build-kernel.sh (linux-source-6.1 and its build tools) and
# bench/run (bpftrace and BCC, the tools it compares injectd with) need.
#
#   tools/setup.sh                 install, `meson setup build`, compile
#   BUILD_DIR=out tools/setup.sh   the same in another build directory
#   MESON_SETUP_ARGS='-Dvm_tests=false' tools/setup.sh
#
# build/ is the test build: AddressSanitizer and UndefinedBehaviorSanitizer
# are on (-Db_sanitize=address,undefined), so every test, unit or VM, also
# checks memory errors, leaks and undefined behaviour (docs/sanitizers.md).
# MESON_SETUP_ARGS come after that default and may override it
# (-Db_sanitize=none). What you install or benchmark is built without them:
# README.md ("Installing on a real machine"), bench/run.
set -euo pipefail

src_dir=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
build_dir=${BUILD_DIR:-build}

packages=(
    # build
    gcc clang llvm pkg-config meson ninja-build
    bpftool libbpf-dev libsystemd-dev libjson-c-dev libcap-dev zlib1g-dev
    # tests and the test VM
    qemu-system-x86 btrfs-progs e2fsprogs dbus polkitd pkexec socat util-linux
    systemd libcap2-bin
    procps iproute2 iputils-ping kmod jq python3 libglib2.0-bin
    # the Python client's pytest plugin, run in the VM (vm-python-client)
    python3-pytest
    # the static shell of the image that holds nothing else (vm-client-static)
    busybox-static
    # the real container runtimes of vm-containers (tests/vm/lib-containers.sh):
    # podman with crun (its first choice of runtime; conmon, containers-common
    # and runc come as dependencies) and netavark (containers-common needs a
    # network stack, even for --network=none); uidmap's setuid newuidmap and
    # newgidmap for rootless podman; docker.io (pulls containerd, runc and
    # tini); systemd-container for systemd-nspawn
    podman crun netavark uidmap docker.io systemd-container
    # the fuzz suite (libFuzzer, clang's sanitizer runtimes: only recommended
    # by clang) and the daemon under valgrind (docs/sanitizers.md)
    libclang-rt-14-dev valgrind
    # tests/vm/build-kernel.sh
    linux-source-6.1 make xz-utils flex bison bc cpio libelf-dev libssl-dev dwarves
    # man pages (scdoc builds them), shell completion
    man-db groff-base scdoc bash-completion
    # the Debian packages (debian/; tests/vm/deb.sh builds them for vm-deb):
    # their build dependencies beyond the build's own, and lintian
    debhelper dh-python pybuild-plugin-pyproject python3-all python3-setuptools
    libxml2-utils lintian
    # bench/run: the peers injectd is measured against
    bpftrace bpfcc-tools
)

if ((EUID != 0)); then
    echo "tools/setup.sh: run as root (it installs packages)" >&2
    exit 1
fi

# Which packages are not installed yet ("install ok installed" is dpkg's
# word for a complete install; anything else needs apt).
missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) || status=
    [[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "tools/setup.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
else
    echo "tools/setup.sh: all ${#packages[@]} packages already installed"
fi

cd "$src_dir"
# shellcheck disable=SC2086 # MESON_SETUP_ARGS is a list of words
setup_args="-Db_sanitize=address,undefined ${MESON_SETUP_ARGS:-}"
if [[ -f $build_dir/meson-private/coredata.dat ]]; then
    meson setup --reconfigure $setup_args "$build_dir"
else
    meson setup $setup_args "$build_dir"
fi
meson compile -C "$build_dir"
