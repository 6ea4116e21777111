# shellcheck shell=bash
# tests/vm/lib-systemd.sh - helpers for the scenarios that run under
# `tests/vm/run --systemd` (vm_systemd_scenarios in tests/vm/meson.build):
# systemd is PID 1, the project is installed under /usr as a package would
# be, injectd.socket listens, dbus-daemon is started by its socket, polkitd
# and injectd by activation. Source after lib.sh.
#
# Users: alice (in group injectd, which the installed sysusers.d entry
# created) and bob (not). `open_session USER` gives USER a scope of their
# own; `as USER CMD` runs CMD as USER, in that scope when there is one.
# `in_container USER CMD` runs CMD as USER in a transient service that sees
# nothing of /run but the Varlink socket: no D-Bus, no network.

[[ ${INJECTD_VM_SYSTEMD:-0} == 1 ]] ||
    fail "this scenario needs systemd as PID 1: tests/vm/run --systemd -- bash $0"
[[ $(</proc/1/comm) == systemd ]] || fail "PID 1 is '$(</proc/1/comm)', not systemd"

INJECTCTL=/usr/bin/injectctl
SOCKET=/run/injectd/org.injectd.Injector
[[ -x $INJECTCTL ]] || fail "injectctl is not installed at '$INJECTCTL'"
[[ -x /usr/libexec/injectd ]] || fail "injectd is not installed at /usr/libexec/injectd"

# On failure, what the services said. Registered first, so it runs last:
# after the scenario's own cleanups, whose messages it then shows too.
_sd_start=$(date +%s)
_sd_show_journal() {
    _failed || return 0
    log "the journal since the scenario started (injectd, its socket, dbus, polkit):"
    journalctl --no-pager -o short-monotonic -p info --since "@$_sd_start" \
        -u injectd.service -u injectd.socket -u dbus.service -u polkit.service 2>&1 |
        tail -n 80 | sed 's/^/  | /' >&2
    return 0
}
at_exit _sd_show_journal

# Under -Db_sanitize the service's sanitizer reports are in the journal
# (init-systemd.sh); copied into lib.sh's report directory, they fail the
# scenario at finish like any other process's. Runs before finish checks.
_sd_collect_sanitizer_reports() {
    local reports
    reports=$(journalctl --no-pager -o cat --since "@$_sd_start" -u injectd.service 2>/dev/null |
        grep -E -A 40 'ERROR: (Address|Leak)Sanitizer|runtime error:') || return 0
    printf '%s\n' "$reports" >"$_sanitizer_dir/injectd.service-journal"
}
at_exit _sd_collect_sanitizer_reports

# unit_state UNIT: ActiveState (active, inactive, activating, failed...).
unit_state() { systemctl show -P ActiveState "$1"; }

# stop_injectd: stop the service (the socket stays, and may start it again).
stop_injectd() { systemctl stop injectd.service 2>/dev/null; }

# main_pid: the running daemon's pid (0 when it does not run).
main_pid() { systemctl show -P MainPID injectd.service; }

# journal_mark VAR: remember this moment in VAR, for journal_since and
# journal_event. (Not a journal cursor: journalctl --after-cursor finds
# nothing when combined with matches.)
journal_mark() { printf -v "$1" '%s' "$(date +%s%6N)"; }

# journal_since VAR MATCH...: the messages of the journal entries that
# match (journalctl matches, -u UNIT...) logged after the mark in VAR.
journal_since() {
    local t=${!1}
    shift
    journalctl -q -o json "$@" |
        jq -r --argjson t "$t" 'select((.__REALTIME_TIMESTAMP | tonumber) > $t) | .MESSAGE'
}

# journal_event VAR MATCH...: the last matching entry after the mark, as
# JSON (injectd's audit records carry INJECTD_EVENT, INJECTD_ID...).
journal_event() {
    local t=${!1}
    shift
    journalctl -q -o json "$@" |
        jq -c --argjson t "$t" 'select((.__REALTIME_TIMESTAMP | tonumber) > $t)' | tail -n 1
}

# ---------------------------------------------------------------- users

systemd_users() {
    getent group injectd >/dev/null || fail "no group injectd: the installed sysusers.d entry was not applied"
    add_user alice
    add_user bob
    usermod -a -G injectd alice
}

# open_session USER: a scope of USER's own under their user slice
# (user-UID.slice/USER-session.scope), held open by a `sleep` of theirs
# until the scenario ends, like a login session without logind: a real
# login (runuser -l, PAM) would start their whole user manager, which costs
# a minute under TCG, and leave a root process (the PAM session's keeper)
# in the scope, so that injectd rightly refuses to scope to that cgroup.
# Sets SESSION_SCOPE to its cgroup. Call it from the scenario's own shell,
# not in $(...).
open_session() {
    local user=$1 uid unit
    uid=$(id -u "$user")
    unit=$user-session.scope
    systemd-run --quiet --scope --unit="$unit" --slice="user-$uid.slice" -- \
        setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all -- sleep infinity &
    at_exit systemctl stop "$unit"
    wait_until 120 pgrep -u "$user" -x sleep
    SESSION_SCOPE=/user.slice/user-$uid.slice/$unit
    assert_eq active "$(unit_state "$unit")" "$user's scope"
    [[ $(sed -n 's/^0:://p' "/proc/$(pgrep -u "$user" -x sleep)/cgroup") == "$SESSION_SCOPE" ]] ||
        fail "$user's sleep is not in $SESSION_SCOPE"
    echo "$SESSION_SCOPE" >"$_state/session-$user"
}

# as USER CMD [ARG...]: CMD as USER (with their groups, no capabilities),
# inside USER's session (open_session) if they have one.
as() {
    local user=$1 home scope=
    shift
    home=$(getent passwd "$user" | cut -d: -f6)
    [[ -e $_state/session-$user ]] && scope=$(<"$_state/session-$user")
    (
        if [[ -n $scope ]]; then echo "$BASHPID" >"/sys/fs/cgroup$scope/cgroup.procs"; fi
        HOME=$home USER=$user LOGNAME=$user \
            exec setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all -- "$@"
    )
}

# in_container USER CMD [ARG...]: CMD as USER (root too) in a transient
# service sandboxed like a CI container that was given only injectd's
# Varlink socket: /run is an empty tmpfs but for that socket (so no system
# bus), no network, its own /dev/shm and IPC. CMD's output and exit status
# are ours. /tmp stays shared, for test files.
in_container() {
    local user=$1
    shift
    systemd-run --quiet --wait --pipe --collect \
        -p User="$user" -p TemporaryFileSystem=/run -p BindPaths="$SOCKET" \
        -p PrivateNetwork=yes -p PrivateIPC=yes -p WorkingDirectory=/tmp \
        -- "$@"
}

# ---------------------------------------------------------------- checks

# run_summary_injected FUNCTION FILE: the "injected" count of FUNCTION in
# the summary `injectctl run` wrote to FILE (function, matched, injected).
run_summary_injected() {
    awk -v f="$1" '$1 == f { print $3 }' "$2"
}

# bob_cats_start / bob_cats_stop: bob runs `cat /etc/hostname` in a loop,
# in a scope of his own, from before an injection until after it; stop
# fails if any cat failed, and sets BOB_CATS to how many ran.
# bob_cats_between T0 T1: how many ran entirely between two realtime
# microsecond timestamps (journal __REALTIME_TIMESTAMP).
bob_cats_start() {
    _bob_out=$(mktemp /tmp/bob-cats.XXXXXX)
    _bob_stop=$(mktemp -u /tmp/bob-stop.XXXXXX)
    chmod 0666 "$_bob_out"
    # shellcheck disable=SC2016 # expanded by bob's bash
    systemd-run --quiet --scope --uid=bob -- bash -c '
        echo started
        until [[ -e $1 ]]; do
            t=$EPOCHREALTIME
            if ! out=$(cat /etc/hostname 2>&1); then echo "failed: $out"; exit 1; fi
            echo "cat ${t/./} ${EPOCHREALTIME/./}"
        done
        echo done' bash "$_bob_stop" >"$_bob_out" 2>&1 &
    _bob_pid=$!
    wait_until 120 grep -q started "$_bob_out"
}
bob_cats_stop() {
    local rc=0
    : >"$_bob_stop"
    wait "$_bob_pid" || rc=$?
    rm -f "$_bob_stop"
    if ((rc != 0)) || ! grep -qx 'done' "$_bob_out"; then fail "bob's cats (status $rc): $(tail -n 3 "$_bob_out")"; fi
    BOB_CATS=$(grep -c '^cat ' "$_bob_out") || fail "bob's cats: none ran"
}
bob_cats_between() {
    awk -v t0="$1" -v t1="$2" '$1 == "cat" && $2 >= t0 && $3 <= t1 { n++ } END { print n + 0 }' "$_bob_out"
}
