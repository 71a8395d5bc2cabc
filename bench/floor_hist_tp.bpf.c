/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Floor: the least a log2 histogram of read() sizes costs on the classic tracepoint
// syscalls:sys_enter_read: one fixed-offset field load, the slot, one per-CPU increment.
#include "vmlinux.h" /* types only: the structs used here carry no CO-RE relocations */
#include <bpf/bpf_helpers.h>
#include <tpkit/hist.h>
#include "floor_sys_enter.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tpkit_log2_hist);
} hist SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_read")
int floor_hist_tp(struct floor_sys_enter *ctx)
{
	__u32 zero = 0, slot = tpkit_log2_u64(ctx->args[2]); /* args[2]: count */
	struct tpkit_log2_hist *h = bpf_map_lookup_elem(&hist, &zero);

	if (h && slot < TPKIT_LOG2_SLOTS)
		h->slots[slot] += 1;
	return 0;
}
