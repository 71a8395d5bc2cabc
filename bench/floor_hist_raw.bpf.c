/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Floor: the same histogram through the raw tracepoint sys_enter, which fires for every
// syscall: keep read() by its number, take count from the saved registers.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <tpkit/hist.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#if defined(__TARGET_ARCH_x86)
#define NR_READ 0
#elif defined(__TARGET_ARCH_arm64)
#define NR_READ 63
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tpkit_log2_hist);
} hist SEC(".maps");

SEC("raw_tp/sys_enter")
int floor_hist_raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	struct tpkit_log2_hist *h;
	__u32 zero = 0, slot;

	if (ctx->args[1] != NR_READ)
		return 0;
	slot = tpkit_log2_u64(PT_REGS_PARM3_CORE_SYSCALL(regs));
	h = bpf_map_lookup_elem(&hist, &zero);
	if (h && slot < TPKIT_LOG2_SLOTS)
		h->slots[slot] += 1;
	return 0;
}
