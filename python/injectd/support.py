# SPDX-License-Identifier: MIT
"""Whether this kernel and the policy let the caller make a function fail,
and if not, why: the reason a test skips with, taken from what the daemon
says (GetCapabilities, ListFunctions) rather than from a failed attempt."""

from __future__ import annotations

import fnmatch
from typing import Any, Dict, NamedTuple, Optional, Union


class Support(NamedTuple):
    ok: bool
    reason: str

    def __bool__(self) -> bool:
        return self.ok


def _finding(name: str, f: Dict[str, Any]) -> str:
    text = f"{name}: {f.get('reason', 'unavailable')}"
    missing = f.get("missing_config") or []
    if missing:
        text += f" (missing {', '.join(missing)})"
    return text


def _value_allowed(rule: Dict[str, Any], error: Union[str, int, None], retval: Optional[int]) -> bool:
    if error is not None:
        errors = rule.get("errors") or []
        return "*" in errors or str(error) in errors
    return retval in (rule.get("retvals") or [])


def check_support(client, function: str, error: Union[str, int, None] = None,
                  retval: Optional[int] = None, backend: Optional[str] = None) -> Support:
    """Support(True, ...) when the kernel can fail function (with backend,
    if given) and the policy lets the caller fail it with this error or
    retval; else Support(False, reason), the reason in the daemon's words."""
    caps = client.get_capabilities()
    injection = caps.get("injection") or {}
    if not injection.get("available", False):
        return Support(False, "injectd cannot inject on this kernel: " + _finding("injection", injection))

    backends = caps.get("backends") or {}
    entry = next((f for f in client.list_functions(function) if f.get("name") == function), None)
    if entry is None:
        kprobe = backends.get("kprobe") or {}
        if not kprobe.get("available", False):
            # Without the kprobe backend, only what fmod_ret serves is left:
            # the LSM hooks, and the listed functions if the kernel lists any.
            return Support(False, f"'{function}' cannot be made to fail on this kernel, which lacks the "
                                  f"kprobe backend ({_finding('kprobe', kprobe)}); fmod_ret serves only "
                                  f"{(backends.get('fmod_ret') or {}).get('functions', 0)} functions here, "
                                  f"not this one")
        return Support(False, f"'{function}' cannot be made to fail: it is not on this kernel's "
                              f"error-injection list and is not an LSM hook")
    served = entry.get("backends") or []
    if backend not in (None, "auto") and backend not in served:
        b = backends.get(backend) or {}
        return Support(False, f"'{function}' cannot be failed by backend {backend} here "
                              f"(it can by {', '.join(served) or 'none'}): {_finding(backend, b)}")
    policy = caps.get("policy") or {}
    who = policy.get("user") or f"uid {policy.get('uid', '?')}"
    if not entry.get("allowed", False):
        return Support(False, f"the policy does not let {who} fail '{function}' "
                              f"(injectctl caps lists the rules that apply; docs/policy.md)")
    if not policy.get("root", False) and (error is not None or retval is not None):
        rules = [r for r in policy.get("rules") or []
                 if any(fnmatch.fnmatchcase(function, g) for g in r.get("functions") or [])]
        if rules and not any(_value_allowed(r, error, retval) for r in rules):
            what = f"error {error}" if error is not None else f"return value {retval}"
            return Support(False, f"the policy lets {who} fail '{function}', but not with {what} "
                                  f"(rules: {', '.join(r.get('name', '?') for r in rules)})")
    return Support(True, f"'{function}' can be failed here by {', '.join(served)}")
