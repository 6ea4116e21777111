#!/bin/bash
# Hundreds of one user's Inject calls at once, with polkit required (issue
# 15, target 9): every caller is served, none is refused because polkit
# could not be asked, and callers that hang up before their answer (while
# polkit is asked for them, or while their check waits its turn) get
# nothing armed and do not hurt the daemon.
#
# The daemon sends at most POLKIT_IN_FLIGHT_MAX (32) CheckAuthorization
# calls at once and queues the rest (src/daemon/polkit.h). Without that
# bound, the calls past dbus-daemon's max_replies_per_connection (128 on
# Debian's system bus) failed at once with LimitsExceeded, and each such
# caller got AuthorizationUnavailable.
#
# tests/vm/burst-client.c sends all the calls before reading any answer,
# each on a connection of its own, for a process scope of one of its idle
# children. A test rule makes polkitd a little slow for alice (below), as
# it was under the bench's load, so that her checks pile up. Against the
# daemon without the bound, 157 of the 200 were refused (LimitsExceeded);
# with it all 200 were served in 69 s under TCG and ASan.
# INJECTD_BURST_CLIENTS=N sets how many are awaited (default 200: well
# past 128).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

BURST=$BUILD_DIR/tests/vm/burst-client
[[ -x $BURST ]] || fail "burst-client is not built at '$BURST'"
N=${INJECTD_BURST_CLIENTS:-200}
HANGUPS=40
FUNCTION=__x64_sys_getpriority

# polkitd answers one check after another. Each check of alice's spawns
# a short sleep in polkitd first (then the sample rule, 50-injectd.rules,
# grants it), so that her checks come in faster than they are answered, as
# they did in the bench with 1,000 clients: then more than 128 wait at
# once unless the daemon holds them back. Under TCG a check takes about
# 0.1 to 0.3 s this way: 200 in half a minute to a minute.
mkdir -p /etc/polkit-1/rules.d
cat >/etc/polkit-1/rules.d/40-injectd-test-slow.rules <<'EOF'
polkit.addRule(function(action, subject) {
        if (action.id == "org.injectd.inject" && subject.user == "alice")
                polkit.spawn(["sleep", "0.1"]);
});
EOF
at_exit rm -f /etc/polkit-1/rules.d/40-injectd-test-slow.rules
daemon_setup

# A rule of its own, so that alice may hold N injections (the default
# rules allow 16).
policy_dir=$DAEMON_WORK/policy.d
mkdir -p "$policy_dir"
cat >"$policy_dir/10-burst.json" <<EOF
{
  "rules": [
    {
      "name": "burst",
      "groups": ["injectd"],
      "functions": ["$FUNCTION"],
      "errors": ["EPERM"],
      "scopes": ["process"],
      "max-duration": "10min",
      "max-active": 1000
    }
  ]
}
EOF
# The limits on everything but polkit lifted: the request rate, the
# injections of everyone and per function, and connections. Each burst
# connection holds one descriptor in the daemon.
ulimit -n 4096
start_injectd --polkit=required --policy-dir="$policy_dir" --rate=0 --max-active=2000 \
    --max-per-function=2048 --max-connections=2000 --max-connections-per-user=1500

# Answers to N calls come as polkitd gives them, a few a second under TCG
# and ASan: the client waits up to 400 s for them, the script a little
# longer (tests/vm/run stops the VM at 600 s).
start_as alice "$DAEMON_WORK/burst.out" "$DAEMON_WORK/burst.err" "$BURST" "$SOCKET" "$FUNCTION" EPERM "$N" "$HANGUPS"
burst_pid=$BG_PID
holding() { grep -qx holding "$DAEMON_WORK/burst.out"; }
started=$SECONDS
wait_until 480 holding
log "$N calls (and $HANGUPS hung up) answered in $((SECONDS - started)) s: $(tr '\n' ';' <"$DAEMON_WORK/burst.out")"

kill -0 "$INJECTD_PID" 2>/dev/null || fail "injectd is gone after the burst"
if grep -q LimitsExceeded "$DAEMON_LOG"; then
    fail "polkit could not be asked for some callers (the bus's limit on pending calls): $(grep -m3 LimitsExceeded "$DAEMON_LOG")"
fi
grep -q '^refused' "$DAEMON_WORK/burst.out" &&
    fail "callers were refused: $(grep '^refused' "$DAEMON_WORK/burst.out")"
served=$(awk '$1 == "served" { print $2 }' "$DAEMON_WORK/burst.out")
[[ $served == "$N" ]] || fail "expected all $N callers served, seen ${served:-none}: $(cat "$DAEMON_WORK/burst.out")"

# The hung-up callers got nothing armed: exactly the N served are.
left=$(injections_left)
[[ $left == "$N" ]] || fail "expected the $N injections of the served callers, seen $left"

# Their requesters leave all at once: every injection ends with its
# connection, and the daemon goes on answering.
kill "$burst_pid"
none_left() { [[ $(injections_left) == 0 ]]; }
wait_until 300 none_left
kill -0 "$INJECTD_PID" 2>/dev/null || fail "injectd is gone after its callers left"
# And serves alice again: one more Inject, for varlink-call's own process.
out=$(vl alice org.injectd.Injector.Inject \
    "{\"function\":\"$FUNCTION\",\"error\":\"EPERM\",\"scope\":\"process\",\"duration_usec\":60000000}") ||
    fail "alice's Inject after the burst failed: $out"
jq -e .parameters.id <<<"$out" >/dev/null || fail "alice's Inject after the burst armed nothing: $out"
wait_until 120 none_left
stop_injectd
finish
