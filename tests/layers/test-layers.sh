#!/bin/bash
# SPDX-License-Identifier: MIT
# The layer check (tools/check-layers.py): the tree passes it, and a copy
# of the tree with a core file and an engine file that include a front
# end's header fails it, naming both; so does a copy in which a file
# includes or calls a file above it in its folder's order (a circle), or
# in which a circle on the list of known ones is gone. So the check can
# fail, and does.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
check=$src/tools/check-layers.py

"$check" "$src"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src"
cp -r "$src/bpf" "$tmp/"
cp -r "$src/src/shared" "$src/src/engine" "$src/src/daemon" "$src/src/client" "$tmp/src/"
echo '#include "bus-api.h"' >>"$tmp/src/engine/engine.c"
echo '#include "bus-spec.h"' >>"$tmp/src/daemon/manager.c"
echo '#include "manager.h"' >>"$tmp/src/client/injectctl.c"
# Within a folder: utf8.c is below varlink.h, cgroup-path.c below audit.c.
echo '#include "varlink.h"' >>"$tmp/src/shared/utf8.c"
printf 'void planted(void);\nvoid planted(void) {\n        audit_log(0, NULL, "");\n}\n' >>"$tmp/src/daemon/cgroup-path.c"
# A known circle closed without taking it off the list.
sed -i '/#include "engine.h"/d' "$tmp/src/engine/task-ns.c"

if out=$("$check" "$tmp"); then
    echo "FAIL: the check passed a tree whose engine and core include front-end headers" >&2
    exit 1
fi
for want in 'src/engine/engine.c:.*"bus-api.h"' 'src/daemon/manager.c:.*"bus-spec.h"' \
            'src/client/injectctl.c:.*"manager.h"' \
            'src/shared/utf8.c -> varlink: includes "varlink.h"' \
            'src/daemon/cgroup-path.c -> audit: calls audit_log' \
            'src/engine/task-ns.c -> engine: on the list of known circles, but gone'; do
    grep -q "$want" <<<"$out" || { echo "FAIL: no violation matching $want in:" >&2; echo "$out" >&2; exit 1; }
done
echo "ok: the planted violations were each reported"
