#!/bin/bash
# Scenario "deb" (run by tests/vm/deb.sh, which builds the packages, as
# test vm-deb): under systemd with nothing of the project installed, dpkg
# installs injectd, injectctl and python3-injectd from INJECTD_DEBS. Their
# maintainer scripts create group injectd and enable and start
# injectd.socket (and nothing starts the service); then the main job,
# tools/demo.sh, runs through the installed files, and so do the shell and
# pytest examples of docs/testing-with-injectd.md, with the installed
# library and the plugin found by its entry point. Purging the packages
# stops the daemon (which the main job started) and removes every file they
# installed, the group, the unit's enablement, the daemon's state and pins.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

[[ ${INJECTD_VM_SYSTEMD:-0} == 1 ]] || fail "this scenario needs systemd as PID 1: tests/vm/deb.sh"
[[ -d ${INJECTD_DEBS:-} ]] || fail "INJECTD_DEBS names no directory of packages: run tests/vm/deb.sh"
[[ ! -e /usr/libexec/injectd && ! -e /usr/bin/injectctl ]] ||
    fail "the project is installed already: boot with tests/vm/run --systemd --no-install"
getent group injectd >/dev/null && fail "group injectd exists before the install"

# ---------------------------------------------------------------- install
# A host that is a Docker container has Docker's policy-rc.d, which forbids
# maintainer scripts to start services (exit 101): a real machine has none.
# The VM's root is an overlay of the host's, so removing it here changes
# nothing there.
rm -f /usr/sbin/policy-rc.d
log "dpkg -i: $(cd "$INJECTD_DEBS" && echo *.deb)"
DEBIAN_FRONTEND=noninteractive dpkg -i "$INJECTD_DEBS"/*.deb >/tmp/dpkg.log 2>&1 ||
    { sed 's/^/  | /' /tmp/dpkg.log >&2; fail "dpkg -i failed"; }
for p in injectd injectctl python3-injectd; do
    assert_eq "install ok installed" "$(dpkg-query -W -f='${Status}' "$p")" "package $p"
done
getent group injectd >/dev/null || fail "expected group injectd after the install (sysusers in postinst), saw none"
assert_eq enabled "$(systemctl is-enabled injectd.socket)" "injectd.socket enabled by postinst"
assert_eq active "$(systemctl show -P ActiveState injectd.socket)" "injectd.socket started by postinst"
assert_eq inactive "$(systemctl show -P ActiveState injectd.service)" "injectd.service after the install (socket-activated)"
[[ -S /run/injectd/org.injectd.Injector ]] || fail "expected the Varlink socket after the install"
installed=$(dpkg -L injectd injectctl python3-injectd | sort -u)
for f in /usr/libexec/injectd /usr/bin/injectctl /usr/bin/injectctl-static /usr/share/injectd/injectd.sh \
    /usr/lib/sysusers.d/injectd.conf /usr/share/man/man1/injectctl.1.gz /usr/share/man/man8/injectd.8.gz \
    /usr/share/polkit-1/actions/org.injectd.policy /usr/share/dbus-1/system.d/org.injectd.Injector1.conf; do
    grep -qx "$f" <<<"$installed" || fail "expected '$f' in the packages, saw none"
done
grep -q '/dist-packages/injectd/pytest_plugin.py$' <<<"$installed" || fail "no pytest plugin in python3-injectd"

# ---------------------------------------------------------------- the main job
log "the main job, tools/demo.sh, through the packages"
rc=0
bash "$SRC_DIR/tools/demo.sh" >/tmp/demo.out 2>&1 || rc=$?
sed 's/^/  | /' /tmp/demo.out >&2
assert_eq 0 "$rc" "tools/demo.sh's exit status"
assert_contains "$(cat /tmp/demo.out)" "PASS demo" "tools/demo.sh's verdict"

# ---------------------------------------------------------------- the examples
# demo.sh made alice (group injectd); the installed library and plugin,
# nothing from the source tree on the paths.
log "the shell and pytest examples, as alice, with the installed library and plugin"
as_alice() {
    setpriv --reuid=alice --regid=alice --init-groups --inh-caps=-all -- \
        env -u PYTHONPATH HOME=/home/alice PYTHONDONTWRITEBYTECODE=1 "$@"
}
rc=0
out=$(as_alice sh "$SRC_DIR/docs/examples/kselftest-mkdir.sh" 2>&1) || rc=$?
assert_eq 0 "$rc" "the shell example's status ($out)"
assert_contains "$out" "PASS: mkdir reports EACCES and creates nothing" "the shell example"
rc=0
out=$(cd /tmp && as_alice python3 -m pytest -p no:cacheprovider -v --basetemp=/tmp/pytest-alice \
    "$SRC_DIR/docs/examples/test_mkdir.py" 2>&1) || rc=$?
assert_eq 0 "$rc" "the pytest example's status ($out)"
assert_contains "$out" "1 passed" "the pytest example, its plugin found by its entry point"

# ---------------------------------------------------------------- purge
log "dpkg --purge"
assert_eq active "$(systemctl show -P ActiveState injectd.service)" "injectd.service before the purge (started by the main job)"
mkdir -p /sys/fs/bpf/injectd/purge-check  # as a crashed daemon might leave
DEBIAN_FRONTEND=noninteractive dpkg --purge python3-injectd injectctl injectd >/tmp/purge.log 2>&1 ||
    { sed 's/^/  | /' /tmp/purge.log >&2; fail "dpkg --purge failed"; }
# The packages' files, not their directories (nor /lib, a directory by
# its usrmerge symlink), must be gone.
left=
while IFS= read -r f; do
    [[ -d $f ]] && continue
    [[ -e $f || -L $f ]] && left+=" $f"
done <<<"$installed"
[[ -z $left ]] || fail "files of the packages left after purge:$left"
getent group injectd >/dev/null && fail "group injectd left after purge"
pgrep -x injectd >/dev/null && fail "injectd still runs after purge (pid $(pgrep -x injectd))"
[[ ! -e /run/injectd && ! -e /sys/fs/bpf/injectd ]] || fail "state or pins left after purge: $(ls -d /run/injectd /sys/fs/bpf/injectd 2>&1)"
# injectd.service and .socket (not the harness's own injectd-vmtest.*).
[[ -z $(find /etc/systemd/system -name 'injectd.*') ]] || fail "unit links left: $(find /etc/systemd/system -name 'injectd.*')"
assert_eq "" "$(systemctl list-units --all --plain --no-legend 'injectd.*' | grep -v 'not-found' || true)" "injectd units after purge"

finish
