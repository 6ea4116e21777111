# SPDX-License-Identifier: MIT
"""python3 -m injectd check FUNCTION [--error E | --retval N] [--backend B]

Says whether this kernel and the policy let the caller make FUNCTION fail
(exit 0, with what serves it), and if not, why (exit 1, the reason on
standard output); 3 when injectd cannot be reached. The shell library
(shell/injectd.sh, injectd_require) asks this, so that shell and pytest
tests skip for the same reasons, in the same words."""

import argparse
import sys

from .client import Client
from .errors import InjectdError, DaemonUnreachable
from .support import check_support


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m injectd")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="can FUNCTION be failed here, and if not, why")
    c.add_argument("function")
    c.add_argument("--error")
    c.add_argument("--retval", type=int)
    c.add_argument("--backend")
    c.add_argument("--socket", help="the daemon's socket (default: $INJECTD_SOCKET or /run/injectd/...)")
    args = p.parse_args(argv)
    try:
        with Client(args.socket) as client:
            s = check_support(client, args.function, args.error, args.retval, args.backend)
    except DaemonUnreachable as e:
        print(f"injectd: {e}")
        return 3
    except InjectdError as e:
        print(f"injectd: {e}")
        return 1
    print(f"injectd: {s.reason}")
    return 0 if s.ok else 1


if __name__ == "__main__":
    sys.exit(main())
