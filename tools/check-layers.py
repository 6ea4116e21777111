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


# --- Within a folder: no circle of files --------------------------------
#
# Each folder's files stand in one order, lowest first, written below. A
# file's unit is its name without .c/.h (and without .bpf; "X-none.c", the
# stand-in for X.c in a build without it, is of X). A file may use only its
# own unit and the units below it in its folder:
#   - include: a quoted #include of a header of the same folder;
#   - call: a name that another .c file of the folder defines (not static),
#     which catches the loops that run through a header declaring the
#     functions of several files (the include alone does not show those).
# So the files of a folder call one another one way, and no circle of
# files can form. A new file takes its place in the order.
ORDER = {
    "src/shared": [
        "cleanup", "edit-distance", "errno-name", "io-util", "log-journal", "log", "parse-util",
        "pidfd-util", "scope-kind", "string-util", "strv", "time-util", "duration", "utf8",
        "format-table", "varlink-idl", "varlink", "varlink-internal", "json-util", "json-build",
        "json-dispatch", "json-reader", "varlink-protocol", "varlink-client", "varlink-methods",
        "varlink-conn", "varlink-service", "varlink-server",
    ],
    "bpf": [
        "creds", "in-task", "task-tags", "vmlinux-min", "inject", "observe", "tags", "task-ns-record", "task-ns",
    ],
    "src/engine": [
        "functions", "hook-alternatives", "inject-error", "kallsyms", "guards", "arg-filters",
        "kconfig", "pin", "scope", "scope-device", "scope-tags", "slot-index", "probe-findings",
        "probe", "engine-internal", "engine-index", "task-ns", "engine", "engine-observe",
        "scope-roots", "observe", "site", "adopt", "disarm", "site-cache", "arm", "injectd-engine"
    ],
    "src/daemon": [
        "cgroup-path", "device-owner", "fault-stack", "policy-cgroup", "polkit", "privileges",
        "process-info", "caller", "audit", "request", "scope-resolve", "policy", "policy-model",
        "policy-parse", "policy-eval", "policy-load", "policy-check", "manager-types",
        "manager-listeners", "site-cache-timer", "fault-kmsg", "fault-redact", "injection-store",
        "injection", "authorize", "fault-events", "injection-json", "manage", "request-pipeline",
        "manager", "capabilities", "injectd", "observe-session",
    ],
    "src/daemon/api": [
        "bus-api", "bus-spec", "bus-util", "bus-requester", "bus-call", "bus-subscribers",
        "bus-owner", "bus-observe", "bus-injection", "bus-manager", "varlink-api", "varlink-util",
        "varlink-watch", "varlink-observe", "varlink-manager",
    ],
    "src/client": [
        "dlopen-libsystemd", "explore-findings", "explore-html", "explore-leftover", "explore-plan", "explore-sandbox", "held-child",
        "explore-setup", "kmsg", "kernel-reports", "explore-attribution", "spec", "transport",
        "event-watcher", "observe-call", "spec-request", "transport-bus", "transport-bus-watch",
        "transport-varlink", "cli", "cmd-run", "fault-run", "explore-print", "explore", "cmd-caps", "cmd-explore", "cmd-failcmd",
        "cmd-inject", "cmd-list", "cmd-sweep", "injectctl"
    ],
}

# The circles still open, each an arrow "folder/file -> unit" that climbs
# the order. Only the rooms being rebuilt today may have them (issue 31:
# src/engine by the "pool" helper, and
# src/client's cmd-*.c around injectctl.c). The list only shrinks: an
# arrow not on it fails the check, and so does one on it that is gone, so
# that it stays true.
KNOWN_ROOMS = {"src/engine", "src/client"}
KNOWN = {
    "src/engine/engine-index.c -> site",  # includes "site.h"; calls site_each_slot, site_foreach
    "src/engine/engine-internal.h -> engine",  # includes "engine.h"
    "src/engine/engine.c -> site-cache",  # includes "site-cache.h"; calls engine_set_site_linger, site_cache_free_all
    "src/engine/engine.c -> site",  # includes "site.h"; calls site_kprobe_preload, site_program_free, site_program_probe_fmod_ret
    "src/engine/site.c -> site-cache",  # includes "site-cache.h"; calls site_cache_held, site_cache_own, site_cache_put (+2)
    "src/engine/task-ns.c -> engine",  # includes "engine.h"
}

DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?[\s*]([a-z_]\w*)\(([^;{}]*?)\)\s*\{", re.M)
TOKEN = re.compile(r"\b[a-z_]\w*\b")


def unit_of(name):
    """The unit a file of a folder belongs to."""
    stem = re.sub(r"(\.bpf)?\.[ch]$", "", name)
    return stem[:-len("-none")] if stem.endswith("-none") else stem


def code_of(text):
    """text without comments and string literals, for finding names."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def folder_arrows(root, d):
    """Every arrow between two units of folder d: (from file, to unit, why)."""
    full = os.path.join(root, d)
    files = sorted(n for n in os.listdir(full) if n.endswith((".c", ".h")))
    texts = {}
    for n in files:
        with open(os.path.join(full, n), encoding="utf-8") as f:
            texts[n] = f.read()
    defined = {}
    for n in files:
        if n.endswith(".c"):
            for m in DEFINITION.finditer(code_of(texts[n])):
                defined.setdefault(m.group(1), set()).add(unit_of(n))
    arrows = []
    for n in files:
        u = unit_of(n)
        for m in INCLUDE.finditer(texts[n]):
            h = os.path.basename(m.group(1))
            if h in files and unit_of(h) != u:
                arrows.append((n, unit_of(h), f'includes "{h}"'))
        if n.endswith(".c"):
            calls = {}
            for tok in sorted(set(TOKEN.findall(code_of(texts[n])))):
                for v in defined.get(tok, ()):
                    if v != u:
                        calls.setdefault(v, []).append(tok)
            for v, names in sorted(calls.items()):
                more = f" (+{len(names) - 3})" if len(names) > 3 else ""
                arrows.append((n, v, "calls " + ", ".join(names[:3]) + more))
    return sorted({unit_of(n) for n in files}), arrows


def check_order(root):
    """The arrows against a folder's order that are not known, and how many known ones were met."""
    violations, seen = [], set()
    for d, order in ORDER.items():
        units, arrows = folder_arrows(root, d)
        rank = {u: i for i, u in enumerate(order)}
        for u in units:
            if u not in rank:
                violations.append(f"{d}/{u}: not in the order of {d}/ (ORDER in tools/check-layers.py)")
        for u in order:
            if u not in units:
                violations.append(f"{d}/{u}: in the order of {d}/, but no such file")
        for n, v, why in arrows:
            u = unit_of(n)
            if u not in rank or v not in rank or rank[v] < rank[u]:
                continue
            key = f"{d}/{n} -> {v}"
            if key in KNOWN and d in KNOWN_ROOMS:
                seen.add(key)
                continue
            violations.append(f"{key}: {why}, and {v} stands above {u} in {d}/'s order (a circle)")
    for key in sorted(KNOWN - seen):
        if os.path.dirname(key.split(" ")[0]) not in KNOWN_ROOMS:
            violations.append(f"{key}: known circles are allowed only in {', '.join(sorted(KNOWN_ROOMS))}")
        else:
            violations.append(f"{key}: on the list of known circles, but gone: take it off KNOWN")
    return violations, len(seen)


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
    circles, known = check_order(root)
    for v in circles:
        print(v)
    if violations or circles:
        print(f"check-layers: {len(violations)} include(s) cross a layer, {len(circles)} arrow(s) "
              f"against a folder's order (see tools/check-layers.py)")
        return 1
    print(f"check-layers: {len(files)} files, every include within its layers, "
          f"every folder in its order ({known} known circle arrow(s) left)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
