#!/bin/sh
# A kselftest-style test: mkdir(1) must report a failing mkdir(2) and
# create nothing. Skips (exit 4) where the kernel or policy cannot do it.
ksft_skip=4
. "${INJECTD_SH:-/usr/share/injectd/injectd.sh}"

injectd_require __x64_sys_mkdir EACCES

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The fault holds for mkdir(1) alone, and only its first mkdir(2) fails.
if injectd_run '__x64_sys_mkdir:EACCES,times=1' -- mkdir "$dir/new" 2>"$dir/err"; then
    echo "FAIL: mkdir succeeded under the fault"
    exit 1
fi
grep -q "Permission denied" "$dir/err" || { echo "FAIL: mkdir said: $(cat "$dir/err")"; exit 1; }
[ ! -e "$dir/new" ] || { echo "FAIL: $dir/new exists"; exit 1; }
# Without injectd_run, the same command works.
mkdir "$dir/new" || { echo "FAIL: mkdir failed without the fault"; exit 1; }
echo "PASS: mkdir reports EACCES and creates nothing"
