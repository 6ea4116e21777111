#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""report.py RAW.jsonl [--host HOST.json] [--json OUT] [--markdown]

Turns bench/in-vm.sh's raw measurements into issue 15's targets: for each,
one ratio per round (the thing against its baseline, measured back to back
in that round), their median, a distribution-free 95% interval for that
median, and a verdict: met when the whole interval is on the right side of
the bound, missed when it is wholly on the wrong side, inconclusive
otherwise. Prints the tables (--markdown: as Markdown, for
docs/performance.md) and writes --json (bench/results.json).

Absolute times are under TCG emulation (QEMU without KVM) on a shared
host, so only the ratios carry over to real hardware."""

import argparse
import json
import math
import statistics
import sys

CONF = 0.95


def fast(rounds):
    """The 5th percentile of a hot-path sample's rounds: the cost of a call
    when nothing interrupts (noise under TCG only ever adds time)."""
    v = sorted(rounds)
    return v[len(v) // 20]


def median_interval(xs):
    """The order-statistic interval for the median: [x(k), x(n+1-k)] with the
    largest k such that P(Binomial(n, 1/2) < k) <= 2.5%. Its coverage is at
    least 95% for any continuous distribution of independent rounds; no
    symmetry or normality is assumed. Returns (lo, hi, coverage), or None
    when n is too small (n < 6) for any such interval."""
    n = len(xs)
    s = sorted(xs)

    def cdf(k):  # P(B <= k)
        return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n

    k = 0
    while k < n and cdf(k) <= (1 - CONF) / 2:
        k += 1
    if k == 0:
        return None
    return s[k - 1], s[n - k], 1 - 2 * cdf(k - 1)


# Each target: the series in-vm.sh measures each round, how a round's
# ratio is made from them, and the bound. "num"/"den" are the series whose
# ratio is taken; for hot-path targets the ratio is of overheads over the
# round's no-program samples.
TARGETS = [
    {"id": "1", "key": "t1", "name": "first request, connected client",
     "wording": "Connected client, first request on a function never armed: <= 2x fail_function's arm.",
     "measured": "request to the probe's first fault (EIO); each round a system call never armed before, "
                 "the same one for injectd (alice's connected Varlink client) and fail_function",
     "baseline": "fail_function's arm (debugfs writes) of the same function, request to first fault",
     "num": "injectd", "den": "fail_function", "op": "<=", "bound": 2.0, "unit": "ms"},
    {"id": "2", "key": "t2", "name": "repeat request",
     "wording": "Repeat request on a recently used function: <= 1.5x a warm one.",
     "measured": "alice's connected client arms __x64_sys_openat again right after its last injection there "
                 "was cancelled; request to first fault",
     "baseline": "the same request with another injection holding the site (warm)",
     "num": "repeat", "den": "warm", "op": "<=", "bound": 1.5, "unit": "ms"},
    {"id": "3a", "key": "t3a", "name": "fresh injectctl --varlink, warm",
     "wording": "Fresh injectctl --varlink warm request: <= 1.3x injectctl --version.",
     "measured": "wall time of `injectctl --varlink inject __x64_sys_openat ... --detach` on a warm site, "
                 "started by alice's shell",
     "baseline": "wall time of `injectctl --version`, same shell",
     "num": "inject", "den": "version", "op": "<=", "bound": 1.3, "unit": "ms"},
    {"id": "3b", "key": "t3b", "name": "fresh client vs bpftrace",
     "wording": "First request from a fresh client: >= 20x faster than bpftrace.",
     "measured": "bpftrace's time over injectctl's (default transport, D-Bus), each on a function never "
                 "armed; request to first fault (EIO)",
     "baseline": "a fresh `injectctl inject` (the ratio is bpftrace / injectctl)",
     "num": "bpftrace", "den": "injectctl", "op": ">=", "bound": 20.0, "unit": "ms"},
    {"id": "4", "key": "t4", "name": "process-scope arm, 10,000 idle threads",
     "wording": "A process-scope arm with 10,000 extra idle threads on the machine: <= 1.5x without them.",
     "measured": "alice's connected client arms __x64_sys_openat (warm site) scoped to a new probe, with "
                 "the idle threads of another process running; request to first fault",
     "baseline": "the same arm without the threads",
     "num": "with", "den": "without", "op": "<=", "bound": 1.5, "unit": "ms"},
    {"id": "5a", "key": "t5a", "name": "ListInjections, 256 armed",
     "wording": "ListInjections with 256 armed: <= 10x with 1.",
     "measured": "ListInjections from alice's connected client with 256 of her injections armed "
                 "(median of 5 calls a side)",
     "baseline": "the same with 1 armed",
     "num": "list256", "den": "list1", "op": "<=", "bound": 10.0, "unit": "ms"},
    {"id": "5b", "key": "t5b", "name": "arm with 32 sites",
     "wording": "An arm with 32 sites armed: <= 1.2x with 1.",
     "measured": "alice's connected client arms __x64_sys_openat (warm) with 31 other functions' sites "
                 "attached; request to first fault",
     "baseline": "the same arm with only __x64_sys_openat's site attached",
     "num": "arm32", "den": "arm1", "op": "<=", "bound": 1.2, "unit": "ms"},
    {"id": "6a", "key": "t6", "name": "hot path, caller tagged for another user's scope",
     "wording": "Hot path: a caller tagged for another user's scope: <= 1.5x the empty-program floor.",
     "measured": "getppid() overhead for bob's caller, tagged by a process scope of another injection (root's, "
                 "rooted at bob's shell), with alice's process-scope injection on __do_sys_getppid",
     "baseline": "the overhead of an empty program of the same backend on the same function",
     "num": "tagged", "den": "floor", "op": "<=", "bound": 1.5, "unit": "ns", "hot": True},
    {"id": "6b", "key": "t6", "name": "hot path, caller in a nested cgroup",
     "wording": "Hot path: a caller in a nested cgroup: <= 1.5x the empty-program floor.",
     "measured": "getppid() overhead for bob's caller in a cgroup 5 levels deep, with alice's cgroup-scope "
                 "injection (on a cgroup of hers 5 levels deep) on __do_sys_getppid",
     "baseline": "the overhead of an empty program of the same backend on the same function",
     "num": "nested", "den": "floor", "op": "<=", "bound": 1.5, "unit": "ns", "hot": True},
    {"id": "7", "key": "t7", "name": "fork+exit with a process scope",
     "wording": "fork+exit rate with a process scope armed: >= 0.95x without.",
     "measured": "fork+exit+wait rate of bob's process (outside every scope) with alice's process-scope "
                 "injection armed (the ratio is the rate with / the rate without)",
     "baseline": "the same with no process scope armed",
     "num": "without", "den": "with", "op": ">=", "bound": 0.95, "unit": "us/fork"},
    {"id": "8", "key": "t8", "name": "1,000-step sweep, cold vs warm",
     "wording": "A 1,000-step sweep: cold runs per second >= 0.9x warm; report runs per minute.",
     "measured": "seconds per run of chunks of the sweep with nothing else on the function (cold), the ratio "
                 "being cold runs per second / warm runs per second",
     "baseline": "chunks with another injection holding the site (warm)",
     "num": "warm", "den": "cold", "op": ">=", "bound": 0.9, "unit": "ms/run"},
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


def sample_value(r):
    """The figure of one sample: the value, or the estimate from its rounds."""
    res = r.get("result")
    if r["target"] == "t6" and res:
        return fast(res["ns_per_call"])
    if r["target"] == "t7" and res:
        return statistics.median(res["us_per_fork"])
    return r.get("value")


def by_round(recs, key):
    """{round: {series: [values]}}, and the failures."""
    rounds, errors = {}, []
    for r in recs:
        if r.get("kind") != "sample" or r.get("target") != key or r.get("round", 0) < 1:
            continue
        if "error" in r:
            errors.append({"round": r["round"], "series": r["series"], "error": r["error"]})
            continue
        v = sample_value(r)
        if v is not None:
            rounds.setdefault(r["round"], {}).setdefault(r["series"], []).append(v)
    return rounds, errors


def phases_summary(recs, key, series):
    """Median of each phase (ms) over the samples of SERIES that carry the
    arm's phases from the daemon's debug log."""
    ph = [r["phases"] for r in recs if r.get("kind") == "sample" and r.get("target") == key
          and r.get("series") == series and r.get("round", 0) >= 1 and r.get("phases")]
    if not ph:
        return None
    out = {"arms": len(ph)}
    for k in ("total_ms", "load_ms", "verify_ms", "attach_ms", "tag_ms", "verified_insns"):
        vals = [p[k] for p in ph if k in p]
        if vals:
            out[k] = statistics.median(vals)
    tasks = [r["last_arm"]["tag_tasks"] for r in recs if r.get("kind") == "sample" and r.get("target") == key
             and r.get("series") == series and r.get("round", 0) >= 1
             and isinstance(r.get("last_arm"), dict) and "tag_tasks" in r["last_arm"]]
    if tasks:
        out["tag_tasks"] = statistics.median(tasks)
    backends = sorted({p["backend"] for p in ph if p.get("backend")})
    if backends:
        out["backend"] = backends
    return out


def engine_delta(before, after):
    """Mean phases per arm (ms) between two GetCapabilities .engine snapshots."""
    if not before or not after:
        return None
    arms = after.get("arms", 0) - before.get("arms", 0)
    if arms <= 0:
        return {"arms": 0}
    out = {"arms": arms}
    a, b = after.get("arm_total", {}), before.get("arm_total", {})
    for k in ("total_usec", "load_usec", "verify_usec", "attach_usec", "tag_usec"):
        if k in a and k in b:
            out[k.replace("_usec", "_ms")] = (a[k] - b[k]) / arms / 1000
    for k in ("programs_loaded", "programs_reattached"):
        if k in after and k in before:
            out[k] = after[k] - before[k]
    return out


def verdict(op, bound, iv, med):
    if iv is None:
        return "inconclusive"
    lo, hi = iv[0], iv[1]
    if op == "<=":
        return "met" if hi <= bound else ("missed" if lo > bound else "inconclusive")
    return "met" if lo >= bound else ("missed" if hi < bound else "inconclusive")


def phase_text(p):
    if not p:
        return ""
    parts = []
    for k, name in (("load_ms", "load"), ("verify_ms", "verify"), ("attach_ms", "attach"), ("tag_ms", "tag")):
        if p.get(k):
            parts.append(f"{name} {p[k]:.1f} ms")
    s = ", ".join(parts) or "no load, verify, attach or tag"
    if p.get("verified_insns"):
        s += f" ({p['verified_insns']:.0f} instructions verified)"
    if p.get("tag_tasks") is not None:
        s += f" ({p['tag_tasks']:.0f} tasks visited by tagging)"
    if p.get("total_ms") is not None:
        s += f"; the engine's whole arm {p['total_ms']:.1f} ms"
    if p.get("backend"):
        s += f" [{','.join(p['backend'])}]"
    return s


def evaluate(recs, t):
    rounds, errors = by_round(recs, t["key"])
    ratios, num_vals, den_vals, used, nones = [], [], [], [], []
    for rnd in sorted(rounds):
        s = rounds[rnd]
        if t["num"] not in s or t["den"] not in s:
            continue
        num, den = statistics.median(s[t["num"]]), statistics.median(s[t["den"]])
        if t.get("hot"):
            if "none" not in s:
                continue
            none = statistics.median(s["none"])
            nones.append(none)
            num, den = num - none, den - none
            if den <= 0:
                continue
        if not den:
            continue
        ratios.append(num / den)
        num_vals.append(num)
        den_vals.append(den)
        used.append(rnd)
    row = {
        "target": t["id"], "name": t["name"], "wording": t["wording"], "measured": t["measured"],
        "baseline": t["baseline"], "bound": t["bound"], "op": t["op"],
        "rounds": len(ratios), "rounds_failed": sorted({e["round"] for e in errors} - set(used)),
        "median_ratio": statistics.median(ratios) if ratios else None,
        "interval_95": None, "interval_coverage": None,
        "ratios": ratios,
        # The medians of each side over the rounds used (an overhead over
        # the no-program samples for the hot path), in unit.
        "numerator": {"series": t["num"], "unit": t["unit"], "overhead": bool(t.get("hot")),
                      "median": statistics.median(num_vals) if num_vals else None},
        "denominator": {"series": t["den"], "unit": t["unit"], "overhead": bool(t.get("hot")),
                        "median": statistics.median(den_vals) if den_vals else None},
        "errors": errors[:10],
    }
    if nones:
        row["median_no_program_ns"] = statistics.median(nones)
    iv = median_interval(ratios) if ratios else None
    if iv:
        row["interval_95"] = [iv[0], iv[1]]
        row["interval_coverage"] = iv[2]
    row["verdict"] = verdict(t["op"], t["bound"], iv, row["median_ratio"]) if ratios else "not measured"
    # Where the time went: the daemon's phases for the arms measured.
    ph_num, ph_den = phases_summary(recs, t["key"], t["num"]), phases_summary(recs, t["key"], t["den"])
    if ph_num:
        row["phases_" + t["num"]] = ph_num
    if ph_den:
        row["phases_" + t["den"]] = ph_den
    if t["key"] == "t8":
        deltas = {}
        for s in ("cold", "warm"):
            ds = [engine_delta(r.get("engine_before"), r.get("engine_after")) for r in recs
                  if r.get("kind") == "sample" and r.get("target") == "t8" and r.get("series") == s and "value" in r]
            ds = [d for d in ds if d and d.get("arms")]
            if ds:
                deltas[s] = {k: statistics.median([d[k] for d in ds if k in d]) for k in ds[0]}
        row["phases_per_arm"] = deltas
        runs = {s: sum(r["summary"]["runs"] for r in recs if r.get("kind") == "sample" and r.get("target") == "t8"
                       and r.get("series") == s and "summary" in r) for s in ("cold", "warm")}
        wall = {s: sum(r["wall_ms"] for r in recs if r.get("kind") == "sample" and r.get("target") == "t8"
                       and r.get("series") == s and "wall_ms" in r) for s in ("cold", "warm")}
        row["runs"] = runs
        row["runs_per_minute"] = {s: 60000 * runs[s] / wall[s] if wall[s] else None for s in runs}
    row["reason"] = reason(t, row)
    return row


def reason(t, row):
    """What the measurements say about where the time goes."""
    u = t["unit"]
    num, den = row["numerator"]["median"], row["denominator"]["median"]
    if num is None or den is None:
        return "not measured"
    what = "overhead " if t.get("hot") else ""
    s = f"median {what}{t['num']} {num:.1f} {u} against {t['den']} {den:.1f} {u}"
    if row.get("median_no_program_ns"):
        s += f" (getppid() itself: {row['median_no_program_ns']:.0f} ns)"
    for side in (t["num"], t["den"]):
        p = row.get("phases_" + side)
        if p:
            s += f"; {side}'s arm in the daemon (median): {phase_text(p)}"
    if t["key"] == "t8":
        for side, p in row.get("phases_per_arm", {}).items():
            s += f"; {side} chunks, per arm (mean): {phase_text(p)}"
            if p.get("programs_loaded") is not None:
                s += f", {p['programs_loaded']:.0f} programs loaded and {p.get('programs_reattached', 0):.0f} re-attached a chunk"
        rpm = row.get("runs_per_minute", {})
        if rpm.get("cold") and rpm.get("warm"):
            s += f"; {rpm['cold']:.0f} runs per minute cold, {rpm['warm']:.0f} warm"
    return s


REQUESTS_PER_RUN = 3


def clients_row(recs):
    c = next((r for r in recs if r.get("kind") == "clients"), None)
    row = {"target": "9", "name": "concurrent injectctl run clients",
           "wording": "1,000 concurrent injectctl run clients (or the documented maximum, if lower and explained): "
                      "all served, none lost; daemon CPU time per request reported.",
           "measured": "clients started at once by alice's shell, each `injectctl --varlink run --fail "
                       "__do_sys_getppid:EPERM -- first-fault --hold ...`; released once all are armed; served = "
                       "the command saw its fault and the client exited 0",
           "baseline": "none (a count: every client served)", "op": "==", "bound": None}
    if not c:
        row.update(verdict="not measured", reason="not measured")
        return row
    if "error" in c and "served" not in c:
        row.update(verdict="not measured", reason=c["error"])
        return row
    n = c["clients"]
    # None: the daemon was gone when the run ended (no /proc/PID/stat).
    cpu_s = c["daemon_cpu_ticks"] / c["clk_tck"] if c.get("daemon_cpu_ticks") is not None else None
    row.update({
        "clients": n, "ready": c["ready"], "served": c["served"], "failed": c["failed"],
        "not_armed": c.get("not_armed", 0), "lost": c["lost"],
        "stuck": next((r for r in recs if r.get("kind") == "clients-stuck"), None),
        "bound": n, "rounds": 1, "median_ratio": c["served"] / n if n else None,
        "interval_95": None,
        "daemon_gone": bool(c.get("daemon_gone")),
        "daemon_cpu_s": cpu_s, "daemon_cpu_ms_per_client": 1000 * cpu_s / n if n and cpu_s is not None else None,
        # A --varlink run makes 3 requests (src/client/cmd-run.c): Inject,
        # Watch of its own injection (its event stream, a second
        # connection), Cancel, whose removal event brings the final
        # counters.
        "requests_per_client": REQUESTS_PER_RUN,
        "daemon_cpu_ms_per_request": 1000 * cpu_s / n / REQUESTS_PER_RUN if n and cpu_s is not None else None,
        "arm_all_s": c["arm_all_ms"] / 1000, "total_s": c["total_ms"] / 1000,
        "daemon_rss_kib": c.get("daemon_rss_kib"), "daemon_hwm_kib": c.get("daemon_hwm_kib"),
        "min_mem_available_kib": c.get("min_mem_available_kib"), "mem_total_kib": c.get("mem_total_kib"),
        "phases_per_arm": engine_delta(c.get("engine_before"), c.get("engine_after")),
        "client_errors": c.get("client_errors"),
    })
    # A daemon that died under the load did not serve it, whatever the
    # clients' exit status (run exits with its command's).
    row["verdict"] = "met" if c["served"] == n and not row["daemon_gone"] else "missed"
    cpu = (f"daemon CPU {cpu_s:.1f} s ({row['daemon_cpu_ms_per_client']:.1f} ms per client, "
           f"{row['daemon_cpu_ms_per_request']:.1f} ms per request: Inject, Watch, Cancel)"
           if cpu_s is not None else "daemon CPU not known: the daemon was gone at the end"
           + (f" ({c['daemon_died']})" if c.get("daemon_died") else ""))
    row["reason"] = (f"{c['served']} of {n} served, {c['failed']} failed, {row['not_armed']} never armed, "
                     f"{c['lost']} lost; {c['ready']} armed and ready within {row['arm_all_s']:.0f} s; {cpu}; "
                     f"per arm: {phase_text(row['phases_per_arm'])}")
    if c.get("client_errors"):
        row["reason"] += f"; client errors: {c['client_errors'][:300]}"
    st = row["stuck"]
    if st:
        row["reason"] += (f"; when arms stopped at {st['ready']}: daemon state {st.get('daemon_state')} "
                          f"({st.get('wchan')}), {st.get('daemon_fds')} descriptors, "
                          f"{st.get('alice_injectctl')} clients alive, {st.get('mem_available_kib', 0) // 1024} MiB "
                          f"available")
    return row


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
            print("|" + "|".join("---" for _ in self.header) + "|")
            for r in self.rows:
                print("| " + " | ".join(r) + " |")
            return
        print(f"\n{self.title}")
        w = [max(len(x) for x in col) for col in zip(self.header, *self.rows)]
        for n, r in enumerate([self.header] + self.rows):
            print("  " + "  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
            if n == 0:
                print("  " + "  ".join("-" * x for x in w))


def fmt(v, spec=".2f", suffix=""):
    return "-" if v is None else f"{v:{spec}}{suffix}"


def print_all(res, md):
    t = Table("Targets (paired per-round ratios; median and distribution-free 95% interval)",
              ["#", "target", "rounds", "median", "95% interval", "bound", "verdict"], md)
    for r in res["targets"]:
        if r["target"] == "9":
            t.add("9", r["name"], 1, f"{r.get('served', '-')}/{r.get('clients', '-')} served", "-",
                  "all served", r["verdict"])
            continue
        iv = r["interval_95"]
        ivs = f"{iv[0]:.2f} - {iv[1]:.2f}" if iv else "(too few rounds)"
        failed = f" ({len(r['rounds_failed'])} failed)" if r["rounds_failed"] else ""
        t.add(r["target"], r["name"], f"{r['rounds']}{failed}", fmt(r["median_ratio"], ".2f", "x"), ivs,
              f"{r['op']} {r['bound']:g}x", r["verdict"])
    t.print()

    fails = [(r["target"], e) for r in res["targets"] for e in r.get("errors", [])]
    if fails:
        t = Table("Samples that could not be taken (their rounds are left out)", ["#", "round", "side", "why"], md)
        for tid, e in fails:
            t.add(tid, e["round"], e["series"], e["error"][:200])
        t.print()

    t = Table("Where the time goes (medians over the rounds; absolute times under TCG emulation)",
              ["#", "measured", "reason"], md)
    for r in res["targets"]:
        t.add(r["target"], r["name"], r.get("reason", "-"))
    t.print()


def compact(rec):
    """A raw record for results.json: hot-path and fork samples keep the
    summary of their rounds (bench/run --raw keeps every round)."""
    res = rec.get("result")
    if rec.get("kind") != "sample" or not res:
        return rec
    out = dict(rec)
    if "ns_per_call" in res:
        out["result"] = {"rounds": len(res["ns_per_call"]), "p5_ns": fast(res["ns_per_call"]),
                         "median_ns": statistics.median(res["ns_per_call"]),
                         "ancestry": res.get("ancestry")}
    elif "us_per_fork" in res:
        out["result"] = {"rounds": len(res["us_per_fork"]), "median_us": statistics.median(res["us_per_fork"])}
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
                "compare the ratios, each taken within one round of this one run.",
        "method": "Each target is a ratio per round of the thing to its baseline, measured back to back in "
                  "that round (order alternating). The figure is the median of the rounds' ratios; the interval "
                  "is the distribution-free order-statistic interval for that median (coverage >= 95%, given "
                  "as interval_coverage). met: the whole interval clears the bound; missed: the whole interval "
                  "is on the wrong side; inconclusive otherwise.",
        "meta": meta,
        "host": host,
        "targets": [evaluate(recs, t) for t in TARGETS] + [clients_row(recs)],
        "hot_setup": next((r for r in recs if r.get("kind") == "hot-setup"), None),
        "threads": [r for r in recs if r.get("kind") == "threads"],
        "stalls": [r for r in recs if r.get("kind") == "daemon-stall"],
        "groups_failed": [r for r in recs if r.get("kind") == "group-failed"],
        "daemon_log": [r["line"] for r in recs if r.get("kind") == "daemon-log"],
    }
    res["raw"] = [compact(r) for r in recs if r.get("kind") not in ("meta", "daemon-log")]

    if not a.markdown:
        loads = host.get("host_load_1min_each_minute") or []
        during = f", {min(loads):.1f} to {max(loads):.1f} during the run" if loads else ""
        print(f"injectd benchmarks (issue 15), kernel {meta.get('kernel', '?')}, {meta.get('vcpus', '?')} vCPUs, "
              f"{meta.get('bpftrace', '?')}; host load average {host.get('host_loadavg_before', '?')} at the start, "
              f"{host.get('host_loadavg_after', '?')} at the end{during}; {host.get('started', '?')} to "
              f"{host.get('ended', '?')}. Ratios compare within each round.")
    print_all(res, a.markdown)
    for g in res["groups_failed"]:
        print(f"\nwarning: group {g['group']} stopped part-way (status {g['status']})", file=sys.stderr)
    for s in res["stalls"]:
        print(f"\nwarning: the daemon did not answer {s.get('who')} within the timeout: {s.get('wchan')}",
              file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
