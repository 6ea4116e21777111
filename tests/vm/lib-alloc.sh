# shellcheck shell=bash
# tests/vm/lib-alloc.sh - drives fixtures/alloc-report.c, the workload of
# the argument-filter, failcmd and kernel-log scenarios. Needs lib.sh and
# lib-daemon.sh (start_as, DAEMON_WORK).
ALLOC_REPORT=$BUILD_DIR/tests/vm/alloc-report
[[ -x $ALLOC_REPORT ]] || fail "alloc-report is not built at '$ALLOC_REPORT'"

# alloc_start WHO NAME [CMD...] -- OP N...: starts CMD... alloc-report
# with its fifos under $DAEMON_WORK/NAME as WHO (root or a test user), and
# waits until it waits for its word: arm what it is to meet now.
# ALLOC_PID is its pid (CMD's, which execs it or waits for it). CMD may
# not hold a "--" of its own: the first one ends it.
alloc_start() {
    local who=$1 name=$2 cmd=() line
    shift 2
    while [[ $1 != -- ]]; do
        cmd+=("$1")
        shift
    done
    shift
    ALLOC_DIR=$DAEMON_WORK/$name-$who
    mkdir -p "$ALLOC_DIR"
    mkfifo "$ALLOC_DIR/in" "$ALLOC_DIR/out"
    chown alice "$ALLOC_DIR" "$ALLOC_DIR/in" "$ALLOC_DIR/out"
    cmd+=("$ALLOC_REPORT" "$ALLOC_DIR/in" "$ALLOC_DIR/out" "$@")
    if [[ $who == root ]]; then
        "${cmd[@]}" >/dev/null 2>"$ALLOC_DIR/err" &
        ALLOC_PID=$!
    else
        start_as "$who" /dev/null "$ALLOC_DIR/err" "${cmd[@]}"
        ALLOC_PID=$BG_PID
    fi
    # Read-write opens of a fifo do not wait for the other end: if CMD
    # dies before alloc-report opens them, the read below times out
    # instead of the open hanging.
    exec 7<>"$ALLOC_DIR/in" 8<>"$ALLOC_DIR/out"
    read -r -t 120 line <&8 || fail "alloc-report did not start ($(cat "$ALLOC_DIR/err"))"
    assert_eq ready "$line" "alloc-report's first line"
}

# alloc_run: gives the word and sets ALLOC_REPORT_LINES to its report
# ("OP ok K failed K ERRNAME" per OP); it then waits for alloc_end.
alloc_run() {
    local line
    echo go >&7
    ALLOC_REPORT_LINES=
    while read -r -t 120 line <&8; do
        [[ $line == end ]] && return 0
        ALLOC_REPORT_LINES+="$line"$'\n'
    done
    fail "alloc-report did not finish ($ALLOC_REPORT_LINES$(cat "$ALLOC_DIR/err"))"
}

# alloc_end: lets it exit and reaps it; its (or CMD's) stderr in ALLOC_STDERR.
alloc_end() {
    echo exit >&7
    exec 7>&- 8<&-
    wait "$ALLOC_PID" || fail "alloc-report (or what ran it) exited with status $? ($(cat "$ALLOC_DIR/err"))"
    ALLOC_STDERR=$(cat "$ALLOC_DIR/err")
}

# alloc_failed OP, alloc_errno OP: how many OP calls failed, and their
# errno; alloc_total_failed: all failures.
alloc_failed() { awk -v op="$1" '$1 == op { print $5 }' <<<"$ALLOC_REPORT_LINES"; }
alloc_errno() { awk -v op="$1" '$1 == op { print $6 }' <<<"$ALLOC_REPORT_LINES"; }
alloc_total_failed() { awk '{ n += $5 } END { print n + 0 }' <<<"$ALLOC_REPORT_LINES"; }

# A tmpfs for the mkdir OPs, at /mnt/NAME, with a directory alice owns.
alloc_tmpfs() {
    ALLOC_TMP=/mnt/$1
    mkdir -p "$ALLOC_TMP"
    mount -t tmpfs -o mode=0755 tmpfs "$ALLOC_TMP"
    at_exit umount "$ALLOC_TMP"
    install -d -o alice -g alice "$ALLOC_TMP/alice"
}
