#!/usr/bin/env python3
"""bench/explore-report.py RAW.jsonl [--host HOST.json] - issue 28 item 6's
figures from bench/explore-in-vm.sh's measurements.

Per workload and round, explore's runs per minute over its run phase (the
first run's start to the last run's end: --setup and the discovery run,
once per plan, are before it and shown apart) divided by the plain loop's
executions per minute (the same script, one at a time, in the same round).
Also the ratio over explore's whole command (--setup, discovery, runs,
--cleanup) against the plain loop's (--setup, executions, --cleanup).
Rounds are few (3 to 5): the spread given is the lowest and highest
ratio, not an interval; a target is "met" when every round meets it,
"met at the median" when the median does and some round does not."""
import argparse
import json
import statistics
import sys

TARGETS = {"jobs1": 0.8, "jobs2": 1.5}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--host")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.raw) if l.strip()]
    if a.host:
        host = json.load(open(a.host))
        print(f"host: {host.get('host_cpus')} CPUs, {host.get('started')} to {host.get('ended', '?')}")
        print(f"  uptime before: {host.get('host_uptime_before', '').strip()}")
        print(f"  uptime after:  {host.get('host_uptime_after', '').strip()}")
        print(f"  1-min load each minute: {host.get('host_load_1min_each_minute')}")
    for w in sorted({r["workload"] for r in rows}):
        print(f"\n{w}:")
        by = {}
        for r in rows:
            if r["workload"] == w:
                by.setdefault(r["round"], {})[r["series"]] = r
        for rnd in sorted(by):
            s = by[rnd]
            p = s.get("plain")
            line = [f"  round {rnd}:"]
            if p:
                line.append(f"plain {p['runs']} in {p['run_phase_usec'] / 1e6:.1f}s "
                            f"({60e6 * p['runs'] / p['run_phase_usec']:.1f}/min, {p['failed']} failed), "
                            f"whole {p['total_usec'] / 1e6:.1f}s;")
            for j in ("jobs1", "jobs2"):
                e = s.get(j)
                if not e:
                    continue
                if "error" in e or not e.get("run_phase_usec"):
                    line.append(f"{j}: {e.get('error', 'no runs')} (status {e.get('status')});")
                    continue
                line.append(f"{j} {e['runs']} runs ({e['fired']} fired, {e['script_failed']} script failed, "
                            f"{e['findings']} findings) in {e['run_phase_usec'] / 1e6:.1f}s "
                            f"({60e6 * e['runs'] / e['run_phase_usec']:.1f}/min), "
                            f"whole {e['total_usec'] / 1e6:.1f}s;")
            print(" ".join(line))
        for j, target in TARGETS.items():
            ratios, whole = [], []
            for rnd in sorted(by):
                p, e = by[rnd].get("plain"), by[rnd].get(j)
                if not p or not e or "error" in e or not e.get("run_phase_usec") or not e["runs"]:
                    continue
                ratios.append((e["runs"] / e["run_phase_usec"]) / (p["runs"] / p["run_phase_usec"]))
                whole.append((e["runs"] / e["total_usec"]) / (p["runs"] / p["total_usec"]))
            if not ratios:
                print(f"  {j}: nothing measured")
                continue
            med = statistics.median(ratios)
            verdict = ("met" if min(ratios) >= target else
                       "met at the median" if med >= target else "NOT met")
            print(f"  {j} vs plain (target >= {target}x): rounds {', '.join(f'{x:.2f}' for x in ratios)}; "
                  f"median {med:.2f}x, spread {min(ratios):.2f} to {max(ratios):.2f}: {verdict}. "
                  f"Whole command: median {statistics.median(whole):.2f}x "
                  f"({min(whole):.2f} to {max(whole):.2f})")


if __name__ == "__main__":
    sys.exit(main())
