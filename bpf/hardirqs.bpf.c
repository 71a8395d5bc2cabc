/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Time in hard IRQ handlers, per handler name: count, total time and (-d) a log2 histogram.
 * Raw tracepoints, with the handler's struct irqaction read by CO-RE: the name is read only for
 * handlers whose entry was seen. An IRQ line shared by several handlers runs each of them, and
 * each counts under its own name. TP_PROTO(int irq, struct irqaction *action[, int ret]). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "irq_time.bpf.h"
#include <tpkit/tools/hardirqs.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Entries that found their map full (maps.bpf.h). */
struct tpkit_counter_map tpkit_missed SEC(".maps");
/* When the handler running on this CPU was entered (irq_time.bpf.h). */
struct irq_entered_at_map irq_entered_at SEC(".maps");
/* Each key's statistics, drained every interval; new ones start from empty_stats. */
TPKIT_SWAPPED_HALF(stats, BPF_MAP_TYPE_PERCPU_HASH, struct hardirqs_key, struct irq_stats)
	stats_a SEC(".maps"), stats_b SEC(".maps");
TPKIT_SWAPPED_SLOT(stats) stats SEC(".maps");
TPKIT_ZERO_VALUE(struct irq_stats) empty_stats SEC(".maps");

SEC("raw_tp/irq_handler_entry")
int handler_entered(struct bpf_raw_tracepoint_args *ctx)
{
	irq_entered(&irq_entered_at);
	return 0;
}

SEC("raw_tp/irq_handler_exit")
int handler_exited(struct bpf_raw_tracepoint_args *ctx)
{
	struct irqaction *action = (struct irqaction *)ctx->args[1];
	struct hardirqs_key key = {};
	__u64 ns;

	if (!irq_exited(&irq_entered_at, &ns))
		return 0;
	bpf_probe_read_kernel_str(key.name, sizeof(key.name), BPF_CORE_READ(action, name));
	irq_account(&stats, &stats_a, &empty_stats, &tpkit_missed, &key, ns);
	return 0;
}
