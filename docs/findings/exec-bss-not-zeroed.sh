#!/bin/bash
set +e
# Reproducer of docs/findings/exec-bss-not-zeroed.md, in the test VM as root:
#   cd build && ../tests/vm/run -- bash ../docs/findings/exec-bss-not-zeroed.sh
# A program whose .bss padding fault fails starts with non-zero .bss; bash so started hangs.
ENGINE=${ENGINE:-${BUILD_DIR:-$PWD}/src/engine/injectd-engine}
export ASAN_OPTIONS=detect_leaks=0
B=/tmp/bsscheck; gcc -O0 -o $B "$(dirname "$0")/exec-bss-not-zeroed.c" || exit 1
echo "control: $($B; echo rc=$?)"
for callers in "elf_load" "padzero --caller elf_load" "__pud_alloc --caller elf_load"; do
  rm -f /tmp/go; mkfifo /tmp/go
  bash -c 'read x < /tmp/go; exec '$B > /tmp/o 2>&1 & wp=$!
  id=$($ENGINE arm should_fail_alloc_page --retval 1 --pid $wp --caller $callers --times 1 --for 5min --json | jq -r .id)
  echo go > /tmp/go; wait $wp; rc=$?
  echo "caller $callers: rc=$rc $(cat /tmp/o) $($ENGINE show $id --json | jq -c '{seen,matched,injected}')"
  $ENGINE disarm $id > /dev/null
done
# the bash of the ext4 script's hang: n=1 of pud2.sh
workload() { local d=/tmp/w$1; mkdir -p $d/mnt; truncate -s 64M $d/img && mkfs.ext4 -q -F $d/img && echo mkfs-done; }
export -f workload
rm -f /tmp/go; mkfifo /tmp/go
bash -c 'read x < /tmp/go; exec bash -c "workload 1"' root >/tmp/out1 2>&1 & wp=$!
id=$($ENGINE arm should_fail_alloc_page --retval 1 --pid $wp --caller padzero --caller elf_load --times 1 --for 5min --json | jq -r .id)
echo go > /tmp/go
for i in $(seq 1 20); do kill -0 $wp 2>/dev/null || break; sleep 1; done
echo "bash: $($ENGINE show $id --json | jq -c '{seen,matched,injected}') out: $(cat /tmp/out1)"
if kill -0 $wp 2>/dev/null; then
  echo "STILL RUNNING after 20 s: pid $wp comm=$(cat /proc/$wp/comm) wchan=$(cat /proc/$wp/wchan) $(grep State /proc/$wp/status)"
  cat /proc/$wp/stack; echo "syscall: $(cat /proc/$wp/syscall)"; grep ctxt /proc/$wp/status; sleep 3; grep ctxt /proc/$wp/status; echo "syscall: $(cat /proc/$wp/syscall)"
  ls -l /proc/$wp/fd; cat /proc/$wp/cmdline | tr '\0' ' '; echo
  timeout 5 strace -f -p $wp 2>&1 | head -20
  kill -KILL $wp
fi
wait $wp; echo "rc=$?"
