#!/usr/bin/env python3
"""tools/vm-test-times.py [TESTLOG.json] - each VM test's duration in a run,
as the body of tests/vm/meson.build's vm_seconds table (issue 28, item 5:
every VM test's timeout is at least 3x its time, with that time beside it).

Run it on the build/meson-logs/testlog.json of a fresh-clone .ci/run on an
otherwise idle machine, and paste its output over the table's entries; a
test that did not pass is left out, and said so on stderr.
"""
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "build/meson-logs/testlog.json"
times = {}
with open(path) as f:
    for line in f:
        if not line.strip():
            continue
        t = json.loads(line)
        name = t["name"].split(" / ")[-1]     # "injectd:vm / vm-smoke"
        if not name.startswith("vm-"):
            continue
        if t.get("result") != "OK":
            print(f"{name}: {t.get('result')}, left out", file=sys.stderr)
            continue
        times[name] = round(t["duration"])
for name in sorted(times):
    print(f"        '{name}': {times[name]},")
