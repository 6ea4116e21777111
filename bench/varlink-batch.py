#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""varlink-batch.py SOCKET: Varlink calls from one client that is already
running when each request leaves.
varlink-batch.py --cycle SECS SOCKET FUNCTION PID: Inject, ListInjections,
Cancel in a loop for SECS seconds; print the number of cycles done.

Reads one call per line on standard input, {"method": M, "parameters": P},
sends each in turn on one connection (a new one if the daemon closed it
for being idle) and prints one line per reply:

    {"t0_ns": T0, "t1_ns": T1, "reply": REPLY}

T0 is CLOCK_REALTIME just before the call is sent, T1 just after the reply
is read. The benchmarks use it to arm and cancel many injections quickly,
and to time a request without the cost of starting a client process (under
TCG, loading a dynamically linked program takes a second or more), so the
daemon's own share of the arm latency shows.

--cycle is the resident client of the daemon-footprint benchmark's client
mix: as fast as one connection goes, the injection scoped to process PID.

Exit status: 0, or 1 when some reply was an error, 2 usage, 3 connection
failure."""

import json
import socket
import sys
import time


def call(sock, method, params):
    sock.sendall(json.dumps({"method": method, "parameters": params}).encode() + b"\0")
    buf = b""
    while not buf.endswith(b"\0"):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the daemon closed the connection")
        buf += chunk
    return json.loads(buf[:-1])


def connect(path):
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        return sock
    except OSError as e:
        print(f"varlink-batch: cannot connect to '{path}': {e}", file=sys.stderr)
        return None


def cycle(secs, path, function, pid):
    sock = connect(path)
    if not sock:
        return 3
    inject = {"function": function, "error": "EPERM", "scope": "process", "pid": pid,
              "duration_usec": 600000000, "detach": True}
    n = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        reply = call(sock, "org.injectd.Injector.Inject", inject)
        if "error" in reply:
            print(f"varlink-batch: Inject: {json.dumps(reply)}", file=sys.stderr)
            return 1
        call(sock, "org.injectd.Injector.ListInjections", {})
        call(sock, "org.injectd.Injector.Cancel", {"id": reply["parameters"]["id"]})
        n += 1
    print(n)
    return 0


def main(argv):
    if len(argv) == 6 and argv[1] == "--cycle":
        return cycle(float(argv[2]), argv[3], argv[4], int(argv[5]))
    if len(argv) != 2:
        print("usage: varlink-batch.py SOCKET < CALLS\n"
              "       varlink-batch.py --cycle SECS SOCKET FUNCTION PID", file=sys.stderr)
        return 2
    sock = connect(argv[1])
    if not sock:
        return 3

    failed = False
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        t0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
        try:
            reply = call(sock, req["method"], req.get("parameters", {}))
        except (OSError, ConnectionError) as e:
            # The daemon closes a connection idle for --idle-timeout (2 min),
            # as it should; the benchmark's pauses can be longer. A closed
            # connection has not read the call: connect again and send it
            # once more, timed from the new attempt.
            print(f"varlink-batch: {e}; connecting again", file=sys.stderr)
            sock.close()
            sock = connect(argv[1])
            if not sock:
                return 3
            t0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
            try:
                reply = call(sock, req["method"], req.get("parameters", {}))
            except (OSError, ConnectionError) as e:
                print(f"varlink-batch: {e}", file=sys.stderr)
                return 3
        t1 = time.clock_gettime_ns(time.CLOCK_REALTIME)
        failed |= "error" in reply
        print(json.dumps({"t0_ns": t0, "t1_ns": t1, "reply": reply}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
