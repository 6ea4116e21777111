#!/bin/bash
# tests/vm/init-systemd.sh - `tests/vm/run --systemd`: boot systemd as PID 1
# in the test VM, with the project installed, and run the job as a unit.
#
#   init-systemd.sh boot OUT ERR   exec'd by init.sh as PID 1, once the
#                                  overlay root and the mounts are in place
#   init-systemd.sh job OUT ERR    ExecStart= of injectd-vmtest.service
#
# boot: installs the project into the overlay root the way a package would
# (copies the tree tests/vm/run made with `meson install --destdir`, prefix
# /usr and sysconfdir /etc; then `systemd-sysusers injectd.conf` and
# `systemctl enable injectd.socket`), writes the VM's own systemd
# configuration into /etc (below), and execs /lib/systemd/systemd. All of
# it is in place before systemd starts, so no daemon-reload is needed.
#
# The VM's configuration, all of it in the overlay's /etc:
#   - default.target is injectd-vmtest.target: basic.target (sysinit,
#     sockets: journald, dbus.socket, injectd.socket) plus the test unit,
#     not multi-user.target;
#   - units that are slow under TCG or make no sense here are masked:
#     gettys, timers, first-boot and "needs update" units (ldconfig, hwdb,
#     sysusers: done above), time sync, pstore, random seed, binfmt, kernel
#     modules (all built in), hugetlbfs, fuse and configfs; so are all the
#     generators;
#   - no /.dockerenv (a host in Docker has one: systemd would think it
#     runs in a container);
#   - journald keeps the journal in memory and forwards it to the virtio
#     port injectd.journal, which tests/vm/run keeps in a file;
#   - start timeouts are longer (TCG is slow, BPF loads more so):
#     DefaultTimeoutStartSec=300s, and dbus-daemon waits 300 s for an
#     activated service instead of 25 s;
#   - an empty /etc/fstab (the host's describes the host), and tmpfiles
#     does not empty /tmp (shares may be mounted below it).
# dbus-daemon, polkitd and injectd are not started here: systemd starts
# dbus by its socket, and polkitd and injectd are activated on demand.
#
# job: the unit runs the job exactly like init.sh does (clean environment,
# stdin /dev/null, stdout and stderr on the ports), after creating
# "started" on the control share (tests/vm/run's boot timeout stops there),
# then writes the status and powers off at once: the upper layer is a
# tmpfs, so an orderly shutdown would only cost time.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

ctl=/run/injectd-vm
vm_dir=$(cd "${BASH_SOURCE[0]%/*}" && pwd)
role=${1:-} out=${2:-} err=${3:-}

# fd 8: /proc/sysrq-trigger, opened early (see init.sh: a scenario may leave
# open(2) failing for everyone). PID 1 inherits it from init.sh.
[[ $role == job ]] && exec 8>/proc/sysrq-trigger
poweroff() {
    echo o >&8 || exit 1
    while :; do sleep 1 || :; done
}
die() {
    echo "injectd-vm: $*" >/dev/console
    echo "$*" >"$ctl/error" 2>/dev/null
    poweroff
}

[[ -r $ctl/job ]] || die "init-systemd.sh: no job file at $ctl/job"
# shellcheck source=/dev/null
. "$ctl/job" || die "init-systemd.sh: cannot read the job file"
[[ -n $out && -n $err ]] || die "usage: init-systemd.sh boot|job OUT ERR"

# ---------------------------------------------------------------- job

if [[ $role == job ]]; then
    echo started >"$ctl/started"
    exec 7>"$ctl/status" || die "cannot create the status file"
    cd "$JOB_CWD" || die "cannot enter '$JOB_CWD'"
    env -i "${JOB_ENV[@]}" "${JOB_CMD[@]}" </dev/null >"$out" 2>"$err" 7>&- 8>&-
    echo "$?" >&7
    poweroff
fi
[[ $role == boot ]] || die "usage: init-systemd.sh boot|job OUT ERR"

# ---------------------------------------------------------------- install

install_log=/run/injectd-vm-install.log
install_failed() {
    die "$1: $(tail -n 15 "$install_log" | tr '\n' ' ')"
}
for f in /lib/systemd/systemd /lib/systemd/system/dbus.socket /lib/systemd/system/polkit.service \
    /usr/share/dbus-1/system-services/org.freedesktop.PolicyKit1.service; do
    [[ -e $f ]] || die "--systemd needs $f (systemd, dbus, polkitd: tools/setup.sh installs them)"
done

# tests/vm/run ran `meson install --destdir` into the control share; this is
# the copy into the root. As root, without preserving owners or the modes of
# directories that exist already, like an install by root would. Not with
# --no-install: the job installs the project itself.
if [[ ${JOB_NO_INSTALL:-0} != 1 ]]; then
    [[ -d $ctl/destdir/usr ]] || die "no installed tree at $ctl/destdir"
    cp -R "$ctl/destdir/." / >>"$install_log" 2>&1 || install_failed "cannot copy the installed tree into the root"
    # What a package's maintainer scripts would do.
    systemd-sysusers injectd.conf >>"$install_log" 2>&1 ||
        install_failed "systemd-sysusers injectd.conf failed"
    SYSTEMD_OFFLINE=1 systemctl enable injectd.socket >>"$install_log" 2>&1 ||
        install_failed "systemctl enable injectd.socket failed"
fi

# A build with -Db_sanitize (docs/sanitizers.md): the service gets the
# sanitizer options that tests/vm/lib.sh gives every other process, except
# two. Reports go to stderr, which is the journal (the unit's ProtectSystem
# leaves no file it could write); lib-systemd.sh fails the scenario on any.
# And no LeakSanitizer: at exit it needs ptrace(2), which the unit's system
# call filter refuses, as it should. The same daemon binary is leak-checked
# by every scenario that runs it outside systemd.
if ldd /usr/libexec/injectd 2>/dev/null | grep libasan >/dev/null; then
    mkdir -p /etc/systemd/system/injectd.service.d &&
        cat >/etc/systemd/system/injectd.service.d/50-sanitizers.conf <<EOF || install_failed "cannot write the sanitizer drop-in"
[Service]
Environment=ASAN_OPTIONS=halt_on_error=1:print_stacktrace=1:detect_leaks=0
Environment=UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
EOF
fi

# ---------------------------------------------------------------- the VM's configuration

# shellcheck source=tests/vm/virtio-port.sh
. "$vm_dir/virtio-port.sh"
journal=$(find_port injectd.journal) || die "virtio port injectd.journal not found"

etc=/etc/systemd/system
write_config() {
    local unit
    mkdir -p "$etc" /etc/systemd/journald.conf.d /etc/systemd/system.conf.d /etc/tmpfiles.d || return
    echo "# tests/vm/run --systemd: everything is mounted already." >/etc/fstab || return
    echo injectd-vm >/etc/hostname || return
    cat >"$etc/injectd-vmtest.target" <<EOF || return
[Unit]
Description=injectd VM test (tests/vm/run --systemd)
Requires=basic.target
After=basic.target
Wants=injectd-vmtest.service
AllowIsolate=yes
EOF
    cat >"$etc/injectd-vmtest.service" <<EOF || return
[Unit]
Description=injectd VM test job (tests/vm/run --systemd)
After=basic.target dbus.socket injectd.socket
Wants=dbus.socket
# It never ends by itself (it powers the VM off): failing means it could not
# even start. Stop at once; tests/vm/run then shows the journal.
FailureAction=poweroff-force

[Service]
Type=exec
ExecStart=/bin/bash $vm_dir/init-systemd.sh job $out $err
StandardInput=null
StandardOutput=journal
StandardError=journal
EOF
    ln -sf injectd-vmtest.target "$etc/default.target" || return
    # No generator has work here (fstab is empty, no getty, no SysV
    # scripts wanted), and each costs an exec or more under TCG.
    mkdir -p /etc/systemd/system-generators || return
    for unit in /lib/systemd/system-generators/*; do
        ln -sf /dev/null "/etc/systemd/system-generators/${unit##*/}" || return
    done
    # The host may be a Docker container: its /.dockerenv would make
    # systemd believe it runs in one too.
    rm -f /.dockerenv /run/.containerenv || return
    for unit in getty.target serial-getty@ttyS0.service console-getty.service getty@tty1.service \
        timers.target systemd-timesyncd.service systemd-pstore.service systemd-firstboot.service \
        ldconfig.service systemd-hwdb-update.service systemd-journal-catalog-update.service \
        systemd-update-done.service systemd-sysusers.service systemd-journal-flush.service \
        systemd-update-utmp.service systemd-repart.service e2scrub_reap.service \
        systemd-random-seed.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount \
        systemd-modules-load.service kmod-static-nodes.service modprobe@.service \
        dev-hugepages.mount sys-fs-fuse-connections.mount sys-kernel-config.mount; do
        ln -sf /dev/null "$etc/$unit" || return
    done
    cat >/etc/systemd/journald.conf.d/50-injectd-vm.conf <<EOF || return
[Journal]
Storage=volatile
ForwardToConsole=yes
TTYPath=$journal
MaxLevelConsole=info
EOF
    cat >/etc/systemd/system.conf.d/50-injectd-vm.conf <<EOF || return
[Manager]
DefaultTimeoutStartSec=300s
EOF
    cat >/etc/dbus-1/system-local.conf <<EOF || return
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
        <limit name="service_start_timeout">300000</limit>
</busconfig>
EOF
    printf '%s\n' 'd /tmp 1777 root root -' 'd /var/tmp 1777 root root -' >/etc/tmpfiles.d/tmp.conf
}
write_config 2>>"$install_log" || install_failed "cannot write the VM's systemd configuration"

# systemd closes the fds it does not know (8 and 9 too).
shopt -s execfail
# shellcheck disable=SC2093 # execfail: a failed exec returns
exec /lib/systemd/systemd
die "cannot exec /lib/systemd/systemd"
