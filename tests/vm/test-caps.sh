#!/bin/bash
# Scenario "caps": injectctl caps tells what this kernel can do and why,
# on both test kernels (issue 7, acceptance 1 and 5). Its claims are
# checked against the kernel itself: the configuration in /proc/config.gz
# (read here with zgrep, not through the daemon's reader) and the
# error-injection list. On the stock kernel (no FUNCTION_ERROR_INJECTION)
# the kprobe backend is unavailable, naming CONFIG_BPF_KPROBE_OVERRIDE and
# CONFIG_FUNCTION_ERROR_INJECTION, while fmod_ret serves the LSM hooks; on
# the full kernel every feature and backend is available. D-Bus and
# Varlink return the same document; the policy part is the caller's own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-daemon.sh"

INJECTCTL=$BUILD_DIR/src/client/injectctl
[[ -x $INJECTCTL ]] || fail "injectctl is not built at '$INJECTCTL'"

# Which kernel this is meant to be (meson says; by hand, the config says),
# and that the image agrees.
config_has() { zgrep -qx "$1=y" /proc/config.gz; }
if config_has CONFIG_BPF_KPROBE_OVERRIDE; then seen=full; else seen=stock; fi
kernel=${INJECTD_VM_KERNEL:-$seen}
assert_eq "$kernel" "$seen" "the kernel flavour (CONFIG_BPF_KPROBE_OVERRIDE in /proc/config.gz)"
log "kernel $(uname -r), flavour $kernel"

daemon_setup
start_injectd

caps=$(as alice "$INJECTCTL" --bus caps --json)
# Every value of the document by its path (".a.b"; an array's elements
# joined by blanks and ".length"; an object as compact JSON), from one jq
# run: a jq process per lookup is slow under TCG. Other filters go to jq.
declare -A C=()
while IFS=$'\t' read -r k v; do C[$k]=$v; done < <(jq -r '
    paths as $p | getpath($p) as $v | ("." + ($p | map(tostring) | join("."))) as $k |
    if ($v | type) == "array" then [$k, ($v | map(tostring) | join(" "))], [$k + ".length", ($v | length | tostring)]
    elif ($v | type) == "object" then [$k, ($v | tojson)]
    else [$k, ($v | tostring)] end | @tsv' <<<"$caps")
q() {
    if [[ $1 =~ ^(\.[A-Za-z0-9_]+)+$ ]]; then
        [[ -v C[$1] ]] || fail "caps: no '$1' in the document"
        printf '%s\n' "${C[$1]}"
    else
        jq -r "$1" <<<"$caps"
    fi
}

# ---- The document, against the kernel.
assert_eq "$(uname -r)" "$(q .kernel)" "caps: kernel"
assert_eq true "$(q .kernel_config.readable)" "caps: kernel_config.readable"
assert_eq /proc/config.gz "$(q .kernel_config.source)" "caps: kernel_config.source"
for f in bpf btf tracing kprobes fmod_ret_lsm; do
    assert_eq true "$(q ".features.$f.available")" "caps: features.$f.available (reason: $(q ".features.$f.reason"))"
    assert_eq 0 "$(q ".features.$f.missing_config.length")" "caps: features.$f.missing_config"
done
assert_eq true "$(q .backends.fmod_ret.available)" "caps: backends.fmod_ret.available"
assert_eq true "$(q .injection.available)" "caps: injection.available"
# The first version's keys are still there, the same objects.
for f in bpf tracing btf error_injection_list; do
    assert_eq "$(q ".features.$f")" "$(q ".$f")" "caps: .$f is .features.$f"
done
# The LSM hooks are security_* functions of the kernel's symbol table.
n_sym=$(grep -c " [Tt] security_" /proc/kallsyms || true)
(($(q .functions.lsm_hooks) >= 100)) || fail "caps: expected over 100 LSM hooks, saw $(q .functions)"
(($(q .functions.lsm_hooks) <= n_sym)) || fail "caps: more LSM hooks ($(q .functions.lsm_hooks)) than security_* symbols ($n_sym)"
(($(q .functions.fmod_ret) >= $(q .functions.lsm_hooks))) || fail "caps: expected fmod_ret to serve every LSM hook, saw $(q .functions)"

if [[ $kernel == stock ]]; then
    for f in override error_injection_list fmod_ret_listed; do
        assert_eq false "$(q ".features.$f.available")" "caps: features.$f.available"
    done
    assert_eq false "$(q .backends.kprobe.available)" "caps: backends.kprobe.available"
    missing=$(q .backends.kprobe.missing_config)
    for opt in CONFIG_BPF_KPROBE_OVERRIDE CONFIG_FUNCTION_ERROR_INJECTION; do
        config_has "$opt" && fail "the stock kernel has $opt=y"
        assert_contains " $missing " " $opt " "caps: backends.kprobe.missing_config"
    done
    # Nothing the kernel has is claimed missing.
    for opt in $missing; do
        config_has "$opt" && fail "caps claims $opt is missing, but /proc/config.gz has it"
    done
    assert_eq "CONFIG_FUNCTION_ERROR_INJECTION" "$(q .features.error_injection_list.missing_config)" \
        "caps: features.error_injection_list.missing_config"
    assert_eq EOPNOTSUPP "$(q .backends.kprobe.errno)" "caps: backends.kprobe.errno"
    assert_eq 0 "$(q .functions.kprobe)" "caps: functions.kprobe"
    assert_eq 0 "$(q .functions.listed)" "caps: functions.listed"
    [[ ! -e /sys/kernel/debug/error_injection/list ]] || fail "the stock kernel has an error-injection list"
else
    for f in override error_injection_list fmod_ret_listed; do
        assert_eq true "$(q ".features.$f.available")" "caps: features.$f.available (reason: $(q ".features.$f.reason"))"
    done
    assert_eq true "$(q .backends.kprobe.available)" "caps: backends.kprobe.available"
    assert_eq "[]" "$(q '[.features[], .backends[], .injection | .missing_config[]] | tostring')" \
        "caps: missing_config everywhere"
    # Each function once: the list names a system call twice (x64, ia32).
    listed=$(sort -u /sys/kernel/debug/error_injection/list | wc -l)
    assert_eq "$listed" "$(q .functions.listed)" "caps: functions.listed (the error-injection list's distinct lines)"
    (($(q .functions.kprobe) > 0)) || fail "caps: expected kprobe functions, saw $(q .functions)"
    assert_eq "both backends work" "$(q .injection.reason)" "caps: injection.reason"
fi

# ---- The doctor report says the same in words.
out=$(as alice "$INJECTCTL" caps)
printf '%s\n' "$out" | sed 's/^/  | /' >&2
assert_contains "$out" "Kernel:           $(uname -r)" "caps"
assert_contains "$out" "Configuration:    /proc/config.gz" "caps"
assert_contains "$out" "Injection:        available" "caps"
row() { grep -E "^$1 +" <<<"$out" || fail "caps: no row '$1' in the report"; }
assert_contains "$(row 'fmod_ret on LSM hooks')" " yes " "caps: the fmod_ret-on-LSM-hooks row"
assert_contains "$(row 'backend fmod_ret')" " yes " "caps: the backend fmod_ret row"
if [[ $kernel == stock ]]; then
    r=$(row 'backend kprobe')
    assert_contains "$r" " no " "caps: the backend kprobe row"
    assert_contains "$r" "CONFIG_BPF_KPROBE_OVERRIDE" "caps: the backend kprobe row"
    assert_contains "$r" "CONFIG_FUNCTION_ERROR_INJECTION" "caps: the backend kprobe row"
    assert_contains "$(row bpf_override_return)" "missing CONFIG_BPF_KPROBE_OVERRIDE" "caps: the bpf_override_return row"
else
    assert_contains "$(row 'backend kprobe')" " yes " "caps: the backend kprobe row"
    grep -E '^[a-zA-Z_ -]+ +no +' <<<"$out" && fail "caps: on the full kernel every row should say yes"
fi
assert_contains "$out" "Functions:        $(q .functions.injectable) injectable: $(q .functions.kprobe) by kprobe, $(q .functions.fmod_ret) by fmod_ret" "caps"

# ---- The policy in force: alice's default rules, bob has none, root is exempt.
assert_eq false "$(q .policy.root)" "caps: policy.root for alice"
assert_eq alice "$(q .policy.user)" "caps: policy.user"
assert_contains "$(q '[.policy.rules[].name] | join(" ")')" "injectd-default-syscalls" "caps: alice's rules"
assert_contains "$out" "Policy for you:   alice (uid $(id -u alice))" "caps: alice's policy"
assert_contains "$out" "rule injectd-default-slab:" "caps: alice's policy"
bob=$(as bob "$INJECTCTL" caps)
assert_contains "$bob" "no rule names bob" "caps for bob"
assert_eq 0 "$(as bob "$INJECTCTL" caps --json | jq '.policy.rules | length')" "caps --json for bob: policy.rules"
assert_contains "$("$INJECTCTL" caps)" "Policy for you:   root: the JSON policy does not apply" "caps for root"

# ---- Varlink gives the same document as D-Bus.
vcaps=$(as alice "$INJECTCTL" --varlink caps --json)
assert_eq "$(jq -S . <<<"$caps")" "$(jq -S . <<<"$vcaps")" "caps over Varlink and over D-Bus"

# ---- ListFunctions agrees with the backends.
fns=$(as alice "$INJECTCTL" functions 'security_file_open' --json)
assert_eq '["fmod_ret"]' "$(jq -c '.[0].backends' <<<"$fns")" "functions: backends of security_file_open"
fns=$(as alice "$INJECTCTL" functions '__x64_sys_openat' --json)
if [[ $kernel == stock ]]; then
    assert_eq 0 "$(jq length <<<"$fns")" "functions: __x64_sys_openat on the stock kernel"
else
    assert_eq '["kprobe","fmod_ret"]' "$(jq -c '.[0].backends' <<<"$fns")" "functions: backends of __x64_sys_openat"
fi

# ---- The daemon logged its findings when it started.
grep -q "Kernel: backend fmod_ret: yes" "$DAEMON_LOG" || fail "no probe findings in the daemon's log"
if [[ $kernel == stock ]]; then
    grep -q "Kernel: backend kprobe: no: .*CONFIG_BPF_KPROBE_OVERRIDE" "$DAEMON_LOG" ||
        fail "the daemon's log does not say why the kprobe backend is unavailable"
fi
assert_eq 0 "$(injections_left)" "injections"

stop_injectd
finish
