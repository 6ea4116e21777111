#!/bin/bash
# injectctl's long-running commands and the rest of its surface, over
# D-Bus and --varlink: watch streams a fault as it happens and ends with
# the injections it watches; inject without --detach holds the injection,
# shows its counters and cancels it on Ctrl-C; list --all, cancel --all and
# reload-policy; an unknown function gets near names.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
# Static: its first open is the one it reports, not the dynamic loader's.
OPEN_REPORT=$BUILD_DIR/tests/vm/open-report
[[ -x $INJECTCTL && -x $OPEN_REPORT ]] || fail "injectctl or open-report is not built"

daemon_setup
start_injectd

ictl() { as alice "$INJECTCTL" "$@"; }

for api in dbus varlink; do
    if [[ $api == varlink ]]; then T=(--varlink); else T=(--bus); fi
    log "---- over $api"
    w=$DAEMON_WORK/watch-$api

    # watch ID (JSON lines): the fault with its details, then the removal
    # of the injection, which ends the watch by itself.
    id=$(ictl "${T[@]}" inject __x64_sys_openat --error ENOENT --comm open-report --times 1 --for 1min --detach)
    start_as alice "$w.json" "$w.err" "$INJECTCTL" "${T[@]}" watch --json "$id"
    wpid=$BG_PID
    # Over D-Bus the first line comes once the stream is on.
    wait_until 120 grep -q '"watching"' "$w.json"
    assert_eq "/etc/hostname: ENOENT" "$(as alice "$OPEN_REPORT" 0 /etc/hostname)" "the open under watch ($api)"
    wait_until 120 bash -c "! kill -0 $wpid 2>/dev/null"
    rc=0
    wait "$wpid" || rc=$?
    assert_eq 0 "$rc" "watch's exit status once its injection ended ($api)"
    jq -e . "$w.json" >/dev/null || fail "watch --json: not JSON lines: $(head -c 300 "$w.json")"
    fault=$(jq -c 'select(.type == "fault")' "$w.json")
    [[ -n $fault ]] || fail "watch --json ($api): no fault event in $(cat "$w.json")"
    assert_eq "$id" "$(jq -r .id <<<"$fault")" "the fault's id ($api)"
    assert_eq open-report "$(jq -r .comm <<<"$fault")" "the fault's comm ($api)"
    assert_eq -2 "$(jq -r .value <<<"$fault")" "the fault's value ($api)"
    assert_eq removed "$(jq -r 'select(.id == "'"$id"'") | .type' "$w.json" | tail -1)" "the last event ($api)"

    # watch (text, all of alice's injections) until Ctrl-C.
    start_as alice "$w.txt" "$w.err" "$INJECTCTL" "${T[@]}" watch
    wpid=$BG_PID
    # The status line comes once the stream is on; a fault before it could
    # be missed.
    wait_until 120 grep -q '^Watching' "$w.err"
    id=$(ictl "${T[@]}" inject __x64_sys_openat --error EACCES --comm open-report --times 1 --for 1min --detach)
    assert_eq "/etc/hostname: EACCES" "$(as alice "$OPEN_REPORT" 0 /etc/hostname)" "the open under watch ($api)"
    wait_until 120 grep -q "$id fault" "$w.txt"
    assert_contains "$(grep "$id fault" "$w.txt")" "(open-report) __x64_sys_openat -> -13" "watch's fault line ($api)"
    kill -INT "$wpid"
    rc=0
    wait "$wpid" || rc=$?
    assert_eq 0 "$rc" "watch's exit status after Ctrl-C ($api)"

    # inject held (JSON lines): counters as they change; Ctrl-C cancels.
    h=$DAEMON_WORK/hold-$api
    start_as alice "$h.json" "$h.err" \
        "$INJECTCTL" "${T[@]}" inject __x64_sys_openat --error ENOENT --comm open-report --for 1min --json
    hpid=$BG_PID
    wait_until 120 grep -q '"id"' "$h.json"
    hid=$(head -1 "$h.json" | jq -r .id)
    for _ in 1 2; do
        assert_eq "/etc/hostname: ENOENT" "$(as alice "$OPEN_REPORT" 0 /etc/hostname)" "an open while held ($api)"
    done
    wait_until 120 bash -c "jq -e 'select(.type == \"counters\" and .faults_injected == 2)' '$h.json' >/dev/null"
    kill -INT "$hpid"
    rc=0
    wait "$hpid" || rc=$?
    assert_eq 0 "$rc" "held inject's exit status after Ctrl-C ($api; stderr: $(cat "$h.err"))"
    last=$(tail -1 "$h.json")
    assert_eq cancelled "$(jq -r .type <<<"$last")" "held inject's last line ($api)"
    assert_eq "$hid" "$(jq -r .id <<<"$last")" "held inject's id ($api)"
    assert_eq 2 "$(jq -r .faults_injected <<<"$last")" "held inject's final count ($api)"
    assert_eq 0 "$(injections_left)" "injections after Ctrl-C ($api)"
    assert_eq "/etc/hostname: ok" "$(as alice "$OPEN_REPORT" 0 /etc/hostname)" "an open after Ctrl-C ($api)"

    # inject held (text): the counters line, then "Cancelled".
    start_as alice "$h.txt" "$h.err" \
        "$INJECTCTL" "${T[@]}" inject __x64_sys_openat --error ENOENT --comm open-report --for 1min
    hpid=$BG_PID
    wait_until 120 grep -q "armed" "$h.txt"
    assert_eq "/etc/hostname: ENOENT" "$(as alice "$OPEN_REPORT" 0 /etc/hostname)" "an open while held, text ($api)"
    wait_until 120 grep -q "injected 1" "$h.txt"
    kill -INT "$hpid"
    wait "$hpid" || fail "held inject (text, $api) exited $?: $(cat "$h.err")"
    assert_contains "$(tail -1 "$h.txt")" "Cancelled" "held inject's last text line ($api)"
    assert_eq 0 "$(injections_left)" "injections after Ctrl-C, text ($api)"

    # inject held learns of faults and of the end from events, not by
    # polling: a quiet spell while held makes no request at all, the one
    # fault at most one read of the counters, and its removal (--times 1)
    # ends the hold with the final counters. Requests are counted in what
    # injectctl writes (strace shows each call's method name), not timed.
    q=$DAEMON_WORK/quiet-$api
    qtrace=$(mktemp -u /tmp/quiet-trace.XXXXXX)
    # LeakSanitizer's exit-time check ptraces, which a traced process cannot.
    start_as alice "$q.json" "$q.err" env "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0" strace -f -qq -s 256 -e trace=write,writev,send,sendto,sendmsg -o "$qtrace" \
        "$INJECTCTL" "${T[@]}" inject __x64_sys_openat --error ENOENT --comm open-report --times 1 --for 5min --json
    hpid=$BG_PID
    wait_until 120 bash -c "jq -e 'select(.type == \"counters\")' '$q.json' >/dev/null"
    # The spell: a hold that polled every 500 ms would read about 10 times.
    sleep 5
    assert_eq "/etc/hostname: ENOENT" "$(as alice "$OPEN_REPORT" 0 /etc/hostname)" "the held inject's one fault ($api)"
    rc=0
    wait "$hpid" || rc=$?
    assert_eq 0 "$rc" "held inject's exit status at its removal ($api; stderr: $(cat "$q.err"))"
    # strace writes its file when injectctl is done, in the order things
    # happened: the reads before the first counters line printed are the
    # arm's and the hold's first; after it, one at most, for the fault.
    after=$(awk '/ListInjections/ { n++ }
                 index($0, "write(1, ") && index($0, "type\\\":\\\"counters") && !seen { seen = 1; before = n }
                 END { print seen ? n - before : "none" }' "$qtrace")
    [[ $after =~ ^[01]$ ]] ||
        fail "expected at most one ListInjections after the first counters while held ($api), saw $after: $(grep -c ListInjections "$qtrace") in all"
    last=$(tail -1 "$q.json")
    assert_eq ended "$(jq -r .type <<<"$last")" "held inject's last line at its removal ($api)"
    assert_eq 1 "$(jq -r .faults_injected <<<"$last")" "held inject's final count at its removal ($api)"
    rm -f "$qtrace"

    # run follows its own injection only (a Watch of its id) and takes the
    # final counters from the removal event of its Cancel, not from a
    # ListInjections, which brings every injection of the user: with n
    # runs of one user at once, either way each run got n documents, n² in
    # all, and 700 concurrent runs took the VM's memory (docs/performance.md,
    # target 9). Another injection of alice's is armed meanwhile, so a
    # Watch of all would show it. Counted in what injectctl writes.
    other=$(ictl "${T[@]}" inject __x64_sys_openat --error ENOENT --comm nosuchcomm --for 1min --detach)
    rtrace=$(mktemp -u /tmp/run-trace.XXXXXX)
    rc=0
    sum=$(as alice env "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0" strace -f -qq -s 512 \
        -e trace=write,writev,send,sendto,sendmsg -o "$rtrace" \
        "$INJECTCTL" "${T[@]}" --json run --fail __x64_sys_openat:EACCES,after=1,times=2 -- \
        "$OPEN_REPORT" 0 /etc/hostname /etc/passwd /etc/group /etc/hosts 2>&1 >/dev/null) || rc=$?
    assert_eq 0 "$rc" "run under strace: exit status ($api; $sum)"
    rid=$(jq -r '.injections[0].id' <<<"$sum")
    assert_eq 2 "$(jq '.injections[0].faults_injected' <<<"$sum")" "run's final count, from the removal event ($api)"
    watch_call=$(grep -m1 'Injector.Watch' "$rtrace") || fail "run made no Watch call ($api): $(cat "$rtrace")"
    assert_contains "$watch_call" "$rid" "run's Watch names its injection ($api)"
    assert_not_contains "$watch_call" "$other" "run's Watch ($api)"
    assert_eq 0 "$(grep -c ListInjections "$rtrace" || true)" "run's ListInjections calls ($api)"
    rm -f "$rtrace"
    ictl "${T[@]}" cancel "$other" >/dev/null

    # An unknown function: refused, with near names.
    rc=0
    err=$(ictl "${T[@]}" inject __x64_sys_opnat --error ENOENT --detach 2>&1) || rc=$?
    assert_eq 1 "$rc" "inject of a misspelt function ($api)"
    assert_contains "$err" "NotInjectable" "the refusal ($api)"
    assert_contains "$err" "Did you mean: __x64_sys_openat" "the suggestion ($api)"
    rc=0
    err=$(ictl "${T[@]}" run --fail openat2:ENOENT -- true 2>&1) || rc=$?
    assert_eq 1 "$rc" "run with a function that is a fragment ($api)"
    assert_contains "$err" "__x64_sys_openat2" "the suggestion for a fragment ($api)"

    # Root: list --all sees alice's and root's own; alice sees only hers
    # and may not ask for --all.
    a=$(ictl "${T[@]}" inject __x64_sys_openat --error ENOENT --comm nosuchcomm --for 1min --detach)
    b=$("$INJECTCTL" "${T[@]}" inject __x64_sys_openat --error ENOENT --comm nosuchcomm --pid $$ --for 1min --detach)
    all=$("$INJECTCTL" "${T[@]}" list --all --json)
    assert_eq true "$(jq --arg a "$a" 'any(.[]; .id == $a)' <<<"$all")" "root's list --all has alice's ($api)"
    assert_eq true "$(jq --arg b "$b" 'any(.[]; .id == $b)' <<<"$all")" "root's list --all has root's ($api)"
    assert_eq "[\"$a\"]" "$(ictl "${T[@]}" list --json | jq -c '[.[].id]')" "alice's list ($api)"
    out=$("$INJECTCTL" "${T[@]}" list --all)
    assert_contains "$out" "$a" "root's list --all, text ($api)"
    rc=0
    err=$(ictl "${T[@]}" list --all 2>&1) || rc=$?
    assert_eq 1 "$rc" "alice's list --all ($api)"
    assert_contains "$err" "NotAuthorized" "alice's list --all ($api)"
    # cancel --all: your own, what list shows.
    "$INJECTCTL" "${T[@]}" cancel --all
    assert_eq "[\"$a\"]" "$("$INJECTCTL" "${T[@]}" list --all --json | jq -c '[.[].id]')" \
        "left after root's cancel --all ($api)"
    ictl "${T[@]}" cancel --all
    assert_eq 0 "$(injections_left)" "injections after alice's cancel --all ($api)"

    # reload-policy: root may; alice may not.
    "$INJECTCTL" "${T[@]}" reload-policy
    rc=0
    err=$(ictl "${T[@]}" --no-ask-password reload-policy 2>&1) || rc=$?
    assert_eq 1 "$rc" "reload-policy as alice ($api)"
    assert_contains "$err" "NotAuthorized" "reload-policy as alice ($api)"
done

stop_injectd
finish
