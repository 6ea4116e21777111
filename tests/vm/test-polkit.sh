#!/bin/bash
# Scenario "polkit": the daemon's polkit client (src/daemon/polkit.c, driven
# through tests/vm/polkit-check) against the real dbus-daemon and polkitd,
# with our actions file, sample rule and bus policy installed. Every yes/no
# is compared with pkcheck, polkit's own client. Then the --polkit modes with
# polkitd running, activatable, and gone; cancellation; and the bus policy.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PC_BIN=$BUILD_DIR/tests/vm/polkit-check
[[ -x $PC_BIN ]] || fail "polkit-check is not built at '$PC_BIN'"
POLKITD=/usr/lib/polkit-1/polkitd
[[ -x $POLKITD ]] || fail "expected polkitd at '$POLKITD' (package polkitd)"

work=$(mktemp -d /tmp/polkit-test.XXXXXX)
at_exit rm -rf "$work"
# The users run polkit-check too: a copy they can surely execute.
install -m 0755 "$PC_BIN" "$work/polkit-check"
chmod 0755 "$work"
PC=$work/polkit-check

# ---------------------------------------------------------------- setup

# Everything below lands in the VM's overlay, never on the host.
install -m 0644 "$SRC_DIR/policy/org.injectd.policy" /usr/share/polkit-1/actions/
install -m 0644 "$SRC_DIR/policy/50-injectd.rules" /usr/share/polkit-1/rules.d/
install -m 0644 "$SRC_DIR/policy/org.injectd.Injector1.conf" /usr/share/dbus-1/system.d/
install -m 0644 "$SRC_DIR/policy/org.injectd.Injector1.service" /usr/share/dbus-1/system-services/

# The group comes from our sysusers.d entry, as on a real system.
systemd-sysusers "$SRC_DIR/units/injectd.conf" >/dev/null
getent group injectd >/dev/null || fail "systemd-sysusers did not create group 'injectd'"
for u in alice bob carol dave; do add_user "$u"; done
usermod -a -G injectd alice

# Test-only rules: carol must authenticate as an admin (a challenge); dave's
# checks take 10 s in polkitd, long enough to cancel one and tell the
# cancellation from an answer even on a loaded host under ASan, where the
# checking program alone takes a second or more to start.
cat >/etc/polkit-1/rules.d/60-injectd-test.rules <<'EOF'
polkit.addRule(function(action, subject) {
        if (action.id == "org.injectd.inject" && subject.user == "carol")
                return polkit.Result.AUTH_ADMIN;
        if (action.id == "org.injectd.inject" && subject.user == "dave") {
                polkit.spawn(["sleep", "10"]);
                return polkit.Result.NO;
        }
});
EOF
at_exit rm -f /etc/polkit-1/rules.d/60-injectd-test.rules

# The system bus, as Debian configures it (our bus policy included).
mkdir -p /run/dbus
dbus_pid=$(dbus-daemon --system --fork --print-pid) || fail "dbus-daemon --system did not start"
at_exit kill "$dbus_pid"

name_has_owner() {
    [[ $(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
        NameHasOwner s "$1") == "b true" ]]
}
name_is_gone() { ! name_has_owner "$@"; }

start_polkitd() {
    "$POLKITD" --no-debug >>"$work/polkitd.log" 2>&1 &
    wait_until 120 name_has_owner org.freedesktop.PolicyKit1
}
stop_polkitd() {
    # Also one that the bus activated: whoever owns the name.
    local pid
    pid=$(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
        GetConnectionUnixProcessID s org.freedesktop.PolicyKit1 | cut -d' ' -f2)
    kill "$pid"
    wait_until 120 name_is_gone org.freedesktop.PolicyKit1
}
stop_polkitd_if_running() {
    if name_has_owner org.freedesktop.PolicyKit1; then stop_polkitd; fi
}
at_exit stop_polkitd_if_running
show_polkitd_log() {
    if _failed && [[ -s $work/polkitd.log ]]; then
        log "polkitd's output:"
        sed 's/^/  | /' "$work/polkitd.log" >&2
    fi
}
at_exit show_polkitd_log
start_polkitd

# One process per user to check, as the daemon would see it over Varlink.
declare -A PID
for u in alice bob carol dave; do
    setpriv --reuid="$u" --regid="$u" --init-groups --inh-caps=-all sleep 1000 &
    PID[$u]=$!
    at_exit kill "${PID[$u]}"
done
# Wait for setpriv to have switched: a check needs the user's uid on the process.
runs_as() { [[ $(awk '/^Uid:/ { print $2 }' "/proc/$1/status") == "$(id -u "$2")" ]]; }
for u in alice bob carol dave; do
    wait_until 120 runs_as "${PID[$u]}" "$u"
done

start_time() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }

# ---------------------------------------------------------------- helpers

# pc ARG...: run polkit-check (as root, like the daemon); sets OUT (its JSON
# line) and RC (its exit status, pkcheck's convention).
pc() {
    RC=0
    OUT=$("$PC" "$@" 2>"$work/pc.err") || RC=$?
}

# field NAME: a field of OUT ("null" when absent).
field() { jq -r ".$1" <<<"$OUT"; }

# pk USER ACTION [pkcheck ARG...]: pkcheck on USER's process; prints its exit status.
pk() {
    local u=$1 action=$2 pid rc=0
    shift 2
    pid=${PID[$u]}
    pkcheck --action-id "$action" --process "$pid,$(start_time "$pid"),$(id -u "$u")" "$@" \
        >/dev/null 2>&1 || rc=$?
    echo "$rc"
}

# expect USER ACTION RC ALLOWED HOW [polkit-check ARG...]: check USER's
# process; expect that exit status (0 authorized, 1 not, 2 challenge, 127
# polkit could not answer), "allowed" and "how".
expect() {
    local u=$1 action=$2 rc=$3 allowed=$4 how=$5
    shift 5
    pc --action "$action" --pid "${PID[$u]}" "$@"
    assert_eq "$rc" "$RC" "polkit-check exit status for $u, $action ($*), output '$OUT' $(cat "$work/pc.err")"
    assert_eq "$allowed" "$(field allowed)" "allowed for $u, $action ($*)"
    assert_eq "$how" "$(field how)" "how for $u, $action ($*)"
}

# same_as_pkcheck USER ACTION RC: polkit-check and pkcheck agree, on RC.
same_as_pkcheck() {
    local u=$1 action=$2 rc=$3 allowed=false
    ((rc == 0)) && allowed=true
    assert_eq "$rc" "$(pk "$u" "$action")" "pkcheck's exit status for $u, $action"
    expect "$u" "$action" "$rc" "$allowed" polkit --mode required
    expect "$u" "$action" "$rc" "$allowed" polkit --mode auto
}

# ---------------------------------------------------------------- polkit decides

log "polkit running: our answers against pkcheck's"
same_as_pkcheck alice org.injectd.inject 0              # 50-injectd.rules: group injectd
same_as_pkcheck bob org.injectd.inject 1                # defaults: allow_any=no
same_as_pkcheck alice org.injectd.inject-global 1       # the sample rule grants only inject
same_as_pkcheck alice org.injectd.manage 1
same_as_pkcheck carol org.injectd.inject 2              # AUTH_ADMIN: a challenge
assert_eq true "$(field challenge)" "challenge for carol"
assert_eq null "$(field error)" "error for carol"

# Interactive: polkit would ask an agent; there is none, so still no.
expect carol org.injectd.inject 2 false polkit --interactive
assert_eq "2" "$(pk carol org.injectd.inject --allow-user-interaction)" "pkcheck --allow-user-interaction for carol"

# The start time guards against pid reuse: polkitd refuses a mismatch.
pc --action org.injectd.inject --pid "${PID[alice]}" --start-time $(($(start_time "${PID[alice]}") + 1))
[[ $RC != 0 && $(field allowed) == false ]] ||
    fail "a wrong start time for alice's pid: expected a refusal, saw status $RC: $OUT"
log "wrong start time: status $RC, $(field errorName)"

# D-Bus callers: the system-bus-name subject, as the user itself.
for u in alice bob; do
    rc=0
    out=$(run_as "$u" "$PC" --action org.injectd.inject --bus-name --mode required) || rc=$?
    if [[ $u == alice ]]; then want=0; else want=1; fi
    assert_eq "$want" "$rc" "polkit-check --bus-name as $u ($out)"
done

# A D-Bus caller that sent its request and left before polkit was asked:
# polkitd answers NameHasNoOwner for its gone bus name, the error name the
# bus uses when polkitd itself is missing. Only the bus's own error means
# "polkit is not there" (--polkit=auto falls back to the JSON policy);
# polkitd's is a refusal. Taken for polkit missing, it let a caller that
# polkit's rules deny arm a detached injection by hanging up at once.
for mode in auto required; do
    pc --action org.injectd.inject --gone-bus-name --mode "$mode"
    [[ $RC != 0 && $(field allowed) == false && $(field how) == polkit ]] ||
        fail "a gone bus name (--mode $mode): expected polkit's refusal, saw status $RC: $OUT $(cat "$work/pc.err")"
done
log "gone bus name: refused by polkit ($(field errorName))"

# A deny rule wins over the sample grant (rules run in file name order) and
# polkitd picks it up without a restart.
cat >/etc/polkit-1/rules.d/10-injectd-deny-alice.rules <<'EOF'
polkit.addRule(function(action, subject) {
        if (action.id.indexOf("org.injectd.") == 0 && subject.user == "alice")
                return polkit.Result.NO;
});
EOF
at_exit rm -f /etc/polkit-1/rules.d/10-injectd-deny-alice.rules
alice_refused() { [[ $(pk alice org.injectd.inject) == 1 ]]; }
alice_allowed() { [[ $(pk alice org.injectd.inject) == 0 ]]; }
wait_until 120 alice_refused
same_as_pkcheck alice org.injectd.inject 1
rm /etc/polkit-1/rules.d/10-injectd-deny-alice.rules
wait_until 120 alice_allowed
same_as_pkcheck alice org.injectd.inject 0

# ---------------------------------------------------------------- asynchrony and cancellation

# dave's check takes 10 s in polkitd; our loop keeps running meanwhile and
# cancels it after 0.3 s: no callback may come after that.
stdbuf -oL dbus-monitor --system "interface=org.freedesktop.PolicyKit1.Authority" >"$work/monitor.log" 2>&1 &
monitor_pid=$!
at_exit kill "$monitor_pid"
# The monitor is attached once it shows a check we make.
pk bob org.injectd.inject >/dev/null
wait_until 120 grep -q "member=CheckAuthorization" "$work/monitor.log"
started=$(date +%s%N)
pc --action org.injectd.inject --pid "${PID[dave]}" --interactive --cancel-after 300
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
assert_eq 4 "$RC" "status of the cancelled check (output '$OUT')"
assert_eq '{"cancelled":true}' "$OUT" "output of the cancelled check"
((elapsed_ms < 8000)) || fail "the cancelled check returned after ${elapsed_ms} ms, expected well before polkit's 10 s"
# ...and the interactive check was withdrawn in polkitd too.
wait_until 120 grep -q "member=CancelCheckAuthorization" "$work/monitor.log"
# polkitd is still busy with dave's rule (its rules run one at a time):
# let it finish.
sleep $((10 - elapsed_ms / 1000))

# ---------------------------------------------------------------- modes

log "--mode off: polkit is not consulted"
expect bob org.injectd.inject 0 true polkit-off --mode off
expect alice org.injectd.inject-global 0 true polkit-off --mode off

log "--mode auto, polkitd stopped but activatable: the bus starts it"
stop_polkitd
expect alice org.injectd.inject 0 true polkit --mode auto
expect bob org.injectd.inject 1 false polkit --mode auto
name_has_owner org.freedesktop.PolicyKit1 || fail "expected the bus to have activated polkitd"

log "polkitd stopped and not activatable"
stop_polkitd
reload_bus() { busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig; }
restore_polkit_activation() {
    if [[ -e $work/org.freedesktop.PolicyKit1.service ]]; then
        mv "$work/org.freedesktop.PolicyKit1.service" /usr/share/dbus-1/system-services/
        reload_bus
    fi
}
mv /usr/share/dbus-1/system-services/org.freedesktop.PolicyKit1.service "$work/"
at_exit restore_polkit_activation
reload_bus

expect alice org.injectd.inject 127 false polkit --mode required
assert_eq org.freedesktop.DBus.Error.ServiceUnknown "$(field errorName)" "error name with polkit gone"
assert_contains "$(field errorMessage)" "polkit is required (--polkit=required) but not available" "error message with polkit gone"
assert_contains "$(cat "$work/pc.err")" "polkit is required" "stderr with polkit gone"
assert_eq 127 "$(pk alice org.injectd.inject)" "pkcheck's exit status with polkit gone"

expect bob org.injectd.inject 0 true polkit-unavailable-auto --mode auto
assert_eq null "$(field error)" "error in auto mode with polkit gone"
assert_contains "$(cat "$work/pc.err")" "polkit is not available" "the fallback is logged"
expect bob org.injectd.inject 0 true polkit-off --mode off

# No bus connection at all.
expect bob org.injectd.inject 0 true polkit-unavailable-auto --mode auto --no-bus
expect bob org.injectd.inject 127 false polkit --mode required --no-bus
assert_eq ENOTCONN "$(field error)" "error without a bus"

restore_polkit_activation

# ---------------------------------------------------------------- bus policy

log "bus policy (policy/org.injectd.Injector1.conf)"
request_name_as() {
    run_as "$1" dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.RequestName string:org.injectd.Injector1 uint32:0 2>&1 || true
}
assert_contains "$(request_name_as root)" "uint32 1" "root owning org.injectd.Injector1 (1: primary owner)"
assert_contains "$(request_name_as alice)" "org.freedesktop.DBus.Error.AccessDenied" \
    "alice owning org.injectd.Injector1"

# Nobody owns the name, so a call that passes the bus policy activates it:
# org.injectd.Injector1.service (Exec=/bin/false without systemd) fails to
# spawn. A call the policy refuses never gets that far.
call_as() {
    run_as "$1" dbus-send --system --print-reply --reply-timeout=20000 --dest=org.injectd.Injector1 \
        /org/injectd/Injector1 "$2.Ping" 2>&1 || true
}
for iface in org.injectd.Injector1.Manager org.injectd.Injector1.Injection \
    org.freedesktop.DBus.Introspectable org.freedesktop.DBus.Properties org.freedesktop.DBus.Peer \
    org.freedesktop.DBus.ObjectManager; do
    out=$(call_as bob "$iface")
    assert_not_contains "$out" "AccessDenied" "bob calling $iface"
    assert_contains "$out" "org.freedesktop.DBus.Error.Spawn" "bob calling $iface (activation of /bin/false)"
done
assert_contains "$(call_as bob org.injectd.Injector1.Secret)" "org.freedesktop.DBus.Error.AccessDenied" \
    "bob calling an unlisted interface"

finish
