#!/usr/bin/env python3
"""tests/vm/stuck-cpus.py - where the guest's CPUs are, from outside.

    stuck-cpus.py QMP_SOCKET CONSOLE KALLSYMS TEXT

tests/vm/run runs this when a VM outlives its --timeout, before it kills
QEMU, and puts what it prints into the test's log:

 1. each vCPU's registers, from QEMU's monitor (`info registers -a`), with
    RIP symbolized, and the words on its kernel stack that point into
    kernel text (a raw scan, newest first: the return addresses are among
    them, and so are stale values). This works whatever the guest does,
    even with every CPU spinning with interrupts off. The symbols are a
    copy of the guest's /proc/kallsyms (KALLSYMS, from any boot of the
    same kernel), moved to this boot's KASLR offset: TEXT holds the
    `_text` line of this boot's /proc/kallsyms (init.sh writes both);
 2. the guest's own view: SysRq '9' (console loglevel 9, so what follows
    is not filtered by `loglevel=4`), 'l' (a backtrace of every CPU, by
    NMI) and 'w' (tasks blocked in D state), typed on the VM's keyboard;
    the kernel prints them on the console (CONSOLE), which run shows
    afterwards. This needs the CPU that takes the keyboard's interrupt
    to take interrupts;
 3. if the console says nothing within a few seconds of that, an NMI to
    every CPU from the monitor: the guest's `unknown_nmi_panic` then
    panics with the stack of the CPU that took it;
 4. whether each CPU's RIP changed in the meantime.

Everything is bounded in time (about 25 s at worst); any failure only
shortens the report. Exit status 0 unless the arguments are wrong.
"""

import bisect
import json
import os
import re
import socket
import sys
import time

DEADLINE = time.monotonic() + 25


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(path)
        self.buf = b""
        self._read()  # the greeting
        self.call("qmp_capabilities")

    def _read(self):
        while b"\n" not in self.buf:
            if time.monotonic() > DEADLINE:
                raise TimeoutError("out of time")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("QMP connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, cmd, **args):
        msg = {"execute": cmd}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._read()
            if "event" in reply:
                continue
            if "error" in reply:
                raise RuntimeError(f"{cmd}: {reply['error'].get('desc')}")
            return reply.get("return")

    def hmp(self, line):
        return self.call("human-monitor-command", **{"command-line": line})


class Symbols:
    """The guest's kernel text symbols, from a copy of /proc/kallsyms."""

    def __init__(self, path, text_path):
        self.addrs, self.names = [], []
        self.end = 0
        try:
            with open(text_path, encoding="utf-8") as f:
                text = int(f.read().split()[0], 16)
        except (OSError, ValueError, IndexError):
            return
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                entries = []
                for line in f:
                    parts = line.split()
                    if len(parts) < 3 or parts[1] not in "tTwW":
                        continue
                    addr = int(parts[0], 16)
                    if addr:
                        entries.append((addr, parts[2] + (" " + parts[3] if len(parts) > 3 else "")))
        except OSError:
            return
        # Another boot of the same kernel: everything moved by the same
        # KASLR offset.
        ours = next((a for a, n in entries if n == "_text"), None)
        if ours is None:
            return
        entries = sorted((a - ours + text, n) for a, n in entries)
        self.addrs = [a for a, _ in entries]
        self.names = [n for _, n in entries]
        # Text ends at _etext; past it nothing is ours to name.
        self.end = next((a for a, n in entries if n == "_etext"), 0)

    def __bool__(self):
        return bool(self.addrs)

    def lookup(self, addr):
        """'name+0xoff', or None outside the kernel's text."""
        if not self.addrs or addr < self.addrs[0] or addr >= self.end:
            return None
        i = bisect.bisect_right(self.addrs, addr) - 1
        return f"{self.names[i]}+{addr - self.addrs[i]:#x}"


REG = re.compile(r"\b(RIP|RSP|RFL|EFL|CR3)=([0-9a-f]+)")


def parse_cpus(text):
    """{cpu: {'RIP': int, 'RSP': int, 'EFL': int, 'CPL': int, 'HLT': int}}"""
    cpus, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*CPU#(\d+)", line)
        if m:
            cur = cpus.setdefault(int(m.group(1)), {})
            continue
        if cur is None:
            continue
        for name, val in REG.findall(line):
            cur.setdefault(name, int(val, 16))
        for name in ("CPL", "HLT", "II"):
            m = re.search(rf"\b{name}=(\d+)", line)
            if m:
                cur.setdefault(name, int(m.group(1)))
    return cpus


def describe(cpu, regs, syms):
    rip = regs.get("RIP", 0)
    where = syms.lookup(rip) if syms else None
    if regs.get("CPL", 0) == 3:
        where = "user space"
    elif where is None:
        where = "not kernel text: a BPF program or trampoline, a module, or no symbols" if syms else "no symbols"
    flags = []
    efl = regs.get("RFL", regs.get("EFL", 0))
    flags.append("interrupts on" if efl & 0x200 else "interrupts OFF")
    if regs.get("HLT"):
        flags.append("halted (HLT)")
    return f"CPU {cpu}: RIP {rip:016x} {where}; RSP {regs.get('RSP', 0):016x}; {', '.join(flags)}"


def stack_scan(qmp, cpu, rsp, syms, out):
    if not syms or rsp < 0xFFFF800000000000:
        return
    qmp.hmp(f"cpu {cpu}")
    dump = qmp.hmp(f"x/128gx {rsp:#x}")
    lines = []
    for m in re.finditer(r"^([0-9a-f]+):((?:\s+0x[0-9a-f]+)+)", dump, re.M):
        base = int(m.group(1), 16)
        for i, word in enumerate(m.group(2).split()):
            name = syms.lookup(int(word, 16))
            if name:
                lines.append(f"      [rsp+{base + 8 * i - rsp:#05x}] {int(word, 16):016x} {name}")
    if lines:
        out.append(f"    words on its stack that point into kernel text (newest first; stale ones too):")
        out.extend(lines[:40])


def console_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def wait_quiet(path, size0, first_secs, quiet_secs=2.0, max_secs=12.0):
    """Waits for the console to grow past size0 (up to first_secs), then to
    stay still for quiet_secs; returns whether it grew."""
    start = time.monotonic()
    size = console_size(path)
    changed = start
    if size != size0:
        changed = start
    while time.monotonic() < min(start + max_secs, DEADLINE):
        time.sleep(0.25)
        now = console_size(path)
        if now != size:
            size, changed = now, time.monotonic()
        elif size == size0 and time.monotonic() - start > first_secs:
            break
        elif size != size0 and time.monotonic() - changed > quiet_secs:
            break
    return size != size0


def main():
    if len(sys.argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    qmp_path, console, kallsyms, text = sys.argv[1:5]
    syms = Symbols(kallsyms, text)
    out = []

    def flush():
        for line in out:
            print(line, flush=True)
        out.clear()

    first = ""
    try:
        qmp = Qmp(qmp_path)
        first = qmp.hmp("info registers -a")
        cpus = parse_cpus(first)
        src = "symbols from the guest's /proc/kallsyms" if syms else "no symbols: the guest has not copied its /proc/kallsyms yet"
        out.append(f"the guest's CPUs when the time was up (QEMU monitor; {src}):")
        for cpu, regs in sorted(cpus.items()):
            out.append("  " + describe(cpu, regs, syms))
            try:
                stack_scan(qmp, cpu, regs.get("RSP", 0), syms, out)
            except Exception as e:  # noqa: BLE001 - a partial report is still a report
                out.append(f"    (no stack: {e})")
        flush()

        # The guest's own backtraces, by SysRq on the keyboard.
        size0 = console_size(console)
        for key in "9lw":
            qmp.hmp(f"sendkey alt-sysrq-{key}")
            time.sleep(0.3)
        if wait_quiet(console, size0, first_secs=4):
            out.append("SysRq 9, l, w typed on the keyboard: the guest's answer is in the console below")
            second = parse_cpus(qmp.hmp("info registers -a"))
            moved = [c for c in cpus if c in second and second[c].get("RIP") != cpus[c].get("RIP")]
            still = [c for c in cpus if c in second and c not in moved]
            out.append(f"a few seconds later, RIP was the same on CPU {', '.join(map(str, still)) or 'none'}"
                       f" and had changed on CPU {', '.join(map(str, moved)) or 'none'}")
        else:
            # The panic ends QEMU (-no-reboot): this is the last request.
            out.append("SysRq on the keyboard got no answer: an NMI instead (unknown_nmi_panic), "
                       "the guest's answer is in the console below")
            flush()
            size0 = console_size(console)
            qmp.hmp("nmi")
            wait_quiet(console, size0, first_secs=5)
    except Exception as e:  # noqa: BLE001
        out.append(f"(the QEMU monitor stopped answering: {e})")
    if first:
        # The general registers; the FPU and vector ones say nothing here.
        out.append("registers when the time was up:")
        out.extend("  " + line for line in first.splitlines()
                   if line.strip() and not re.match(r"\s*(FCW|FPR|XMM|YMM|ZMM|Opmask)", line))
    flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
