# SPDX-License-Identifier: MIT
"""The daemon's errors as Python exceptions.

Every error reply of org.injectd.Injector (docs/varlink-api.md, "Errors")
becomes an instance of the class of the same name, with the daemon's
sentence as its message. The classes are grouped by what a test can do
about them: ``Unsupported`` (this kernel cannot), ``Forbidden`` (the policy
or polkit says no), ``Unavailable`` (not now: limits, a taken scope), and
the rest. Errors of org.varlink.service, and names this version does not
know, are ``VarlinkError``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

INTERFACE = "org.injectd.Injector"
SERVICE_INTERFACE = "org.varlink.service"


class InjectdError(Exception):
    """Anything the client or the daemon reports."""


class DaemonUnreachable(InjectdError, ConnectionError):
    """No daemon answers on the socket (not installed, not running, or the
    connection broke)."""


class ProtocolError(InjectdError):
    """The daemon sent something that is not a Varlink message we expect."""


class VarlinkError(InjectdError):
    """An error reply. ``name`` is the full error name, ``parameters`` its
    parameters, ``message`` the daemon's sentence (or a summary of the
    parameters for errors that have none)."""

    def __init__(self, name: str, parameters: Optional[Dict[str, Any]] = None):
        self.name = name
        self.parameters = dict(parameters or {})
        message = self.parameters.get("message")
        if not isinstance(message, str):
            detail = ", ".join(f"{k}={v!r}" for k, v in sorted(self.parameters.items()))
            message = name + (f" ({detail})" if detail else "")
        self.message = message
        super().__init__(message)


class Unsupported(VarlinkError):
    """This kernel cannot make the function fail this way."""


class Forbidden(VarlinkError):
    """The JSON policy or polkit does not allow it."""


class Unavailable(VarlinkError):
    """Allowed and possible, but not now (limits, a scope already taken)."""


def _define(name: str, base: Type[VarlinkError], doc: str) -> Type[VarlinkError]:
    cls = type(name, (base,), {"__doc__": doc, "__module__": __name__})
    globals()[name] = cls
    return cls


# (name, group, meaning): the meanings are docs/varlink-api.md's, shortened.
_ERRORS = (
    ("NotInjectable", Unsupported, "Not on the error-injection list and not an LSM hook."),
    ("BackendUnavailable", Unsupported, "No backend (or not the one asked for) can serve it here."),
    ("InjectionUnavailable", Unsupported, "This system cannot inject at all."),
    ("BadValue", VarlinkError, "The value is outside the function's type."),
    ("BadScope", VarlinkError, "The scope is missing, unknown or gone."),
    ("ScopeTaken", Unavailable, "The function already has an injection with this scope."),
    ("ScopeNotOwned", Forbidden, "The caller's cgroup is not its own: ask for scope process."),
    ("BadFilter", VarlinkError, "A comm, callers, trigger or argument filter the engine cannot apply."),
    ("BadDuration", VarlinkError, "A duration the engine refuses."),
    ("TooManyInjections", Unavailable, "The function has as many injections as allowed."),
    ("NoSuchInjection", VarlinkError, "No injection with this id."),
    ("KernelRefused", VarlinkError, "Loading, attaching, pinning or disarming failed in the kernel."),
    ("InvalidArgument", VarlinkError, "A malformed request."),
    ("NotAllowed", Forbidden, "The policy check itself failed, or the policy could not be reloaded."),
    ("NotAuthorized", Forbidden, "polkit did not authorize the action."),
    ("LimitExceeded", Unavailable, "A limit on active injections, calls or connections is reached."),
    ("AuthorizationUnavailable", Forbidden, "polkit is required and could not be asked."),
    ("UserNotInPolicy", Forbidden, "No enabled policy rule names the caller."),
    ("FunctionNotAllowed", Forbidden, "No rule allows this function, or one denies it."),
    ("ErrorNotAllowed", Forbidden, "No rule allows this error or return value."),
    ("ScopeNotAllowed", Forbidden, "No rule allows this scope."),
    ("DurationTooLong", Forbidden, "No rule allows this duration."),
    ("KernelLogNotAllowed", Forbidden, "No rule allows kernel log records of the faults."),
)

#: error name (full) -> exception class
ERROR_CLASSES: Dict[str, Type[VarlinkError]] = {
    f"{INTERFACE}.{name}": _define(name, base, doc) for name, base, doc in _ERRORS
}


def error_from_reply(name: str, parameters: Optional[Dict[str, Any]]) -> VarlinkError:
    """The exception for an error reply: its own class for injectd's
    errors, VarlinkError for the rest."""
    return ERROR_CLASSES.get(name, VarlinkError)(name, parameters)
