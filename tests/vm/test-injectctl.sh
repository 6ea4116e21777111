#!/bin/bash
# injectctl against the real daemon, over --bus and over --varlink, in text
# and --json: caps, functions, inject --detach, list, show, cancel; run
# fails exactly the chosen open of its command and exits with its status;
# bad command lines exit 2 with nothing armed. By default it uses Varlink
# when the socket answers (no system bus needed) and falls back to D-Bus
# when the socket is gone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
OPEN_REPORT=$BUILD_DIR/tests/vm/open-report
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"

daemon_setup
start_injectd

ictl() { as alice "$INJECTCTL" "$@"; }

for api in dbus varlink; do
    if [[ $api == varlink ]]; then T=(--varlink); else T=(--bus); fi
    log "---- over $api"

    # caps
    out=$(ictl "${T[@]}" caps)
    assert_contains "$out" "Kernel:" "caps ($api)"
    assert_contains "$out" "backend kprobe" "caps ($api)"
    caps=$(ictl "${T[@]}" caps --json)
    assert_eq true "$(jq .bpf.available <<<"$caps")" "caps --json .bpf.available ($api)"

    # functions
    fns=$(ictl "${T[@]}" functions '__x64_sys_open*' --json)
    assert_eq true "$(jq 'any(.[]; .name == "__x64_sys_openat")' <<<"$fns")" "functions --json ($api)"
    assert_eq 0 "$(jq '[.[] | select(.name | startswith("__x64_sys_open") | not)] | length' <<<"$fns")" \
        "functions matches only the glob ($api)"
    out=$(ictl "${T[@]}" functions '__x64_sys_openat' --allowed)
    assert_contains "$out" "__x64_sys_openat" "functions --allowed ($api)"
    assert_not_contains "$out" "never failed" "functions: a function without guards ($api)"
    # Guards: when a function is never failed (docs/engine.md).
    out=$(ictl "${T[@]}" functions should_failslab)
    assert_contains "$out" "should_failslab is never failed when the allocation has __GFP_NOFAIL, or when the cache is the kmem_cache bootstrap cache." \
        "functions: the guards of should_failslab ($api)"
    fns=$(ictl "${T[@]}" functions should_fail_alloc_page --json)
    assert_eq '["the allocation has __GFP_NOFAIL"]' "$(jq -c '.[0].guards' <<<"$fns")" \
        "functions --json: the guards of should_fail_alloc_page ($api)"

    # inject --detach, list, show, cancel
    inj=$(ictl "${T[@]}" inject __x64_sys_openat --error ENOENT --comm cat --for 1min --detach --json)
    id=$(jq -r .id <<<"$inj")
    [[ $id =~ ^[0-9a-f]{16}$ ]] || fail "inject --json ($api): expected an id, saw '$inj'"
    assert_eq ENOENT "$(jq -r .injection.error <<<"$inj")" "the injection's error ($api)"
    assert_eq cat "$(jq -r .injection.comm <<<"$inj")" "the injection's comm ($api)"
    assert_fails_with "No such file or directory" as alice cat /etc/hostname
    assert_succeeds as bob cat /etc/hostname

    list=$(ictl "${T[@]}" list --json)
    assert_eq "$id" "$(jq -r '.[0].id' <<<"$list")" "list --json ($api)"
    (($(jq '.[0].faults_injected' <<<"$list") >= 1)) || fail "list --json ($api): expected faults, saw $list"
    assert_eq 0 "$(jq '.[0].calls_guarded' <<<"$list")" "list --json: calls_guarded of a function without guards ($api)"
    out=$(ictl "${T[@]}" list)
    assert_contains "$out" "$id" "list ($api)"
    assert_contains "$out" "GUARDED" "list: the GUARDED column ($api)"
    assert_contains "$out" "cgroup:/session-alice" "list ($api)"
    out=$(ictl "${T[@]}" show "$id")
    assert_contains "$out" "Function: __x64_sys_openat" "show ($api)"
    assert_contains "$out" "Value: ENOENT" "show ($api)"
    assert_eq "$id" "$(ictl "${T[@]}" show "$id" --json | jq -r .id)" "show --json ($api)"
    # bob sees none of it.
    assert_eq 0 "$(as bob "$INJECTCTL" "${T[@]}" list --json | jq length)" "bob's list ($api)"

    ictl "${T[@]}" cancel "$id"
    assert_succeeds as alice cat /etc/hostname
    assert_eq 0 "$(injections_left)" "injections after cancel ($api)"
    # A refusal: the short error name, exit 1.
    rc=0
    err=$(ictl "${T[@]}" cancel "$id" 2>&1) || rc=$?
    assert_eq 1 "$rc" "cancel of a gone injection: exit status ($api)"
    assert_contains "$err" "injectctl: NoSuchInjection: " "cancel of a gone injection ($api)"
    rc=0
    err=$(ictl "${T[@]}" inject vfs_read --error EIO --detach 2>&1) || rc=$?
    assert_eq 1 "$rc" "inject vfs_read: exit status ($api)"
    assert_contains "$err" "injectctl: NotInjectable: 'vfs_read' cannot be made to fail" "inject vfs_read ($api)"

    # run: the 3rd open fails, once; the command's status comes back.
    files=(/etc/hostname /etc/passwd /etc/group /etc/hosts /etc/shells)
    rc=0
    ictl "${T[@]}" run --fail __x64_sys_openat:ENOENT,after=2,times=1 -- \
        "$OPEN_REPORT" 7 "${files[@]}" >"$DAEMON_WORK/run.out" 2>"$DAEMON_WORK/run.err" || rc=$?
    assert_eq 7 "$rc" "run: the command's exit status ($api)"
    assert_eq "ok ok ENOENT ok ok" "$(sed 's/.*: //' "$DAEMON_WORK/run.out" | paste -sd' ')" "run: which opens failed ($api)"
    summary=$(grep __x64_sys_openat "$DAEMON_WORK/run.err") || fail "run: no summary in '$(cat "$DAEMON_WORK/run.err")'"
    assert_eq 1 "$(awk '{print $3}' <<<"$summary")" "run: injected, in the summary ($api)"
    assert_eq 0 "$(injections_left)" "injections after run ($api)"

    rc=0
    sum=$(ictl "${T[@]}" --json run --fail __x64_sys_openat:EACCES,after=1,times=2 -- \
        "$OPEN_REPORT" 3 "${files[@]}" 2>&1 >/dev/null) || rc=$?
    assert_eq 3 "$rc" "run --json: the command's exit status ($api)"
    assert_eq 2 "$(jq '.injections[0].faults_injected' <<<"$sum")" "run --json: injected ($api)"
    assert_eq 0 "$(jq '.injections[0].calls_guarded' <<<"$sum")" "run --json: guarded ($api)"
    assert_eq 3 "$(jq '.exit_status' <<<"$sum")" "run --json: exit_status ($api)"

    # A command killed by a signal: 128+N.
    rc=0
    ictl "${T[@]}" run --fail __x64_sys_openat:ENOENT,times=1 -- bash -c 'kill -TERM $$' 2>/dev/null || rc=$?
    assert_eq 143 "$rc" "run: a command killed by SIGTERM ($api)"
    assert_eq 0 "$(injections_left)" "injections after the killed run ($api)"
done

# ---- bad command lines: exit 2, one line and the hint, nothing armed.
bad() {
    local rc=0 err
    err=$(ictl "$@" 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "exit status of 'injectctl $*'"
    assert_eq 2 "$(wc -l <<<"$err")" "lines on stderr of 'injectctl $*'"
    assert_contains "$err" "Try 'injectctl --help'." "stderr of 'injectctl $*'"
    printf '%s\n' "$err" | head -1
}
assert_contains "$(bad --bogus caps)" "injectctl: unknown option '--bogus'" "an unknown option"
assert_contains "$(bad inject __x64_sys_openat --error ENOENT --frob)" "unknown option '--frob'" "an unknown inject option"
assert_contains "$(bad inject __x64_sys_openat --error ENOENTT --detach)" "did you mean ENOENT?" "an errno typo"
assert_contains "$(bad inject __x64_sys_openat --error ENOENT --for 5parsecs --detach)" "invalid duration '5parsecs'" "a bad duration"
assert_contains "$(bad inject __x64_sys_openat --detach)" "needs --error" "no value"
assert_contains "$(bad run --fail __x64_sys_openat:ENOENT,afterr=2 -- true)" "unknown key 'afterr'" "a malformed SPEC"
assert_contains "$(bad run --fail __x64_sys_openat:ENOMEN -- true)" "did you mean ENOMEM?" "an errno typo in a SPEC"
assert_contains "$(bad run --fail __x64_sys_openat:ENOENT true)" "needs '--'" "run without --"
assert_contains "$(bad --varlink run --fail __x64_sys_openat,times=0 -- true)" "1 or more" "times=0"
assert_contains "$(bad cancel nothex)" "not an injection ID" "a bad id"
assert_contains "$(bad frobnicate)" "unknown command 'frobnicate'" "an unknown command"
assert_eq 0 "$(injections_left)" "injections after the bad command lines"
grep -q "event=decision .*function=__x64_sys_openat .*value=-12" "$DAEMON_LOG" &&
    fail "a bad command line reached the daemon"

# ---- the default transport: Varlink when its socket answers, else D-Bus.
nobus=(env DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/bus)
rc=0
out=$(as alice "${nobus[@]}" "$INJECTCTL" --bus caps --json 2>&1) || rc=$?
assert_eq 3 "$rc" "caps --bus with no system bus (the check below can fail)"
vl=$(as alice "${nobus[@]}" "$INJECTCTL" caps --json) ||
    fail "caps with no system bus and the Varlink socket up: the default did not use Varlink"
assert_eq "$(ictl --varlink caps --json | jq -S .)" "$(jq -S . <<<"$vl")" "caps by default (Varlink)"
# A renamed socket keeps listening, under a name the client does not know.
mv "$SOCKET" "$SOCKET.away"
rc=0
out=$(ictl caps --json 2>/tmp/fallback.err) || rc=$?
mv "$SOCKET.away" "$SOCKET"
assert_eq 0 "$rc" "caps by default with the Varlink socket gone (falls back to D-Bus): $(cat /tmp/fallback.err)"
assert_eq "$(ictl --bus caps --json | jq -S .)" "$(jq -S . <<<"$out")" "caps by default (D-Bus fallback)"

# ---- not running: says how to start it.
stop_injectd
rc=0
err=$(ictl --varlink caps 2>&1) || rc=$?
assert_eq 3 "$rc" "caps without injectd (varlink)"
assert_contains "$err" "systemctl start injectd" "caps without injectd (varlink)"
rc=0
err=$(ictl --bus caps 2>&1) || rc=$?
assert_eq 3 "$rc" "caps without injectd (D-Bus)"
assert_contains "$err" "systemctl start injectd" "caps without injectd (D-Bus)"
rc=0
err=$(ictl caps 2>&1) || rc=$?
assert_eq 3 "$rc" "caps without injectd (default: Varlink, then D-Bus)"
assert_contains "$err" "systemctl start injectd" "caps without injectd (default: Varlink, then D-Bus)"

finish
