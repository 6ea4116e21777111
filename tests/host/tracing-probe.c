/* SPDX-License-Identifier: MIT */
/* tracing-probe: may this process load a BPF trampoline program here?
 * Loads (never attaches) a two-instruction fmod_ret program against
 * security_file_open and prints "ok" or the errno's name, exit 0; exit 2
 * if it could not even try (no vmlinux BTF, no such function).
 *
 * The host test compares injectd's diagnosis with this, an oracle written
 * independently of src/engine/probe.c: when the kernel refuses tracing BPF
 * the daemon must say so, and when it does not, it must not. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

int main(void) {
        const struct bpf_insn insns[] = {
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
                { .code = BPF_JMP | BPF_EXIT },
        };
        struct btf *btf;
        int id, fd;

        btf = btf__load_vmlinux_btf();
        if (!btf) {
                fprintf(stderr, "tracing-probe: no vmlinux BTF: %s\n", strerror(errno));
                return 2;
        }
        id = btf__find_by_name_kind(btf, "security_file_open", BTF_KIND_FUNC);
        btf__free(btf);
        if (id <= 0) {
                fprintf(stderr, "tracing-probe: no security_file_open in vmlinux BTF\n");
                return 2;
        }

        LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_MODIFY_RETURN, .attach_btf_id = id);
        fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "tracing_probe", "GPL", insns, 2, &opts);
        if (fd < 0) {
                printf("%s\n", strerrorname_np(errno) ?: "?");
                return 0;
        }
        close(fd);
        printf("ok\n");
        return 0;
}
