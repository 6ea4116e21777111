#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-layers.py - every file of src/ includes only the layers below it.

The layers, lowest first (README.md, "Layout"):

  src/shared        helpers every program uses
  bpf               the BPF programs' shared types (inject.h)
  src/engine        everything that touches BPF objects; no policy
  src/daemon        the daemon's core: the request pipeline, the table,
                    policy, polkit; it does not know its front ends
  src/daemon/api    the D-Bus and Varlink front ends
  src/client        injectctl, which speaks only the public APIs

A quoted #include is looked up by name in the source tree; one that names
a header of a layer the file may not use is a violation. Headers that are
generated (config.h, *.skel.h) are not in the tree and are not checked.

  tools/check-layers.py [SRCROOT]        exit 0: clean; 1: violations listed
"""

import os
import re
import sys

# Each layer: its directory, and the layers (directories) it may include.
LAYERS = {
    "src/shared": {"src/shared"},
    "bpf": {"bpf"},
    "src/engine": {"src/engine", "src/shared", "bpf"},
    "src/daemon": {"src/daemon", "src/engine", "src/shared", "bpf"},
    "src/daemon/api": {"src/daemon/api", "src/daemon", "src/engine", "src/shared", "bpf"},
    "src/client": {"src/client", "src/shared"},
}

# The daemon's main(): it assembles the core and the front ends it starts,
# so it alone of src/daemon may include both.
ENTRY_POINTS = {
    "src/daemon/injectd.c": "src/daemon/api",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    """The most specific layer directory that holds rel, or None."""
    best = None
    for d in LAYERS:
        if rel.startswith(d + "/") and os.path.dirname(rel) == d:
            best = d
    return best


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    # Where each header name lives: name -> set of layer directories.
    headers = {}
    files = []
    for d in LAYERS:
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            print(f"check-layers: {d}/ is missing under {root}", file=sys.stderr)
            return 1
        for name in sorted(os.listdir(full)):
            if name.endswith(".h"):
                headers.setdefault(name, set()).add(d)
            if name.endswith((".c", ".h")):
                files.append(f"{d}/{name}")

    violations = []
    for rel in files:
        allowed = LAYERS[ENTRY_POINTS.get(rel, layer_of(rel))]
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for lineno, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = os.path.basename(m.group(1))
            where = headers.get(name)
            if not where or where & allowed:
                continue
            violations.append(f"{rel}:{lineno}: includes \"{m.group(1)}\" of "
                              f"{', '.join(sorted(where))}, a layer {layer_of(rel)}/ may not use")

    for v in violations:
        print(v)
    if violations:
        print(f"check-layers: {len(violations)} include(s) cross a layer (see tools/check-layers.py)")
        return 1
    print(f"check-layers: {len(files)} files, every include within its layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
