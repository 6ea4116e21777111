#!/bin/bash
# Sweep of docs/findings/exec-bss-not-zeroed.md: fail one should_fail_alloc_page under __pud_alloc
# (handle_mm_fault) at after=0..14 in an ext4 script's tree, and show what each did (test VM, root):
#   cd build && ../tests/vm/run --timeout 1100 -- bash ../docs/findings/exec-bss-not-zeroed-sweep.sh
# The tree's root waits on a FIFO, so its pid is the scope (not $BASHPID inside $(...)).
set +e
ENGINE=${ENGINE:-${BUILD_DIR:-$PWD}/src/engine/injectd-engine}
export ASAN_OPTIONS=detect_leaks=0
workload() {
    local d=/tmp/w$1; mkdir -p $d/mnt
    truncate -s 64M $d/img && mkfs.ext4 -q -F $d/img && mount -o loop $d/img $d/mnt &&
    echo hi > $d/mnt/a && mv $d/mnt/a $d/mnt/b && ln -s b $d/mnt/c && rm $d/mnt/b && sync && umount $d/mnt
}
export -f workload
bpftrace -e 'kretprobe:handle_mm_fault /retval & 1/ { printf("OOM comm=%s pid=%d\n%s\n", comm, pid, kstack(30)); } kprobe:pagefault_out_of_memory { printf("pfoom comm=%s pid=%d\n", comm, pid); }' > /tmp/bt.out 2>&1 & bp=$!
for i in $(seq 1 120); do grep -q Attaching /tmp/bt.out && break; sleep 1; done
for n in ${NS:-0 1 2 3 4 5 6 7 8 9 10 11 12 13 14}; do
    rm -f /tmp/go; mkfifo /tmp/go
    bash -c 'read x < /tmp/go; exec bash -c "workload $1"' root $n >/tmp/out$n 2>&1 & wp=$!
    id=$("$ENGINE" arm should_fail_alloc_page --retval 1 --pid $wp --caller __pud_alloc --caller handle_mm_fault ${EXTRA:-} --after $n --times 1 --for 5min --json | jq -r .id)
    echo go > /tmp/go
    for i in $(seq 1 ${WAIT:-45}); do kill -0 $wp 2>/dev/null || break; sleep 1; done
    if kill -0 $wp 2>/dev/null; then
        echo "== n=$n STILL RUNNING after ${WAIT:-45}s"
        ps -eo pid,ppid,stat,wchan:32,time,comm | grep -v " \[" | tail -15
        for p in $(pgrep -P $wp) $(pgrep -x mkfs.ext4) $(pgrep -x mount) $(pgrep -x umount) $(pgrep -x sync) $(pgrep -x mv) $(pgrep -x rm) $(pgrep -x ln) $(pgrep -x truncate); do
            echo "-- $p $(cat /proc/$p/comm) state=$(awk '/State/{print $2$3}' /proc/$p/status) wchan=$(cat /proc/$p/wchan)"; cat /proc/$p/stack
            grep -E "voluntary" /proc/$p/status; cat /proc/$p/syscall; sleep 2; grep -E "voluntary" /proc/$p/status; cat /proc/$p/syscall
        done
        pkill -KILL -P $wp; kill -KILL $wp
    fi
    wait $wp; rc=$?
    echo "== n=$n rc=$rc $("$ENGINE" show $id --json | jq -c '{seen,matched,injected}')"; tail -3 /tmp/out$n
    "$ENGINE" events --count 0 --timeout 1s >/dev/null 2>&1
    "$ENGINE" disarm $id >/dev/null 2>&1; umount /tmp/w$n/mnt 2>/dev/null; losetup -D; rm -rf /tmp/w$n
done
kill -INT $bp; wait $bp; cat /tmp/bt.out | head -300
dmesg | grep -i -E "huh|oom|segfault|BUG|WARN|pud|hung" | tail -20
