#!/usr/bin/python3
# answer-probe.py SOCKET METHOD INTERVAL_MS: one Varlink connection, held
# open, on which METHOD (no parameters) is called every INTERVAL_MS until
# killed. Prints "START_MS LATENCY_MS" (CLOCK_REALTIME, as `date +%s%3N`)
# for each answer, flushed, so a scenario sees how long the daemon took to
# answer while something else happened (test-attack-big-tree.sh). Holding
# one connection leaves out what a new client costs (its start, its
# connection), which under TCG dwarfs the daemon's own time.
import json
import socket
import sys
import time

sock_path, method, interval = sys.argv[1], sys.argv[2], int(sys.argv[3]) / 1000
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sock_path)
buf = b""
while True:
    start = time.time()
    s.sendall(json.dumps({"method": method, "parameters": {}}).encode() + b"\0")
    while b"\0" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("the daemon closed the connection")
        buf += chunk
    reply, buf = buf.split(b"\0", 1)
    if b'"error"' in reply[:200]:
        sys.exit("error: " + reply[:300].decode(errors="replace"))
    end = time.time()
    print(int(start * 1000), int((end - start) * 1000), flush=True)
    time.sleep(interval)
