# shellcheck shell=bash
# tests/vm/lib-daemon.sh - the daemon's world inside the VM, for the
# scenarios that talk to injectd: the real dbus-daemon and polkitd, our bus
# policy, polkit actions and sample rule, the default JSON policy, and two
# users: alice (in group injectd) and bob (not), each in a cgroup of their
# own. Source after lib.sh; call daemon_setup, then start_injectd.

INJECTD=$BUILD_DIR/src/daemon/injectd
VARLINK_CALL=$BUILD_DIR/tests/vm/varlink-call
SOCKET=/run/injectd/org.injectd.Injector
POLKITD=/usr/lib/polkit-1/polkitd
DAEMON_WORK=$(mktemp -d /tmp/daemon-test.XXXXXX)
DAEMON_LOG=$DAEMON_WORK/injectd.log
chmod 0755 "$DAEMON_WORK"
[[ -x $INJECTD ]] || fail "injectd is not built at '$INJECTD'"
[[ -x $VARLINK_CALL ]] || fail "varlink-call is not built at '$VARLINK_CALL'"

name_has_owner() {
    [[ $(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
        NameHasOwner s "$1" 2>/dev/null) == "b true" ]]
}

daemon_setup() {
    install -m 0644 "$SRC_DIR/policy/org.injectd.policy" /usr/share/polkit-1/actions/
    install -m 0644 "$SRC_DIR/policy/50-injectd.rules" /usr/share/polkit-1/rules.d/
    install -m 0644 "$SRC_DIR/policy/org.injectd.Injector1.conf" /usr/share/dbus-1/system.d/
    mkdir -p /etc/injectd/policy.d
    install -m 0644 "$SRC_DIR/policy/10-injectd-default.json" /etc/injectd/policy.d/

    getent group injectd >/dev/null || groupadd --system injectd
    add_user alice
    add_user bob
    usermod -a -G injectd alice

    # Each user's own session cgroup, as logind would make.
    local u
    for u in alice bob; do
        make_cgroup "session-$u" >/dev/null
    done

    mkdir -p /run/dbus
    DBUS_PID=$(dbus-daemon --system --fork --print-pid) || fail "dbus-daemon --system did not start"
    at_exit kill "$DBUS_PID"
    "$POLKITD" --no-debug >>"$DAEMON_WORK/polkitd.log" 2>&1 &
    POLKITD_PID=$!
    at_exit kill "$POLKITD_PID"
    wait_until 120 name_has_owner org.freedesktop.PolicyKit1
    at_exit _show_daemon_log
}

_show_daemon_log() {
    if _failed && [[ -s $DAEMON_LOG ]]; then
        log "injectd's log:"
        sed 's/^/  | /' "$DAEMON_LOG" >&2
    fi
}

# start_injectd [ARG...]: run the daemon in the background, logging to
# DAEMON_LOG, and wait until it owns its bus name and socket.
# INJECTD_WRAPPER (words, split on blanks) runs it under a tool that makes
# its exit status non-zero when it reports something (stop_injectd checks
# it). INJECTD_WRAPPER=valgrind is short for memcheck with our suppressions:
#   valgrind --error-exitcode=99 --leak-check=full
#            --errors-for-leak-kinds=definite,indirect
#            --suppressions=tests/sanitizers/valgrind.supp
# A wrapped daemon is slow (valgrind under TCG: minutes to start), so it
# gets 10 min to start, D-Bus clients wait as long (SYSTEMD_BUS_TIMEOUT),
# and start_injectd returns only once it answers a call: it owns its name
# and socket before it has probed the kernel and entered its event loop.
start_injectd() {
    local -a wrapper
    if [[ ${INJECTD_WRAPPER:-} == valgrind ]]; then
        wrapper=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
                 "--suppressions=$SRC_DIR/tests/sanitizers/valgrind.supp")
    else
        read -r -a wrapper <<<"${INJECTD_WRAPPER:-}"
    fi
    if ((${#wrapper[@]})); then
        export SYSTEMD_BUS_TIMEOUT=${SYSTEMD_BUS_TIMEOUT:-600}
    fi
    "${wrapper[@]}" "$INJECTD" --log-target=stderr "$@" >>"$DAEMON_LOG" 2>&1 &
    INJECTD_PID=$!
    at_exit stop_injectd
    wait_until $((${#wrapper[@]} ? 600 : 60)) name_has_owner org.injectd.Injector1
    wait_until 120 test -S "$SOCKET"
    if ((${#wrapper[@]})); then
        wait_until 600 "$VARLINK_CALL" "$SOCKET" org.varlink.service.GetInfo
    fi
}

# stop_injectd: SIGTERM, and the daemon must exit 0; any other status (a
# crash, a sanitizer or valgrind report, a failed shutdown) is noted for
# check_sanitizers (lib.sh), which fails the scenario at finish.
stop_injectd() {
    local rc=0
    [[ -n ${INJECTD_PID:-} ]] || return 0
    kill "$INJECTD_PID" 2>/dev/null || true
    wait "$INJECTD_PID" 2>/dev/null || rc=$?
    INJECTD_PID=
    if ((rc != 0)); then
        {
            echo "injectd exited with status $rc when stopped; its log:"
            cat "$DAEMON_LOG"
        } >"$_sanitizer_dir/injectd-exit.$BASHPID"
    fi
}

# as USER CMD [ARG...]: run CMD as USER, inside USER's session cgroup.
as() {
    local user=$1
    shift
    (
        echo "$BASHPID" >"/sys/fs/cgroup/session-$user/cgroup.procs"
        exec setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all -- "$@"
    )
}

# start_as USER OUT ERR CMD [ARG...]: as, in the background, with stdout
# to OUT and stderr to ERR; BG_PID is CMD's own pid (not a subshell's), so
# signals sent to it reach CMD. Killed when the scenario ends.
start_as() {
    local user=$1 out=$2 err=$3
    shift 3
    (
        echo "$BASHPID" >"/sys/fs/cgroup/session-$user/cgroup.procs"
        exec setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all -- "$@"
    ) >"$out" 2>"$err" &
    BG_PID=$!
    at_exit kill "$BG_PID"
}

# bus_inject USER KEY TYPE VALUE...: Inject over D-Bus with busctl (a real
# client we did not write); prints busctl's JSON reply.
bus_inject() {
    local user=$1
    shift
    as "$user" busctl --json=short call org.injectd.Injector1 /org/injectd/Injector1 \
        org.injectd.Injector1.Manager Inject 'a{sv}' $(($# / 3)) "$@"
}

# vl USER METHOD [JSON]: one Varlink call through our client module.
vl() {
    local user=$1
    shift
    as "$user" "$VARLINK_CALL" "$SOCKET" "$@"
}

# injections_left: how many injections the daemon holds, for everyone.
injections_left() {
    "$VARLINK_CALL" "$SOCKET" org.injectd.Injector.ListInjections '{"all":true}' | jq '.parameters.injections | length'
}

# root_inject FUNCTION ERROR BACKEND PID [EXTRA-JSON]: a detached injection
# as root over Varlink, scoped to process PID, for 5 minutes; prints its id.
root_inject() {
    local out
    out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Inject \
        "{\"function\":\"$1\",\"error\":\"$2\",\"backend\":\"$3\",\"scope\":\"process\",\"pid\":$4,\"detach\":true,\"duration_usec\":300000000${5:-}}") ||
        fail "Inject $1 ($3) was refused: $out"
    jq -er .parameters.id <<<"$out" || fail "Inject printed no id: $out"
}

# root_cancel ID
root_cancel() {
    "$VARLINK_CALL" "$SOCKET" org.injectd.Injector.Cancel "{\"id\":\"$1\"}" >/dev/null || fail "Cancel $1 failed"
}

# engine_stats: the capabilities document's "engine" object.
engine_stats() {
    local out
    out=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.GetCapabilities '{}') || fail "GetCapabilities failed: $out"
    jq -ec .parameters.capabilities.engine <<<"$out" || fail "no engine statistics in the capabilities: $out"
}

# prog_ids NAME: ids of the loaded programs called NAME (bpftool cuts names
# to 15 characters), one a line.
prog_ids() {
    bpftool prog show --json | jq -r --arg n "${1:0:15}" '.[] | select(.name == $n) | .id'
}
