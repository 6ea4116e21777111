#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/docs/test-man-pages.sh INJECTCTL INJECTD PAGE...
#
# Every built man page renders with man -l without a warning, and every
# long option that `injectctl --help`, `injectctl COMMAND --help` and
# `injectd --help` print, and every command and exit status in injectctl's
# help, is in the matching page. The options are read from --help now, so
# an option added without documentation fails here.
set -euo pipefail

if (($# < 3)); then
    echo "usage: $0 INJECTCTL INJECTD PAGE..." >&2
    exit 2
fi
injectctl=$1 injectd=$2
shift 2

if ! command -v man >/dev/null; then
    echo "SKIP: man (man-db) is not installed; tools/setup.sh installs it"
    exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

declare -A page_of
for page in "$@"; do
    name=$(basename "$page")
    page_of[${name%.*}]=$page

    # Rendering: no troff or macro warnings, and some text.
    if ! LC_ALL=C.UTF-8 MANWIDTH=80 man -l --warnings "$page" >"$tmp/out" 2>"$tmp/err"; then
        fail "$name: man -l failed: $(cat "$tmp/err")"
        continue
    fi
    if [[ -s $tmp/err ]]; then
        fail "$name: man -l --warnings printed:"
        sed 's/^/    /' "$tmp/err"
    fi
    if ! grep -q '^NAME' "$tmp/out" || (($(wc -l <"$tmp/out") < 20)); then
        fail "$name: rendered to almost nothing"
    fi
    echo "ok: $name renders without warnings ($(wc -l <"$tmp/out") lines)"
done

# The page as plain text: no overstriking, and a word broken across lines
# after a hyphen joined again, so "--no-ask-\n password" still counts.
# Rendered once per page.
page_text() {
    local cache=$tmp/text-$(basename "$1")
    if [[ ! -f $cache ]]; then
        LC_ALL=C MANWIDTH=200 man -l "$1" 2>/dev/null |
            sed 's/.\x08//g' |
            awk '{ sub(/^ +/, ""); if (prev ~ /-$/) printf "%s", $0; else printf " %s", $0; prev = $0 } END { print "" }' >"$cache"
    fi
    cat "$cache"
}

# Long options in a --help text, once each.
help_options() {
    grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# check_options PAGE WHAT < options: each option is in PAGE's text.
# Returns 1 (and says which are missing) when some are not.
check_options() {
    local page=$1 what=$2 text opt n=0 missing=()
    text=$(page_text "$page")
    while read -r opt; do
        n=$((n + 1))
        if ! grep -qE -- "(^|[^a-z0-9-])${opt}([^a-z0-9-]|\$)" <<<"$text"; then
            missing+=("$opt")
        fi
    done
    if ((n == 0)); then
        echo "$what: no options found"
        return 1
    fi
    if ((${#missing[@]})); then
        echo "$(basename "$page"): ${missing[*]} from $what not documented"
        return 1
    fi
    echo "ok: $(basename "$page") documents all $n options of $what"
}

# check_help PAGE WHAT HELP-FILE
check_help() {
    local out
    if out=$(check_options "$1" "$2" < <(help_options <"$3")); then
        echo "$out"
    else
        fail "$out"
    fi
}

[[ -n ${page_of[injectctl]:-} ]] || fail "no injectctl.1 among the pages"
[[ -n ${page_of[injectd]:-} ]] || fail "no injectd.8 among the pages"
((failures == 0)) || exit 1

# The check can fail: an option nobody documented is reported.
if echo "--surely-not-an-injectctl-option" | check_options "${page_of[injectctl]}" "a made-up help" >/dev/null; then
    fail "check_options accepted an undocumented option"
else
    echo "ok: an undocumented option is caught"
fi

# injectctl --help: its options, its commands and its exit statuses.
"$injectctl" --help >"$tmp/help"
check_help "${page_of[injectctl]}" "injectctl --help" "$tmp/help"

commands=$(awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' "$tmp/help")
[[ -n $commands ]] || fail "no commands found in injectctl --help"
text=$(LC_ALL=C MANWIDTH=200 man -l "${page_of[injectctl]}" 2>/dev/null | sed 's/.\x08//g')
for cmd in $commands; do
    # Each command has its own entry under COMMANDS.
    if ! grep -qE "^ {7}${cmd}( |\$)" <<<"$text"; then
        fail "injectctl.1: command '$cmd' has no entry under COMMANDS"
    fi
    # Its own --help, where it has one (today every command prints the
    # global help; a command may grow its own). Exit status 2 is a usage
    # error: no --help there. Anything else is a broken injectctl.
    rc=0
    "$injectctl" "$cmd" --help >"$tmp/cmd-help" 2>"$tmp/cmd-err" || rc=$?
    if ((rc == 0)); then
        check_help "${page_of[injectctl]}" "injectctl $cmd --help" "$tmp/cmd-help"
    elif ((rc == 2)); then
        echo "note: 'injectctl $cmd --help' is not supported ($(head -n1 "$tmp/cmd-err"))"
    else
        fail "'injectctl $cmd --help' exited with $rc: $(head -n1 "$tmp/cmd-err")"
    fi
done
echo "ok: checked the commands: $(echo $commands)"

statuses=$(awk '/^Exit status:/ { on = 1; next } on && /^$/ { exit } on && /^  [0-9]+ / { print $1 }' "$tmp/help")
[[ -n $statuses ]] || fail "no exit statuses found in injectctl --help"
for s in $statuses; do
    grep -qE "^ {7}${s}\$" <<<"$text" || fail "injectctl.1: exit status $s is not under EXIT STATUS"
done
echo "ok: exit statuses $(echo $statuses) are documented"

# sweep is documented whether or not this injectctl has it yet.
grep -qE '^ {7}sweep ' <<<"$text" || fail "injectctl.1: no sweep entry"

# injectd --help.
"$injectd" --help >"$tmp/dhelp"
check_help "${page_of[injectd]}" "injectd --help" "$tmp/dhelp"

if ((failures)); then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all man page checks passed"
