/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* softirqs' key and value, shared by its BPF program and user space, and with hardirqs
 * (installed for embedders as <tpkit/tools/softirqs.h>). */
#ifndef TPKIT_SOFTIRQS_H
#define TPKIT_SOFTIRQS_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/hist.h>

/* Keys each half of softirqs' map holds: the kernel has 10 vectors (HI … RCU); a vector past a
 * full map is counted as missed. */
#define SOFTIRQS_MAX_VECTORS 16

/* What one key (a softirq vector, a hard IRQ's name) took in an interval, per CPU; user space
 * sums the CPUs' values (__u64 counters, in this order). */
struct irq_stats {
	__u64 count;
	__u64 total_ns;
	struct tpkit_log2_hist hist; /* with -d: usecs, or nsecs with -N */
};

#endif
