#!/bin/bash
# Scenario "python-client": the Python client (python/injectd) and its
# pytest plugin against the real daemon, as alice (group injectd, no
# privileges). Issue 18, acceptance 2: tests/vm/pytest/test_three_outcomes.py
# passes its fault test, skips the one that needs kprobe override on the
# stock kernel with the daemon's reason (and injects on the full one), and
# fails its test that fails on purpose, leaving nothing armed: that test
# holds a detached fault, which only the fixture's cleanup can end. Then
# the client's other paths: typed errors from real refusals, fail() scoped
# to the calling process tree and its children, cancelled when its block
# raises. Runs on both kernels (vm-python-client, vm-stock-python-client).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/lib-daemon.sh
. "$(dirname "$0")/lib-daemon.sh"

if zgrep -qx CONFIG_BPF_KPROBE_OVERRIDE=y /proc/config.gz; then kernel=full; else kernel=stock; fi
assert_eq "${INJECTD_VM_KERNEL:-$kernel}" "$kernel" "the kernel flavour"
python3 -c 'import pytest' || fail "pytest is not installed (tools/setup.sh installs python3-pytest)"

daemon_setup
# A lab's rule for an LSM hook, which fmod_ret serves on both kernels: the
# default policy grants system calls and allocations only.
cat >/etc/injectd/policy.d/50-python-client.json <<'JSON'
{"rules": [{"name": "python-client-lsm", "groups": ["injectd"], "functions": ["security_file_open"],
            "errors": ["EACCES"], "scopes": ["process"], "max-duration": "10min", "max-active": 4}]}
JSON
start_injectd

# as alice, with the client importable from the source tree; nothing written
# there (bytecode, pytest's cache).
py_as_alice() {
    as alice env HOME=/home/alice PYTHONPATH="$SRC_DIR/python" PYTHONDONTWRITEBYTECODE=1 "$@"
}

# ---------------------------------------------------------------- pytest
log "pytest, as alice: tests/vm/pytest/test_three_outcomes.py"
rc=0
py_as_alice python3 -m pytest -p injectd.pytest_plugin -p no:cacheprovider -rA -v \
    --basetemp=/tmp/pytest-alice "$SRC_DIR/tests/vm/pytest/test_three_outcomes.py" >/tmp/pytest.out 2>&1 || rc=$?
sed 's/^/  | /' /tmp/pytest.out >&2
assert_eq 1 "$rc" "pytest's exit status (1: a test failed)"
out=$(cat /tmp/pytest.out)
assert_contains "$out" "test_open_fails PASSED" "pytest: the fault test"
assert_contains "$out" "test_fails_on_purpose FAILED" "pytest: the test that fails on purpose"
assert_contains "$out" "AssertionError: this test fails on purpose, holding injection" "pytest: its failure"
if [[ $kernel == stock ]]; then
    assert_contains "$out" "test_slab_needs_override SKIPPED" "pytest: the override test on the stock kernel"
    # The reason is the daemon's: its capabilities' kprobe finding.
    assert_contains "$out" "SKIPPED [1] " "pytest: the skip's summary line"
    assert_contains "$out" "injectd: 'should_failslab' cannot be made to fail on this kernel, which lacks the kprobe backend" "pytest: the skip reason"
    assert_contains "$out" "missing CONFIG_BPF_KPROBE_OVERRIDE, CONFIG_FUNCTION_ERROR_INJECTION" "pytest: the skip reason"
    assert_contains "$out" "1 failed, 1 passed, 1 skipped" "pytest's summary"
else
    assert_contains "$out" "test_slab_needs_override PASSED" "pytest: the override test on the full kernel"
    assert_contains "$out" "1 failed, 2 passed" "pytest's summary"
fi
# The detached fault of the failed test is gone: the fixture cancelled it
# (pytest's exit alone would have left it).
assert_eq 0 "$(injections_left)" "injections after pytest"
grep -q "reason=cancelled\|cancelled" "$DAEMON_LOG" || log "(the daemon's log does not name the reason)"

# ---------------------------------------------------------------- the client
log "the client as alice: errors, scope, cancel on exception"
py_as_alice python3 - "$kernel" >/tmp/client.out 2>&1 <<'PY' || { cat /tmp/client.out >&2; fail "the client checks failed (above)"; }
import os, subprocess, sys
import injectd
from injectd import errors

kernel = sys.argv[1]
c = injectd.Client()
info = c.get_info()
assert info["product"] == "injectd" and "org.injectd.Injector" in info["interfaces"], info
assert c.get_capabilities()["policy"]["user"] == "alice"

def refused(cls, *args, **kw):
    try:
        c.inject(*args, **kw)
    except cls as e:
        assert e.message, e
        print(f"{cls.__name__}: {e.message}")
        return e
    raise AssertionError(f"{args} {kw}: expected {cls.__name__}")

refused(errors.NotInjectable, "vfs_read", "EIO")
refused(errors.InvalidArgument, "security_file_open", "EACCES", scope="process", comm="x" * 20)
refused(errors.FunctionNotAllowed, "security_inode_mkdir", "EACCES", scope="process")
refused(errors.ErrorNotAllowed, "security_file_open", "ENOTDIR", scope="process")
e = refused(errors.BadScope, "security_file_open", "EACCES", pid=999999)
assert isinstance(e, injectd.VarlinkError) and e.name == "org.injectd.Injector.BadScope"

# The calling process tree: a child started in the block is failed too
# (cat cannot even open its libraries), and the same cat afterwards is not.
with injectd.fail("security_file_open", "EACCES", comm="cat") as inj:
    r = subprocess.run(["cat", "/etc/hostname"], capture_output=True)
assert r.returncode != 0, r
assert inj.injected >= 1 and inj.reason == "cancelled", inj
assert all(ev["comm"] == "cat" for ev in inj.events) and inj.events, inj.events
assert subprocess.run(["cat", "/etc/hostname"], capture_output=True).returncode == 0

# An exception in the block still cancels.
try:
    with injectd.fail("security_file_open", "EACCES", comm="nobody-has-it", detach=True) as held:
        raise RuntimeError("the block fails")
except RuntimeError:
    pass
assert held.reason == "cancelled", held
assert c.list_injections() == [], c.list_injections()
print("client checks passed")
PY
sed 's/^/  | /' /tmp/client.out >&2
assert_contains "$(cat /tmp/client.out)" "client checks passed" "the client checks"
assert_eq 0 "$(injections_left)" "injections at the end"

stop_injectd
finish
