#!/bin/bash
# explore --jobs (issue 28, item 2), on the normal kernel:
#  1. --jobs 2 over a script that makes a btrfs image in /tmp (the same
#     path in every run), mounts it with a loop device on a directory under
#     $INJECTD_EXPLORE_RUN, writes a file and unmounts it: a plan of 4 runs,
#     two at once (their start and end times in the report overlap), every
#     run's script succeeds (it tries again after the one failed call), and
#     nothing is left mounted, attached, or in /tmp and the cgroups.
#  2. A run alive at its timeout, whose script started a sleeper in a
#     session of its own (setsid: out of the process group that explore
#     kills), is killed with its whole cgroup: no process of it is left.
#  3. alice has no cgroup she may write: explore says so and runs one at a
#     time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built"

daemon_setup
start_injectd

# 1. Side by side. The script's paths are the same in every run: /tmp is
# each run's own (a private mount namespace), and so is its mount.
scenario=/var/tmp/jobs-scenario.sh
log_dir=/var/tmp/jobs-log
rm -rf "$log_dir"
mkdir -p "$log_dir"
cat >"$scenario" <<'SH'
#!/bin/bash
# One failed call (times=1) may stop a step: the whole is tried again,
# so that every run ends in success with nothing left behind.
img=/tmp/jobs.img mnt=$INJECTD_EXPLORE_RUN/mnt
echo "run=$INJECTD_EXPLORE_RUN tmpdir=$TMPDIR ns=$(readlink /proc/self/ns/mnt) cg=$(cut -d: -f3 /proc/self/cgroup)" \
    >>/var/tmp/jobs-log/$$
[[ -n $INJECTD_EXPLORE_RUN && -d $INJECTD_EXPLORE_RUN ]] || { echo "no INJECTD_EXPLORE_RUN"; exit 3; }
for try in 1 2 3; do
    if mountpoint -q "$mnt"; then umount "$mnt" || continue; fi
    rm -f $img
    [[ ! -e $img ]] || { echo "another run's image in my /tmp"; exit 4; }
    mkdir -p "$mnt" && truncate -s 128M $img && mkfs.btrfs -q $img >/dev/null &&
        mount -o loop $img "$mnt" && echo hello >"$mnt/file" && sync &&
        umount "$mnt" && rm -f $img && exit 0
done
exit 1
SH
chmod +x "$scenario"

log "explore --jobs 2: four runs of the btrfs script, two at once"
rc=0
start=$(date +%s)
"$INJECTCTL" --varlink explore --jobs 2 --functions 'btrfs_*' --max-runs 4 --timeout 120s \
    --report /tmp/jobs.json -- "$scenario" >/tmp/jobs.out 2>/tmp/jobs.err || rc=$?
log "explore --jobs 2: $(($(date +%s) - start)) s"
cat /tmp/jobs.err /tmp/jobs.out >&2
((rc == 0 || rc == 1)) || fail "explore's exit status: $rc"
report=/tmp/jobs.json
jq -e . $report >/dev/null || fail "the report is not JSON"
assert_eq done "$(jq -r .stopped $report)" "how explore ended"
assert_eq 2 "$(jq .jobs $report)" "the report's jobs"
assert_contains "$(cat /tmp/jobs.err)" "up to 2 runs side by side, each in its own cgroup and mount namespace" \
    "what explore said of the runs"
runs=$(jq '.runs | length' $report)
((runs >= 4)) || fail "runs made: $runs (plan: $(jq .plan_runs $report)), expected 4"
log "runs: $(jq -c '[.runs[] | {run, function, call, fired, exit_status, start_usec, end_usec}]' $report)"
assert_eq '[]' "$(jq -c '[.runs[] | select(.exit_status != 0) | {run, exit_status, output}]' $report)" \
    "runs whose script did not succeed"
# Two at once: some two runs' windows overlap.
overlaps=$(jq '[.runs as $r | range(0; $r | length) as $i | range($i + 1; $r | length) as $j
    | select($r[$i].start_usec < $r[$j].end_usec and $r[$j].start_usec < $r[$i].end_usec)] | length' $report)
((overlaps >= 1)) || fail "no two runs overlapped in time"
log "pairs of runs that overlapped: $overlaps"
# Each run's line names its run.
for n in $(jq '.runs[].run' $report); do
    assert_contains "$(cat /tmp/jobs.err)" "explore: run $n: started" "run $n's start line"
done
# Each invocation (the discovery and the runs) had its own cgroup, and a
# mount namespace not the caller's, with its directory as /tmp.
own_ns=$(readlink /proc/self/ns/mnt)
invocations=$(cat "$log_dir"/* | wc -l)
((invocations == runs + 1)) || fail "invocations logged: $invocations, expected $((runs + 1))"
# (Mount namespace numbers are reused once one is freed: not counted.)
assert_eq "$invocations" "$(cut -d' ' -f4 "$log_dir"/* | sort -u | wc -l)" "distinct cgroups"
if grep -F "ns=$own_ns" "$log_dir"/*; then fail "a run in the caller's mount namespace"; fi
if grep -v '^run=/tmp tmpdir=/tmp ' "$log_dir"/*; then fail "a run whose INJECTD_EXPLORE_RUN is not its /tmp"; fi
grep -q 'cg=/injectd-explore-[0-9]*/run[0-9]' "$log_dir"/* || fail "runs' cgroups: $(cat "$log_dir"/*)"

# Nothing left: armed, mounted, attached, in /tmp, or in the cgroups.
assert_eq 0 "$(injections_left)" "injections left"
if grep -E 'btrfs|injectd-explore' /proc/mounts; then fail "a mount is left"; fi
assert_eq 0 "$(losetup -a | wc -l)" "loop devices left: $(losetup -a)"
if compgen -G '/tmp/injectd-explore-*' >/dev/null; then fail "run directories left: $(ls -d /tmp/injectd-explore-*)"; fi
if compgen -G '/sys/fs/cgroup/injectd-explore-*' >/dev/null; then
    fail "cgroups left: $(ls -d /sys/fs/cgroup/injectd-explore-*)"
fi
[[ ! -e /tmp/jobs.img ]] || fail "a run's image reached the caller's /tmp"

# 2. A run alive at its timeout: the script's sleeper left its process
# group (setsid), the cgroup holds it. The plan fails a sleep's system
# call, which only the sleeps make (a plan of the shell's own calls fails
# its exec first): the loop goes on, the run is alive at its timeout.
log "a run killed at its timeout, with its whole cgroup"
# shellcheck disable=SC2016 # the inner shell's
hang='setsid sh -c "while :; do sleep 1234; done" </dev/null >/dev/null 2>&1 & while :; do sleep 1234; done'
rc=0
"$INJECTCTL" --varlink explore --jobs 2 --functions '*sys_clock_nanosleep' --functions '*sys_nanosleep' \
    --max-runs 2 --timeout 4s \
    --report /tmp/jobs-hang.json -- sh -c "$hang" >/tmp/jobs-hang.out 2>/tmp/jobs-hang.err || rc=$?
cat /tmp/jobs-hang.err >&2
jq -e . /tmp/jobs-hang.json >/dev/null || fail "the report is not JSON"
hung=$(jq '[.runs[] | select(.hung)] | length' /tmp/jobs-hang.json)
((hung >= 1)) || fail "no run hung: $(jq -c '[.runs[] | {run, exit_status, signal, hung}]' /tmp/jobs-hang.json)"
log "runs hung and killed: $hung"
left=$(pgrep -af 'sleep 1234' || true)
[[ -z $left ]] || fail "processes of the runs left after explore: $left"
if compgen -G '/sys/fs/cgroup/injectd-explore-*' >/dev/null; then
    fail "cgroups left: $(ls -d /sys/fs/cgroup/injectd-explore-*)"
fi
assert_eq 0 "$(injections_left)" "injections left"

# 3. alice's session cgroup is root's: she may make none under it.
log "alice: no cgroup of her own, runs one at a time"
cat >/etc/injectd/policy.d/50-jobs.json <<'JSON'
{ "rules": [ { "name": "jobs-alice", "users": ["alice"], "functions": ["should_failslab"],
               "errors": ["ENOMEM"], "scopes": ["process"], "max-duration": "10min", "max-active": 4 } ] }
JSON
chmod 0644 /etc/injectd/policy.d/50-jobs.json
"$INJECTCTL" reload-policy >/dev/null
rc=0
as alice "$INJECTCTL" --varlink explore --jobs 2 --functions should_failslab --max-runs 1 \
    --report /tmp/jobs-alice.json -- true >/tmp/jobs-alice.out 2>/tmp/jobs-alice.err || rc=$?
cat /tmp/jobs-alice.err >&2
assert_contains "$(cat /tmp/jobs-alice.err)" "no cgroup of its own can be made for each run" "alice's message"
assert_contains "$(cat /tmp/jobs-alice.err)" "the runs go one at a time (--jobs 1)" "alice's message"
assert_eq 1 "$(jq .jobs /tmp/jobs-alice.json)" "alice's jobs"

rm -f /etc/injectd/policy.d/50-jobs.json
stop_injectd
check_clean
finish
