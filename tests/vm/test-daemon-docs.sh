#!/bin/bash
# The API reference matches the running daemon: every method, property and
# signal docs/dbus-api.md lists exists on the bus with the documented
# signature and nothing the daemon serves is left out; the same for the
# methods and errors of docs/varlink-api.md against the Varlink interface
# descriptions the daemon returns, which must parse. A mismatch fails with
# what is missing where (tests/vm/check-api-docs.py).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

CHECK=$SRC_DIR/tests/vm/check-api-docs.py
DBUS_DOC=$SRC_DIR/docs/dbus-api.md
VARLINK_DOC=$SRC_DIR/docs/varlink-api.md
work=$DAEMON_WORK

daemon_setup
start_injectd

# ---- D-Bus: the manager object, and an injection object to introspect.
# Root, detached (busctl hangs up after the reply); the comm matches no
# task, so nothing fails meanwhile.
out=$(busctl --json=short call org.injectd.Injector1 /org/injectd/Injector1 org.injectd.Injector1.Manager \
    Inject 'a{sv}' 4 function s __x64_sys_openat error s ENOENT detach b true comm s nothing-matches)
path=$(jq -r '.data[1]' <<<"$out")
[[ $path == /org/injectd/Injector1/injection/_* ]] || fail "Inject over D-Bus: expected an object path, saw '$out'"
busctl introspect --xml-interface org.injectd.Injector1 /org/injectd/Injector1 >"$work/manager.xml"
busctl introspect --xml-interface org.injectd.Injector1 "$path" >"$work/injection.xml"
grep -q '<interface name="org.injectd.Injector1.Manager">' "$work/manager.xml" ||
    fail "no Manager interface in the introspection of /org/injectd/Injector1: $(cat "$work/manager.xml")"
grep -q '<interface name="org.injectd.Injector1.Injection">' "$work/injection.xml" ||
    fail "no Injection interface in the introspection of $path: $(cat "$work/injection.xml")"

# An observation's object, while injectctl explore's discovery (over
# D-Bus) observes a command that sleeps; root sees it, and stops it.
log "an Observe session object, to introspect"
INJECTCTL=$BUILD_DIR/src/client/injectctl
"$INJECTCTL" --bus explore --functions __x64_sys_openat --max-runs 0 -- sleep 300 >/dev/null 2>"$work/explore.err" &
explore_pid=$!
at_exit kill "$explore_pid"
observe_node() {
    local node
    node=$(busctl introspect --xml-interface org.injectd.Injector1 /org/injectd/Injector1/observe 2>/dev/null |
        grep -o 'node name="_[0-9a-f]*"' | sed -e 's/^node name="//' -e 's/"$//')
    [[ -n $node ]] && echo "$node"
}
wait_until 120 observe_node
observe_path=/org/injectd/Injector1/observe/$(observe_node)
busctl introspect --xml-interface org.injectd.Injector1 "$observe_path" >"$work/observe.xml"
grep -q '<interface name="org.injectd.Injector1.Observe">' "$work/observe.xml" ||
    fail "no Observe interface in the introspection of $observe_path: $(cat "$work/observe.xml")"
busctl call org.injectd.Injector1 "$observe_path" org.injectd.Injector1.Observe Stop
wait "$explore_pid" || fail "explore after Stop: $(cat "$work/explore.err")"
log "the Observe session stopped"

# ---- Varlink: every interface GetInfo lists, described, and parsing.
info=$("$VARLINK_CALL" "$SOCKET" org.varlink.service.GetInfo)
mapfile -t interfaces < <(jq -r '.parameters.interfaces[]' <<<"$info")
assert_contains " ${interfaces[*]} " " org.injectd.Injector " "the interfaces GetInfo lists"
assert_contains " ${interfaces[*]} " " org.varlink.service " "the interfaces GetInfo lists"
idls=()
for iface in "${interfaces[@]}"; do
    f=$work/$iface.varlink
    "$VARLINK_CALL" "$SOCKET" org.varlink.service.GetInterfaceDescription "{\"interface\":\"$iface\"}" |
        jq -j .parameters.description >"$f"
    err=$("$VARLINK_CALL" --validate-idl "$f" 2>&1) ||
        fail "the description of $iface does not parse: $err"
    idls+=("$f")
done
# ... and the validator does refuse what does not parse.
{ cat "$work/org.injectd.Injector.varlink"; echo "method Broken(x: nosuchtype) -> ()"; } >"$work/broken.varlink"
rc=0
err=$("$VARLINK_CALL" --validate-idl "$work/broken.varlink" 2>&1) || rc=$?
assert_eq 1 "$rc" "varlink-call --validate-idl on a broken description (said: $err)"
[[ $err =~ broken.varlink:[0-9]+:[0-9]+: ]] || fail "expected a line:column error, saw '$err'"

# ---- The docs, both ways.
err=$(python3 "$CHECK" dbus --varlink-idl "$work/org.injectd.Injector.varlink" \
    "$DBUS_DOC" "$work/manager.xml" "$work/injection.xml" "$work/observe.xml" 2>&1) ||
    fail "docs/dbus-api.md does not match the daemon:"$'\n'"$err"
log "$err"
err=$(python3 "$CHECK" varlink "$VARLINK_DOC" "${idls[@]}" 2>&1) ||
    fail "docs/varlink-api.md does not match the daemon:"$'\n'"$err"
log "$err"

# The check is not vacuous: a copy of each doc with one member renamed and
# one signature changed fails, naming both.
# shellcheck disable=SC2016 # the backticks are Markdown's
sed -e 's/^#### `FaultsSuppressed`/#### `FaultsDropped`/' -e 's/^readonly u OwnerUID$/readonly t OwnerUID/' \
    "$DBUS_DOC" >"$work/dbus-api.md"
rc=0
err=$(python3 "$CHECK" dbus "$work/dbus-api.md" "$work/manager.xml" "$work/injection.xml" "$work/observe.xml" 2>&1) ||
    rc=$?
assert_eq 1 "$rc" "the check of a doctored docs/dbus-api.md (said: $err)"
assert_contains "$err" "signal FaultsSuppressed is not documented" "the check of a doctored docs/dbus-api.md"
assert_contains "$err" "\`FaultsDropped\` is documented under '### Signals', but the daemon has no such signal" \
    "the check of a doctored docs/dbus-api.md"
assert_contains "$err" "the daemon has 'readonly u OwnerUID'" "the check of a doctored docs/dbus-api.md"
# shellcheck disable=SC2016
sed -e 's/^#### `Watch`/#### `Follow`/' "$VARLINK_DOC" >"$work/varlink-api.md"
rc=0
err=$(python3 "$CHECK" varlink "$work/varlink-api.md" "${idls[@]}" 2>&1) || rc=$?
assert_eq 1 "$rc" "the check of a doctored docs/varlink-api.md (said: $err)"
assert_contains "$err" "method Watch is not documented" "the check of a doctored docs/varlink-api.md"
assert_contains "$err" "\`Follow\` is documented under '### Methods', but the daemon has no such method" \
    "the check of a doctored docs/varlink-api.md"

# ---- Clean up through the injection object itself.
busctl call org.injectd.Injector1 "$path" org.injectd.Injector1.Injection Cancel
assert_eq 0 "$(injections_left)" "injections after Cancel"

stop_injectd
finish
