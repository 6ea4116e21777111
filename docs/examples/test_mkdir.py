# A pytest test: os.makedirs() must report a failing mkdir(2) and stop
# there. The injectd fixture skips it, with the daemon's reason, where the
# kernel or the policy cannot do it.
import errno
import os

import pytest


def test_makedirs_reports_eacces(injectd, tmp_path):
    target = tmp_path / "a" / "b" / "c"
    # This process's (and its children's) second mkdir(2) fails: a is
    # made, a/b is not.
    with injectd.fail("__x64_sys_mkdir", "EACCES", after=1, times=1) as inj:
        with pytest.raises(PermissionError) as e:
            os.makedirs(target)
    assert e.value.errno == errno.EACCES
    assert inj.injected == 1
    assert (tmp_path / "a").is_dir() and not (tmp_path / "a" / "b").exists()
    os.makedirs(target)  # and without the fault it works
