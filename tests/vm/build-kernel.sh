#!/bin/bash
# tests/vm/build-kernel.sh - build the test kernel that tests/vm/run boots.
#
#   tests/vm/build-kernel.sh [--stock] [--config-only] [--force] [--jobs N]
#
# Normally the VM tests use the prebuilt ../shared/vmtest/bzImage. This
# script rebuilds an equivalent one from Debian's linux-source-6.1 package
# (apt-get install linux-source-6.1 flex bison bc libelf-dev libssl-dev
# dwarves; tools/setup.sh installs them), for machines without shared/ or to
# change the configuration:
#
#   defconfig + kvm_guest.config + tests/vm/kernel.config, then olddefconfig
#   --stock: the same plus tests/vm/kernel-stock.config, i.e. no
#            FUNCTION_ERROR_INJECTION, BPF_KPROBE_OVERRIDE, FAIL_FUNCTION
#            (like Debian's stock kernel)
#
# Everything is built in (9p, virtio, overlayfs, btrfs, loop, BPF, BTF):
# no modules, no initramfs. It takes about 16 minutes on 2 cores and some
# 3 GB of disk. The result is cached as $cache/bzImage (or bzImage-stock),
# where $cache is $INJECTD_KERNEL_CACHE, else tests/vm/.cache (gitignored);
# tests/vm/run looks there when ../shared/vmtest has no image. A stamp
# beside it records a hash of the fragments and the linux-source version:
# when they are unchanged the build is skipped (--force rebuilds). The
# source stays unpacked in $cache/linux-6.1 and the objects in
# $cache/obj-full or obj-stock (make O=...), so a rebuild after a config
# change is incremental.
#
# --config-only stops after olddefconfig and prints where the .config is;
# either way every option the fragments ask for is checked in the final
# .config (Kconfig silently drops options whose dependencies are missing,
# e.g. DEBUG_INFO_BTF without pahole), and a mismatch is an error.
set -euo pipefail

vm_dir=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
cache=${INJECTD_KERNEL_CACHE:-$vm_dir/.cache}
tarball=${INJECTD_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}

flavour=full config_only=0 force=0 jobs=$(($(nproc) + 1))
while (($#)); do
    case $1 in
        --stock) flavour=stock ;;
        --config-only) config_only=1 ;;
        --force) force=1 ;;
        --jobs) (($# >= 2)) || { echo "--jobs wants a number" >&2; exit 2; }; jobs=$2; shift ;;
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
        *) echo "unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done

fragments=("$vm_dir/kernel.config")
image=$cache/bzImage
if [[ $flavour == stock ]]; then
    fragments+=("$vm_dir/kernel-stock.config")
    image=$cache/bzImage-stock
fi

step_start=$SECONDS
step() { printf '[build-kernel %4ds] %s\n' $((SECONDS - step_start)) "$*"; }
die() { printf 'build-kernel: %s\n' "$*" >&2; exit 1; }

[[ -r $tarball ]] || die "no kernel source at '$tarball' (apt-get install linux-source-6.1)"
for tool in make gcc flex bison bc pahole; do
    command -v "$tool" >/dev/null || die "'$tool' is missing (run tools/setup.sh)"
done

# The stamp: what the image was built from. The tarball is identified by
# its package version (hashing 138 MB each time would be slow).
src_version=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
    src_version=$(stat -c '%s %Y' "$tarball")
stamp=$( {
    echo "recipe 1: defconfig kvm_guest.config fragments olddefconfig bzImage"
    echo "source $src_version"
    cat "${fragments[@]}"
} | sha256sum | cut -d' ' -f1)

if ((!force && !config_only)) && [[ -r $image && $(cat "$image.stamp" 2>/dev/null) == "$stamp" ]]; then
    step "up to date: $image"
    exit 0
fi

mkdir -p "$cache"
src=$cache/linux-6.1 obj=$cache/obj-$flavour
if [[ ! -f $src/.unpacked ]]; then
    step "unpacking $tarball into $src"
    rm -rf "$src"
    mkdir -p "$src"
    tar -xf "$tarball" -C "$src" --strip-components=1
    : >"$src/.unpacked"
fi

mkdir -p "$obj"
cd "$obj"
kmake() { make -C "$src" O="$obj" "$@"; }
step "configuring ($flavour): defconfig + kvm_guest.config + ${fragments[*]##*/}"
kmake -s defconfig >/dev/null
kmake -s kvm_guest.config >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" .config "${fragments[@]}" >merge_config.log
kmake -s olddefconfig >/dev/null

# Every option a fragment sets must be in the final .config as asked (the
# last fragment wins, as in merge_config.sh); "=n" means "is not set".
declare -A want=()
while IFS= read -r line; do
    if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
        want[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
        want[${BASH_REMATCH[1]}]=n
    fi
done < <(cat "${fragments[@]}")
mismatches=()
for opt in "${!want[@]}"; do
    got=$(sed -n "s/^$opt=//p" .config)
    [[ -n $got ]] || got=n
    [[ $got == "${want[$opt]}" ]] || mismatches+=("$opt: asked ${want[$opt]}, got $got")
done
if ((${#mismatches[@]})); then
    printf '  %s\n' "${mismatches[@]}" | sort >&2
    die "the final .config differs from the fragments (see $obj/merge_config.log)"
fi
step "configuration checked: all ${#want[@]} options as asked ($obj/.config)"
((config_only)) && exit 0

step "building bzImage with $jobs jobs (about 16 minutes on 2 cores)"
kmake -j"$jobs" bzImage >build.log 2>&1 || {
    tail -n 30 build.log >&2
    die "the build failed (full log: $obj/build.log)"
}
cp "$obj/arch/x86/boot/bzImage" "$image.new"
mv "$image.new" "$image"
echo "$stamp" >"$image.stamp"
step "done: $image"
