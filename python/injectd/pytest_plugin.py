# SPDX-License-Identifier: MIT
"""The pytest plugin: the ``injectd`` fixture.

    def test_mount_enomem(injectd):
        with injectd.fail("open_ctree", "ENOMEM", times=1) as inj:
            r = subprocess.run(["mount", "-o", "loop", img, mnt])
        assert r.returncode != 0 and inj.injected == 1

``injectd.fail()`` first asks the daemon whether this kernel and the
policy allow the fault, and skips the test with the daemon's reason when
they do not (or when no daemon answers). Every fault armed through the
fixture is cancelled when the test ends, however it ends. Installed, it is
found by its ``pytest11`` entry point; from a source tree,
``pytest -p injectd.pytest_plugin``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

import pytest

from .client import Client, Fault, socket_path
from .errors import DaemonUnreachable, Forbidden, Unsupported
from .support import check_support


def _skip(reason: str) -> None:
    """Skips the test, reported at the test's own line rather than at this
    plugin's (as @pytest.mark.skip is): the argument exists since pytest
    7.0; older ones get the plain skip."""
    try:
        exc = pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:
        pytest.skip(reason)
    raise exc


class InjectdFixture:
    """What the ``injectd`` fixture gives a test."""

    def __init__(self, path: Optional[str] = None):
        self.path = path or socket_path()
        self._client: Optional[Client] = None
        self.faults: List[Fault] = []

    @property
    def client(self) -> Client:
        """A connection to the daemon (the test skips if there is none)."""
        if self._client is None:
            try:
                self._client = Client(self.path)
            except DaemonUnreachable as e:
                _skip(f"injectd: {e}")
        return self._client

    @property
    def capabilities(self) -> Dict[str, Any]:
        return self.client.get_capabilities()

    def require(self, function: str, error: Union[str, int, None] = None, *,
                retval: Optional[int] = None, backend: Optional[str] = None) -> None:
        """Skips the test unless this kernel and the policy let the caller
        fail function with error (or retval)."""
        support = check_support(self.client, function, error, retval, backend)
        if not support:
            _skip(f"injectd: {support.reason}")

    def fail(self, function: str, error: Union[str, int, None] = None, **kwargs) -> Fault:
        """Arms a fault for the calling process tree (as injectd.fail(),
        whose arguments it takes) and returns it, armed: use it in a
        ``with`` block, or let the test's end cancel it."""
        self.require(function, error, retval=kwargs.get("retval"), backend=kwargs.get("backend"))
        fault = Fault(function, error, path=self.path, **kwargs)
        try:
            fault.arm()
        except (Unsupported, Forbidden) as e:
            _skip(f"injectd: {e.name.rsplit('.', 1)[-1]}: {e.message}")
        self.faults.append(fault)
        return fault

    def cancel_all(self) -> None:
        """Cancels every fault this fixture armed; the first error is raised
        after all were tried."""
        first: Optional[BaseException] = None
        for fault in self.faults:
            try:
                fault.cancel()
            except Exception as e:  # noqa: BLE001 - the others must still be cancelled
                first = first or e
        if self._client is not None:
            self._client.close()
            self._client = None
        if first is not None:
            raise first


@pytest.fixture
def injectd():
    """Faults for this test's process tree, cancelled when it ends."""
    fixture = InjectdFixture()
    try:
        yield fixture
    finally:
        fixture.cancel_all()
