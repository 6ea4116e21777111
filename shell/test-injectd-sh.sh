#!/bin/sh
# shell/test-injectd-sh.sh - unit test of shell/injectd.sh's own logic, on
# the host, no daemon: each skip convention, and the command line
# injectd_run hands to injectctl (a stand-in that prints its arguments).
# The VM suite runs the library against the real daemon
# (tests/vm/test-shell-library.sh). Runs under sh (dash) and bash.
#   test-injectd-sh.sh LIB [SHELL...]
set -u
lib=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
[ $# -gt 0 ] || set -- sh bash
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# A stand-in for injectctl: prints its arguments one per line; "functions"
# lists only open_ctree, as allowed.
cat >"$tmp/injectctl" <<'SH'
#!/bin/sh
if [ "$1" = functions ]; then printf 'FUNCTION TYPE BACKENDS ALLOWED MODULE\nopen_ctree ERRNO kprobe yes btrfs\n'; exit 0; fi
for a in "$@"; do printf '<%s>\n' "$a"; done
SH
# And no Python client, even where one is installed: the fallback is tested.
printf '#!/bin/sh\nexit 1\n' >"$tmp/python3"
chmod +x "$tmp/injectctl" "$tmp/python3"

# check SHELL NAME EXPECTED-STATUS EXPECTED-OUTPUT SCRIPT
check() {
    out=$(PATH="$tmp:/usr/bin:/bin" INJECTD_INJECTCTL="$tmp/injectctl" \
        "$1" -c ". '$lib'; $5" 2>&1)
    rc=$?
    if [ "$rc" != "$3" ] || [ "$out" != "$4" ]; then
        printf 'FAIL %s (%s): expected status %s and output\n%s\nsaw status %s and\n%s\n' "$2" "$1" "$3" "$4" "$rc" "$out"
        failures=$((failures + 1))
    else
        echo "ok $2 ($1)"
    fi
}

for sh in "$@"; do
    # The skips, one per convention.
    user=$(id -un)
    why="SKIP: injectd: 'should_failslab' cannot be made to fail here by $user: this kernel or the policy does not allow it (injectctl caps says why)"
    check "$sh" "automake by default" 77 "$why" 'injectd_require should_failslab; echo not reached'
    check "$sh" "meson" 77 "$why" 'INJECTD_SKIP=meson injectd_require should_failslab; echo not reached'
    check "$sh" "kselftest, from \$ksft_skip" 4 "$why" 'ksft_skip=4; injectd_require should_failslab; echo not reached'
    check "$sh" "kselftest, named" 4 "$why" 'INJECTD_SKIP=kselftest injectd_require should_failslab'
    check "$sh" "a number" 5 "$why" 'INJECTD_SKIP=5 injectd_require should_failslab'
    check "$sh" "fstests' _notrun" 0 "notrun: ${why#SKIP: }" \
        '_notrun() { echo "notrun: $*"; exit 0; }; injectd_require should_failslab; echo not reached'
    check "$sh" "a function of the suite's (blktests)" 0 "reason: ${why#SKIP: }
returned 1" 'skip_hook() { echo "reason: $1"; return 1; }; INJECTD_SKIP=skip_hook
        injectd_require should_failslab || echo "returned $?"'
    check "$sh" "an allowed function" 0 "yes" 'injectd_require open_ctree ENOMEM && echo yes'
    check "$sh" "no injectctl" 77 "SKIP: injectd: /nonexistent/injectctl is not installed" \
        'INJECTD_INJECTCTL=/nonexistent/injectctl injectd_require open_ctree'
    check "$sh" "usage" 2 "usage: injectd_require FUNCTION [ERROR]" 'injectd_require; exit $?'
    # The command line of injectd_run.
    check "$sh" "injectd_run" 0 "<run>
<--fail>
<open_ctree:ENOMEM>
<--fail>
<should_failslab:ENOMEM,times=1>
<-->
<mount>
<-o>
<a b>" "injectd_run open_ctree:ENOMEM should_failslab:ENOMEM,times=1 -- mount -o 'a b'"
    check "$sh" "injectd_run, global options" 0 "<--varlink>
<run>
<--fail>
<f:EIO>
<-->
<true>" "INJECTD_INJECTCTL_ARGS=--varlink injectd_run f:EIO -- true"
    check "$sh" "injectd_run without --" 2 "usage: injectd_run SPEC [SPEC...] -- CMD [ARG...]" 'injectd_run f:EIO true'
    check "$sh" "injectd_run without SPEC" 2 "usage: injectd_run SPEC [SPEC...] -- CMD [ARG...]" 'injectd_run -- true'
done
[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
