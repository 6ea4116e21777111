#!/bin/bash
# should_fail_alloc_page with caller filters on functions under execve
# (issue 28, item 7): the caller filter sees every frame of an exec's
# allocations, and failing one after exec's point of no return kills the
# command with SIGSEGV (docs/findings/exec-fault-after-point-of-no-return.md).
#
# The scope is a tree whose root waits on a FIFO, so its pid is known before
# the injection is armed. (A pid taken as $BASHPID inside the $(...) that
# runs `arm` is the command substitution's own subshell, whose only
# descendants are the engine CLI and jq: an injection scoped to it never
# sees the commands run after it, and every caller under execve then
# "matches 0". That was the whole of the suspected engine bug.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-engine.sh"

fifo=$(mktemp -u /run/caller-exec.XXXXXX)
mkfifo "$fifo"
at_exit rm -f "$fifo"

# start_tree N: a root that waits for the FIFO, then runs `sh -c /bin/true`
# N times and writes each status to $tree_out; its pid in $tree_pid.
tree_out=$(mktemp /run/caller-exec-out.XXXXXX)
at_exit rm -f "$tree_out"
start_tree() {
    : >"$tree_out"
    bash -c 'read -r _ <"$1"; for ((i = 0; i < $2; i++)); do sh -c /bin/true; echo $?; done >"$3"' \
        tree "$fifo" "$1" "$tree_out" &
    tree_pid=$!
}
run_tree() {
    echo go >"$fifo"
    wait "$tree_pid" || true
}

# Counting only (a trigger that never fires). Every exec allocates its new
# mm's pgd under alloc_bprm (pgd_alloc, mm_init), and its argument pages
# under copy_strings_kernel: so 8 execs of sh (and sh's of true) match each
# caller at least 8 times. load_elf_binary has two functions of that name
# (binfmt_elf and compat_binfmt_elf): the engine takes the first, which is
# the native one that runs here.
for caller in __x64_sys_execve do_execveat_common.isra.0 alloc_bprm bprm_execve load_elf_binary; do
    grep -qw "$caller" /proc/kallsyms || { log "no $caller in this kernel, skipped"; continue; }
    start_tree 8
    id=$(engine_arm should_fail_alloc_page --retval 1 --pid "$tree_pid" --caller "$caller" --after 1000000 --for 5min)
    run_tree
    matched=$(engine_field "$id" matched)
    log "caller $caller: seen $(engine_field "$id" seen), matched $matched"
    ((matched >= 8)) || fail "caller $caller: expected at least 8 matches (8 execs), saw $matched"
    assert_eq "0 0 0 0 0 0 0 0" "$(tr '\n' ' ' <"$tree_out" | sed 's/ $//')" "statuses while only counting ($caller)"
    "$ENGINE" disarm "$id" >/dev/null
done

# Failing the first allocation under alloc_bprm: before the point of no
# return, so the exec fails with ENOMEM and the shell reports it (126);
# the other runs are unharmed.
start_tree 3
id=$(engine_arm should_fail_alloc_page --retval 1 --pid "$tree_pid" --caller alloc_bprm --times 1 --for 5min)
run_tree
assert_eq "126 0 0" "$(tr '\n' ' ' <"$tree_out" | sed 's/ $//')" "statuses with the pgd allocation under alloc_bprm failed"
expect_counters "$id" - - 1
"$ENGINE" disarm "$id" >/dev/null

# Failing the first allocation under setup_arg_pages (a page-table page for
# the moved stack, __pmd_alloc under move_page_tables): after the point of
# no return, so the exec cannot return an error and the task is killed
# with SIGSEGV (139 from the shell that ran it). Whether an exec needs a new
# page-table page there depends on the random stack top, so the first one
# that does is the one that dies: one 139, the rest 0.
start_tree 8
id=$(engine_arm should_fail_alloc_page --retval 1 --pid "$tree_pid" --caller setup_arg_pages --times 1 --for 5min)
run_tree
statuses=$(tr '\n' ' ' <"$tree_out" | sed 's/ $//')
log "statuses with setup_arg_pages failed once: $statuses"
assert_eq 1 "$(grep -cx 139 "$tree_out")" "SIGSEGV deaths (statuses: $statuses)"
assert_eq 7 "$(grep -cx 0 "$tree_out")" "clean runs (statuses: $statuses)"
expect_counters "$id" - - 1
"$ENGINE" disarm "$id" >/dev/null

finish
