#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/docs/test-completion.sh COMPLETION-SCRIPT
#
# Sources the bash completion of injectctl and calls it as bash would,
# with COMP_WORDS and COMP_CWORD set, checking COMPREPLY. A stub injectctl
# stands in for the daemon's answers (function names, injection ids). Runs
# in a plain bash, and again with bash-completion's helpers loaded when
# they are installed, since the script behaves a little differently then.
set -euo pipefail

script=$(readlink -f "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What `injectctl functions` and `injectctl list` print: a header, then
# rows; the first column is what completion offers.
cat >"$tmp/injectctl" <<'STUB'
#!/bin/bash
echo "$*" >>"${0%/*}/calls"
case " $* " in
*" functions "*)
    printf '%s\n' 'FUNCTION          TYPE  BACKENDS        ALLOWED MODULE' \
        '__x64_sys_openat  ERRNO kprobe,fmod_ret yes' \
        '__x64_sys_open    ERRNO kprobe,fmod_ret yes' \
        'should_failslab   ERRNO kprobe          yes' \
        'open_ctree        ERRNO kprobe,fmod_ret no      btrfs' ;;
*" list "*)
    printf '%s\n' 'ID               FUNCTION VALUE' '7a07cebac770ecce open_ctree ENOMEM' ;;
*) echo "injectctl: unknown command" >&2; exit 2 ;;
esac
STUB
chmod +x "$tmp/injectctl"

cat >"$tmp/cases.sh" <<'CASES'
failures=0
source "$SCRIPT"
# Outside a real completion compopt only complains (bash-completion's
# _command_offset calls it too); its options are not what is tested.
compopt() { :; }
ctl=$STUB

# check exact WORD... :: EXPECTED...: completing the last WORD gives
# exactly EXPECTED (order ignored); check has: EXPECTED are among them.
complete_words() {
    COMP_WORDS=("$ctl" "$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _injectctl
}
check() {
    local mode=$1 words=() want=() got w
    shift
    while (($#)) && [[ $1 != '::' ]]; do words+=("$1"); shift; done
    shift
    want=("$@")
    complete_words "${words[@]}"
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' ')
    if [[ $mode == exact ]]; then
        if [[ $got != "$(printf '%s\n' "${want[@]}" | sort -u | tr '\n' ' ')" ]]; then
            echo "FAIL$LABEL: injectctl ${words[*]}<TAB>: got '$got', want '${want[*]}'"
            failures=$((failures + 1))
            return
        fi
    else
        for w in "${want[@]}"; do
            if [[ " $got " != *" $w "* ]]; then
                echo "FAIL$LABEL: injectctl ${words[*]}<TAB>: '$w' not in '$got'"
                failures=$((failures + 1))
                return
            fi
        done
    fi
    echo "ok$LABEL: injectctl ${words[*]}<TAB> -> $got"
}

check has  ''                       :: run sweep explore inject caps functions list show cancel watch reload-policy
check exact 'r'                     :: run reload-policy
check exact inject --ba             :: --backend
check exact inject --backend ''     :: auto kprobe fmod_ret
check exact inject --backend k      :: kprobe
check exact inject --backend=f      :: --backend=fmod_ret
check exact --json inject --error enomem :: ENOMEM
check has  inject --error ''        :: ENOENT EPERM EIO ENOSPC EWOULDBLOCK
check exact inject __x64_sys_op     :: __x64_sys_openat __x64_sys_open
check exact inject should           :: should_failslab
# One FUNCTION only: nothing after it but options.
check exact inject open_ctree ''    ::
check has  sweep --                 :: --fail --max --timeout --report --json
check has  explore --               :: --functions --max-runs --per --timeout --report --html
check exact explore --per ''        :: stack call
check exact explore --functions open :: open_ctree
check has  explore -- ech           :: echo
check has  run --                   :: --fail --for
check exact run --fail open         :: open_ctree
check exact run --fail open_ctree:ENOSP :: open_ctree:ENOSPC
check has  run --fail 'open_ctree:ENOMEM,' :: open_ctree:ENOMEM,after= open_ctree:ENOMEM,caller=
check exact run --fail 'should_failslab,caller=__x64_sys_openat,caller=should' :: should_failslab,caller=__x64_sys_openat,caller=should_failslab
check exact inject --caller open    :: open_ctree
check exact functions --type E      :: ERRNO ERRNO_NULL
check exact show ''                 :: 7a07cebac770ecce
check exact --varlink=/x cancel 7   :: 7a07cebac770ecce
check has  sweep --fail open_ctree -- ech :: echo
check exact inject --cgroup ''      :: /sys/fs/cgroup/

# Devices: the whole disks of /sys/block (here a stand-in).
__injectctl_sys_block=$BLOCK
check exact inject --device ''      :: loop0 loop3 vda
check exact inject --device lo      :: loop0 loop3
check exact inject --device /dev/v  :: /dev/vda
check has  inject --dev             :: --device
check exact run --fail 'should_fail_bio,device=loop' :: should_fail_bio,device=loop0 should_fail_bio,device=loop3
check has  run --fail 'should_fail_bio,' :: should_fail_bio,device=

# As bash splits at COMP_WORDBREAKS (':' and '='): only the part after
# the break is replaced.
check exact run --fail open_ctree : ENOSP :: ENOSPC
check exact run --fail open_ctree :  :: $(printf ':%s ' $__injectctl_errnos)
check exact inject --backend = fm   :: fmod_ret

# The transport of the command line is the one asked.
calls=$(cat "${STUB%/*}/calls")
if [[ $calls != *"--varlink=/x --no-pager --no-ask-password list"* ]]; then
    echo "FAIL$LABEL: --varlink=/x was not passed on: $calls"
    failures=$((failures + 1))
fi

# A daemon that cannot be reached offers nothing, and prints nothing.
ctl=/nonexistent/injectctl
check exact inject __x64            ::
exit $((failures > 0))
CASES

mkdir -p "$tmp/block/loop0" "$tmp/block/loop3" "$tmp/block/vda"
export SCRIPT=$script STUB=$tmp/injectctl BLOCK=$tmp/block
rc=0
LABEL="" bash --norc --noprofile "$tmp/cases.sh" || rc=1

helpers=/usr/share/bash-completion/bash_completion
if [[ -r $helpers ]]; then
    # Loaded the way an interactive shell has it: the script then hands
    # CMD after '--' to _command_offset.
    LABEL=" (bash-completion)" bash --norc --noprofile -c \
        "source $helpers >/dev/null 2>&1; source \"$tmp/cases.sh\"" || rc=1
else
    echo "note: $helpers is not installed; checked without it"
fi
exit $rc
