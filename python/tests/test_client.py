# SPDX-License-Identifier: MIT
"""Unit tests of the client's own logic, no daemon: framing, error
mapping (against docs/varlink-api.md), Inject's parameters, and fd passing
against a fake server on a socket pair. The VM suite runs the client
against the real daemon (tests/vm/test-python-client.sh)."""

import errno
import fcntl
import json
import os
import pathlib
import re
import socket
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import injectd  # noqa: E402
from injectd import errors, varlink  # noqa: E402
from injectd.client import Client, Fault, inject_parameters, open_backing_file  # noqa: E402
from injectd.support import check_support  # noqa: E402

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "varlink-api.md"


class FakeServer:
    """A thread answering Varlink calls on a unix socket with canned
    replies, recording each call and the fds that came with it."""

    def __init__(self, test, replies):
        self.dir = test.tmpdir
        self.path = os.path.join(self.dir, "sock")
        self.replies = list(replies)
        self.calls = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        conn, _ = self.listener.accept()
        with conn:
            buf = b""
            while self.replies:
                data, fds, _, _ = socket.recv_fds(conn, 65536, 8)
                if not data:
                    return
                buf += data
                while b"\0" in buf and self.replies:
                    raw, buf = buf.split(b"\0", 1)
                    # What each fd is, seen from here: its inode, and the
                    # pid a pidfd names (its fdinfo's Pid:).
                    info = []
                    for fd in fds:
                        with open(f"/proc/self/fdinfo/{fd}") as f:
                            pid = re.search(r"^Pid:\s*(-?\d+)", f.read(), re.M)
                        info.append(int(pid.group(1)) if pid else os.fstat(fd).st_ino)
                        os.close(fd)
                    fds = []
                    self.calls.append((json.loads(raw), info))
                    for r in self.replies.pop(0):
                        conn.sendall(json.dumps(r).encode() + b"\0")

    def close(self):
        self.listener.close()
        self.thread.join(10)


class Base(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmpdir = self._tmp.name
        self.addCleanup(self._tmp.cleanup)


class TestFraming(unittest.TestCase):
    def test_encode(self):
        self.assertEqual(varlink.encode({"method": "a.B", "parameters": {"s": "x\0y"}}),
                         b'{"method":"a.B","parameters":{"s":"x\\u0000y"}}\0')

    def test_split_anywhere(self):
        msgs = [{"parameters": {"i": i, "s": "é" * i}} for i in range(5)]
        wire = b"".join(varlink.encode(m) for m in msgs)
        for size in (1, 2, 3, 7, len(wire)):
            d, got = varlink.Decoder(), []
            for i in range(0, len(wire), size):
                got += d.feed(wire[i:i + size])
            self.assertEqual(got, msgs, f"fed {size} bytes at a time")
            self.assertEqual(d.pending, 0)

    def test_malformed(self):
        for bad in (b"[1]\0", b"{\0", b"\xff\0"):
            with self.assertRaises(errors.ProtocolError, msg=bad):
                varlink.Decoder().feed(bad)

    def test_limit(self):
        d = varlink.Decoder(limit=10)
        d.feed(b'{"a":1}')
        with self.assertRaises(errors.ProtocolError):
            d.feed(b"x" * 4)

    def test_reply_parameters(self):
        self.assertEqual(varlink.reply_parameters({"parameters": None}), {})
        self.assertEqual(varlink.reply_parameters({"parameters": {"x": 1}}), {"x": 1})
        with self.assertRaises(errors.ProtocolError):
            varlink.reply_parameters({"parameters": []})


class TestErrors(unittest.TestCase):
    def test_every_documented_error_has_its_class(self):
        # The error declarations of org.injectd.Injector in the API's own
        # document (up to the org.varlink.service section).
        text = DOCS.read_text().split("## Interface org.varlink.service")[0]
        names = re.findall(r"^error (\w+) \(", text, re.M)
        self.assertGreaterEqual(len(names), 20, f"too few errors found in {DOCS}")
        for name in names:
            full = f"org.injectd.Injector.{name}"
            e = errors.error_from_reply(full, {"message": f"why {name}"})
            self.assertIs(type(e), getattr(errors, name), full)
            self.assertIs(type(e), errors.ERROR_CLASSES[full])
            self.assertEqual((e.name, e.message, str(e)), (full, f"why {name}", f"why {name}"))
        self.assertEqual(sorted(errors.ERROR_CLASSES), sorted(f"org.injectd.Injector.{n}" for n in names),
                         "classes for errors the API does not document")

    def test_groups(self):
        self.assertIsInstance(errors.error_from_reply("org.injectd.Injector.NotInjectable", {}), errors.Unsupported)
        self.assertIsInstance(errors.error_from_reply("org.injectd.Injector.FunctionNotAllowed", {}), errors.Forbidden)
        self.assertIsInstance(errors.error_from_reply("org.injectd.Injector.ScopeTaken", {}), errors.Unavailable)

    def test_service_and_unknown_errors(self):
        e = errors.error_from_reply("org.varlink.service.InvalidParameter", {"parameter": "fds"})
        self.assertIs(type(e), errors.VarlinkError)
        self.assertEqual(e.message, "org.varlink.service.InvalidParameter (parameter='fds')")
        e = errors.error_from_reply("org.injectd.Injector.FromTheFuture", None)
        self.assertIs(type(e), errors.VarlinkError)
        self.assertEqual(e.message, "org.injectd.Injector.FromTheFuture")


class TestInjectParameters(unittest.TestCase):
    def test_minimal(self):
        self.assertEqual(inject_parameters("open_ctree", "ENOMEM"), ({"function": "open_ctree", "error": "ENOMEM"}, []))

    def test_everything(self):
        p, fds = inject_parameters("f", 12, duration=1.5, pidfd=7, cgroup_fd=9, comm="c", callers=["a"],
                                   after=1, every=2, times=3, probability=50.0, backend="kprobe",
                                   detach=True, interactive=True)
        self.assertEqual(fds, [7, 9])
        self.assertEqual(p, {"function": "f", "error": "12", "duration_usec": 1500000, "pidfd": 0,
                             "cgroup_fd": 1, "scope": "process", "comm": "c", "callers": ["a"], "after": 1,
                             "every": 2, "times": 3, "probability": 50.0, "backend": "kprobe",
                             "detach": True, "interactive": True})

    def test_device(self):
        # The name as given, with its scope; the daemon resolves it.
        self.assertEqual(inject_parameters("should_fail_bio", "EIO", device="/dev/loop3"),
                         ({"function": "should_fail_bio", "error": "EIO", "scope": "device",
                           "device": "/dev/loop3"}, []))

    def test_device_backing_fd(self):
        p, fds = inject_parameters("should_fail_bio", "EIO", device="loop3", backing_fd=5)
        self.assertEqual(fds, [5])
        self.assertEqual(p["backing_fd"], 0)

    def test_retval(self):
        self.assertEqual(inject_parameters("should_fail_alloc_page", retval=1)[0],
                         {"function": "should_fail_alloc_page", "retval": 1})

    def test_bad(self):
        for args, kw in ((("f",), {}), (("f", "EIO"), {"retval": 1}), (("f", "EIO"), {"duration": 0})):
            with self.assertRaises(ValueError, msg=(args, kw)):
                inject_parameters(*args, **kw)


class TestOpenBackingFile(unittest.TestCase):
    def test_names(self):
        # A stand-in for sysfs: loop3 (7:3) on a file, loop4 with nothing
        # attached.
        with tempfile.TemporaryDirectory() as root:
            image = os.path.join(root, "alice.img")
            open(image, "w").close()
            os.makedirs(os.path.join(root, "block", "loop3", "loop"))
            os.makedirs(os.path.join(root, "block", "loop4"))
            with open(os.path.join(root, "block", "loop3", "loop", "backing_file"), "w") as f:
                f.write(image + "\n")
            os.makedirs(os.path.join(root, "dev", "block"))
            os.symlink("../../block/loop3", os.path.join(root, "dev", "block", "7:3"))
            for name in ("loop3", "/dev/loop3", "7:3"):
                fd = open_backing_file(name, sys_root=root)
                self.assertIsNotNone(fd, name)
                try:
                    self.assertEqual(os.fstat(fd).st_ino, os.stat(image).st_ino, name)
                    # Read-write: the daemon's proof (an O_PATH fd proves nothing).
                    self.assertEqual(fcntl.fcntl(fd, fcntl.F_GETFL) & (os.O_ACCMODE | os.O_PATH), os.O_RDWR, name)
                finally:
                    os.close(fd)
            # A read-only disk: a read-only fd, which is enough for it.
            with open(os.path.join(root, "block", "loop3", "ro"), "w") as f:
                f.write("1\n")
            fd = open_backing_file("loop3", sys_root=root)
            self.assertIsNotNone(fd)
            try:
                self.assertEqual(fcntl.fcntl(fd, fcntl.F_GETFL) & (os.O_ACCMODE | os.O_PATH), os.O_RDONLY)
            finally:
                os.close(fd)
            for name in ("loop4", "loop9", "../block/loop3", "/dev/../loop3", "", "7:9"):
                self.assertIsNone(open_backing_file(name, sys_root=root), name)


class TestAgainstFakeServer(Base):
    def test_call_and_error(self):
        srv = FakeServer(self, [
            [{"parameters": {"capabilities": {"kernel": "6.1"}}}],
            [{"error": "org.injectd.Injector.NoSuchInjection", "parameters": {"message": "No injection 'x'"}}],
        ])
        self.addCleanup(srv.close)
        with Client(srv.path, timeout=30) as c:
            self.assertEqual(c.get_capabilities(), {"kernel": "6.1"})
            with self.assertRaises(errors.NoSuchInjection) as cm:
                c.cancel("0123456789abcdef")
            self.assertEqual(str(cm.exception), "No injection 'x'")
        self.assertEqual([m for m, _ in srv.calls],
                         [{"method": "org.injectd.Injector.GetCapabilities"},
                          {"method": "org.injectd.Injector.Cancel", "parameters": {"id": "0123456789abcdef"}}])

    def test_fds_travel_with_their_call(self):
        srv = FakeServer(self, [[{"parameters": {"id": "1" * 16, "expires_usec": 1, "injection": {}}}]] * 2)
        self.addCleanup(srv.close)
        r, w = os.pipe()
        pidfd = os.pidfd_open(os.getpid())
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, w)
        self.addCleanup(os.close, pidfd)
        with Client(srv.path, timeout=30) as c:
            c.inject("f", "EIO", pidfd=pidfd, cgroup_fd=r)
            c.inject("f", "EIO")
        (first, first_fds), (second, second_fds) = srv.calls
        self.assertEqual(first["parameters"], {"function": "f", "error": "EIO", "pidfd": 0, "cgroup_fd": 1,
                                               "scope": "process"})
        self.assertEqual(first_fds, [os.getpid(), os.fstat(r).st_ino])
        self.assertEqual(second_fds, [])

    def test_unreachable(self):
        with self.assertRaises(injectd.DaemonUnreachable) as cm:
            Client(os.path.join(self.tmpdir, "nothing"))
        self.assertIn("cannot connect to injectd", str(cm.exception))
        self.assertIsInstance(cm.exception, ConnectionError)

    def test_no_reply_is_a_timeout(self):
        srv = FakeServer(self, [[], []])  # silent, and still there
        self.addCleanup(srv.close)
        c = Client(srv.path, timeout=0.2)
        self.addCleanup(c.close)
        with self.assertRaises(injectd.DaemonUnreachable) as cm:
            c.get_capabilities()
        self.assertIn("no answer", str(cm.exception))
        with self.assertRaises(injectd.DaemonUnreachable):
            c.get_capabilities()  # a late reply must not answer the next call

    def test_fault_cancels_on_exception_and_keeps_final_counts(self):
        # Two connections: the Watch first, then the one that injects.
        path = os.path.join(self.tmpdir, "sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(4)
        self.addCleanup(listener.close)
        seen = []
        iid = "0123456789abcdef"

        def serve():
            watch, _ = listener.accept()
            watch.recv(65536)
            watch.sendall(b'{"parameters":{"event":{"type":"watching"}},"continues":true}\0')
            main, _ = listener.accept()
            for reply in ({"id": iid, "expires_usec": 1, "injection": {"id": iid, "faults_injected": 0}}, {}):
                msg, fds, _, _ = socket.recv_fds(main, 65536, 4)
                for fd in fds:
                    os.close(fd)
                seen.append(json.loads(msg.rstrip(b"\0")))
                main.sendall(json.dumps({"parameters": reply}).encode() + b"\0")
            removed = {"type": "removed", "id": iid, "reason": "cancelled",
                       "injection": {"id": iid, "faults_injected": 3, "calls_matched": 4}}
            watch.sendall(json.dumps({"parameters": {"event": removed}, "continues": True}).encode() + b"\0")
            main.recv(1), watch.recv(1)  # until the client hangs up
            main.close(), watch.close()

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        with self.assertRaises(KeyError):
            with injectd.fail("open_ctree", "ENOMEM", times=1, path=path) as inj:
                self.assertTrue(inj.active)
                raise KeyError("the test body fails")
        t.join(10)
        self.assertEqual(seen[0]["method"], "org.injectd.Injector.Inject")
        self.assertEqual(seen[0]["parameters"], {"function": "open_ctree", "error": "ENOMEM", "pidfd": 0,
                                                 "scope": "process", "times": 1})
        self.assertEqual(seen[1], {"method": "org.injectd.Injector.Cancel", "parameters": {"id": iid}})
        self.assertEqual((inj.injected, inj.matched, inj.reason, inj.active), (3, 4, "cancelled", False))


class FakeClient:
    def __init__(self, caps, functions):
        self.caps, self.functions = caps, functions

    def get_capabilities(self):
        return self.caps

    def list_functions(self, pattern=None):
        return [f for f in self.functions if f["name"] == pattern]


STOCK_CAPS = {
    "injection": {"available": True, "reason": "the fmod_ret backend works"},
    "backends": {"kprobe": {"available": False, "reason": "bpf_override_return: unknown func",
                            "missing_config": ["CONFIG_BPF_KPROBE_OVERRIDE", "CONFIG_FUNCTION_ERROR_INJECTION"]},
                 "fmod_ret": {"available": True, "functions": 220}},
    "policy": {"user": "alice", "root": False,
               "rules": [{"name": "syscalls", "functions": ["__x64_sys_*"], "errors": ["EACCES"]}]},
}


class TestSupport(unittest.TestCase):
    def test_reasons(self):
        c = FakeClient(STOCK_CAPS, [{"name": "security_file_open", "backends": ["fmod_ret"], "allowed": False},
                                    {"name": "__x64_sys_openat", "backends": ["fmod_ret"], "allowed": True}])
        s = check_support(c, "should_failslab", "ENOMEM")
        self.assertFalse(s)
        self.assertIn("lacks the kprobe backend (kprobe: bpf_override_return: unknown func "
                      "(missing CONFIG_BPF_KPROBE_OVERRIDE, CONFIG_FUNCTION_ERROR_INJECTION))", s.reason)
        self.assertIn("does not let alice fail 'security_file_open'", check_support(c, "security_file_open", "EPERM").reason)
        self.assertIn("but not with error ENOENT (rules: syscalls)", check_support(c, "__x64_sys_openat", "ENOENT").reason)
        self.assertIn("by backend kprobe", check_support(c, "__x64_sys_openat", "EACCES", backend="kprobe").reason)
        self.assertTrue(check_support(c, "__x64_sys_openat", "EACCES"))
        none = dict(STOCK_CAPS, injection={"available": False, "reason": "tracing BPF refused",
                                           "missing_config": []})
        self.assertEqual(check_support(FakeClient(none, []), "f", "EIO").reason,
                         "injectd cannot inject on this kernel: injection: tracing BPF refused")


try:
    import pytest  # noqa: F401
except ImportError:
    pytest = None


@unittest.skipIf(pytest is None, "pytest is not installed (tools/setup.sh installs python3-pytest)")
class TestFixture(unittest.TestCase):
    def test_cancel_all_cancels_every_fault_and_raises_the_first_error(self):
        from injectd.pytest_plugin import InjectdFixture

        class FakeFault:
            def __init__(self, error=None):
                self.error, self.cancelled = error, False

            def cancel(self):
                self.cancelled = True
                if self.error:
                    raise self.error

        fx = InjectdFixture(path="/nonexistent")
        fx.faults = [FakeFault(errors.DaemonUnreachable("gone")), FakeFault(), FakeFault(KeyError("later"))]
        with self.assertRaises(errors.DaemonUnreachable):
            fx.cancel_all()
        self.assertEqual([f.cancelled for f in fx.faults], [True, True, True])


if __name__ == "__main__":
    unittest.main()
