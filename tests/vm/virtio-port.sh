# shellcheck shell=bash
# tests/vm/virtio-port.sh - sourced by init.sh and init-systemd.sh.
#
# find_port NAME: print the /dev path of the virtio-serial port that
# tests/vm/run named NAME. The driver adds the ports asynchronously after
# probing, so they may take a moment (longer on a loaded host: wait up to
# 20 s). Returns 1 if it never shows up.
find_port() {
    local p i
    for ((i = 0; i < 400; i++)); do
        for p in /sys/class/virtio-ports/*; do
            if [[ -r $p/name && $(<"$p/name") == "$1" ]]; then
                echo "/dev/${p##*/}"
                return 0
            fi
        done
        sleep 0.05
    done
    return 1
}
