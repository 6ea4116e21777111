# SPDX-License-Identifier: MIT
"""Issue 18, acceptance 2: three tests through the injectd fixture, run by
an unprivileged user (tests/vm/test-python-client.sh checks the outcome):

- test_open_fails: a fault is injected, and counted;
- test_slab_needs_override: skipped, with the daemon's reason, on a kernel
  without kprobe override (should_failslab is on the error-injection list
  only, which fmod_ret alone cannot serve there); on the full kernel it
  injects;
- test_fails_on_purpose: fails while it holds a detached fault, which only
  the fixture's cleanup can end (closing the connection does not)."""

import errno
import os

import pytest


def test_open_fails(injectd, tmp_path):
    path = tmp_path / "f"
    path.write_text("x")
    # security_file_open: an LSM hook, so fmod_ret serves it on every
    # kernel; the scenario's policy lets the user fail it.
    with injectd.fail("security_file_open", "EACCES", times=1) as inj:
        with pytest.raises(PermissionError):
            open(path)
    assert inj.injected == 1, inj
    assert inj.reason == "exhausted", inj
    assert path.read_text() == "x"  # and nothing fails after the block


def test_slab_needs_override(injectd):
    # One kmalloc of eventfd2's, in this very process.
    with injectd.fail("should_failslab", "ENOMEM", callers=["__x64_sys_eventfd2"], times=1) as inj:
        with pytest.raises(OSError) as e:
            os.eventfd(0)
    assert e.value.errno == errno.ENOMEM
    assert inj.injected == 1, inj
    os.close(os.eventfd(0))


def test_fails_on_purpose(injectd):
    held = injectd.fail("security_file_open", "EACCES", comm="nobody-has-it", detach=True)
    assert held.active
    assert False, f"this test fails on purpose, holding injection {held.id}"
