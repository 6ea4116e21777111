# shellcheck shell=bash
# tests/vm/lib-containers.sh - real container runtimes inside the plain test
# VM (tests/vm/init.sh as PID 1, no systemd, no network but loopback), for
# the scenarios of issue 14: rootless and rootful podman, Docker and
# systemd-nspawn. Source after lib.sh and lib-daemon.sh.
#
# What makes each runtime work here (found by trying, kernel 6.1, Debian 12
# packages; docs/containers.md, "Tested runtimes"):
#   - Storage on a tmpfs (/tmp): the root is an overlay over 9p, and the
#     overlay driver cannot stack on that. vfs is used everywhere: the image
#     is a few megabytes, so copying it per container costs nothing.
#   - No systemd: podman's containers.conf says cgroup_manager cgroupfs and
#     events_logger file; dockerd native.cgroupdriver=cgroupfs;
#     systemd-nspawn --register=no --keep-unit (no machined, no manager to
#     ask for a scope).
#   - No veth, no bridge: --network=none (podman, docker),
#     --private-network (nspawn); dockerd --bridge=none --iptables=false
#     --ip6tables=false.
#
# The image (acceptance 5): a static busybox as /bin/sh, injectctl-static
# as /bin/injectctl and the static fixture getpgid-report; nothing else but
# empty directories. The daemon's socket is bind-mounted read-write at
# run time, the only host path a container gets.

STATIC=$BUILD_DIR/src/client/injectctl-static
GETPGID_REPORT=$BUILD_DIR/tests/vm/getpgid-report
[[ -x $STATIC ]] || fail "injectctl-static is not built at '$STATIC'"
[[ -x $GETPGID_REPORT ]] || fail "getpgid-report is not built at '$GETPGID_REPORT'"
BUSYBOX=$(command -v busybox) || fail "no busybox: tools/setup.sh installs busybox-static"

# Minutes, not seconds: under TCG, on a loaded 2-core host, starting one
# container takes 10 to 60 s and dockerd 30 s or more.
CONTAINER_TIMEOUT=${CONTAINER_TIMEOUT:-300}

# make_image_root DIR: the image's root directory, and a check that it
# holds these files and no others (acceptance 5).
make_image_root() {
    local root=$1
    mkdir -p "$root/bin" "$root/run/injectd" "$root/usr" "$root/etc" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
    chmod 0755 "$root"
    install -m 0755 "$BUSYBOX" "$root/bin/sh"
    install -m 0755 "$STATIC" "$root/bin/injectctl"
    install -m 0755 "$GETPGID_REPORT" "$root/bin/getpgid-report"
    # systemd-nspawn refuses a directory without an os-release file ("does
    # not look like an OS tree"); an empty one satisfies it.
    : >"$root/etc/os-release"
    assert_eq "./bin/getpgid-report ./bin/injectctl ./bin/sh ./etc/os-release" \
        "$(cd "$root" && find . -type f | sort | paste -sd' ')" "acceptance 5: the files of the image"
}

# make_image_tar DIR TAR: a tarball of the root for `podman/docker import`.
make_image_tar() {
    tar -C "$1" -cf "$2" --numeric-owner --owner=0 --group=0 .
}

# ---------------------------------------------------------------- podman

# write_storage_conf FILE GRAPHROOT RUNROOT: a storage.conf for podman,
# driver vfs.
write_storage_conf() {
    local file=$1 graph=$2 run=$3
    mkdir -p "$(dirname "$file")"
    cat >"$file" <<EOF
[storage]
driver = "vfs"
graphroot = "$graph"
runroot = "$run"
EOF
}

# write_containers_conf FILE: a containers.conf for podman without systemd
# (cgroupfs, events to a file) and without a network by default.
write_containers_conf() {
    local file=$1
    mkdir -p "$(dirname "$file")"
    cat >"$file" <<'EOF'
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
[containers]
netns = "none"
EOF
}

# ---------------------------------------------------------------- the checks

# A scenario defines, for its runtime:
#   ctr_run NAME CMD...   run CMD in a fresh container called NAME, in the
#                         foreground, with its stdin, stdout and stderr ours,
#                         the socket bind-mounted read-write, --network=none;
#                         the container is removed when CMD exits
#   host_user CMD...      run CMD outside every container as the host user
#                         the container's job is seen as (the same uid)
#   CTR_WHO               that user, in words, for the messages
#   CTR_HOST_SWEEP        optional: who runs the sweep on the host that the
#                         container's is compared with, when host_user may
#                         not (a grant only for container cgroups)
# then calls ctr_checks. Nothing here sleeps for a fixed time: every wait
# is for a line in a file or a process to exit, with a timeout that only
# ends a run that is stuck (CONTAINER_TIMEOUT).

# The fault of acceptance 1: getpgid-report 3 under it prints
# "ok EACCES ok".
FAULT='__x64_sys_getpgid:EACCES,after=1,times=1'

# What `run` and `sweep` inside a container depend on, named in their
# failures: the container has a pid namespace of its own, so injectctl
# names its child by pidfd, passed over Varlink with SCM_RIGHTS, and the
# daemon finds the host pid behind it (issue 14 item 1;
# src/daemon/scope-resolve.c).
IDENTITY_HINT="the job's child lives in the container's own pid namespace: injectctl names it by pidfd over Varlink (SCM_RIGHTS) and the daemon resolves that to the host's pid (issue 14 item 1, src/daemon/scope-resolve.c); a refusal or a fault on the wrong process points there"

# wait_line_or_exit SECS FILE LINE PID: wait until FILE holds the line
# LINE (0) or PID has exited without writing it (1).
wait_line_or_exit() {
    local secs=$1 file=$2 line=$3 pid=$4 i
    for ((i = 0; i < secs * 10; i++)); do
        grep -qxF -- "$line" "$file" 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || { grep -qxF -- "$line" "$file" 2>/dev/null && return 0; return 1; }
        sleep 0.1
    done
    fail "waited ${secs}s for '$line' in '$file' from pid $pid in vain (still running)"
}

# refused_in_container NAME WHAT NEEDLE SCOPE-OPTION...: from a container
# NAME, `inject` with SCOPE-OPTION (WHAT, for the messages) must be refused
# with a message containing NEEDLE, and leave nothing armed (acceptance 3).
refused_in_container() {
    local name=$1 what=$2 needle=$3 out rc=0
    shift 3
    out=$(ctr_run "$name" /bin/injectctl inject __x64_sys_getpgid --error EACCES "$@" \
        --for 60s --detach 2>&1) || rc=$?
    ((rc != 0)) || fail "acceptance 3: $what (outside the container, $CTR_WHO) was accepted: '$out'"
    assert_contains "$out" "$needle" "acceptance 3: the refusal of $what ($CTR_WHO)"
    log "acceptance 3, $what of a process outside ($CTR_WHO): status $rc, '$out'"
    assert_eq 0 "$(injections_left)" "acceptance 3: injections after $what"
}

# ctr_checks WORK: acceptance 1 to 5 for one runtime. WORK is a
# scratch directory of the scenario's.
ctr_checks() {
    local work=$1 rc out summary doc host_doc list

    # ---- acceptance 5: the image and the client in it.
    out=$(ctr_run probe /bin/injectctl --version)
    assert_contains "$out" "(static, Varlink only)" "injectctl --version in a container ($CTR_WHO)"
    out=$(ctr_run probe /bin/injectctl caps --json)
    assert_eq true "$(jq .bpf.available <<<"$out")" "caps --json .bpf.available in a container ($CTR_WHO)"
    log "the daemon sees a container's caller as $(jq -c '.policy | {uid, cgroup}' <<<"$out")"

    # ---- acceptance 3: a pid or a cgroup outside the container. A
    # process of the same user outside it, named from inside by its host
    # pid and by its host cgroup path: the container's pid and cgroup
    # namespaces give those names other meanings or none, and what they
    # would name on the host is not the job's. Each must be refused with
    # its reason and leave nothing armed.
    # It starts in a cgroup of its own, never the root one (where root's
    # scenario runs), whose path a container could not tell from its own
    # cgroup namespace's root; host_user may move it on (alice: to her
    # session). The pid goes to a file our shell opens: the user may not
    # write in $work. Its stderr too: the wrapper shell says "Terminated"
    # when we kill the sleep, which is no news.
    make_cgroup ctr-outside >/dev/null
    (
        echo "$BASHPID" >/sys/fs/cgroup/ctr-outside/cgroup.procs
        host_user /bin/sh -c 'echo $$; exec sleep 600'
    ) >"$work/outside.pid" 2>"$work/outside.err" &
    local outside_wrapper=$! outside opath i
    at_exit _kill_quietly "$outside_wrapper"
    for ((i = 0; i < CONTAINER_TIMEOUT * 10; i++)); do
        [[ -s $work/outside.pid ]] && break
        kill -0 "$outside_wrapper" 2>/dev/null || [[ -s $work/outside.pid ]] ||
            fail "acceptance 3: the outside process of $CTR_WHO exited before it said its pid: $(cat "$work/outside.err")"
        sleep 0.1
    done
    outside=$(cat "$work/outside.pid")
    [[ $outside =~ ^[0-9]+$ ]] || fail "acceptance 3: no pid from the outside process of $CTR_WHO (saw '$outside')"
    # Its cgroup2 path ("0::"; nspawn may have mounted a named v1
    # hierarchy too, which has lines of its own).
    opath=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$outside/cgroup")
    refused_in_container foreign-pid "--pid $outside" "$outside" --pid "$outside"
    [[ $opath != /sys/fs/cgroup/ ]] || fail "acceptance 3: the outside process of $CTR_WHO is in the root cgroup"
    refused_in_container foreign-cgroup "--cgroup $opath" "$opath" --cgroup "$opath"
    kill "$outside" 2>/dev/null || true
    wait "$outside_wrapper" 2>/dev/null || true

    # ---- acceptance 1 and 2: the job, held while its fault is armed.
    # The job's command tells us it runs (so run has armed the fault: it
    # arms before it lets its child go), then waits for a line on its
    # stdin, a fifo the scenario holds open, before getpgid-report 3.
    mkfifo "$work/job.in"
    exec 7<>"$work/job.in"
    log "job container: injectctl run --fail $FAULT -- getpgid-report 3 ($CTR_WHO)"
    ctr_run job /bin/injectctl run --fail "$FAULT" -- \
        /bin/sh -c 'echo armed; read go; exec getpgid-report 3' \
        <"$work/job.in" >"$work/job.out" 2>"$work/job.err" &
    local job=$!
    at_exit _kill_quietly "$job"
    if ! wait_line_or_exit "$CONTAINER_TIMEOUT" "$work/job.out" armed "$job"; then
        rc=0
        wait "$job" || rc=$?
        fail "acceptance 1: the job's 'injectctl run' in the container ($CTR_WHO) exited with status $rc before its command ran; expected the fault armed on the job's child; stdout: '$(cat "$work/job.out")', stderr: '$(cat "$work/job.err")'. Likely cause: $IDENTITY_HINT"
    fi
    assert_eq 1 "$(injections_left)" "injections armed while the job is held"

    # The same user outside the container, and a second container of the
    # same user, at this moment: untouched.
    assert_eq "ok ok ok" "$(host_user "$GETPGID_REPORT" 3)" \
        "getpgid() of $CTR_WHO outside the container while the job's fault is armed"
    assert_eq "ok ok ok" "$(ctr_run second /bin/getpgid-report 3)" \
        "getpgid() in a second container of $CTR_WHO while the job's fault is armed"
    assert_eq 1 "$(injections_left)" "injections armed after the others ran (the job still held)"
    list=$("$VARLINK_CALL" "$SOCKET" org.injectd.Injector.ListInjections '{"all":true}')
    assert_eq 0 "$(jq '.parameters.injections[0].faults_injected' <<<"$list")" \
        "faults injected while the job is held (the others were not counted)"

    # Let the job go.
    echo go >&7
    exec 7>&-
    rc=0
    wait "$job" || rc=$?
    assert_eq 0 "$rc" "acceptance 1: exit status of the job container (stderr: $(cat "$work/job.err"))"
    assert_eq "armed"$'\n'"ok EACCES ok" "$(cat "$work/job.out")" \
        "acceptance 1: the job's getpgid() results in the container"
    summary=$(grep __x64_sys_getpgid "$work/job.err") || fail "run: no summary in '$(cat "$work/job.err")'"
    assert_eq 1 "$(awk '{print $3}' <<<"$summary")" "faults injected, in run's summary"
    assert_eq 0 "$(injections_left)" "injections after the job"

    # ---- acceptance 4: sweep inside a container, and the same on the host.
    log "sweep --fail __x64_sys_getpgid:EACCES -- getpgid-report 3, in a container and on the host ($CTR_WHO)"
    rc=0
    doc=$(ctr_run sweep /bin/injectctl sweep --json --fail __x64_sys_getpgid:EACCES -- /bin/getpgid-report 3 \
        2>"$work/sweep.err") || rc=$?
    ((rc == 0)) || fail "acceptance 4: sweep in the container ($CTR_WHO): expected status 0, saw $rc; stderr: '$(cat "$work/sweep.err")'; output: '${doc:0:300}'. If refused, likely cause: $IDENTITY_HINT"
    # shellcheck disable=SC2086 # CTR_HOST_SWEEP is a command's words
    host_doc=$(${CTR_HOST_SWEEP:-host_user} "$STATIC" sweep --json --fail __x64_sys_getpgid:EACCES -- "$GETPGID_REPORT" 3)
    local shape='[.runs[] | {n, fired, faults_injected, exit_status, output}]'
    assert_eq "$(jq -c "$shape" <<<"$host_doc")" "$(jq -c "$shape" <<<"$doc")" \
        "acceptance 4: sweep's runs in the container, against the same sweep on the host"
    assert_eq 4 "$(jq '.runs | length' <<<"$doc")" "sweep's runs in the container (N = 0..3)"
    assert_eq "ok ok EACCES" "$(jq -r '.runs[2].output' <<<"$doc" | tr -d '\n')" "run N=2's output in the container"
    assert_eq 0 "$(injections_left)" "injections after the sweeps"
}

# ---------------------------------------------------------------- podman

# shellcheck disable=SC2034 # used by the scenarios
IMAGE=localhost/injectd-job

# podman_prepare USER: storage and engine configuration for podman run by
# USER (root: files under /etc/containers; anyone else: ~/.config), with
# the graph root on /tmp (a tmpfs) and the run root under /run.
podman_prepare() {
    local user=$1 home uid conf
    home=$(getent passwd "$user" | cut -d: -f6)
    uid=$(id -u "$user")
    # init.sh's pivot leaves / a private mount; podman warns about that
    # (mounts made later would not propagate into its containers). Shared,
    # as systemd makes it.
    mount --make-rshared /
    if [[ $user == root ]]; then
        conf=/etc/containers
        write_storage_conf "$conf/storage.conf" /tmp/podman-graph-root /run/podman-run-root
    else
        conf=$home/.config/containers
        # Rootless: the user's runtime directory, as logind would make it.
        mkdir -p "/run/user/$uid"
        chown "$user:" "/run/user/$uid"
        chmod 0700 "/run/user/$uid"
        write_storage_conf "$conf/storage.conf" "/tmp/podman-graph-$user" "/run/user/$uid/containers"
    fi
    write_containers_conf "$conf/containers.conf"
    [[ $user == root ]] || chown -R "$user:" "$home/.config"
}

# _kill_quietly PID: for at_exit, when PID has most likely exited already.
_kill_quietly() { kill "$1" 2>/dev/null || true; }

# ---------------------------------------------------------------- root

# grant_container_root PATTERN: the policy grant a rootful container's job
# needs. Its root is uid 0 on the host without CAP_SYS_ADMIN, CAP_BPF or
# CAP_PERFMON (neither podman nor docker give those by default), so the
# daemon treats it as an ordinary caller (docs/security.md), and root is in
# no default rule. An administrator grants it what the jobs need, for
# their own processes only, and only in the runtime's container cgroups
# (PATTERN, a "cgroups" pattern, docs/policy.md "Rules by cgroup"): with
# the cgroupfs drivers used here, /docker/* and /libpod_parent/libpod-*/**;
# under systemd, /system.slice/docker-*.scope and
# /machine.slice/libpod-*.scope/**. Root anywhere else is granted nothing.
# Call before start_injectd.
grant_container_root() {
    mkdir -p /etc/injectd/policy.d
    cat >/etc/injectd/policy.d/60-container-root.json <<JSON
{
  "rules": [
    {
      "name": "container-root-getpgid",
      "description": "Root in a rootful container (not privileged: no CAP_SYS_ADMIN) may fail getpgid() with EACCES in its own processes.",
      "users": ["root"],
      "cgroups": ["$1"],
      "functions": ["__x64_sys_getpgid"],
      "errors": ["EACCES"],
      "scopes": ["process"],
      "max-duration": "10min",
      "max-active": 4
    }
  ]
}
JSON
    chmod 0644 /etc/injectd/policy.d/60-container-root.json
}

# root_without_caps CMD...: root, without capabilities as a rootful job
# is (an empty bounding set: exec gives uid 0 no capability then).
root_without_caps() { setpriv --bounding-set=-all --inh-caps=-all -- "$@"; }

# rootful_runtime RUNTIME WHO MOUNT-ARG...: the scenario of a rootful
# runtime (podman, docker) whose `RUNTIME run` takes MOUNT-ARGs to bind the
# socket. Its jobs run as root with --cap-drop=all (CTR_CAPS=default: the
# runtime's default capabilities); the same user outside is root without
# capabilities, so that only the scope spares it; the sweep on the host
# that the container's is compared with is alice's (group injectd), since
# the grant for root holds only in containers.
rootful_runtime() {
    CTR_RUNTIME=$1 CTR_WHO=$2
    shift 2
    CTR_MOUNT=("$@")
    CTR_HOST_SWEEP="as alice"
    ctr_run() {
        local name=$1
        shift
        local caps=(--cap-drop=all)
        [[ ${CTR_CAPS:-} != default ]] || caps=()
        "$CTR_RUNTIME" run --rm -i --name "$name" --network=none "${caps[@]}" "${CTR_MOUNT[@]}" "$IMAGE" "$@"
    }
    host_user() { root_without_caps "$@"; }
}

# check_root_outside_refused: root outside the containers, without
# capabilities (so not privileged), is not granted by the container rule.
check_root_outside_refused() {
    local err rc=0
    err=$(root_without_caps "$STATIC" run --fail "$FAULT" -- "$GETPGID_REPORT" 3 2>&1 >/dev/null) || rc=$?
    ((rc != 0)) || fail "root outside the containers: expected run to be refused (the grant is by container cgroup), saw it succeed"
    assert_contains "$err" "UserNotInPolicy" "root outside the containers, asking for run"
    assert_eq 0 "$(injections_left)" "injections after root outside was refused"
}

# ---------------------------------------------------------------- docker

DOCKER_DATA=/tmp/docker-data

# start_dockerd: dockerd, which starts its own containerd, with its data
# on a tmpfs, vfs storage, cgroupfs and no networking of its own (no
# bridge, no iptables: the kernel has neither veth nor bridge); waits
# until it answers. Stopped, with everything it made, when the scenario
# ends.
start_dockerd() {
    mkdir -p "$DOCKER_DATA"
    dockerd --data-root="$DOCKER_DATA" --storage-driver=vfs \
        --iptables=false --ip6tables=false --bridge=none \
        --exec-opt native.cgroupdriver=cgroupfs >"$DAEMON_WORK/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    at_exit _stop_dockerd
    log "waiting for dockerd"
    wait_until "$CONTAINER_TIMEOUT" docker info
}

_stop_dockerd() {
    local ids
    [[ -n ${DOCKERD_PID:-} ]] || return 0
    ids=$(docker ps --all --quiet 2>/dev/null) || true
    if [[ -n $ids ]]; then
        # shellcheck disable=SC2086 # a list of ids
        docker rm --force $ids >/dev/null
    fi
    kill "$DOCKERD_PID" 2>/dev/null
    wait "$DOCKERD_PID" 2>/dev/null
    if _failed; then
        log "dockerd's log:"
        tail -n 30 "$DAEMON_WORK/dockerd.log" | sed 's/^/  | /' >&2
    fi
    rm -rf "$DOCKER_DATA"
    DOCKERD_PID=
}

# ---------------------------------------------------------------- capabilities

# In a rootful container (podman as root, Docker) the job's root is the
# host's uid 0 holding the runtime's default capabilities (CHOWN,
# DAC_OVERRIDE, SETUID, ... but not SYS_ADMIN, BPF or PERFMON) in the
# initial user namespace. The daemon lets it arm a fault on its own
# processes (it is not privileged, and the policy grants root), but the
# BPF program spares every task that holds any capability in the initial
# user namespace (bpf/inject.bpf.c, creds_match: failing a call in a
# program that holds more than the user's own credentials is how a fault
# becomes a privilege escalation). So the fault is armed and never fires.
# A rootful job must run its tests without capabilities: --cap-drop=all
# (or as a non-root --user). The rootful scenarios' ctr_run drops them
# all unless CTR_CAPS=default; ctr_check_caps shows both sides.

# cap_eff CMD-PREFIX...: the effective capabilities of a shell in a
# container (busybox's sh has no grep: its own read loop).
CAP_EFF_SCRIPT='while read -r k v; do if [ "$k" = CapEff: ]; then echo "$v"; fi; done </proc/self/status'

ctr_check_caps() {
    local work=$1 caps out rc=0 summary
    caps=$(CTR_CAPS=default ctr_run caps-default /bin/sh -c "$CAP_EFF_SCRIPT")
    [[ $caps =~ ^[0-9a-f]{16}$ ]] || fail "CapEff in a container with the default capabilities: expected 16 hex digits, saw '$caps'"
    if (((0x$caps >> 21) & 1)); then
        fail "root in a container with $CTR_WHO's default capabilities: expected no CAP_SYS_ADMIN (bit 21), saw CapEff $caps"
    fi
    ((0x$caps != 0)) || fail "root in a container with $CTR_WHO's default capabilities: expected some, saw CapEff $caps"
    assert_eq 0000000000000000 "$(ctr_run caps-none /bin/sh -c "$CAP_EFF_SCRIPT")" \
        "CapEff in a container started with --cap-drop=all"

    log "root with the default capabilities (CapEff $caps) arms the fault, which spares it"
    out=$(CTR_CAPS=default ctr_run spared /bin/injectctl run --fail "$FAULT" -- /bin/getpgid-report 3 \
        2>"$work/spared.err") || rc=$?
    assert_eq 0 "$rc" "exit status of run with the default capabilities (stderr: $(cat "$work/spared.err"))"
    assert_eq "ok ok ok" "$out" "getpgid() of root holding capabilities, under its own armed fault (spared)"
    summary=$(grep __x64_sys_getpgid "$work/spared.err") || fail "run: no summary in '$(cat "$work/spared.err")'"
    assert_eq 0 "$(awk '{print $3}' <<<"$summary")" "faults injected into root holding capabilities, in run's summary"
    assert_eq 0 "$(injections_left)" "injections after the spared run"
}

# ---------------------------------------------------------------- leftovers

# assert_no_process WHAT PGREP-ARGS...: after a scenario's teardown, no
# process matches (pgrep's words); a process that was just killed may take
# a moment to go, so this waits up to 30 s for the list to empty.
assert_no_process() {
    local what=$1 left i
    shift
    for ((i = 0; i < 300; i++)); do
        left=$(pgrep -a "$@") || return 0
        sleep 0.1
    done
    fail "expected no $what left after the teardown, saw: ${left//$'\n'/; }"
}
