#!/usr/bin/python3
# tests/vm/pidfd-call.py - file descriptors for Inject, from a client we did
# not write on top of our protocol module: Python's socket.send_fds().
#
#   pidfd-call.py hold PID|--not-pidfd -- CMD [ARG...]
#       opens a pidfd of PID (a pid in this pid namespace), or /dev/null
#       with --not-pidfd, as fd 3, and execs CMD with it: a process started
#       inside another namespace (unshare ...) can then hand the daemon a
#       process it cannot name by number.
#   pidfd-call.py inject SOCKET JSON [FD...]
#       one Varlink call of org.injectd.Injector.Inject with JSON as its
#       parameters and the fds FD... (numbers in this process) attached;
#       prints the reply message as one line of JSON.
import json
import os
import socket
import sys


def hold(argv):
    what, sep, cmd = argv[0], argv[1], argv[2:]
    if sep != "--" or not cmd:
        sys.exit("usage: pidfd-call.py hold PID|--not-pidfd -- CMD [ARG...]")
    if what == "--not-pidfd":
        fd = os.open("/dev/null", os.O_RDONLY)
    else:
        fd = os.pidfd_open(int(what))
    if fd != 3:
        os.dup2(fd, 3)
        os.close(fd)
    os.set_inheritable(3, True)
    os.execvp(cmd[0], cmd)


def inject(argv):
    path, params, fds = argv[0], json.loads(argv[1]), [int(f) for f in argv[2:]]
    msg = json.dumps({"method": "org.injectd.Injector.Inject", "parameters": params}).encode() + b"\0"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(120)  # polkit may take 25 s; a loaded VM more
        s.connect(path)
        if fds:
            socket.send_fds(s, [msg], fds)
        else:
            s.sendall(msg)
        buf = b""
        while b"\0" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                sys.exit("injectd closed the connection without a reply")
            buf += chunk
    print(buf.split(b"\0", 1)[0].decode())


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "hold":
        hold(sys.argv[2:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "inject":
        inject(sys.argv[2:])
    else:
        sys.exit(__doc__ if __doc__ else "usage: see the header of pidfd-call.py")
