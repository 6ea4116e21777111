/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "hook-alternatives.h"

typedef struct Entry {
        const char *name;
        HookAlternative alt;
} Entry;

#define OPEN     { "security_file_open", "opening a file" }
#define CREATE   { "security_inode_create", "creating a file" }
#define RW       { "security_file_permission", "reading or writing a file" }
#define MOUNT    { "security_sb_mount", "mounting a file system" }
#define UMOUNT   { "security_sb_umount", "unmounting a file system" }
#define MMAP     { "security_mmap_file", "mapping memory" }
#define MPROTECT { "security_file_mprotect", "changing memory protection" }
#define EXEC     { "security_bprm_check", "executing a program" }
#define FORK     { "security_task_alloc", "creating a task" }
#define UNLINK   { "security_inode_unlink", "removing a file" }
#define MKDIR    { "security_inode_mkdir", "creating a directory" }
#define RMDIR    { "security_inode_rmdir", "removing a directory" }
#define MKNOD    { "security_inode_mknod", "creating a device node or FIFO" }
#define RENAME   { "security_inode_rename", "renaming a file" }
#define LINK     { "security_inode_link", "making a hard link" }
#define SYMLINK  { "security_inode_symlink", "making a symbolic link" }
#define READLINK { "security_inode_readlink", "reading a symbolic link" }
#define SETATTR  { "security_inode_setattr", "changing a file's mode, owner, size or times" }
#define GETATTR  { "security_inode_getattr", "reading a file's attributes" }
#define SETXATTR { "security_inode_setxattr", "setting an extended attribute" }
#define GETXATTR { "security_inode_getxattr", "reading an extended attribute" }
#define LISTXATTR { "security_inode_listxattr", "listing extended attributes" }
#define RMXATTR  { "security_inode_removexattr", "removing an extended attribute" }
#define STATFS   { "security_sb_statfs", "reading file system statistics" }
#define IOCTL    { "security_file_ioctl", "an ioctl" }
#define FCNTL    { "security_file_fcntl", "an fcntl" }
#define FLOCK    { "security_file_lock", "locking a file" }
#define SOCKET   { "security_socket_create", "creating a socket" }
#define CONNECT  { "security_socket_connect", "connecting a socket" }
#define BIND     { "security_socket_bind", "binding a socket" }
#define LISTEN   { "security_socket_listen", "listening on a socket" }
#define ACCEPT   { "security_socket_accept", "accepting a connection" }
#define SEND     { "security_socket_sendmsg", "sending on a socket" }
#define RECV     { "security_socket_recvmsg", "receiving on a socket" }
#define GETSOCKOPT { "security_socket_getsockopt", "reading a socket option" }
#define SETSOCKOPT { "security_socket_setsockopt", "setting a socket option" }
#define SHUTDOWN { "security_socket_shutdown", "shutting a socket down" }
#define KILL     { "security_task_kill", "sending a signal" }
#define PTRACE   { "security_ptrace_access_check", "tracing a process" }
#define SETUID   { "security_task_fix_setuid", "changing user ids" }
#define SETGID   { "security_task_fix_setgid", "changing group ids" }
#define NICE     { "security_task_setnice", "changing a priority" }
#define SCHED    { "security_task_setscheduler", "changing a scheduling policy" }
#define PRLIMIT  { "security_task_prlimit", "changing a resource limit" }
#define BPF      { "security_bpf", "a bpf() command" }
#define SYSLOG   { "security_syslog", "reading the kernel log" }
#define SETTIME  { "security_settime64", "setting the clock" }
#define MODULE   { "security_kernel_load_data", "loading a kernel module" }
#define MSGSND   { "security_msg_queue_msgsnd", "sending a System V message" }
#define MSGRCV   { "security_msg_queue_msgrcv", "receiving a System V message" }
#define SHMAT    { "security_shm_shmat", "attaching System V shared memory" }
#define SEMOP    { "security_sem_semop", "a System V semaphore operation" }
#define PIVOT    { "security_sb_pivotroot", "pivot_root" }

/* By syscall name, sorted. */
static const Entry syscalls[] = {
        { "accept", ACCEPT },
        { "accept4", ACCEPT },
        { "bind", BIND },
        { "bpf", BPF },
        { "chmod", SETATTR },
        { "chown", SETATTR },
        { "clock_settime", SETTIME },
        { "clone", FORK },
        { "clone3", FORK },
        { "connect", CONNECT },
        { "creat", CREATE },
        { "execve", EXEC },
        { "execveat", EXEC },
        { "fchmod", SETATTR },
        { "fchmodat", SETATTR },
        { "fchown", SETATTR },
        { "fchownat", SETATTR },
        { "fcntl", FCNTL },
        { "fgetxattr", GETXATTR },
        { "finit_module", MODULE },
        { "flistxattr", LISTXATTR },
        { "flock", FLOCK },
        { "fork", FORK },
        { "fremovexattr", RMXATTR },
        { "fsetxattr", SETXATTR },
        { "fstatfs", STATFS },
        { "ftruncate", SETATTR },
        { "getsockopt", GETSOCKOPT },
        { "getxattr", GETXATTR },
        { "init_module", MODULE },
        { "ioctl", IOCTL },
        { "kill", KILL },
        { "lchown", SETATTR },
        { "lgetxattr", GETXATTR },
        { "link", LINK },
        { "linkat", LINK },
        { "listen", LISTEN },
        { "listxattr", LISTXATTR },
        { "llistxattr", LISTXATTR },
        { "lremovexattr", RMXATTR },
        { "lsetxattr", SETXATTR },
        { "lstat", GETATTR },
        { "mkdir", MKDIR },
        { "mkdirat", MKDIR },
        { "mknod", MKNOD },
        { "mknodat", MKNOD },
        { "mmap", MMAP },
        { "mmap_pgoff", MMAP },
        { "mount", MOUNT },
        { "mprotect", MPROTECT },
        { "msgrcv", MSGRCV },
        { "msgsnd", MSGSND },
        { "newfstatat", GETATTR },
        { "newlstat", GETATTR },
        { "newstat", GETATTR },
        { "open", OPEN },
        { "open_by_handle_at", OPEN },
        { "openat", OPEN },
        { "openat2", OPEN },
        { "pivot_root", PIVOT },
        { "prlimit64", PRLIMIT },
        { "ptrace", PTRACE },
        { "read", RW },
        { "readlink", READLINK },
        { "readlinkat", READLINK },
        { "readv", RW },
        { "recvfrom", RECV },
        { "recvmmsg", RECV },
        { "recvmsg", RECV },
        { "removexattr", RMXATTR },
        { "rename", RENAME },
        { "renameat", RENAME },
        { "renameat2", RENAME },
        { "rmdir", RMDIR },
        { "sched_setattr", SCHED },
        { "sched_setscheduler", SCHED },
        { "semop", SEMOP },
        { "semtimedop", SEMOP },
        { "sendmmsg", SEND },
        { "sendmsg", SEND },
        { "sendto", SEND },
        { "setgid", SETGID },
        { "setpriority", NICE },
        { "setregid", SETGID },
        { "setresgid", SETGID },
        { "setresuid", SETUID },
        { "setreuid", SETUID },
        { "setrlimit", PRLIMIT },
        { "setsockopt", SETSOCKOPT },
        { "settimeofday", SETTIME },
        { "setuid", SETUID },
        { "setxattr", SETXATTR },
        { "shmat", SHMAT },
        { "shutdown", SHUTDOWN },
        { "socket", SOCKET },
        { "stat", GETATTR },
        { "statfs", STATFS },
        { "statx", GETATTR },
        { "symlink", SYMLINK },
        { "symlinkat", SYMLINK },
        { "syslog", SYSLOG },
        { "tgkill", KILL },
        { "tkill", KILL },
        { "truncate", SETATTR },
        { "umount", UMOUNT },
        { "umount2", UMOUNT },
        { "unlink", UNLINK },
        { "unlinkat", UNLINK },
        { "utimensat", SETATTR },
        { "vfork", FORK },
        { "write", RW },
        { "writev", RW },
};

/* Kernel functions (not syscall entries) that tests commonly target,
 * sorted. open_ctree is btrfs's mount path, the seed's own example. */
static const Entry functions[] = {
        { "__sock_create", SOCKET },
        { "bprm_execve", EXEC },
        { "btrfs_fill_super", MOUNT },
        { "copy_process", FORK },
        { "do_filp_open", OPEN },
        { "do_mmap", MMAP },
        { "do_sys_open", OPEN },
        { "do_sys_openat2", OPEN },
        { "ext4_fill_super", MOUNT },
        { "kernel_clone", FORK },
        { "mount_bdev", MOUNT },
        { "open_ctree", MOUNT },
        { "path_mount", MOUNT },
        { "vfs_create", CREATE },
        { "vfs_get_tree", MOUNT },
        { "vfs_link", LINK },
        { "vfs_mkdir", MKDIR },
        { "vfs_mknod", MKNOD },
        { "vfs_open", OPEN },
        { "vfs_read", RW },
        { "vfs_rename", RENAME },
        { "vfs_rmdir", RMDIR },
        { "vfs_symlink", SYMLINK },
        { "vfs_unlink", UNLINK },
        { "vfs_write", RW },
};

static int cmp_entry(const void *key, const void *e) {
        return strcmp(key, ((const Entry *) e)->name);
}

static const Entry *find(const Entry *table, size_t n, const char *name) {
        return bsearch(name, table, n, sizeof(*table), cmp_entry);
}

/* The syscall a name is the entry point of, or NULL. */
static const char *syscall_name(const char *function) {
        static const char *const prefixes[] = {
                "__x64_sys_", "__ia32_sys_", "__ia32_compat_sys_", "__x64_compat_sys_", "__arm64_sys_",
                "__se_sys_", "__do_sys_", "__se_compat_sys_", "__do_compat_sys_", "ksys_", "sys_",
        };

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
                size_t l = strlen(prefixes[i]);

                if (strncmp(function, prefixes[i], l) == 0 && function[l])
                        return function + l;
        }
        return NULL;
}

const HookAlternative *hook_alternative(const char *function) {
        const Entry *e = NULL;
        const char *s;

        if (!function)
                return NULL;
        s = syscall_name(function);
        if (s)
                e = find(syscalls, ELEMENTSOF(syscalls), s);
        if (!e)
                e = find(functions, ELEMENTSOF(functions), function);
        return e ? &e->alt : NULL;
}

static int check_sorted(const Entry *table, size_t n) {
        for (size_t i = 1; i < n; i++)
                if (strcmp(table[i - 1].name, table[i].name) >= 0)
                        return -EINVAL;
        return 0;
}

int hook_alternatives_check(void) {
        int r = check_sorted(syscalls, ELEMENTSOF(syscalls));

        return r < 0 ? r : check_sorted(functions, ELEMENTSOF(functions));
}
