# SPDX-License-Identifier: MIT
"""A small synchronous Varlink client over a unix socket.

The wire format is docs/varlink-protocol.md's: one JSON object per message,
each followed by a NUL byte. File descriptors travel as SCM_RIGHTS on the
first bytes of the call that names them (by index) in its parameters, so a
call with fds goes out in a sendmsg() of its own, starting at its first
byte. One call at a time per connection, as the protocol wants.
"""

from __future__ import annotations

import json
import select
import socket
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence

from .errors import DaemonUnreachable, ProtocolError, error_from_reply

#: Replies above this are refused: the daemon's largest documents (every
#: function of the kernel) are far smaller, and our client in C stops at
#: the same size (VARLINK_CLIENT_MESSAGE_MAX).
MESSAGE_MAX = 16 * 1024 * 1024

#: polkit may take 25 s to answer, and a loaded test VM more; injectctl
#: waits 60 s for a call (src/client/transport-varlink.c).
DEFAULT_TIMEOUT = 60.0

#: receive()'s default: the connection's own timeout.
DEFAULT = object()


def encode(message: Dict[str, Any]) -> bytes:
    """One message on the wire: compact JSON and its NUL. A NUL inside a
    string goes out escaped by json, never as a message end."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\0"


class Decoder:
    """Splits the bytes read from a connection into messages."""

    def __init__(self, limit: int = MESSAGE_MAX):
        self._buf = bytearray()
        self._limit = limit

    def feed(self, data: bytes) -> List[Dict[str, Any]]:
        """Adds data; returns the messages it completed, in order."""
        self._buf += data
        out = []
        while True:
            end = self._buf.find(b"\0")
            if end < 0:
                break
            raw = bytes(self._buf[:end])
            del self._buf[: end + 1]
            try:
                msg = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise ProtocolError(f"malformed Varlink message: {e}") from None
            if not isinstance(msg, dict):
                raise ProtocolError(f"a Varlink message must be a JSON object, got {type(msg).__name__}")
            out.append(msg)
        if len(self._buf) > self._limit:
            raise ProtocolError(f"a Varlink message longer than {self._limit} bytes")
        return out

    @property
    def pending(self) -> int:
        """Bytes of an incomplete message."""
        return len(self._buf)


def reply_parameters(msg: Dict[str, Any]) -> Dict[str, Any]:
    """A reply's parameters; an error reply raises its exception."""
    params = msg.get("parameters")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ProtocolError("a reply's parameters must be an object")
    error = msg.get("error")
    if error is not None:
        if not isinstance(error, str):
            raise ProtocolError("a reply's error must be a string")
        raise error_from_reply(error, params)
    return params


class Connection:
    """One connection to a Varlink service. After a timeout or a broken
    reply the connection is unusable (a late reply could be taken for the
    answer to the next call): close it and open another."""

    def __init__(self, path: str, timeout: Optional[float] = DEFAULT_TIMEOUT):
        self.path = path
        self.timeout = timeout
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self._decoder = Decoder()
        self._queue: List[Dict[str, Any]] = []
        self._broken = False
        try:
            self._sock.connect(path)
        except OSError as e:
            self._sock.close()
            raise DaemonUnreachable(f"cannot connect to injectd at '{path}': {e.strerror or e}") from e

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fileno(self) -> int:
        return self._sock.fileno()

    def _send(self, message: Dict[str, Any], fds: Sequence[int]) -> None:
        data = encode(message)
        try:
            if fds:
                # The fds ride on the first bytes; the rest, if the kernel
                # took only part, follows without them.
                sent = socket.send_fds(self._sock, [data], list(fds))
                data = data[sent:]
            if data:
                self._sock.sendall(data)
        except OSError as e:
            self._broken = True
            raise DaemonUnreachable(f"cannot send to injectd at '{self.path}': {e.strerror or e}") from e

    def receive(self, timeout: Any = DEFAULT) -> Optional[Dict[str, Any]]:
        """The next message, waiting at most timeout seconds (DEFAULT: the
        connection's timeout; None: for ever); None when it passes with
        nothing."""
        wait = self.timeout if timeout is DEFAULT else timeout
        deadline = None if wait is None else time.monotonic() + wait
        while not self._queue:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._sock], [], [], left)
            if not ready:
                return None
            try:
                data = self._sock.recv(65536)
            except OSError as e:
                self._broken = True
                raise DaemonUnreachable(f"reading from injectd failed: {e.strerror or e}") from e
            if not data:
                self._broken = True
                raise DaemonUnreachable("injectd closed the connection")
            try:
                self._queue.extend(self._decoder.feed(data))
            except ProtocolError:
                self._broken = True
                raise
        return self._queue.pop(0)

    def _reply(self, method: str) -> Dict[str, Any]:
        msg = self.receive()
        if msg is None:
            self._broken = True
            raise DaemonUnreachable(f"no answer to {method} from injectd within {self.timeout} s")
        return msg

    def call(self, method: str, parameters: Optional[Dict[str, Any]] = None,
             fds: Sequence[int] = ()) -> Dict[str, Any]:
        """Calls method and returns the reply's parameters; an error reply
        raises its exception (injectd.errors). fds are sent with the call;
        the parameters name them by index."""
        if self._broken:
            raise DaemonUnreachable("this connection failed before; open another")
        msg: Dict[str, Any] = {"method": method}
        if parameters:
            msg["parameters"] = parameters
        self._send(msg, fds)
        reply = self._reply(method)
        if reply.get("continues"):
            self._broken = True
            raise ProtocolError(f"{method} answered with more than one reply")
        return reply_parameters(reply)

    def call_more(self, method: str, parameters: Optional[Dict[str, Any]] = None,
                  fds: Sequence[int] = ()) -> Iterator[Dict[str, Any]]:
        """Calls method with "more" and yields each reply's parameters (the
        first error raises). Between replies it waits without a timeout:
        a stream such as Watch has no last reply."""
        if self._broken:
            raise DaemonUnreachable("this connection failed before; open another")
        msg: Dict[str, Any] = {"method": method, "more": True}
        if parameters:
            msg["parameters"] = parameters
        self._send(msg, fds)
        first = True
        while True:
            reply = self._reply(method) if first else self.receive(timeout=None)
            first = False
            params = reply_parameters(reply)
            yield params
            if not reply.get("continues"):
                return
