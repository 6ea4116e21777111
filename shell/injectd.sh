# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# injectd.sh - injectd for test suites written in shell (kselftests,
# fstests, blktests, automake and meson tests). POSIX sh; source it:
#
#     . /usr/share/injectd/injectd.sh
#     injectd_require open_ctree ENOMEM       # or skip, the suite's way
#     injectd_run open_ctree:ENOMEM -- mount -o loop "$img" "$mnt"
#
# injectd_require FUNCTION [ERROR]
#     Returns if this kernel and the policy let the caller make FUNCTION
#     fail (with ERROR, an errno name); otherwise skips the test, with the
#     reason, in the calling suite's convention (INJECTD_SKIP below). The
#     reason is the daemon's, the same the pytest plugin gives, when the
#     Python client is installed (python3 -m injectd check); without it,
#     injectctl says whether the function is allowed, and `injectctl caps`
#     says why not.
# injectd_run SPEC [SPEC...] -- CMD [ARG...]
#     Runs CMD with each SPEC (injectctl(1)'s --fail SPEC: FUNCTION:ERROR
#     with optional ,after=N ,every=N ,times=N ,probability=P ,caller=F)
#     armed for CMD and its children only, from its first instruction to
#     its exit; returns CMD's exit status (`injectctl run`). Also skips,
#     as injectd_require does, if injectctl is missing.
#
# INJECTD_SKIP: how to skip.
#     kselftest     print "SKIP: reason", exit 4 ($ksft_skip)
#     automake      print "SKIP: reason", exit 77 (meson's too)
#     meson         the same
#     fstests       _notrun "reason" (fstests' own, which exits)
#     NUMBER        print "SKIP: reason", exit NUMBER
#     NAME          call the shell function NAME with the reason (blktests:
#                   one that adds it to SKIP_REASONS and returns 1; then
#                   injectd_require returns 1 too)
#     unset/auto    fstests if a function _notrun exists, kselftest if
#                   $ksft_skip is set, else automake
# INJECTD_INJECTCTL: the client (default: injectctl); INJECTD_INJECTCTL_ARGS:
#     its global options, such as --varlink in a container without D-Bus.

injectd_skip() {
    _injectd_how=${INJECTD_SKIP:-auto}
    if [ "$_injectd_how" = auto ]; then
        if command -v _notrun >/dev/null 2>&1 && [ "$(command -v _notrun)" = _notrun ]; then
            _injectd_how=fstests
        elif [ -n "${ksft_skip:-}" ]; then
            _injectd_how=kselftest
        else
            _injectd_how=automake
        fi
    fi
    case $_injectd_how in
        kselftest) echo "SKIP: $1"; exit "${ksft_skip:-4}" ;;
        automake | meson) echo "SKIP: $1"; exit 77 ;;
        fstests) _notrun "$1"; exit 77 ;;  # _notrun exits; never reached
        *[!0-9]*) "$_injectd_how" "$1"; return ;;
        *) echo "SKIP: $1"; exit "$_injectd_how" ;;
    esac
}

_injectd_ctl() {
    # shellcheck disable=SC2086 # INJECTD_INJECTCTL_ARGS is a list of words
    "${INJECTD_INJECTCTL:-injectctl}" ${INJECTD_INJECTCTL_ARGS:-} "$@"
}

injectd_require() {
    if [ $# -lt 1 ] || [ $# -gt 2 ]; then
        echo "usage: injectd_require FUNCTION [ERROR]" >&2
        return 2
    fi
    if ! command -v "${INJECTD_INJECTCTL:-injectctl}" >/dev/null 2>&1; then
        injectd_skip "injectd: ${INJECTD_INJECTCTL:-injectctl} is not installed"
        return
    fi
    # The daemon's reasons, through the Python client, when it is there.
    if command -v python3 >/dev/null 2>&1 && python3 -c 'import injectd.support' >/dev/null 2>&1; then
        _injectd_why=$(python3 -m injectd check "$1" ${2:+--error "$2"}) && return 0
        injectd_skip "$_injectd_why"
        return
    fi
    # Without it: is FUNCTION among those the policy lets us fail?
    if ! _injectd_list=$(_injectd_ctl functions "$1" --allowed 2>&1); then
        injectd_skip "injectd: $(echo "$_injectd_list" | head -n 1)"
        return
    fi
    if echo "$_injectd_list" | awk -v f="$1" '$1 == f { found = 1 } END { exit !found }'; then
        return 0
    fi
    injectd_skip "injectd: '$1' cannot be made to fail here by $(id -un): this kernel or the policy does not allow it (injectctl caps says why)"
}

injectd_run() {
    _injectd_n=0
    for _injectd_a in "$@"; do
        [ "$_injectd_a" = -- ] && break
        _injectd_n=$((_injectd_n + 1))
    done
    if [ "$_injectd_n" -eq 0 ] || [ "$_injectd_n" -eq $# ]; then
        echo "usage: injectd_run SPEC [SPEC...] -- CMD [ARG...]" >&2
        return 2
    fi
    if ! command -v "${INJECTD_INJECTCTL:-injectctl}" >/dev/null 2>&1; then
        injectd_skip "injectd: ${INJECTD_INJECTCTL:-injectctl} is not installed"
        return
    fi
    # Rebuild the arguments in place: --fail before each SPEC, then -- CMD.
    _injectd_i=0
    for _injectd_a in "$@"; do
        shift
        if [ "$_injectd_i" -lt "$_injectd_n" ]; then
            set -- "$@" --fail "$_injectd_a"
        else
            set -- "$@" "$_injectd_a"
        fi
        _injectd_i=$((_injectd_i + 1))
    done
    _injectd_ctl run "$@"
}
