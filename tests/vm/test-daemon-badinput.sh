#!/bin/bash
# Bad input never crashes the daemon or leaves anything armed: malformed
# JSON, wrong D-Bus signatures, huge strings, unknown keys, negative
# numbers, each with a clear error; and a malformed or insecure policy file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"
. "$(dirname "$0")/lib-daemon.sh"

daemon_setup
start_injectd

alive() {
    kill -0 "$INJECTD_PID" || fail "injectd died (after: $1)"
    name_has_owner org.injectd.Injector1 || fail "injectd lost its bus name (after: $1)"
    assert_eq 0 "$(injections_left)" "injections armed after: $1"
}

# vl_error JSON NAME TEXT: a Varlink Inject refused with NAME, saying TEXT.
vl_error() {
    local out
    out=$(vl alice org.injectd.Injector.Inject "$1" || true)
    assert_eq "org.injectd.Injector.$2" "$(jq -r .error <<<"$out")" "error for $1"
    assert_contains "$(jq -r .parameters.message <<<"$out")" "$3" "message for $1"
    alive "$1"
}

vl_error '{"function":"__x64_sys_openat","error":"ENOENT","colour":"blue"}' InvalidArgument "Unknown key 'colour'"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","after":-1}' InvalidArgument "'after'"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","times":0}' InvalidArgument "'times' must be an integer from 1"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","probability":150}' InvalidArgument "'probability'"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","duration_usec":-5}' InvalidArgument "'duration_usec'"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","pid":"one"}' InvalidArgument "'pid'"
vl_error '{"function":"__x64_sys_openat","error":"ENOENTT"}' InvalidArgument "did you mean ENOENT"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","retval":-2}' InvalidArgument "Exactly one of 'error'"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","comm":"a-very-long-command-name"}' InvalidArgument "'comm'"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","callers":["a","b","c","d","e"]}' InvalidArgument "at most 4"
vl_error '{"error":"ENOENT"}' InvalidArgument "'function' is required"
huge=$(head -c 100000 /dev/zero | tr '\0' x)
vl_error "{\"function\":\"$huge\",\"error\":\"ENOENT\"}" InvalidArgument "'function'"
vl_error '{"function":"__x64_sys_openat","error":"ENOENT","scope":"everything"}' InvalidArgument "'scope'"

# Raw garbage on the socket: the connection is dropped, the daemon lives.
for junk in '{"method":' 'not json at all' '[1,2,3]' '{"method":"org.injectd.Injector.Inject","parameters":[]}' \
    '{"method":"org.injectd.Injector.Nope","parameters":{}}'; do
    printf '%s\0' "$junk" | as alice socat -t 3 - "UNIX-CONNECT:$SOCKET" >/dev/null 2>&1 || true
    alive "raw '$junk'"
done
# More than the 1 MiB message limit, without a NUL.
head -c 2000000 /dev/zero | tr '\0' a | as alice socat -t 3 - "UNIX-CONNECT:$SOCKET" >/dev/null 2>&1 || true
alive "a 2 MB message"
# A client that hangs up mid-message.
printf '{"method":"org.injectd.Injector.Inj' | as alice socat -t 1 - "UNIX-CONNECT:$SOCKET" >/dev/null 2>&1 || true
alive "a hang-up mid-message"

# D-Bus: a wrong signature, unknown keys, wrong variant types, huge strings.
out=$(as alice busctl call org.injectd.Injector1 /org/injectd/Injector1 org.injectd.Injector1.Manager \
    Inject s hello 2>&1 || true)
assert_contains "$out" "expecting 'a{sv}'" "Inject with a wrong signature"
alive "a wrong D-Bus signature"
out=$(bus_inject alice function s __x64_sys_openat error s ENOENT colour s blue 2>&1 || true)
assert_contains "$out" "Unknown key 'colour'" "an unknown key over D-Bus"
alive "an unknown D-Bus key"
out=$(as alice gdbus call --system --dest org.injectd.Injector1 --object-path /org/injectd/Injector1 \
    --method org.injectd.Injector1.Manager.Inject \
    "{'function': <'__x64_sys_openat'>, 'error': <'ENOENT'>, 'after': <int64 -1>}" 2>&1 || true)
assert_contains "$out" "'after'" "a negative number over D-Bus"
alive "a negative D-Bus number"
out=$(bus_inject alice function s __x64_sys_openat error ay 0 2>&1 || true)
assert_contains "$out" "of type 'ay'" "a variant type the API does not take"
alive "a wrong variant type"
out=$(bus_inject alice function s "$huge" error s ENOENT 2>&1 || true)
assert_contains "$out" "'function'" "a huge string over D-Bus"
alive "a huge D-Bus string"
out=$(as alice busctl call org.injectd.Injector1 /org/injectd/Injector1 org.injectd.Injector1.Manager \
    Cancel s "../../etc" 2>&1 || true)
assert_contains "$out" "is not an injection id" "Cancel with a bad id"
alive "a bad id"

# A malformed policy file is refused with file:line, an insecure one too,
# and the daemon keeps serving with the rest.
cat >/etc/injectd/policy.d/30-broken.json <<'JSON'
{ "rules": [
    { "name": "broken", "groups": ["injectd"],
      "functions": ["open_ctree"] "errors": ["ENOMEM"] }
] }
JSON
cp /etc/injectd/policy.d/10-injectd-default.json /etc/injectd/policy.d/40-insecure.json
sed -i 's/injectd-default-/insecure-/' /etc/injectd/policy.d/40-insecure.json
chmod 0666 /etc/injectd/policy.d/40-insecure.json
kill -HUP "$INJECTD_PID"
wait_until 120 grep -q "30-broken.json:3:" "$DAEMON_LOG"
wait_until 120 grep -q "40-insecure.json.*writable" "$DAEMON_LOG"
alive "a malformed and an insecure policy file"
# The default rules still apply.
id=$(vl alice org.injectd.Injector.Inject '{"function":"__x64_sys_openat","error":"ENOENT","comm":"cat","detach":true}' | jq -r .parameters.id)
[[ $id =~ ^[0-9a-f]{16}$ ]] || fail "an allowed request after the reload was refused"
vl alice org.injectd.Injector.Cancel "{\"id\":\"$id\"}" >/dev/null
# ReloadPolicy needs manage: alice may not, root may.
out=$(vl alice org.injectd.Injector.ReloadPolicy || true)
assert_eq org.injectd.Injector.NotAuthorized "$(jq -r .error <<<"$out")" "ReloadPolicy by alice"
"$VARLINK_CALL" "$SOCKET" org.injectd.Injector.ReloadPolicy >/dev/null
alive "the reloads"

stop_injectd
finish
