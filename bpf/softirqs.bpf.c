/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
// Time in softirqs, per vector: count, total time and (-d) a log2 histogram. Raw tracepoints:
// softirqs run thousands of times a second on every CPU, and a raw one skips filling a trace
// record. TP_PROTO(unsigned int vec_nr) for both.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "irq_time.bpf.h"
#include "softirqs.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

TPKIT_SWAPPED_MAP(stats, BPF_MAP_TYPE_PERCPU_HASH, __u32, struct irq_stats);

SEC("raw_tp/softirq_entry")
int softirq_entered(struct bpf_raw_tracepoint_args *ctx)
{
	irq_entered();
	return 0;
}

SEC("raw_tp/softirq_exit")
int softirq_exited(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 vec = (__u32)ctx->args[0];
	__u64 ns;

	if (irq_exited(&ns))
		irq_account(&stats, &stats_a, &vec, ns);
	return 0;
}
