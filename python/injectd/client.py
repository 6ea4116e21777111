# SPDX-License-Identifier: MIT
"""org.injectd.Injector, the daemon's Varlink API (docs/varlink-api.md),
as Python calls, and ``fail()``: a fault armed for the calling process tree
for the duration of a ``with`` block."""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from .errors import INTERFACE, DaemonUnreachable, NoSuchInjection  # type: ignore[attr-defined]
from .varlink import DEFAULT_TIMEOUT, Connection, reply_parameters

#: The daemon's socket (DESIGN.md); $INJECTD_SOCKET overrides it, for a
#: socket bind-mounted elsewhere in a container.
SOCKET_PATH = "/run/injectd/org.injectd.Injector"

#: How long to wait for the "removed" event that carries an injection's
#: final counters, once it is cancelled: the daemon sends it as it
#: disarms, but a loaded machine (a test VM under TCG) may take seconds.
REMOVED_EVENT_TIMEOUT = 60.0

USEC_PER_SEC = 1_000_000


def socket_path() -> str:
    return os.environ.get("INJECTD_SOCKET") or SOCKET_PATH


def _usec(seconds: Optional[float]) -> Optional[int]:
    if seconds is None:
        return None
    if seconds <= 0:
        raise ValueError(f"a duration must be positive, got {seconds!r} s")
    return max(1, int(round(seconds * USEC_PER_SEC)))


def open_backing_file(device: str, sys_root: str = "/sys") -> Optional[int]:
    """An fd of the backing file of the loop device that device names
    ("loop3", "/dev/loop3", "7:3"), opened where this process runs, for
    Inject's backing_fd. It is opened read-write, read-only only when the
    disk is read-only: the daemon takes it as proof that the device is the
    caller's only when the caller could change the device's data already,
    and never looks the file up by its path itself. None when there is
    none to open (not a loop device, a name the daemon refuses, nothing
    attached, a file the caller may not write): the daemon then says the
    device is not the caller's, and why."""
    name = device[len("/dev/"):] if device.startswith("/dev/") else device
    if not name or "/" in name or name in (".", ".."):
        return None
    where = "dev/block" if ":" in name else "block"
    try:
        with open(os.path.join(sys_root, where, name, "loop", "backing_file")) as f:
            path = f.readline().rstrip("\n")
        try:
            with open(os.path.join(sys_root, where, name, "ro")) as f:
                read_only = f.read(1) == "1"
        except OSError:
            read_only = False
        mode = os.O_RDONLY if read_only else os.O_RDWR
        return os.open(path, mode | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return None


def inject_parameters(function: str, error: Union[str, int, None] = None, *,
                      retval: Optional[int] = None, duration: Optional[float] = None,
                      scope: Optional[str] = None, pid: Optional[int] = None,
                      pidfd: Optional[int] = None, cgroup: Optional[str] = None,
                      cgroup_fd: Optional[int] = None, device: Optional[str] = None,
                      backing_fd: Optional[int] = None, comm: Optional[str] = None,
                      callers: Optional[Sequence[str]] = None, after: Optional[int] = None,
                      every: Optional[int] = None, times: Optional[int] = None,
                      probability: Optional[float] = None, backend: Optional[str] = None,
                      detach: bool = False, interactive: bool = False):
    """The parameters of an Inject call and the fds it sends, as
    (parameters, fds). pidfd, cgroup_fd and backing_fd are file
    descriptors of this process; they are sent with the call and named by
    their index. Only
    what the caller gave goes in: the daemon applies its own defaults and
    checks everything (a bad value comes back as InvalidArgument). device
    names a whole disk ("loop3", "/dev/loop3", "7:3") as the daemon
    resolves it: the scope is then that disk's block I/O."""
    if (error is None) == (retval is None):
        raise ValueError("give exactly one of error (an errno name or number) and retval")
    params: Dict[str, Any] = {"function": function}
    fds: List[int] = []
    if error is not None:
        params["error"] = str(error)
    if retval is not None:
        params["retval"] = retval
    if duration is not None:
        params["duration_usec"] = _usec(duration)
    for key, fd in (("pidfd", pidfd), ("cgroup_fd", cgroup_fd), ("backing_fd", backing_fd)):
        if fd is not None:
            params[key] = len(fds)
            fds.append(fd)
    if pid is not None or pidfd is not None:
        scope = scope or "process"
    if device is not None:
        scope = scope or "device"
    optional = {"scope": scope, "pid": pid, "cgroup": cgroup, "device": device, "comm": comm, "after": after,
                "every": every, "times": times, "probability": probability, "backend": backend}
    params.update({k: v for k, v in optional.items() if v is not None})
    if callers:
        params["callers"] = list(callers)
    if detach:
        params["detach"] = True
    if interactive:
        params["interactive"] = True
    return params, fds


class Client:
    """A connection to injectd. Injections it arms without ``detach`` end
    when it is closed (reason ``owner-gone``)."""

    def __init__(self, path: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT):
        self.path = path or socket_path()
        self.timeout = timeout
        self.conn = Connection(self.path, timeout)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method: str, parameters: Optional[Dict[str, Any]] = None, fds: Sequence[int] = ()):
        return self.conn.call(f"{INTERFACE}.{method}", parameters, fds)

    def get_info(self) -> Dict[str, Any]:
        return self.conn.call("org.varlink.service.GetInfo")

    def get_capabilities(self) -> Dict[str, Any]:
        """What this kernel and the policy let the caller do
        (docs/dbus-api.md, "Capabilities")."""
        return self._call("GetCapabilities")["capabilities"]

    def list_functions(self, pattern: Optional[str] = None) -> List[Dict[str, Any]]:
        """The functions this kernel can fail, matching the fnmatch glob
        pattern: {"name", "type", "backends", "allowed", ...}."""
        return self._call("ListFunctions", {"pattern": pattern} if pattern else None)["functions"]

    def inject(self, function: str, error: Union[str, int, None] = None, **kwargs) -> Dict[str, Any]:
        """Arms an injection; returns the reply: {"id", "expires_usec",
        "injection"}. The keyword arguments are inject_parameters()'."""
        params, fds = inject_parameters(function, error, **kwargs)
        return self._call("Inject", params, fds)

    def list_injections(self, all: bool = False) -> List[Dict[str, Any]]:
        return self._call("ListInjections", {"all": True} if all else None)["injections"]

    def cancel(self, id: str, interactive: bool = False) -> None:
        self._call("Cancel", {"id": id, "interactive": True} if interactive else {"id": id})

    def reload_policy(self, interactive: bool = False) -> None:
        self._call("ReloadPolicy", {"interactive": True} if interactive else None)


class Watch:
    """A Watch stream on a connection of its own (a stream holds its
    connection for good). Iterating yields events; next_event() waits at
    most a given time."""

    def __init__(self, path: Optional[str] = None, ids: Optional[Iterable[str]] = None):
        self.conn = Connection(path or socket_path(), DEFAULT_TIMEOUT)
        ids = list(ids or [])
        self._stream = self.conn.call_more(f"{INTERFACE}.Watch", {"ids": ids} if ids else None)
        # The first reply says the stream is on: events from here on are seen.
        first = next(self._stream)["event"]
        if first.get("type") != "watching":
            raise DaemonUnreachable(f"Watch began with {first!r}, not a 'watching' event")

    def next_event(self, timeout: Optional[float]) -> Optional[Dict[str, Any]]:
        """The next event, or None if none comes within timeout seconds
        (None: wait for ever)."""
        msg = self.conn.receive(timeout)
        if msg is None:
            return None
        return reply_parameters(msg)["event"]

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for params in self._stream:
            yield params["event"]

    def close(self) -> None:
        self.conn.close()


class Fault:
    """One injection armed for as long as a ``with`` block runs; see fail().

    In the block, ``refresh()`` fetches the live document (counters);
    afterwards, ``document`` is the last one the daemon sent, with the
    final counters, ``reason`` why it ended (``cancelled``, ``exhausted``,
    ``expired``...), and ``events`` the ``fault`` events seen."""

    def __init__(self, function: str, error: Union[str, int, None] = None, *,
                 path: Optional[str] = None, **kwargs):
        self.function = function
        self.error = error
        self.kwargs = kwargs
        self.path = path or socket_path()
        self.id: Optional[str] = None
        self.document: Dict[str, Any] = {}
        self.reason: Optional[str] = None
        self.events: List[Dict[str, Any]] = []
        self._client: Optional[Client] = None
        self._watch: Optional[Watch] = None

    # ---- counters, from the freshest document
    @property
    def injected(self) -> int:
        """Faults injected: final once the block has ended."""
        return int(self.document.get("faults_injected", 0))

    @property
    def matched(self) -> int:
        return int(self.document.get("calls_matched", 0))

    @property
    def seen(self) -> int:
        return int(self.document.get("calls_seen", 0))

    @property
    def active(self) -> bool:
        return self.id is not None and self.reason is None

    def _take_events(self, timeout: float) -> None:
        """Reads the events that are there (waiting at most timeout for the
        first), keeping fault events and the removal's document."""
        assert self._watch is not None
        while self.reason is None:
            event = self._watch.next_event(timeout)
            if event is None:
                return
            timeout = 0
            if event.get("id") != self.id:
                continue
            if event.get("type") == "fault":
                self.events.append(event)
            elif event.get("type") == "removed":
                self.reason = event.get("reason")
                self.document = event.get("injection") or self.document

    def refresh(self) -> Dict[str, Any]:
        """The injection's current document (fresh counters)."""
        if self._client is None or self.id is None:
            return self.document
        self._take_events(0)
        if self.reason is None:
            for doc in self._client.list_injections():
                if doc.get("id") == self.id:
                    self.document = doc
        return self.document

    def arm(self) -> "Fault":
        if self.id is not None:
            raise RuntimeError("this fault is armed already")
        if not any(k in self.kwargs for k in ("scope", "cgroup", "cgroup_fd", "device")):
            self.kwargs["scope"] = "process"
        pidfd = backing_fd = None
        if "device" in self.kwargs and "backing_fd" not in self.kwargs:
            # As injectctl does: the daemon may not see the file by its path.
            backing_fd = open_backing_file(self.kwargs["device"])
            if backing_fd is not None:
                self.kwargs["backing_fd"] = backing_fd
        if self.kwargs.get("scope") == "process" and "pid" not in self.kwargs and "pidfd" not in self.kwargs:
            # The calling process tree, named by pidfd: a pid number means
            # another process in another pid namespace.
            try:
                pidfd = os.pidfd_open(os.getpid())
            except (AttributeError, OSError):
                self.kwargs["pid"] = os.getpid()
            else:
                self.kwargs["pidfd"] = pidfd
        try:
            # The watch first, so that an injection that is over at once
            # (times=1 used up before the block) still reports its end.
            self._watch = Watch(self.path)
            self._client = Client(self.path)
            reply = self._client.inject(self.function, self.error, **self.kwargs)
        except BaseException:
            self._close()
            raise
        finally:
            if pidfd is not None:
                os.close(pidfd)
                del self.kwargs["pidfd"]
            if backing_fd is not None:
                os.close(backing_fd)
                del self.kwargs["backing_fd"]
        self.id = reply["id"]
        self.document = reply.get("injection") or {}
        return self

    def cancel(self) -> None:
        """Ends the injection now (if it has not ended by itself) and
        collects its final document; idempotent."""
        if self._client is None:
            return
        try:
            if self.id is not None and self.reason is None:
                self._take_events(0)
                if self.reason is None:
                    try:
                        self._client.cancel(self.id)
                    except NoSuchInjection:
                        pass  # it ended meanwhile: its removed event says how
                    deadline = time.monotonic() + REMOVED_EVENT_TIMEOUT
                    while self.reason is None and time.monotonic() < deadline:
                        self._take_events(max(0.0, deadline - time.monotonic()))
        finally:
            self._close()

    def _close(self) -> None:
        # Closing the connection that armed it ends the injection too
        # (owner-gone): nothing outlives this object's cancel().
        for c in (self._client, self._watch):
            if c is not None:
                c.close()
        self._client = self._watch = None

    def __enter__(self) -> "Fault":
        # The pytest fixture hands out faults armed already.
        return self if self.id is not None else self.arm()

    def __exit__(self, *exc) -> None:
        self.cancel()

    def __repr__(self) -> str:
        state = "not armed" if self.id is None else (self.reason or "active")
        return f"<injectd.Fault {self.function} {self.error or self.kwargs.get('retval')} {self.id} {state}, {self.injected} injected>"


def fail(function: str, error: Union[str, int, None] = None, **kwargs) -> Fault:
    """``with injectd.fail("open_ctree", "ENOMEM", times=1) as inj: ...``

    Makes ``function`` fail with ``error`` (or ``retval=``) for the calling
    process and every process it starts, from entering the block to leaving
    it, however it is left; ``inj.injected`` then says how many calls were
    failed. Keyword arguments are Inject's (docs/varlink-api.md), with
    ``duration`` in seconds: ``times``, ``after``, ``every``,
    ``probability``, ``comm``, ``callers``, ``backend``; ``scope``,
    ``pid``/``pidfd``, ``cgroup``/``cgroup_fd`` or ``device`` (a block
    device's I/O, whoever submits it) for another scope than the calling
    process tree; ``path`` for another socket."""
    return Fault(function, error, **kwargs)
