# SPDX-License-Identifier: MIT
"""injectd: make kernel functions fail on purpose, for your own tests.

    import injectd
    with injectd.fail("open_ctree", "ENOMEM", times=1) as inj:
        subprocess.run(["mount", "-o", "loop", "btrfs.img", "/mnt"])
    assert inj.injected == 1

A client of the injectd daemon's Varlink API (docs/varlink-api.md), in
the standard library only; its pytest plugin is injectd.pytest_plugin
(the ``injectd`` fixture). docs/testing-with-injectd.md has more.
"""

from . import errors
from .client import SOCKET_PATH, Client, Fault, Watch, fail, inject_parameters, socket_path
from .errors import (  # type: ignore[attr-defined]
    DaemonUnreachable,
    Forbidden,
    InjectdError,
    ProtocolError,
    Unavailable,
    Unsupported,
    VarlinkError,
)
from .support import Support, check_support

__all__ = [
    "SOCKET_PATH", "Client", "Fault", "Watch", "fail", "inject_parameters", "socket_path",
    "errors", "InjectdError", "DaemonUnreachable", "ProtocolError", "VarlinkError",
    "Unsupported", "Forbidden", "Unavailable", "Support", "check_support",
]

__version__ = "0.1"
