/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Time in softirqs, per vector: count, total time and (-d) a log2 histogram. Raw tracepoints:
 * softirqs run thousands of times a second on every CPU, and a raw one skips filling a trace
 * record. TP_PROTO(unsigned int vec_nr) for both. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "irq_time.bpf.h"
#include <tpkit/tools/softirqs.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");
/* When the handler running on this CPU was entered (irq_time.bpf.h). */
struct irq_entered_at_map irq_entered_at SEC(".maps");
/* Each key's statistics, drained every interval; new ones start from empty_stats. */
TPKIT_SWAPPED_HALF(stats, BPF_MAP_TYPE_PERCPU_HASH, __u32, struct irq_stats)
	stats_a SEC(".maps"), stats_b SEC(".maps");
TPKIT_SWAPPED_SLOT(stats) stats SEC(".maps");
TPKIT_ZERO_VALUE(struct irq_stats) empty_stats SEC(".maps");

SEC("raw_tp/softirq_entry")
int softirq_entered(struct bpf_raw_tracepoint_args *ctx)
{
	irq_entered(&irq_entered_at);
	return 0;
}

SEC("raw_tp/softirq_exit")
int softirq_exited(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 vec = (__u32)ctx->args[0];
	__u64 ns;

	if (irq_exited(&irq_entered_at, &ns))
		irq_account(&stats, &stats_a, &empty_stats, &tpkit_missed, &vec, ns);
	return 0;
}
