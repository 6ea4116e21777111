#!/bin/bash
# Attack: failing calls inside a program that holds more than the user does
# (docs/security.md, "What an injection can touch").
#
# alice arms __x64_sys_getpgid EPERM for her own process tree, then runs,
# inside it, copies of the cred-probe fixture: a plain one, one with the
# file capability cap_net_raw+ep (as ping has), one with cap_net_raw+p
# (permitted only, raised at will), and a setgid one run as is, with its
# effective gid dropped back to alice's (the saved one kept, to take back),
# and with its filesystem gid set to the saved one. Only the plain copy may
# fail; the others' calls are seen and never matched, on both backends.
# The plain copy run as root of a user namespace of alice's own (unshare
# --user --map-root-user, as rootless podman runs a container) holds
# capabilities only there, which grant nothing outside it: it is failed.
# Before the capability and saved/filesystem gid checks in
# bpf/inject.bpf.c, every copy but the setgid one run as is was failed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
PROBE=$BUILD_DIR/tests/vm/cred-probe
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
[[ -x $PROBE ]] || fail "cred-probe is not built at '$PROBE'"
command -v setcap >/dev/null || fail "setcap is missing (libcap2-bin, tools/setup.sh)"
CALLS=20

daemon_setup
start_injectd

# Not /tmp: it is mounted nosuid, which turns off file capabilities and the
# setgid bit. The root overlay honours both.
dir=$(mktemp -d /var/tmp/filecaps.XXXXXX)
chmod 0755 "$dir"
at_exit rm -rf "$dir"
getent group fcgroup >/dev/null || groupadd --system fcgroup
install -m 0755 "$PROBE" "$dir/plain"
install -m 0755 "$PROBE" "$dir/caps-ep"
setcap cap_net_raw+ep "$dir/caps-ep"
install -m 0755 "$PROBE" "$dir/caps-p"
setcap cap_net_raw+p "$dir/caps-p"
install -m 0755 -g fcgroup "$PROBE" "$dir/sgid"
chmod 2755 "$dir/sgid"
[[ -g $dir/sgid ]] || fail "'$dir/sgid' did not keep its setgid bit"
assert_contains "$(getcap "$dir/caps-ep")" "cap_net_raw=ep" "file capabilities of caps-ep"
printf '#!/bin/sh\nexec unshare --user --map-root-user "%s/plain" "$@"\n' "$dir" >"$dir/userns"
chmod 0755 "$dir/userns"

# What runs in alice's scope, in order: "PROGRAM MODE" per line.
runs=("plain as-is" "caps-ep as-is" "caps-p as-is" "sgid as-is" "sgid drop-egid" "sgid fsgid" "userns as-is" "plain as-is")
spared=$((5 * CALLS))

# result FILE: how many of the probe's calls failed, or fail the test.
result() {
    local f
    f=$(sed -n 's/^failed: //p' "$1")
    [[ -n $f ]] || fail "cred-probe wrote no result to '$1': $(cat "$1" "$1.err" 2>/dev/null)"
    echo "$f"
}

for backend in fmod_ret kprobe; do
    log "---- $backend"
    out=$dir/out-$backend
    mkdir "$out"
    chown alice "$out"
    mkfifo "$out/go"
    chown alice "$out/go"
    # alice's shell: waits to be armed, then runs each program in turn.
    start_as alice /dev/null "$out/holder.err" bash -c '
        dir=$1 out=$2
        shift 2
        echo ready >&2
        read -r _ <"$out/go"
        i=0
        for run in "$@"; do
            read -r prog mode <<<"$run"
            "$dir/$prog" "$mode" '"$CALLS"' >"$out/$i-$prog-$mode" 2>"$out/$i-$prog-$mode.err"
            i=$((i + 1))
        done
        echo finished >&2' holder "$dir" "$out" "${runs[@]}"
    holder=$BG_PID
    wait_until 120 grep -q '^ready' "$out/holder.err"

    id=$(as alice "$INJECTCTL" inject __x64_sys_getpgid --error EPERM --pid "$holder" --backend "$backend" \
        --for 10min --detach)
    [[ -n $id ]] || fail "alice could not arm __x64_sys_getpgid on her shell"
    echo go >"$out/go"
    wait_until 300 grep -q '^finished' "$out/holder.err"

    i=0
    for run in "${runs[@]}"; do
        read -r prog mode <<<"$run"
        f=$out/$i-$prog-$mode
        creds=$(sed -n 's/^creds: //p' "$f")
        log "$prog $mode: $creds; failed $(result "$f") of $CALLS"
        case "$prog $mode" in
        "plain as-is" | "userns as-is")
            assert_eq "$CALLS" "$(result "$f")" "failed calls of alice's '$prog' program (run $i, $creds)" ;;
        *)
            assert_eq 0 "$(result "$f")" "failed calls of '$prog' run '$mode' ($creds)" ;;
        esac
        # Each copy runs with the credentials this scenario means.
        case "$prog $mode" in
        "caps-"* | userns*) assert_not_contains "$creds" "cap_prm=0000000000000000" "$prog's permitted capabilities" ;;
        "sgid as-is") assert_not_contains "$creds" " egid=$(id -g alice) " "the setgid program's egid" ;;
        "sgid drop-egid")
            assert_contains "$creds" " egid=$(id -g alice) " "the dropped egid"
            assert_not_contains "$creds" " sgid=$(id -g alice) " "the kept saved gid" ;;
        "sgid fsgid")
            assert_contains "$creds" " egid=$(id -g alice) " "the dropped egid"
            assert_not_contains "$creds" " fsgid=$(id -g alice) " "the filesystem gid" ;;
        esac
        i=$((i + 1))
    done

    # The spared calls were seen, and never matched.
    doc=$(as alice "$INJECTCTL" show "$id" --json)
    seen=$(jq -r .calls_seen <<<"$doc")
    matched=$(jq -r .calls_matched <<<"$doc")
    log "counters: seen $seen, matched $matched, injected $(jq -r .faults_injected <<<"$doc")"
    ((seen - matched >= spared)) ||
        fail "expected at least $spared calls seen and not matched (the spared programs'), saw seen $seen, matched $matched"
    assert_eq "$matched" "$(jq -r .faults_injected <<<"$doc")" "faults injected: every matched call"

    as alice "$INJECTCTL" cancel "$id" >/dev/null
    wait "$holder" 2>/dev/null || true
done

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
