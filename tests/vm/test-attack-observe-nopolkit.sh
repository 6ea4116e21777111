#!/bin/bash
# Attack: a user whom polkit cuts off still attaches kprobes with Observe
# (issue 29: "polkit cannot refuse Observe"). Observe now asks polkit for
# an action of its own, org.injectd.observe, which policy/50-injectd.rules
# grants to group injectd as it grants org.injectd.inject.
#
# alice (group injectd) observes her own sleep over Varlink: granted. A
# polkit rule then refuses her org.injectd.observe, and only that: her
# Observe over Varlink and over D-Bus (injectctl explore's discovery) is
# refused with NotAuthorized naming the action, and no observe program is
# loaded; her Inject is still granted. Before the polkit check in
# observe-session.c, her Observe was granted under the same rule.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"
FUNCS='["__x64_sys_getpgid"]'

daemon_setup
start_injectd

start_as alice /dev/null /dev/null sleep 1000
alice_pid=$BG_PID

# observe_reply: alice's Observe of her sleep over Varlink; its first reply.
observe_reply() {
    as alice "$VARLINK_CALL" --more --count 1 "$SOCKET" org.injectd.Injector.Observe \
        "{\"functions\": $FUNCS, \"pid\": $alice_pid}" || true
}
granted() { [[ $(observe_reply | jq -r '.parameters.observing.attached // 0') -gt 0 ]]; }
# pk_refuses: polkitd itself refuses alice's sleep org.injectd.observe
# (pkcheck exits 1), once it has read the deny rule.
pk_refuses() {
    local rc=0
    pkcheck --action-id org.injectd.observe \
        --process "$alice_pid,$(awk '{ print $22 }' "/proc/$alice_pid/stat"),$(id -u alice)" >/dev/null 2>&1 || rc=$?
    ((rc == 1))
}

log "alice's Observe, granted by the sample rule"
granted || fail "alice's Observe before the deny rule: $(observe_reply)"

cat >/etc/polkit-1/rules.d/10-injectd-deny-observe.rules <<'RULES'
polkit.addRule(function(action, subject) {
        if (action.id == "org.injectd.observe" && subject.user == "alice")
                return polkit.Result.NO;
});
RULES
at_exit rm -f /etc/polkit-1/rules.d/10-injectd-deny-observe.rules
# polkitd reloads its rules on its own, a moment later.
wait_until 120 pk_refuses
reply=$(observe_reply)
log "Varlink: $reply"
assert_eq org.injectd.Injector.NotAuthorized "$(jq -r '.error // empty' <<<"$reply")" "alice's Varlink Observe"
assert_contains "$(jq -r .parameters.message <<<"$reply")" "org.injectd.observe" "what alice's Varlink Observe was told"

rc=0
out=$(as alice "$INJECTCTL" --bus explore --functions __x64_sys_getpgid --max-runs 0 --report /tmp/nopk.json -- true 2>&1) ||
    rc=$?
log "D-Bus: $out"
((rc != 0)) || fail "alice's Observe over D-Bus was granted under the deny rule: $out"
assert_contains "$out" "org.injectd.observe" "what alice's D-Bus Observe was told"
assert_eq 0 "$(prog_ids observe_call | wc -l)" "observe programs loaded after the refusals"

log "the rule is Observe's alone: alice's Inject is still granted"
id=$(as alice "$INJECTCTL" inject __x64_sys_getpgid --error EPERM --pid "$alice_pid" --for 1min --detach)
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "alice's Inject under the Observe deny rule: '$id'"
as alice "$INJECTCTL" cancel "$id" >/dev/null

assert_eq 0 "$(injections_left)" "injections left"
stop_injectd
finish
