#!/bin/bash
# Scenario "units": the units, D-Bus activation file and bus policy we ship,
# with the real daemon under a real systemd. systemd 252 boots in a PID
# namespace, as in a container. D-Bus activation, then socket activation,
# start injectd.service. A check runs inside the unit's sandbox, as an
# ExecStartPre= drop-in, so it gets the same namespaces, capabilities and
# system call filter as the daemon. It shows the engine can do its job there
# and that the lockdown holds (docs/security.md).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

INJECTD=$BUILD_DIR/src/daemon/injectd
UNIT=$BUILD_DIR/units/injectd.service
[[ -x $INJECTD ]] || fail "injectd is not built at '$INJECTD'"
[[ -x $ENGINE ]] || fail "injectd-engine is not built at '$ENGINE'"
[[ -f $UNIT ]] || fail "the unit is not generated at '$UNIT'"
SOCKET=/run/injectd/org.injectd.Injector
CHECK_LOG=/run/injectd/unit-check.log

work=$(mktemp -d /tmp/units-test.XXXXXX)
at_exit rm -rf "$work"

# ---------------------------------------------------------------- install

# As a package would, in the VM's overlay. The unit says where the daemon
# lives (@libexecdir@); the sandbox has its own /tmp, so nothing it runs may
# stay under the build tree if that is in /tmp.
libexec=$(sed -n 's|^ExecStart=\(/.*\)/injectd$|\1|p' "$UNIT")
[[ -n $libexec ]] || fail "no ExecStart=.../injectd in '$UNIT'"
mkdir -p "$libexec" /usr/lib/injectd-test /usr/share/injectd/policy.d
install -m 0755 "$INJECTD" "$libexec/injectd"
install -m 0755 "$ENGINE" /usr/lib/injectd-test/injectd-engine
install -m 0644 "$UNIT" "$SRC_DIR/units/injectd.socket" /etc/systemd/system/
install -m 0644 "$SRC_DIR/policy/org.injectd.Injector1.conf" /usr/share/dbus-1/system.d/
install -m 0644 "$SRC_DIR/policy/org.injectd.Injector1.service" /usr/share/dbus-1/system-services/
install -m 0644 "$SRC_DIR/policy/org.injectd.policy" /usr/share/polkit-1/actions/
install -m 0644 "$SRC_DIR/policy/10-injectd-default.json" /usr/share/injectd/policy.d/
systemd-sysusers "$SRC_DIR/units/injectd.conf" >/dev/null
add_user injectd-units # so ProtectHome= has something to hide

# The check, run inside the sandbox before the daemon. It writes one line per
# expectation, "ok: ..." or "FAIL: ...", and always exits 0 so the daemon
# starts and the scenario can report everything at once.
cat >/usr/lib/injectd-test/sandbox-check <<'EOF'
#!/bin/bash
exec >/run/injectd/unit-check.log 2>&1
E=/usr/lib/injectd-test/injectd-engine
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; }
expect() { local what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi; }
refused() { local what=$1; shift; if "$@" >/dev/null 2>&1; then bad "$what (allowed)"; else ok "$what"; fi; }
empty() { local what=$1 n; n=$(timeout 2 head -c 1 "$2" 2>/dev/null | wc -c); if ((n == 0)); then ok "$what"; else bad "$what (readable)"; fi; }

bset=$(setpriv --dump | sed -n 's/^Capability bounding set: //p')
[[ $bset == "dac_read_search,sys_resource,syslog,perfmon,bpf" ]] && ok "bounding set $bset" || bad "bounding set: saw '$bset'"
[[ $(setpriv --dump | sed -n 's/^no_new_privs: //p') == 1 ]] && ok "no_new_privs" || bad "no_new_privs"

# What the daemon must be able to do. The injections never fire (--after):
# one is scoped to this very cgroup, and would fail our own opens.
sleep 600 &
target=$!
never="--after 1000000000 --for 60s"
expect "read the error-injection list" grep -q should_failslab /sys/kernel/debug/error_injection/list
expect "kprobe injection (bpf, perf_event_open, pins in /sys/fs/bpf)" \
    $E arm __x64_sys_openat --error ENOENT --pid $target --backend kprobe $never
expect "fmod_ret injection" $E arm security_file_open --error EACCES --pid $target --backend fmod_ret $never
expect "caller filter (addresses in /proc/kallsyms)" \
    $E arm should_failslab --error ENOMEM --pid $target --caller __x64_sys_eventfd2 $never
expect "cgroup-scoped injection" \
    $E arm security_file_open --error EACCES --cgroup "/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup)" $never
expect "adopt" $E adopt
expect "disarm" $E disarm --all
kill $target

# What it must not.
refused "write /proc/sys" sh -c 'echo 1 >/proc/sys/kernel/printk_ratelimit'
refused "write /sys" sh -c 'echo 1 >/sys/kernel/mm/transparent_hugepage/khugepaged/defrag'
refused "mkdir in cgroupfs" mkdir /sys/fs/cgroup/injectd-sandbox-check
refused "write /etc" touch /etc/injectd-sandbox-check
refused "write /usr" touch /usr/injectd-sandbox-check
refused "syslog(2)" dmesg
empty "/proc/kmsg shows nothing" /proc/kmsg
empty "/proc/kcore shows nothing" /proc/kcore
# Devices: DevicePolicy=closed with /dev/kmsg write-only (kernel log
# records) and loop devices read-only (a device scope's owner); nothing else.
refused "read /dev/kmsg" head -c 1 /dev/kmsg
expect "write /dev/kmsg" sh -c 'echo "injectd sandbox check" >/dev/kmsg'
for dev in /dev/mem /dev/port /dev/vda /dev/sda; do
    [[ -e $dev ]] && refused "open $dev" head -c 1 "$dev"
done
[[ -b /dev/loop0 ]] && refused "write a loop device" sh -c ': >>/dev/loop0' || bad "no /dev/loop0 to try"
[[ -z $(ls -A /home) ]] && ok "/home is empty" || bad "/home shows: $(ls -A /home)"
refused "an AF_INET socket" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9'
refused "a new namespace" unshare --uts true
refused "make a file setuid" sh -c 'f=/run/injectd/sandbox-suid; : >$f; trap "rm -f $f" EXIT; chmod 4755 $f'
echo done
EOF
chmod 0755 /usr/lib/injectd-test/sandbox-check
mkdir -p /etc/systemd/system/injectd.service.d
cat >/etc/systemd/system/injectd.service.d/50-sandbox-check.conf <<'EOF'
[Service]
ExecStartPre=/usr/lib/injectd-test/sandbox-check
# BPF loads are slow under TCG.
TimeoutStartSec=400
EOF
# Under -Db_sanitize (docs/sanitizers.md): the check's programs and the
# daemon report into /run/injectd, the one place the sandbox lets them
# write and which outlives a stop; the reports join lib.sh's and fail the
# scenario at finish. No LeakSanitizer here: it needs ptrace(2) at exit,
# which the unit's system call filter refuses. The same binaries are
# leak-checked by the scenarios that run them outside the unit.
if ldd "$INJECTD" | grep libasan >/dev/null; then
    cat >/etc/systemd/system/injectd.service.d/50-sanitizers.conf <<'EOF'
[Service]
Environment=ASAN_OPTIONS=halt_on_error=1:print_stacktrace=1:detect_leaks=0:log_path=/run/injectd/sanitizer-asan
Environment=UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=/run/injectd/sanitizer-ubsan
EOF
    collect_unit_reports() {
        local f
        for f in /run/injectd/sanitizer-*; do
            [[ -e $f ]] && mv "$f" "$_sanitizer_dir/unit-${f##*/}"
        done
        return 0
    }
    at_exit collect_unit_reports
fi
# dbus-daemon gives an activated service 25 s to appear; the sandbox check
# and the BPF loads take longer under TCG.
cat >/etc/dbus-1/system-local.conf <<'EOF'
<busconfig>
        <limit name="service_start_timeout">400000</limit>
</busconfig>
EOF
at_exit rm -f /etc/dbus-1/system-local.conf
# The booting systemd shares the VM's file systems: keep systemd-tmpfiles
# from cleaning /tmp under the scenario's feet.
ln -sf /dev/null /etc/systemd/system/systemd-tmpfiles-setup.service
# Boot only what the test needs: the bus and our socket, not multi-user.
cat >/etc/systemd/system/injectd-test.target <<'EOF'
[Unit]
Description=injectd unit test
Wants=dbus.socket injectd.socket
After=dbus.socket injectd.socket
EOF

# ---------------------------------------------------------------- boot

env -i container=injectd-vm PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    unshare --pid --fork --mount-proc /lib/systemd/systemd --unit=injectd-test.target \
    >"$work/systemd.log" 2>&1 &
unshare_pid=$!
stop_systemd() {
    local pid
    pid=$(pgrep -P "$unshare_pid") && kill -KILL "$pid"
    wait "$unshare_pid" 2>/dev/null
    return 0
}
at_exit stop_systemd
show_logs() {
    _failed || return 0
    [[ -n ${sd_pid:-} ]] && in_ns journalctl --no-pager -n 60 -u injectd.service -u dbus.service >&2
    [[ -s $CHECK_LOG ]] && sed 's/^/  check | /' "$CHECK_LOG" >&2
    return 0
}
at_exit show_logs

has_child() { pgrep -P "$unshare_pid" >/dev/null; }
wait_until 120 has_child
sd_pid=$(pgrep -P "$unshare_pid")
in_ns() { nsenter -t "$sd_pid" -p -m -- "$@"; }
booted() { [[ $(in_ns systemctl is-system-running 2>/dev/null) == @(running|degraded) ]]; }
wait_until 180 booted
log "systemd is up: $(in_ns systemctl is-system-running)"

active_state() { in_ns systemctl show -P ActiveState injectd.service; }
assert_eq inactive "$(active_state)" "injectd.service before any client"
[[ -S $SOCKET ]] || fail "expected injectd.socket to listen on '$SOCKET'"
assert_eq 666 "$(stat -c %a "$SOCKET")" "mode of the Varlink socket"

# ---------------------------------------------------------------- D-Bus activation

log "D-Bus activation (org.injectd.Injector1.service -> injectd.service)"
caps=$(in_ns busctl --timeout=400 call org.injectd.Injector1 /org/injectd/Injector1 \
    org.injectd.Injector1.Manager GetCapabilities) || fail "GetCapabilities failed: $caps"
assert_eq active "$(active_state)" "injectd.service after a D-Bus call"
assert_eq notify "$(in_ns systemctl show -P Type injectd.service)" "service type"
log "GetCapabilities: ${caps:0:200}"

# The sandbox check ran before the daemon, in the same sandbox.
[[ -s $CHECK_LOG ]] || fail "the sandbox check left no log at '$CHECK_LOG'"
assert_not_contains "$(cat "$CHECK_LOG")" "FAIL" "sandbox check"
assert_contains "$(cat "$CHECK_LOG")" "done" "sandbox check"
log "sandbox check: $(grep -c '^ok:' "$CHECK_LOG") expectations met"

funcs=$(in_ns busctl call org.injectd.Injector1 /org/injectd/Injector1 \
    org.injectd.Injector1.Manager ListFunctions s 'should_fail*') || fail "ListFunctions failed: $funcs"
assert_contains "$funcs" should_failslab "ListFunctions from inside the sandbox"

# ---------------------------------------------------------------- restart, socket activation

log "stop: /run/injectd and the socket stay (RuntimeDirectoryPreserve=yes)"
in_ns systemctl stop injectd.service
assert_eq inactive "$(active_state)" "injectd.service after stop"
[[ -S $SOCKET ]] || fail "expected '$SOCKET' to survive the stop"
assert_eq 755 "$(stat -c %a /run/injectd)" "mode of /run/injectd"

log "socket activation"
rm -f "$CHECK_LOG"
# One call, with the request side kept open until the reply is in (socat
# would otherwise shut the connection down for writing at once).
mkfifo "$work/request"
in_ns socat - "UNIX-CONNECT:$SOCKET" <"$work/request" >"$work/reply" 2>&1 &
socat_pid=$!
exec {request_fd}>"$work/request"
printf '{"method":"org.varlink.service.GetInfo"}\0' >&"$request_fd"
wait_until 400 grep -q "org.injectd.Injector" "$work/reply"
exec {request_fd}>&-
wait "$socat_pid" || fail "socat: $(cat "$work/reply")"
assert_eq active "$(active_state)" "injectd.service after a Varlink connection"
assert_not_contains "$(cat "$CHECK_LOG")" "FAIL" "sandbox check (second start)"

in_ns systemctl stop injectd.service injectd.socket
rm -f "$CHECK_LOG"
finish
