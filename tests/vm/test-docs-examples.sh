#!/bin/bash
# Scenario "docs-examples": each worked example of
# docs/testing-with-injectd.md, run as the document says, by alice (group
# injectd, no privileges, the default policy): the kselftest-style shell
# test with shell/injectd.sh, the pytest test with the plugin, and the C
# test over sd-bus. Each must pass (not skip), and leave nothing armed.
# tests/docs/check-examples.py keeps the document's quotes equal to the files.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/lib-daemon.sh
. "$(dirname "$0")/lib-daemon.sh"

EXAMPLES=$SRC_DIR/docs/examples
SDBUS=$BUILD_DIR/docs/examples/sdbus-mkdir
[[ -x $SDBUS ]] || fail "the C example is not built at '$SDBUS'"
[[ -x $BUILD_DIR/src/client/injectctl ]] || fail "injectctl is not built"

daemon_setup
start_injectd

# The installed layout, from the trees: injectctl on PATH, the library
# and the Python client where INJECTD_SH and PYTHONPATH say.
as_alice() {
    as alice env HOME=/home/alice PATH="$BUILD_DIR/src/client:$PATH" INJECTD_SH="$SRC_DIR/shell/injectd.sh" \
        PYTHONPATH="$SRC_DIR/python" PYTHONDONTWRITEBYTECODE=1 "$@"
}

# run_example NAME CMD...: CMD must exit 0; its output is shown.
run_example() {
    local name=$1 rc=0
    shift
    log "example: $name"
    as_alice "$@" >"/tmp/$name.out" 2>&1 || rc=$?
    sed 's/^/  | /' "/tmp/$name.out" >&2
    assert_eq 0 "$rc" "$name's exit status"
    assert_eq 0 "$(injections_left)" "injections after $name"
}

run_example shell sh "$EXAMPLES/kselftest-mkdir.sh"
assert_contains "$(cat /tmp/shell.out)" "PASS: mkdir reports EACCES and creates nothing" "the shell example's verdict"

run_example pytest python3 -m pytest -p injectd.pytest_plugin -p no:cacheprovider -rA -v \
    --basetemp=/tmp/pytest-alice "$EXAMPLES/test_mkdir.py"
assert_contains "$(cat /tmp/pytest.out)" "1 passed" "the pytest example's summary"

run_example sdbus "$SDBUS"
assert_contains "$(cat /tmp/sdbus.out)" "PASS: mkdir failed with EACCES once, and works after Cancel" "the C example's verdict"

stop_injectd
finish
