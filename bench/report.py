#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""report.py RAW.jsonl [--host HOST.json] [--json OUT] [--markdown]

Turns bench/in-vm.sh's raw measurements into one table per benchmark
(printed) and bench/results.json. Every figure is set against a baseline
from the same run; absolute times are under TCG emulation (QEMU without
KVM), where a guest instruction costs many host ones, so only the ratios
carry over to real hardware. --markdown prints the tables as Markdown, for
docs/performance.md."""

import argparse
import json
import statistics
import sys

ARM_TOOLS = [
    # (key, label, what it is set against)
    ("injectctl-dbus", "injectctl inject (D-Bus), cold", None),
    ("injectctl-varlink", "injectctl --varlink inject, cold", None),
    ("varlink-resident", "Varlink, client already connected, cold", None),
    ("injectctl-dbus-kprobe", "injectctl inject --backend kprobe (D-Bus), cold", None),
    ("injectctl-dbus-cached", "injectctl inject (D-Bus), cached site", None),
    ("injectctl-varlink-cached", "injectctl --varlink inject, cached site", None),
    ("varlink-resident-cached", "Varlink, client already connected, cached site", None),
    ("injectctl-dbus-kprobe-cached", "injectctl inject --backend kprobe (D-Bus), cached site", None),
    ("injectd-engine", "injectd-engine arm (no daemon), cold", None),
    ("injectctl-dbus-warm", "injectctl inject (D-Bus), warm site", None),
    ("injectctl-varlink-warm", "injectctl --varlink inject, warm site", None),
    ("varlink-resident-warm", "Varlink, client already connected, warm site", None),
    ("bpftrace", "bpftrace -e 'kprobe:... { override(-2) }' --unsafe", None),
    ("fail_function", "fail_function (debugfs writes)", None),
    ("injectctl-dbus-failslab", "injectctl inject should_failslab (D-Bus), cold", None),
    ("bcc-inject-kmalloc", "BCC inject kmalloc (should_failslab, pid predicate)", "injectctl-dbus-failslab"),
]
ARM_BASELINE = "injectctl-dbus"

HOT_CONFIGS = [
    ("none", "no program attached", None),
    ("empty-kprobe", "empty kprobe program (floor)", None),
    ("empty-fmod_ret", "empty fmod_ret program (floor)", None),
    ("injectd-kprobe-1", "injectd kprobe, 1 injection", "empty-kprobe"),
    ("injectd-fmod_ret-1", "injectd fmod_ret, 1 injection", "empty-fmod_ret"),
    ("injectd-kprobe-1-deeper", "injectd kprobe, 1 injection, caller 4 processes deeper", "empty-kprobe"),
    ("injectd-fmod_ret-1-deeper", "injectd fmod_ret, 1 injection, caller 4 processes deeper", "empty-fmod_ret"),
    ("injectd-kprobe-1-cgroup", "injectd kprobe, 1 injection, cgroup scope", "empty-kprobe"),
    ("injectd-fmod_ret-1-cgroup", "injectd fmod_ret, 1 injection, cgroup scope", "empty-fmod_ret"),
    ("bpftrace-nomatch", "bpftrace, non-matching predicate", "empty-kprobe"),
    ("fail_function-taskfilter", "fail_function, task filter", "empty-kprobe"),
    ("injectd-kprobe-10", "injectd kprobe, 10 injections", "empty-kprobe"),
    ("injectd-kprobe-100", "injectd kprobe, 100 injections", "empty-kprobe"),
    ("injectd-fmod_ret-10", "injectd fmod_ret, 10 injections", "empty-fmod_ret"),
    ("injectd-fmod_ret-100", "injectd fmod_ret, 100 injections", "empty-fmod_ret"),
]


def load(path):
    recs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError as e:
                print(f"report.py: {path}:{n}: not JSON ({e}), ignoring", file=sys.stderr)
    return recs


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, spec=".1f", suffix=""):
    return "-" if v is None else f"{v:{spec}}{suffix}"


# ---------------------------------------------------------------- arm latency

def arm_results(recs):
    samples, errors, backends, errnos = {}, {}, {}, {}
    for r in recs:
        if r.get("kind") != "arm":
            continue
        t = r["tool"]
        if "ms" in r:
            samples.setdefault(t, []).append(r["ms"])
            if r.get("backend"):
                backends.setdefault(t, set()).add(r["backend"])
            errnos.setdefault(t, set()).add(r.get("errno"))
        else:
            errors.setdefault(t, []).append(r.get("error"))
    out = {}
    for key, label, _ in ARM_TOOLS:
        s = samples.get(key, [])
        out[key] = {
            "label": label,
            "n": len(s),
            "median_ms": statistics.median(s) if s else None,
            "min_ms": min(s) if s else None,
            "max_ms": max(s) if s else None,
            "samples_ms": s,
            "errno": sorted(e for e in errnos.get(key, []) if e),
            "backend": sorted(backends.get(key, [])),
            "errors": errors.get(key, []),
        }
    base = out[ARM_BASELINE]["median_ms"]
    for key, _, against in ARM_TOOLS:
        out[key]["x_injectctl_dbus"] = ratio(out[key]["median_ms"], base)
        if against:
            out[key]["x_" + against.replace("-", "_")] = ratio(out[key]["median_ms"], out[against]["median_ms"])
    setup = [r for r in recs if r.get("kind") == "arm-setup"]
    return {"baseline": ARM_BASELINE, "tools": out, "setup": setup}


def arm_targets(arm):
    t = arm["tools"]
    res = []

    def target(name, slow, fast):
        r = ratio(t[slow]["median_ms"], t[fast]["median_ms"])
        res.append({"target": name, "ratio": r, "need": 20.0,
                     "met": None if r is None else r >= 20.0,
                     "what": f"{slow} median / {fast} median"})

    target("arm latency at least 20x lower than bpftrace (first request on the function: program loaded)",
           "bpftrace", "injectctl-dbus")
    target("arm latency at least 20x lower than bpftrace (repeated within the grace period: program re-attached)",
           "bpftrace", "injectctl-dbus-cached")
    target("arm latency at least 20x lower than BCC (like for like: should_failslab)",
           "bcc-inject-kmalloc", "injectctl-dbus-failslab")
    return res


# ---------------------------------------------------------------- hot path

def fast(rounds):
    """The 5th percentile: the cost of a call when nothing interrupts."""
    v = sorted(rounds)
    return v[len(v) // 20]


def hot_results(recs):
    """Each sample's estimate is the 5th percentile of its rounds. Each configuration's
    sample is set against the mean of the nearest no-program samples
    before and after it in the same pass; the median of those ratios over
    the passes is the figure, and ns = ratio x the median no-program time."""
    seq = [r for r in recs if r.get("kind") == "hot"]
    errors, extra, ratios, mins, ctl, anc = {}, {}, {}, {}, {}, {}
    for i, r in enumerate(seq):
        c = r["config"]
        if "result" not in r:
            errors.setdefault(c, []).append(r.get("error"))
            continue
        m = fast(r["result"]["ns_per_call"])
        mins.setdefault(c, []).append(m)
        if r["result"].get("ancestry", -1) > 0:
            anc.setdefault(c, []).append(r["result"]["ancestry"])
        if r["result"].get("control_ns_per_call"):
            ctl.setdefault(c, []).append(m / fast(r["result"]["control_ns_per_call"]))
        if "check" in r:
            extra.setdefault(c, {}).setdefault("checks", []).append(r["check"])
        if c == "none":
            continue
        near = []
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(seq) and seq[j].get("pass") == r.get("pass"):
                if seq[j]["config"] == "none" and "result" in seq[j]:
                    near.append(fast(seq[j]["result"]["ns_per_call"]))
                    break
                j += step
        if near:
            ratios.setdefault(c, []).append(m / statistics.mean(near))
    checks = [r for r in recs if r.get("kind") == "hot-check"]
    none = statistics.median(mins["none"]) if "none" in mins else None
    # A second estimate, for a cross-check: getppid against the getpid
    # rounds that follow each of its rounds, over the same ratio without
    # any program.
    ctl_none = statistics.median(ctl["none"]) if "none" in ctl else None
    out = {}
    for key, label, _ in HOT_CONFIGS:
        rs = ratios.get(key, [])
        x = 1.0 if key == "none" and none else (statistics.median(rs) if rs else None)
        out[key] = {
            "label": label,
            "samples": len(mins.get(key, [])),
            # Processes from the caller up to PID 1: how far a process-scope
            # lookup walks.
            "ancestry": statistics.median(anc[key]) if key in anc else None,
            "sample_p5_ns": mins.get(key, []),
            "sample_x_none": rs,
            "x_none": x,
            "x_none_control": ratio(statistics.median(ctl[key]), ctl_none) if key in ctl else None,
            "ns": x * none if x is not None and none else None,
            "errors": errors.get(key, []),
            **extra.get(key, {}),
        }
    for key, _, floor in HOT_CONFIGS:
        o = out[key]
        o["overhead_ns"] = (o["x_none"] - 1) * none if o["x_none"] is not None and none else None
    for key, _, floor in HOT_CONFIGS:
        o = out[key]
        if floor:
            o["floor"] = floor
            o["x_floor_overhead"] = ratio(o["overhead_ns"], out[floor]["overhead_ns"])
    # What each extra process between the caller and PID 1 costs it.
    per_ancestor = {}
    for b in ("kprobe", "fmod_ret"):
        a, d = out[f"injectd-{b}-1"], out[f"injectd-{b}-1-deeper"]
        if None not in (a["overhead_ns"], d["overhead_ns"], a["ancestry"], d["ancestry"]) and d["ancestry"] > a["ancestry"]:
            per_ancestor[b] = (d["overhead_ns"] - a["overhead_ns"]) / (d["ancestry"] - a["ancestry"])
    return {"function": None, "none_ns": none, "configs": out, "checks": checks,
            "ns_per_ancestor": per_ancestor}


def hot_targets(hot):
    c = hot["configs"]
    res = []

    def ov(k):
        return c[k]["overhead_ns"]

    for b in ("kprobe", "fmod_ret"):
        r = ratio(ov(f"injectd-{b}-1"), ov(f"empty-{b}"))
        res.append({"target": f"non-matching caller, injectd {b}: at most 1.5x the empty {b} program's cost",
                    "ratio": r, "need": 1.5, "met": None if r is None else r <= 1.5,
                    "what": f"overhead of injectd-{b}-1 / overhead of empty-{b}"})
        r = ratio(ov(f"injectd-{b}-1"), ov("fail_function-taskfilter"))
        res.append({"target": f"non-matching caller, injectd {b}: less than fail_function with a task filter",
                    "ratio": r, "need": 1.0, "met": None if r is None else r < 1.0,
                    "what": f"overhead of injectd-{b}-1 / overhead of fail_function-taskfilter"})
        r = ratio(ov(f"injectd-{b}-100"), ov(f"injectd-{b}-1"))
        res.append({"target": f"100 injections on one function ({b}): at most 3x what 1 costs a non-matching caller",
                    "ratio": r, "need": 3.0, "met": None if r is None else r <= 3.0,
                    "what": f"overhead of injectd-{b}-100 / overhead of injectd-{b}-1"})
    return res


# ---------------------------------------------------------------- sweep

def sweep_results(recs):
    bare = [r["usec"] / 1000 for r in recs if r.get("kind") == "sweep-bare"]
    out = {"fixture_alone_ms": statistics.median(bare) if bare else None, "sweeps": []}
    for r in recs:
        if r.get("kind") != "sweep":
            continue
        if "error" in r:
            out["sweeps"].append({"name": r["name"], "error": r["error"]})
            continue
        s = r["summary"]
        wall = r["wall_usec"] / 1e6
        cmd = (s.get("cmd_usec") or 0) / 1e6
        runs = s["runs"]
        out["sweeps"].append({
            "name": r["name"],
            "status": r["status"],
            "runs": runs,
            "fired": s.get("fired"),
            "stopped": s.get("stopped"),
            "problems": s.get("problems"),
            "wall_s": wall,
            "runs_per_s": runs / wall if wall else None,
            "ms_per_run": 1000 * wall / runs if runs else None,
            "cmd_share": cmd / wall if wall else None,
            "outside_cmd_share": 1 - cmd / wall if wall else None,
            "outside_cmd_ms_per_run": 1000 * (wall - cmd) / runs if runs else None,
        })
    return out


# ---------------------------------------------------------------- footprint

def footprint_results(recs):
    out = {"states": {}}
    for r in recs:
        if r.get("kind") == "footprint":
            secs = r["window_usec"] / 1e6
            st = {
                "rss_kib": r["rss_kb"],
                "hwm_kib": r["hwm_kb"],
                "cpu_percent": 100 * r["cpu_ticks"] / r["clk_tck"] / secs if secs else None,
                "window_s": secs,
            }
            if "cycles" in r:
                st["cycles"] = r["cycles"]
                st["cycles_per_s"] = {k: v / secs for k, v in r["cycles"].items()}
            out["states"][r["state"]] = st
        elif r.get("kind") == "footprint-arm":
            out["arm_100"] = {"armed": r["armed"], "s": r["usec"] / 1e6,
                              "per_s": r["armed"] / (r["usec"] / 1e6) if r["usec"] else None}
    idle = out["states"].get("idle", {}).get("rss_kib")
    for st in out["states"].values():
        st["x_idle_rss"] = ratio(st["rss_kib"], idle)
    return out


# ---------------------------------------------------------------- printing

class Table:
    def __init__(self, title, header, markdown):
        self.title, self.header, self.rows, self.md = title, header, [], markdown

    def add(self, *cells):
        self.rows.append([str(c) for c in cells])

    def print(self):
        if self.md:
            print(f"\n**{self.title}**\n")
            print("| " + " | ".join(self.header) + " |")
            print("|" + "|".join("---" if i == 0 else "--:" for i in range(len(self.header))) + "|")
            for r in self.rows:
                print("| " + " | ".join(r) + " |")
            return
        print(f"\n{self.title}")
        w = [max(len(x) for x in col) for col in zip(self.header, *self.rows)]
        for n, r in enumerate([self.header] + self.rows):
            print("  " + "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)).rstrip())
            if n == 0:
                print("  " + "  ".join("-" * x for x in w))


def print_all(res, md):
    arm, hot, sweep, fp = res["arm"], res["hot"], res["sweep"], res["footprint"]

    t = Table("Arm latency: request to first injected fault (median; ms under TCG emulation)",
              ["tool", "runs", "median ms", "min", "max", "x injectctl D-Bus", "backend", "errno"], md)
    for key, label, against in ARM_TOOLS:
        o = arm["tools"][key]
        if not o["n"] and not o["errors"]:
            continue
        x = fmt(o["x_injectctl_dbus"], ".2f", "x")
        if against and o.get("x_" + against.replace("-", "_")) is not None:
            x += f" ({o['x_' + against.replace('-', '_')]:.1f}x vs {against})"
        t.add(label, o["n"] if not o["errors"] else f"{o['n']} ({len(o['errors'])} failed)",
              fmt(o["median_ms"], ".0f"), fmt(o["min_ms"], ".0f"), fmt(o["max_ms"], ".0f"), x,
              ",".join(o["backend"]) or "-", ",".join(o["errno"]) or "-")
    t.print()

    t = Table(f"Hot path: getppid() from a process outside every scope ({hot.get('function') or '__do_sys_getppid'}; "
              "5th percentile of 1 ms rounds, against adjacent no-program runs; ns under TCG emulation)",
              ["configuration", "samples", "ancestry", "ns/call", "x none", "x none (control)", "overhead ns",
               "x floor overhead", "floor"], md)
    for key, label, floor in HOT_CONFIGS:
        o = hot["configs"][key]
        if not o["samples"] and not o["errors"]:
            continue
        t.add(label if not o["errors"] else f"{label} ({len(o['errors'])} failed)",
              o["samples"], fmt(o["ancestry"], ".0f"), fmt(o["ns"], ".0f"), fmt(o["x_none"], ".2f", "x"), fmt(o["x_none_control"], ".2f", "x"),
              fmt(o["overhead_ns"], ".0f"), fmt(o.get("x_floor_overhead"), ".2f", "x"), floor or "-")
    for b, v in hot.get("ns_per_ancestor", {}).items():
        t.add(f"(injectd {b}: each process between caller and PID 1)", "", "", "", "", "", fmt(v, ".0f"), "", "")
    t.print()

    t = Table("Sweep throughput: injectctl sweep --fail should_failslab,caller=__x64_sys_eventfd2 -- sweep-target 3",
              ["sweep", "runs", "runs/s", "ms/run", "outside CMD", "outside CMD ms/run"], md)
    for s in sweep["sweeps"]:
        if "error" in s:
            t.add(s["name"], s["error"], "", "", "", "")
            continue
        t.add(s["name"], s["runs"], fmt(s["runs_per_s"], ".2f"), fmt(s["ms_per_run"], ".0f"),
              fmt(100 * s["outside_cmd_share"] if s["outside_cmd_share"] is not None else None, ".0f", "%"),
              fmt(s["outside_cmd_ms_per_run"], ".0f"))
    if sweep["fixture_alone_ms"] is not None:
        t.add("(sweep-target 3 alone, ms)", "", "", fmt(sweep["fixture_alone_ms"], ".0f"), "", "")
    t.print()

    t = Table("Daemon footprint: injectd (RSS; CPU of one CPU, under TCG emulation)",
              ["state", "RSS MiB", "x idle", "peak RSS MiB", "CPU %", "client cycles/s"], md)
    for name, st in fp["states"].items():
        cyc = st.get("cycles_per_s")
        t.add(name, fmt(st["rss_kib"] / 1024, ".1f"), fmt(st["x_idle_rss"], ".2f", "x"),
              fmt(st["hwm_kib"] / 1024, ".1f"), fmt(st["cpu_percent"], ".1f"),
              ", ".join(f"{k} {v:.2f}" for k, v in cyc.items()) if cyc else "-")
    if fp.get("arm_100"):
        a = fp["arm_100"]
        t.add(f"(arming {a['armed']} through one Varlink connection: {a['per_s']:.0f}/s)", "", "", "", "", "")
    t.print()

    t = Table("Targets (ratios from this run)", ["target", "ratio", "need", "met"], md)
    for g in res["targets"]:
        cmp = ">=" if "20x" in g["target"] else ("<" if "less than" in g["target"] else "<=")
        t.add(g["target"], fmt(g["ratio"], ".2f", "x"), f"{cmp} {g['need']:g}x",
              "-" if g["met"] is None else ("yes" if g["met"] else "NO"))
    t.print()


def compact(rec):
    """A raw record for results.json: a hot-path sample keeps the summary of
    its rounds, not every round (bench/run --raw keeps those)."""
    res = rec.get("result")
    if rec.get("kind") != "hot" or not res:
        return rec
    out = dict(rec)
    out["result"] = {
        "calls_per_round": res.get("calls_per_round"),
        "rounds": len(res["ns_per_call"]),
        "p5_ns": fast(res["ns_per_call"]),
        "median_ns": statistics.median(res["ns_per_call"]),
        "control_p5_ns": fast(res["control_ns_per_call"]) if res.get("control_ns_per_call") else None,
        "ancestry": res.get("ancestry"),
    }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("raw")
    ap.add_argument("--host")
    ap.add_argument("--json")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()

    recs = load(a.raw)
    meta = next((r for r in recs if r.get("kind") == "meta"), {})
    host = {}
    if a.host:
        with open(a.host) as f:
            host = json.load(f)
    res = {
        "note": "Absolute times are under TCG emulation (QEMU without KVM) on a shared 2-core host; "
                "compare the ratios, which are taken within this one run.",
        "meta": meta,
        "host": host,
        "arm": arm_results(recs),
        "hot": hot_results(recs),
        "sweep": sweep_results(recs),
        "footprint": footprint_results(recs),
        "daemon_log": [r["line"] for r in recs if r.get("kind") == "daemon-log"],
    }
    res["hot"]["function"] = meta.get("hot_function")
    res["targets"] = arm_targets(res["arm"]) + hot_targets(res["hot"])
    res["raw"] = [compact(r) for r in recs]

    if not a.markdown:
        print(f"injectd benchmarks, kernel {meta.get('kernel', '?')}, {meta.get('vcpus', '?')} vCPUs, "
              f"{meta.get('bpftrace', '?')}, BCC {meta.get('bcc', '?')}. "
              "Absolute figures are under TCG emulation; the ratios compare within this run.")
    print_all(res, a.markdown)
    for c in res["hot"]["checks"]:
        if c.get("check") != "EPERM" or c.get("calls_seen") != 1:
            print(f"\nwarning: {c['config']} pass {c['pass']}: the in-scope check saw {c.get('check')!r} and "
                  f"calls_seen {c.get('calls_seen')} (expected EPERM and 1)", file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
