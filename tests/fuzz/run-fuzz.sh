#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/fuzz/run-fuzz.sh - run one libFuzzer target of tests/fuzz for a
# while, starting from its committed corpus. The 'fuzz' suite runs it once
# per target; it is also the command for longer runs (tests/fuzz/README.md).
#
#   tests/fuzz/run-fuzz.sh [--exe PATH] [--seconds N] NAME [-- LIBFUZZER-ARG...]
#
# NAME is a target (varlink-message, policy, ...). Without --exe the target
# is built, with clang, in $BUILD_DIR/fuzz-clang (set up on first use;
# BUILD_DIR defaults to ./build of the source tree). It runs for
# --seconds, default $FUZZ_SECONDS, default 30. The inputs of
# tests/fuzz/corpus/NAME run first (a crash there is a regression), then
# libFuzzer looks for new ones, keeping what it finds in
# $BUILD_DIR/fuzz-work/NAME for the next run. A crash or broken promise
# fails the run and leaves the input in $BUILD_DIR/fuzz-artifacts/.
set -euo pipefail

src_dir=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
build_dir=$(readlink -f "${BUILD_DIR:-$src_dir/build}")
seconds=${FUZZ_SECONDS:-30}
exe=

err() { printf 'run-fuzz: %s\n' "$*" >&2; }
usage() { sed -n '7p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2; exit 2; }

while (($#)); do
    case $1 in
        --exe) (($# >= 2)) || usage; exe=$2; shift 2 ;;
        --seconds) (($# >= 2)) || usage; seconds=$2; shift 2 ;;
        -h | --help) usage ;;
        -*) err "unknown option '$1'"; usage ;;
        *) break ;;
    esac
done
(($#)) || usage
name=$1
shift
[[ ${1:-} == -- ]] && shift
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { err "seconds must be a positive number, not '$seconds'"; exit 2; }

corpus=$src_dir/tests/fuzz/corpus/$name
[[ -d $corpus ]] || { err "no target '$name' (no $corpus)"; exit 2; }

if [[ -z $exe ]]; then
    # The fuzz tests of one `meson test` run in parallel: one sets up and
    # builds the clang tree, the others wait for it.
    sub=$build_dir/fuzz-clang
    mkdir -p "$build_dir"
    exec 9>"$build_dir/fuzz-clang.lock"
    flock 9
    if [[ ! -f $sub/meson-private/coredata.dat ]]; then
        echo "run-fuzz: setting up the clang tree $sub"
        if ! CC=clang meson setup -Dfuzz=enabled -Dvm_tests=false "$sub" "$src_dir" >"$build_dir/fuzz-clang.log" 2>&1; then
            cat "$build_dir/fuzz-clang.log" >&2
            rm -rf "$sub"
            err "cannot set up a clang tree for the fuzzers (is clang with libFuzzer installed?)"
            exit 1
        fi
    fi
    if ! meson compile -C "$sub" "fuzz-$name" >"$build_dir/fuzz-clang.log" 2>&1; then
        cat "$build_dir/fuzz-clang.log" >&2
        err "building fuzz-$name failed"
        exit 1
    fi
    flock -u 9
    exe=$sub/tests/fuzz/fuzz-$name
fi
[[ -x $exe ]] || { err "'$exe' is not an executable"; exit 1; }

work=$build_dir/fuzz-work/$name
artifacts=$build_dir/fuzz-artifacts
mkdir -p "$work" "$artifacts"
# libFuzzer's own exit status for a finding is 77, which meson takes for
# "skipped": make every finding a plain failure.
options=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
         -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$artifacts/$name-")
[[ -f $src_dir/tests/fuzz/$name.dict ]] && options+=(-dict="$src_dir/tests/fuzz/$name.dict")

# UBSan is built not to recover (the report is fatal); leaks are reports too.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1

echo "run-fuzz: $exe for ${seconds}s, corpus $corpus"
rc=0
# libFuzzer ends at -max_total_time; timeout(1) is the backstop for a
# target that hangs outside an input (where -timeout cannot see it).
timeout -k 10 $((seconds * 2 + 120)) "$exe" "${options[@]}" "$@" "$work" "$corpus" || rc=$?
if ((rc != 0)); then
    err "fuzz-$name failed (status $rc)"
    shopt -s nullglob
    for f in "$artifacts/$name-"*; do
        err "  input: $f"
    done
    err "reproduce: $exe INPUT; once fixed, add the input to tests/fuzz/corpus/$name/"
fi
exit "$rc"
