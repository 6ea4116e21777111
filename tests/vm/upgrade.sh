#!/bin/bash
# tests/vm/upgrade.sh - test vm-upgrade-pins, on the host (issue 29, item
# 5): build the previous release's injectd from git (the commit in
# tests/vm/previous-release), then boot the VM and run
# tests/vm/test-upgrade-pins.sh, which starts today's daemon over the pins
# that one leaves.
#
# The build (about a minute of CPU, without sanitizers: it is the release
# as users run it) is kept in BUILD_DIR/upgrade-cache/COMMIT/, so a second
# run boots the VM at once. It needs that commit in the clone: a shallow
# clone fails here, saying so.
set -euo pipefail

vm_dir=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
src=${SRC_DIR:-$(cd "$vm_dir/../.." && pwd)}
build=${BUILD_DIR:-$src/build}
log() { printf 'upgrade: %s\n' "$*" >&2; }

commit=$(grep -v '^#' "$vm_dir/previous-release" | head -1)
[[ $commit =~ ^[0-9a-f]{40}$ ]] || { log "FAIL: tests/vm/previous-release names no commit: '$commit'"; exit 1; }
if ! git -C "$src" cat-file -e "$commit^{commit}" 2>/dev/null; then
    log "FAIL: the previous release's commit $commit is not in this clone (a shallow clone?): git fetch --unshallow"
    exit 1
fi

cache=$build/upgrade-cache
old=$cache/$commit
mkdir -p "$cache"
# One build at a time per build directory; a second run reuses it.
exec {lock}>"$cache/.lock"
flock "$lock"
if [[ -x $old/build/src/daemon/injectd ]]; then
    log "the previous release ($commit) is built already: $old"
else
    rm -rf "$old"
    mkdir -p "$old"
    git -C "$src" archive "$commit" | tar -C "$old" -xf -
    log "building the previous release ($commit) in $old (log: $old/build.log)"
    if ! (cd "$old" && meson setup -Db_sanitize=none -Dvm_tests=false build &&
          ninja -C build src/daemon/injectd) >"$old/build.log" 2>&1; then
        tail -30 "$old/build.log" >&2
        log "FAIL: the previous release did not build"
        rm -rf "$old/build/src/daemon/injectd"
        exit 1
    fi
fi
flock -u "$lock"

# 55 s idle (a 2-core host with other VMs: 50 to 60 s); 3x is 165: 300.
exec "$vm_dir/run" --timeout 300 --env "INJECTD_OLD=$old/build/src/daemon/injectd" -- \
    bash "$vm_dir/test-upgrade-pins.sh"
