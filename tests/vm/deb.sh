#!/bin/bash
# tests/vm/deb.sh - test vm-deb, on the host (issue 18, acceptance 1): build
# the Debian packages from a copy of the source with `dpkg-buildpackage -us
# -uc -b`, check them with lintian (an error fails the test), then boot the
# VM with systemd and nothing of the project installed (tests/vm/run
# --systemd --no-install) and run tests/vm/test-deb.sh there: dpkg installs
# the packages, the main job (tools/demo.sh) runs through them, purge
# removes what they added.
#
# The build takes minutes of CPU, so its result is kept in
# BUILD_DIR/deb-cache/HASH/, HASH being that of the source files' contents
# (git ls-files: tracked and untracked, not ignored): a second run of an
# unchanged tree boots the VM at once. Only the newest build is kept. The
# unit suite is not run by this build (DEB_BUILD_OPTIONS=nocheck): it runs
# in meson test anyway; `dpkg-buildpackage` by hand runs it.
#
#   tests/vm/deb.sh               build (or reuse), lintian, the VM
#   tests/vm/deb.sh --build-only  build (or reuse) and lintian; prints the
#                                 packages' directory
set -euo pipefail
build_only=0
[[ ${1:-} == --build-only ]] && build_only=1

vm_dir=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
src=${SRC_DIR:-$(cd "$vm_dir/../.." && pwd)}
build=${BUILD_DIR:-$src/build}
cache=$build/deb-cache
log() { printf 'deb: %s\n' "$*" >&2; }

for tool in dpkg-buildpackage lintian git; do
    command -v "$tool" >/dev/null || { log "FAIL: '$tool' not found (tools/setup.sh installs it)"; exit 1; }
done
missing=$(cd "$src" && dpkg-checkbuilddeps 2>&1) || {
    log "FAIL: build dependencies missing: $missing"
    exit 1
}

# The source files: tracked and untracked, not ignored, that exist (a
# tracked file deleted in the work tree is not part of it).
files() {
    local f
    git -C "$src" ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
        [[ -e $src/$f || -L $src/$f ]] && printf '%s\0' "$f"
    done
}
hash=$(cd "$src" && files | sort -z | xargs -0 sha256sum -- | sha256sum | cut -c1-16)
debs=$cache/$hash
# One build at a time per build directory (another run of this test, or
# --build-only by hand): the second waits and reuses the first's packages.
mkdir -p "$cache"
exec {lock}>"$cache/.lock"
flock "$lock"
if [[ -e $debs/ok ]]; then
    log "packages of this source already built: $debs"
else
    work=$cache/$hash.work
    rm -rf "$work"
    mkdir -p "$work/src"
    files | tar -C "$src" --null -T - -cf - | tar -C "$work/src" -xf -
    log "dpkg-buildpackage -us -uc -b in $work/src (log: $work/build.log)"
    start=$SECONDS
    # The system's PATH: tools such as pyenv's python3 first in root's
    # PATH would build python3-injectd for another Python than Debian's.
    if ! (cd "$work/src" && env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=$(nproc)" \
        dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1); then
        tail -n 40 "$work/build.log" | sed 's/^/  | /' >&2
        log "FAIL: dpkg-buildpackage failed"
        exit 1
    fi
    log "built in $((SECONDS - start)) s"
    # lintian: errors fail; what it says is kept next to the packages.
    lintian --fail-on error --info "$work"/*.changes >"$work/lintian.txt" 2>&1 || {
        sed 's/^/  | /' "$work/lintian.txt" >&2
        log "FAIL: lintian reports errors"
        exit 1
    }
    mkdir -p "$debs"
    mv "$work"/*.deb "$work"/*.changes "$work/lintian.txt" "$debs/"
    rm -rf "$work"
    # Only the newest packages are kept.
    find "$cache" -mindepth 1 -maxdepth 1 ! -name "$hash" ! -name .lock -exec rm -rf {} +
    touch "$debs/ok"
fi
log "lintian: $(grep -c '^[EWIP]:' "$debs/lintian.txt" || true) tags, none an error (errors fail the build above)"
sed 's/^/  | /' "$debs/lintian.txt" >&2

exec {lock}>&-
if ((build_only)); then
    echo "$debs"
    exit 0
fi
exec "$vm_dir/run" --systemd --no-install --env "INJECTD_DEBS=$debs" -- bash "$vm_dir/test-deb.sh"
