/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What softirqs and hardirqs share in the kernel: the time from a handler's entry to its exit
 * on one CPU, added to the statistics of its key (struct irq_stats). Neither kind nests on a
 * CPU (a softirq is never interrupted by another softirq, a hard IRQ handler runs with
 * interrupts off), so one start time per CPU is enough. The tool's maps:
 *
 *	struct irq_entered_at_map irq_entered_at SEC(".maps");
 *	TPKIT_SWAPPED_HALF(stats, BPF_MAP_TYPE_PERCPU_HASH, KEY, struct irq_stats)
 *		stats_a SEC(".maps"), stats_b SEC(".maps");
 *	TPKIT_SWAPPED_SLOT(stats) stats SEC(".maps");
 *	TPKIT_ZERO_VALUE(struct irq_stats) empty_stats SEC(".maps");
 *	struct tpkit_counter_map tpkit_missed SEC(".maps");
 */
#ifndef TPKIT_IRQ_TIME_BPF_H
#define TPKIT_IRQ_TIME_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <tpkit/hist.bpf.h>
#include <tpkit/maps.bpf.h>
#include <tpkit/task.bpf.h>
#include <tpkit/tools/softirqs.h>

const volatile bool histograms = false; /* -d */
const volatile bool nanoseconds = false; /* -N: histograms in nsecs */

/* When the handler running on this CPU was entered; 0 when none was seen entering. */
struct irq_entered_at_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
};

static __always_inline void irq_entered(void *entered_at)
{
	__u32 zero = 0;
	__u64 *at;

	if (!tpkit_current_selected()) /* --cpu, and the task the handler interrupted */
		return;
	at = bpf_map_lookup_elem(entered_at, &zero);
	if (at)
		*at = bpf_ktime_get_ns();
}

/* The time since irq_entered() on this CPU; false when its entry was not seen (it began before
 * the program was attached, or was not selected). */
static __always_inline bool irq_exited(void *entered_at, __u64 *ns)
{
	__u32 zero = 0;
	__u64 *at = bpf_map_lookup_elem(entered_at, &zero);

	if (!at || !*at)
		return false;
	*ns = bpf_ktime_get_ns() - *at;
	*at = 0;
	return true;
}

/* Adds the time to the key's statistics in SWAPPED (FIRST its first half), new ones copied from
 * EMPTY; a full map is counted in MISSED. */
static __always_inline void irq_account(void *swapped, void *first, void *empty, void *missed,
					const void *key, __u64 ns)
{
	void *active = tpkit_active_map(swapped, first);
	struct irq_stats *stats;

	if (!active)
		return;
	stats = tpkit_lookup_or_zero(active, key, empty, missed);
	if (!stats)
		return;
	stats->count += 1;
	stats->total_ns += ns;
	if (histograms)
		tpkit_log2_hist_add(&stats->hist, nanoseconds ? ns : ns / 1000);
}

#endif
